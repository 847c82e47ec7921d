//! Inputs to log files: persistence-root folders, single `.jsonl` / `.jsonl.zstd` files, DSH
//! export ZIPs and browser-supplied `(relative path, bytes)` lists, with bounded decompression.

pub mod entries;
pub mod layout;

use crate::error::{Error, ErrorCode};
use crate::log::{Encoding, ReadLimits};
use std::io::Read;

/// One thing a user hands to `load`.
#[derive(Clone, Debug)]
pub enum Input {
    /// A file or folder on disk (native builds only).
    #[cfg(not(target_arch = "wasm32"))]
    Path(std::path::PathBuf),
    /// One file's bytes: a ZIP, a `.jsonl` or a `.jsonl.zstd`.
    File {
        /// The file name (decides the encoding when the bytes do not).
        name: String,
        /// The file contents.
        bytes: Vec<u8>,
    },
    /// A folder as a list of relative paths and bytes (what a browser drop yields).
    Entries {
        /// A label for reports, e.g. the dropped folder's name.
        name: String,
        /// `(relative path with '/' separators, bytes)`.
        entries: Vec<(String, Vec<u8>)>,
    },
}

impl Input {
    /// The label used for this input in load reports.
    pub fn label(&self) -> String {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            Input::Path(path) => path.display().to_string(),
            Input::File { name, .. } | Input::Entries { name, .. } => name.clone(),
        }
    }
}

/// Options for a load.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Bounds for each log.
    pub limits: ReadLimits,
    /// Maximum total bytes decompressed from one ZIP (default 4 GiB).
    pub max_archive_bytes: u64,
    /// Maximum number of entries in one ZIP (default 100 000).
    pub max_archive_entries: usize,
    /// Behave like DSH: any failure fails the whole load and nothing is added.
    pub strict: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            limits: ReadLimits::default(),
            max_archive_bytes: 4 << 30,
            max_archive_entries: 100_000,
            strict: false,
        }
    }
}

/// How a log's location constrains its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// A loose file: no constraint.
    None,
    /// `<project>/<session dir>/session.jsonl[.zstd]` inside a persistence root.
    PersistenceRoot {
        /// The path of the root inside its input (`""` for the input itself).
        root: String,
        /// The project directory name.
        project: String,
        /// The session directory name.
        session_dir: String,
    },
    /// `subagents/<safeId>/session.jsonl` inside a DSH export.
    ExportChild {
        /// The export's safe id for this child.
        safe_id: String,
    },
}

/// One log file found in the inputs.
#[derive(Clone, Debug)]
pub struct LogFile {
    /// The input's label.
    pub input: String,
    /// The path inside the input (`""` when the input is the file itself).
    pub path: String,
    /// How the bytes are encoded.
    pub encoding: Encoding,
    /// The file contents.
    pub bytes: Vec<u8>,
    /// What the location says the header must be.
    pub binding: Binding,
}

/// A failure tied to an input file (not to a session).
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileFailure {
    /// The input's label.
    pub input: String,
    /// The path inside the input.
    pub path: String,
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

/// What gathering found in one input.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputSummary {
    /// The input's label.
    pub input: String,
    /// `directory`, `zip`, `file` or `entries`.
    pub kind: &'static str,
    /// Log files found.
    pub logs: usize,
    /// Media files seen (kept out of the corpus).
    pub media: usize,
    /// Other files passed over.
    pub ignored: usize,
}

/// Everything gathered from the inputs, before any log is parsed.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Log files, in input order.
    pub logs: Vec<LogFile>,
    /// Files that could not be read or break the layout rules.
    pub failures: Vec<FileFailure>,
    /// One summary per input.
    pub inputs: Vec<InputSummary>,
}

