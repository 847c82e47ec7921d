//! A directory as a lazy source (native only): its logs listed by their headers, each read
//! from disk when [`Archive::load_listed`] brings its session in.

use super::{Archive, LoadCallOptions};
use crate::corpus::{ListingReport, LoadReport};
use crate::error::{Error, ErrorCode};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes of a log's start read to take its header; the whole log only when they lack it.
const PREFIX_BYTES: u64 = 64 * 1024;

impl Archive {
    /// Lists every `.jsonl` / `.jsonl.zstd` log under `dir` (paths relative to it bind as a
    /// load's entries do: `dir` may be a persistence root) by its header: one log's prefix in
    /// memory at a time. A log that cannot be read is a `SESSION_LOAD_IO` failure of the report.
    /// Reads of the listed sessions wait for [`Archive::load_listed`].
    pub fn list_directory(&mut self, dir: &Path) -> Result<ListingReport, Error> {
        let mut logs = Vec::new();
        walk(dir, "", &mut logs).map_err(|e| Error::new(ErrorCode::LoadIo, format!("{}: {e}", dir.display())))?;
        logs.sort();
        self.begin_listing();
        for path in &logs {
            let file = dir.join(path);
            let listed = read_prefix(&file).and_then(|prefix| self.list_entry(path, prefix, false));
            let listed = match listed {
                Ok(true) => Ok(()),
                Ok(false) => std::fs::read(&file)
                    .map_err(|e| Error::new(ErrorCode::LoadIo, e.to_string()))
                    .and_then(|bytes| self.list_entry(path, bytes, true).map(|_| ())),
                Err(error) => Err(error),
            };
            if let Err(error) = listed
                && let Some(listing) = self.listing.as_mut()
            {
                listing.fail(path, format!("{}: {}", file.display(), error.message));
            }
        }
        self.listed_root = Some(dir.to_owned());
        self.commit_listing()
    }

    /// Brings in the listed sessions among `ids` (all of them when `None`) by a normal load of
    /// each one's logs from the listed directory, one session at a time. A session whose logs
    /// cannot be read stays listed and its reads fail (see [`Archive::fail_listed`]).
    pub fn load_listed(&mut self, ids: Option<&[String]>) -> Result<LoadReport, Error> {
        let root: PathBuf = self
            .listed_root
            .clone()
            .ok_or_else(|| Error::invalid_argument("no directory is listed: call list_directory first"))?;
        let mut report = LoadReport::default();
        for (id, paths) in self.listed_paths(ids) {
            let read: Result<Vec<(String, Vec<u8>)>, Error> = paths
                .into_iter()
                .map(|path| {
                    let file = root.join(&path);
                    std::fs::read(&file)
                        .map(|bytes| (path, bytes))
                        .map_err(|e| Error::new(ErrorCode::LoadIo, format!("{}: {e}", file.display())))
                })
                .collect();
            match read {
                Ok(entries) => {
                    let one = self.load_entries(entries, LoadCallOptions::default())?;
                    report.inputs.extend(one.inputs);
                    report.sessions.extend(one.sessions);
                    report.failures.extend(one.failures);
                    if self.corpus.listed_paths(&id).is_some() {
                        let why = format!("session {id:?}: its logs did not load");
                        self.fail_listed(&id, &Error::new(ErrorCode::LoadIo, why));
                    }
                }
                Err(error) => self.fail_listed(&id, &error),
            }
        }
        Ok(report)
    }
}

/// The log files under `dir`, as `/`-separated paths relative to the listed directory.
fn walk(dir: &Path, prefix: &str, logs: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), &path, logs)?;
        } else if kind.is_file() && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zstd")) {
            logs.push(path);
        }
    }
    Ok(())
}

