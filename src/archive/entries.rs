//! Loose entries to inputs: what a browser hands over (picked files, a dropped folder, files of
//! a persistence root with paths relative to it) grouped the way a folder on disk would be.

use super::{Contents, Input};

/// Groups `(path, bytes)` entries into inputs. A top-level entry (no `/` in its path) is a file
/// of its own: an export ZIP or a lone log. All entries below a folder form one folder input,
/// in which every log finds its persistence root or export from its own path, so the files of
/// a root given relative to it load exactly as the root on disk does, and several dropped
/// folders keep their roots apart by their first path segment. Entries are taken in path
/// order, as a folder on disk is read.
pub fn inputs_from_entries(entries: Vec<(String, Vec<u8>)>) -> Vec<Input> {
    group(
        entries,
        |name, bytes| Input::File { name, bytes },
        |name, entries| Input::Entries { name, entries },
    )
}

/// Groups a staged load's entries, some with their bytes deferred, into the same inputs
/// [`inputs_from_entries`] makes of them all held: a deferred top-level entry is a
/// [`Input::Staged`] file (one entry, path `""`), a folder is one [`Input::Staged`].
pub fn inputs_from_staged(entries: Vec<(String, Contents)>) -> Vec<Input> {
    let file = |name, contents| match contents {
        Contents::Held(bytes) => Input::File { name, bytes },
        deferred @ Contents::Deferred(_) => Input::Staged {
            name,
            entries: vec![(String::new(), deferred)],
        },
    };
    group(entries, file, |name, entries| Input::Staged { name, entries })
}

/// The grouping of [`inputs_from_entries`], over any contents.
fn group<T>(
    entries: Vec<(String, T)>,
    file: impl Fn(String, T) -> Input,
    folder: impl FnOnce(String, Vec<(String, T)>) -> Input,
) -> Vec<Input> {
    let mut inputs = Vec::new();
    let mut in_folder = Vec::new();
    let mut entries: Vec<(String, T)> = entries
        .into_iter()
        .map(|(path, contents)| (path.replace('\\', "/").trim_start_matches('/').to_owned(), contents))
        .collect();
    // In path order, as a folder on disk is read, whatever order the host listed them in.
    crate::sorting::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
    for (path, contents) in entries {
        if path.contains('/') {
            in_folder.push((path, contents));
        } else {
            inputs.push(file(path, contents));
        }
    }
    if !in_folder.is_empty() {
        let name = folder_label(&in_folder);
        inputs.push(folder(name, in_folder));
    }
    inputs
}

/// The folder's first path segment when every entry shares it, else `entries`.
fn folder_label<T>(folder: &[(String, T)]) -> String {
    let first = |path: &str| path.split('/').next().unwrap_or_default().to_owned();
    let label = first(&folder[0].0);
    if folder.iter().all(|(path, _)| first(path) == label) {
        label
    } else {
        "entries".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(inputs: &[Input]) -> Vec<String> {
        inputs.iter().map(Input::label).collect()
    }

    #[test]
    fn top_level_files_stand_alone_and_folders_group() {
        let entries = vec![
            ("export.zip".to_owned(), vec![1]),
            ("root/proj/s1/session.jsonl".to_owned(), vec![2]),
            ("one.jsonl".to_owned(), vec![3]),
            ("root/proj/s2/session.jsonl".to_owned(), vec![4]),
        ];
        let inputs = inputs_from_entries(entries);
        assert_eq!(names(&inputs), ["export.zip", "one.jsonl", "root"]);
        let Input::Entries { entries, .. } = &inputs[2] else {
            panic!("a folder input")
        };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn folders_without_a_shared_top_are_one_input() {
        let entries = vec![
            ("a/proj/s1/session.jsonl".to_owned(), vec![]),
            ("b\\proj\\s2\\session.jsonl".to_owned(), vec![]),
        ];
        let inputs = inputs_from_entries(entries);
        assert_eq!(names(&inputs), ["entries"]);
        let Input::Entries { entries, .. } = &inputs[0] else {
            panic!("a folder input")
        };
        assert_eq!(entries[1].0, "b/proj/s2/session.jsonl");
    }
}