/// An input's files as `(relative path, bytes)`, with what kind of input it was.
#[cfg(not(target_arch = "wasm32"))]
type FileList = (&'static str, Vec<(String, Vec<u8>)>);

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const EMPTY_ZIP_MAGIC: &[u8] = b"PK\x05\x06";
const ZSTD_MAGIC: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

fn is_log_name(name: &str) -> bool {
    name.ends_with(".jsonl") || name.ends_with(".jsonl.zstd")
}

fn is_zip(name: &str, bytes: &[u8]) -> bool {
    bytes.starts_with(ZIP_MAGIC) || bytes.starts_with(EMPTY_ZIP_MAGIC) || name.to_ascii_lowercase().ends_with(".zip")
}

/// Collects every log file from `inputs`. Never fails as a whole: problems become failures.
pub fn gather(inputs: Vec<Input>, options: &LoadOptions) -> Gathered {
    let mut gathered = Gathered::default();
    for input in inputs {
        let label = input.label();
        let (kind, files) = match input {
            #[cfg(not(target_arch = "wasm32"))]
            Input::Path(path) => match read_path(&path, &label, &mut gathered.failures) {
                Some(found) => found,
                None => continue,
            },
            Input::File { name, bytes } => {
                if is_zip(&name, &bytes) {
                    ("zip", vec![(name, bytes)])
                } else {
                    ("file", vec![(String::new(), bytes)])
                }
            }
            Input::Entries { entries, .. } => ("entries", entries),
        };
        let mut summary = InputSummary {
            input: label.clone(),
            kind,
            ..InputSummary::default()
        };
        let mut tree: Vec<(String, Vec<u8>)> = Vec::new();
        for (path, bytes) in files {
            let name = path.rsplit('/').next().unwrap_or_default().to_owned();
            if is_zip(&name, &bytes) && !is_log_name(&name) {
                match unzip(&bytes, options) {
                    Ok(entries) => {
                        let prefix = if kind == "zip" {
                            String::new()
                        } else {
                            format!("{path}/")
                        };
                        tree.extend(entries.into_iter().map(|(p, b)| (format!("{prefix}{p}"), b)));
                    }
                    Err(e) => gathered.failures.push(FileFailure {
                        input: label.clone(),
                        path,
                        code: e.code,
                        message: e.message,
                    }),
                }
            } else {
                tree.push((path, bytes));
            }
        }
        classify(&label, tree, &mut summary, &mut gathered);
        gathered.inputs.push(summary);
    }
    gathered
}

/// Sorts one input's files into logs (with their location binding), media and the rest.
fn classify(label: &str, tree: Vec<(String, Vec<u8>)>, summary: &mut InputSummary, gathered: &mut Gathered) {
    let mut logs = Vec::new();
    for (path, bytes) in tree {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let name = parts.last().copied().unwrap_or_default();
        let single_file = path.is_empty();
        if !single_file && !is_log_name(name) {
            if parts.iter().rev().nth(1) == Some(&"media") {
                summary.media += 1;
            } else {
                summary.ignored += 1;
            }
            continue;
        }
        let encoding = if bytes.starts_with(ZSTD_MAGIC) || name.ends_with(".zstd") {
            Encoding::Zstd
        } else {
            Encoding::Raw
        };
        let n = parts.len();
        let binding = if n >= 3
            && (name == "session.jsonl" || name == "session.jsonl.zstd")
            && layout::is_project_dir(parts[n - 3])
        {
            Binding::PersistenceRoot {
                root: parts[..n - 3].join("/"),
                project: parts[n - 3].into(),
                session_dir: parts[n - 2].into(),
            }
        } else if n >= 2
            && layout::is_project_dir(parts[n - 2])
            && name != "session.jsonl"
            && name != "session.jsonl.zstd"
        {
            gathered.failures.push(FileFailure {
                input: label.into(),
                path: path.clone(),
                code: ErrorCode::LoadLayout,
                message: "a legacy flat log directly inside a project directory is not part of the persistence layout"
                    .into(),
            });
            continue;
        } else if n >= 3 && parts[n - 3] == "subagents" && name == "session.jsonl" {
            Binding::ExportChild {
                safe_id: parts[n - 2].into(),
            }
        } else {
            Binding::None
        };
        logs.push(LogFile {
            input: label.into(),
            path,
            encoding,
            bytes,
            binding,
        });
    }
    // A persistence root holds one encoding; logs of the rarer one break the layout.
    let mut roots: Vec<(String, usize, usize)> = Vec::new();
    for log in &logs {
        if let Binding::PersistenceRoot { root, .. } = &log.binding {
            let zstd = log.path.ends_with(".zstd");
            match roots.iter_mut().find(|(r, _, _)| r == root) {
                Some(entry) => {
                    if zstd {
                        entry.2 += 1
                    } else {
                        entry.1 += 1
                    }
                }
                None => roots.push((root.clone(), usize::from(!zstd), usize::from(zstd))),
            }
        }
    }
    for log in logs {
        if let Binding::PersistenceRoot { root, .. } = &log.binding
            && let Some((_, raw, zstd)) = roots.iter().find(|(r, _, _)| r == root)
        {
            let is_zstd = log.path.ends_with(".zstd");
            let minority = if raw >= zstd { is_zstd } else { !is_zstd };
            if *raw > 0 && *zstd > 0 && minority {
                gathered.failures.push(FileFailure {
                    input: label.into(),
                    path: log.path.clone(),
                    code: ErrorCode::LoadLayout,
                    message: "a persistence root holds one encoding, and this log uses the other one".into(),
                });
                continue;
            }
        }
        summary.logs += 1;
        gathered.logs.push(log);
    }
}

/// Expands a ZIP with bounded entry count and decompressed size. Entry names are data only.
fn unzip(bytes: &[u8], options: &LoadOptions) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let invalid = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorCode::LoadInvalidArchive,
            format!("not a readable ZIP archive: {e}"),
        )
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| invalid(&e))?;
    if archive.len() > options.max_archive_entries {
        return Err(Error::new(
            ErrorCode::LoadLimitExceeded,
            format!(
                "the archive has {} entries, more than the limit of {}",
                archive.len(),
                options.max_archive_entries
            ),
        ));
    }
    let mut total = 0u64;
    let mut entries = Vec::new();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|e| invalid(&e))?;
        if entry.is_dir() {
            continue;
        }
        let name = String::from_utf8_lossy(entry.name_raw()).replace('\\', "/");
        if !is_log_name(&name) && !name.contains("media/") {
            continue;
        }
        let per_entry = options
            .limits
            .max_decompressed_bytes
            .min(options.max_archive_bytes - total);
        let mut data = Vec::new();
        (&mut entry)
            .take(per_entry + 1)
            .read_to_end(&mut data)
            .map_err(|e| invalid(&e))?;
        if data.len() as u64 > per_entry {
            return Err(Error::new(
                ErrorCode::LoadLimitExceeded,
                format!("entry {name:?} decompresses beyond the configured limit"),
            ));
        }
        total += data.len() as u64;
        entries.push((name, data));
    }
    Ok(entries)
}