fn read_prefix(file: &Path) -> Result<Vec<u8>, Error> {
    let mut prefix = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(PREFIX_BYTES).read_to_end(&mut prefix))
        .map_err(|e| Error::new(ErrorCode::LoadIo, e.to_string()))?;
    Ok(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ArchiveOptions;

    fn log_text(id: &str, created_at: u64, words: &str) -> String {
        let header = format!(
            r#"{{"type":"session","version":0,"id":"{id}","createdAt":{created_at},"cwd":"/home/dev/app","delegationDepth":0}}"#
        );
        let event = format!(
            r#"{{"type":"user/message","seq":0,"time":{},"data":{{"id":"m0","role":"user","content":[{{"type":"text","text":"{words}"}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#,
            created_at + 1
        );
        format!("{header}\n{event}\n")
    }

    /// A persistence root of three sessions, a stray file and a log in the wrong directory.
    fn root(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dsh-listed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (id, at, words) in [("a", 1, "alpha words"), ("b", 2, "beta words"), ("c", 3, "gamma words")] {
            let session = dir.join("--home-dev-app--").join(id);
            std::fs::create_dir_all(&session).expect("mkdir");
            std::fs::write(session.join("session.jsonl"), log_text(id, at, words)).expect("write");
        }
        std::fs::write(dir.join("notes.txt"), "not a log").expect("write");
        let stray = dir.join("--home-dev-app--").join("elsewhere");
        std::fs::create_dir_all(&stray).expect("mkdir");
        std::fs::write(stray.join("session.jsonl"), log_text("d", 4, "delta")).expect("write");
        dir
    }

    fn listing(archive: &Archive) -> String {
        serde_json::to_string(&archive.corpus().list_sessions()).expect("serializes")
    }

    #[test]
    fn a_listed_directory_answers_as_a_full_load_and_reads_on_demand() {
        let dir = root("answers");
        let mut full = Archive::new(ArchiveOptions::default());
        full.load_paths(&[dir.display().to_string()], LoadCallOptions::default())
            .expect("loads");
        let mut lazy = Archive::new(ArchiveOptions::default());
        let report = lazy.list_directory(&dir).expect("lists");
        assert_eq!(report.sessions.len(), 3, "{report:?}");
        assert_eq!(report.failures.len(), 1, "the log in the wrong directory: {report:?}");
        assert_eq!(report.failures[0].code, ErrorCode::LoadIdentityMismatch);
        assert_eq!(listing(&lazy), listing(&full));
        assert_eq!(lazy.corpus().listed_len(), 3);

        let read = |a: &Archive, id: &str| {
            format!(
                "{:?}",
                a.corpus().read_session(id).map(|s| serde_json::to_string(&s).ok())
            )
        };
        assert_ne!(read(&lazy, "b"), read(&full, "b"), "not read yet");
        lazy.load_listed(Some(&["b".to_owned()])).expect("loads b");
        assert_eq!(read(&lazy, "b"), read(&full, "b"));
        assert_eq!(lazy.corpus().listed_len(), 2, "a and c are still listed only");

        let config = crate::search::request::SearchConfig::default();
        let request = crate::search::request::SessionSearchRequest::new("words", Vec::new(), 10, &config)
            .expect("a valid request");
        let search = |a: &mut Archive| a.search_sessions(&request).map(|p| p.items.len());
        assert_eq!(
            search(&mut lazy).map_err(|e| e.code),
            Err(ErrorCode::QueryPersistenceFailed)
        );
        std::fs::remove_file(dir.join("--home-dev-app--").join("a").join("session.jsonl")).expect("rm");
        lazy.load_listed(None).expect("loads the rest");
        assert_eq!(lazy.corpus().listed_len(), 0);
        let error = lazy.corpus().read_session("a").expect_err("its log is gone");
        assert_eq!(error.code, ErrorCode::QueryPersistenceFailed);
        assert_eq!(read(&lazy, "c"), read(&full, "c"));
        assert_eq!(listing(&lazy), listing(&full), "a still lists");
        assert_eq!(search(&mut lazy).ok(), Some(2), "b and c are found");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
