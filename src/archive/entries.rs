//! Loose entries to inputs: what a browser hands over (picked files, a dropped folder, files of
//! a persistence root with paths relative to it) grouped the way a folder on disk would be.

use super::Input;

/// Groups `(path, bytes)` entries into inputs. A top-level entry (no `/` in its path) is a file
/// of its own: an export ZIP or a lone log. All entries below a folder form one folder input,
/// in which every log finds its persistence root or export from its own path, so the files of
/// a root given relative to it load exactly as the root on disk does, and several dropped
/// folders keep their roots apart by their first path segment. Entries are taken in path
/// order, as a folder on disk is read.
pub fn inputs_from_entries(entries: Vec<(String, Vec<u8>)>) -> Vec<Input> {
    let mut inputs = Vec::new();
    let mut folder = Vec::new();
    let mut entries: Vec<(String, Vec<u8>)> = entries
        .into_iter()
        .map(|(path, bytes)| (path.replace('\\', "/").trim_start_matches('/').to_owned(), bytes))
        .collect();
    // In path order, as a folder on disk is read, whatever order the host listed them in.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, bytes) in entries {
        if path.contains('/') {
            folder.push((path, bytes));
        } else {
            inputs.push(Input::File { name: path, bytes });
        }
    }
    if !folder.is_empty() {
        let name = folder_label(&folder);
        inputs.push(Input::Entries { name, entries: folder });
    }
    inputs
}

/// The folder's first path segment when every entry shares it, else `entries`.
fn folder_label(folder: &[(String, Vec<u8>)]) -> String {
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