/// Reads a file or walks a folder on disk (only log files and ZIPs are read).
#[cfg(not(target_arch = "wasm32"))]
fn read_path(path: &std::path::Path, label: &str, failures: &mut Vec<FileFailure>) -> Option<FileList> {
    let io_failure = |path: String, e: std::io::Error| FileFailure {
        input: label.into(),
        path,
        code: ErrorCode::LoadIo,
        message: e.to_string(),
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            failures.push(io_failure(String::new(), e));
            return None;
        }
    };
    if meta.is_file() {
        return match std::fs::read(path) {
            Ok(bytes) => {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Some(if is_zip(&name, &bytes) {
                    ("zip", vec![(name, bytes)])
                } else {
                    ("file", vec![(String::new(), bytes)])
                })
            }
            Err(e) => {
                failures.push(io_failure(String::new(), e));
                None
            }
        };
    }
    let mut files = Vec::new();
    let mut pending = vec![(path.to_path_buf(), String::new())];
    while let Some((dir, relative)) = pending.pop() {
        let mut children: Vec<_> = match std::fs::read_dir(&dir) {
            Ok(read) => read.filter_map(Result::ok).collect(),
            Err(e) => {
                failures.push(io_failure(relative, e));
                continue;
            }
        };
        children.sort_by_key(|c| c.file_name());
        for child in children.into_iter().rev() {
            let name = child.file_name().to_string_lossy().into_owned();
            let child_relative = if relative.is_empty() {
                name.clone()
            } else {
                format!("{relative}/{name}")
            };
            let Ok(kind) = child.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push((child.path(), child_relative));
            } else if is_log_name(&name) || name.to_ascii_lowercase().ends_with(".zip") {
                match std::fs::read(child.path()) {
                    Ok(bytes) => files.push((child_relative, bytes)),
                    Err(e) => failures.push(io_failure(child_relative, e)),
                }
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Some(("directory", files))
}
