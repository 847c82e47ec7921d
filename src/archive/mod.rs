//! Inputs to log files: persistence-root folders, single `.jsonl` / `.jsonl.zstd` files, DSH
//! export ZIPs and browser-supplied `(relative path, bytes)` lists, with bounded decompression:
//! one budget per load, read entry by entry.

pub mod budget;
#[cfg(not(target_arch = "wasm32"))]
mod disk;
pub mod entries;
pub mod layout;
mod unzip;

pub use budget::LoadBudget;

use crate::error::{Error, ErrorCode};
use crate::log::{Encoding, ReadLimits};
use std::collections::HashMap;

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
    /// What a staged load was handed (see [`entries::inputs_from_staged`]): a folder whose
    /// entries hold their bytes or defer them until their log is read, or (one entry, path
    /// `""`) a file whose bytes are deferred.
    Staged {
        /// A label for reports, as for [`Input::Entries`] (the file's name for a file).
        name: String,
        /// `(relative path with '/' separators, contents)`.
        entries: Vec<(String, Contents)>,
    },
}

/// An entry's contents as a staged load holds them.
#[derive(Clone, Debug)]
pub enum Contents {
    /// The bytes, handed over at once (ZIPs must be: gathering expands them).
    Held(Vec<u8>),
    /// Bytes the host hands over only when the entry's log is read.
    Deferred(Deferred),
}

/// An entry whose bytes are not here yet: the load asks its host for them by `key` when it
/// reaches the entry's log ([`crate::corpus::LoadJob::needed`]), and only then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deferred {
    /// The host's number for the entry.
    pub key: usize,
    /// The size the host declared; bytes of another size fail the log.
    pub size: u64,
    /// The entry's first bytes if the host was asked for them ([`entry_needs`]); the bytes
    /// supplied must start with them.
    pub head: Vec<u8>,
}

impl Deferred {
    /// Whether `bytes` are the entry the host declared: its size, and its first bytes when
    /// they were asked for; `SESSION_LOAD_IO` when not (the file changed between listing and
    /// reading).
    pub fn check(&self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() as u64 != self.size {
            let message = format!(
                "the file has {} bytes, not the {} declared: it changed while it was loading",
                bytes.len(),
                self.size
            );
            return Err(Error::new(ErrorCode::LoadIo, message));
        }
        if !bytes.starts_with(&self.head) {
            let message = "the file's first bytes changed while it was loading";
            return Err(Error::new(ErrorCode::LoadIo, message));
        }
        Ok(())
    }
}

/// What gathering must see of an entry (path as handed over) before its log is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryNeeds {
    /// Nothing more: its bytes can wait until its log is read (or forever: not a log).
    Nothing,
    /// Its first [`HEAD_BYTES`] bytes: only they tell whether it is a ZIP.
    Head,
    /// All its bytes now: it is a ZIP, which gathering expands.
    Bytes,
}

/// How many first bytes tell a ZIP (and a Zstandard log) from the rest.
pub const HEAD_BYTES: usize = 4;

/// What gathering needs of the entry at `path` before its log is read, given its first
/// bytes if known: the rule of [`gather`] (a file on its own is a ZIP by name or magic; in a
/// folder, a log's name wins over the magic) without its bytes.
pub fn entry_needs(path: &str, head: Option<&[u8]>) -> EntryNeeds {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches('/');
    let name = path.rsplit('/').next().unwrap_or_default();
    if path.contains('/') && is_log_name(name) {
        return EntryNeeds::Nothing;
    }
    match head {
        _ if name.to_ascii_lowercase().ends_with(".zip") => EntryNeeds::Bytes,
        None => EntryNeeds::Head,
        Some(head) if is_zip(name, head) => EntryNeeds::Bytes,
        Some(_) => EntryNeeds::Nothing,
    }
}

impl Input {
    /// The label used for this input in load reports.
    pub fn label(&self) -> String {
        match self {
            #[cfg(not(target_arch = "wasm32"))]
            Input::Path(path) => path.display().to_string(),
            Input::File { name, .. } | Input::Entries { name, .. } | Input::Staged { name, .. } => name.clone(),
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
    /// Maximum bytes read from one log file on disk (default 1 GiB). ZIPs on disk are read
    /// entry by entry, never whole.
    pub max_file_bytes: u64,
    /// Maximum bytes one load brings into memory in all: read from disk, inflated from ZIPs
    /// and decoded from Zstandard (default [`DEFAULT_MAX_LOAD_BYTES`]).
    pub max_load_bytes: u64,
    /// Behave like DSH: any failure fails the whole load and nothing is added.
    pub strict: bool,
}

/// Default of [`LoadOptions::max_load_bytes`]: 4 GiB natively; 2 GiB in wasm, whose whole
/// address space is 4 GiB and also holds the corpus and index.
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_MAX_LOAD_BYTES: u64 = 4 << 30;
/// Default of [`LoadOptions::max_load_bytes`]: 4 GiB natively; 2 GiB in wasm, whose whole
/// address space is 4 GiB and also holds the corpus and index.
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_MAX_LOAD_BYTES: u64 = 2 << 30;

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            limits: ReadLimits::default(),
            max_archive_bytes: 4 << 30,
            max_archive_entries: 100_000,
            max_file_bytes: 1 << 30,
            max_load_bytes: DEFAULT_MAX_LOAD_BYTES,
            strict: false,
        }
    }
}

impl LoadOptions {
    /// Checks every bound a face lets a caller set: each must be at least 1 (a zero bound
    /// would refuse every input). Depths above [`crate::json::MAX_JSON_DEPTH`] are accepted
    /// and act as that maximum. Fails with `SESSION_LOAD_INVALID_OPTION` naming the option.
    pub fn validate(&self) -> Result<(), Error> {
        match LIMITS.iter().find(|limit| (limit.get)(self) == 0) {
            Some(limit) => Err(Error::new(
                ErrorCode::LoadInvalidOption,
                format!("{} must be a positive integer", limit.name),
            )),
            None => Ok(()),
        }
    }
}

/// One settable bound of a load: its option name (camelCase, as every face spells it) and
/// where it lives in [`LoadOptions`].
pub struct Limit {
    /// The option name, e.g. `maxLineBytes`.
    pub name: &'static str,
    /// Reads the bound.
    pub get: fn(&LoadOptions) -> u64,
    /// Sets the bound (values past the field's range saturate).
    pub set: fn(&mut LoadOptions, u64),
}

fn saturating_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Every bound a face lets a caller set, in the README's order.
pub const LIMITS: &[Limit] = &[
    Limit {
        name: "maxDecompressedBytes",
        get: |o| o.limits.max_decompressed_bytes,
        set: |o, n| o.limits.max_decompressed_bytes = n,
    },
    Limit {
        name: "maxLineBytes",
        get: |o| o.limits.max_line_bytes as u64,
        set: |o, n| o.limits.max_line_bytes = saturating_usize(n),
    },
    Limit {
        name: "maxJsonDepth",
        get: |o| o.limits.max_json_depth as u64,
        set: |o, n| o.limits.max_json_depth = saturating_usize(n),
    },
    Limit {
        name: "maxObjectKeys",
        get: |o| o.limits.max_object_keys as u64,
        set: |o, n| o.limits.max_object_keys = saturating_usize(n),
    },
    Limit {
        name: "maxCompressionRatio",
        get: |o| o.limits.max_compression_ratio,
        set: |o, n| o.limits.max_compression_ratio = n,
    },
    Limit {
        name: "maxArchiveBytes",
        get: |o| o.max_archive_bytes,
        set: |o, n| o.max_archive_bytes = n,
    },
    Limit {
        name: "maxArchiveEntries",
        get: |o| o.max_archive_entries as u64,
        set: |o, n| o.max_archive_entries = saturating_usize(n),
    },
    Limit {
        name: "maxFileBytes",
        get: |o| o.max_file_bytes,
        set: |o, n| o.max_file_bytes = n,
    },
    Limit {
        name: "maxLoadBytes",
        get: |o| o.max_load_bytes,
        set: |o, n| o.max_load_bytes = n,
    },
];

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
    /// The input's position in its load: two inputs may share a label (the same file name
    /// picked from two folders), but never a position.
    pub input_index: usize,
    /// The path inside the input (`""` when the input is the file itself).
    pub path: String,
    /// How the bytes are encoded.
    pub encoding: Encoding,
    /// The file contents (empty while they are deferred).
    pub bytes: Vec<u8>,
    /// Set while the bytes are still to be handed over (see [`Deferred`]).
    pub deferred: Option<Deferred>,
    /// What the location says the header must be.
    pub binding: Binding,
}

impl LogFile {
    /// Its size as stored: the declared one while its bytes are deferred.
    pub fn size(&self) -> u64 {
        self.deferred.as_ref().map_or(self.bytes.len() as u64, |d| d.size)
    }

    /// Takes the bytes the host supplied for this deferred log (`Err`: the host could not read
    /// them). Bytes of another size than declared, or that do not start with the head it gave,
    /// are refused with `SESSION_LOAD_IO`: the file changed between listing and reading.
    pub fn take_supplied(&mut self, supplied: Result<Vec<u8>, Error>) -> Result<(), Error> {
        let Some(deferred) = self.deferred.take() else {
            return Err(Error::invalid_argument("this log's bytes are not deferred"));
        };
        let bytes = supplied?;
        deferred.check(&bytes)?;
        self.encoding = encoding_of_bytes(self.encoding, &bytes);
        self.bytes = bytes;
        Ok(())
    }
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
    /// ZIPs inside ZIPs, passed over unopened.
    pub nested_archives: usize,
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
    /// This load's budget, with what gathering spent; reading the logs spends the rest
    /// (`crate::log::read_log_within`).
    pub budget: LoadBudget,
}

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const EMPTY_ZIP_MAGIC: &[u8] = b"PK\x05\x06";
const ZSTD_MAGIC: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

/// How a log gathered as `gathered` is read once its `bytes` (or their first bytes) are known:
/// bytes that start with the Zstandard magic are Zstandard whatever the file's name.
pub(crate) fn encoding_of_bytes(gathered: Encoding, bytes: &[u8]) -> Encoding {
    match bytes.starts_with(ZSTD_MAGIC) {
        true => Encoding::Zstd,
        false => gathered,
    }
}

fn is_log_name(name: &str) -> bool {
    name.ends_with(".jsonl") || name.ends_with(".jsonl.zstd")
}

fn is_zip(name: &str, bytes: &[u8]) -> bool {
    bytes.starts_with(ZIP_MAGIC) || bytes.starts_with(EMPTY_ZIP_MAGIC) || name.to_ascii_lowercase().ends_with(".zip")
}

/// A log's encoding from its name and first bytes (the bytes win: a `.jsonl` may hold zstd).
/// A deferred log's is settled again from its bytes when they come
/// ([`LogFile::take_supplied`]).
fn encoding_of(name: &str, head: &[u8]) -> Encoding {
    if head.starts_with(ZSTD_MAGIC) || name.ends_with(".zstd") {
        Encoding::Zstd
    } else {
        Encoding::Raw
    }
}

/// Collects every log file from `inputs`. Never fails as a whole: problems become failures.
pub fn gather(inputs: Vec<Input>, options: &LoadOptions) -> Gathered {
    let mut gathered = Gathered {
        budget: LoadBudget::new(options.max_load_bytes),
        ..Gathered::default()
    };
    for input in inputs {
        let mut collected = Collected {
            label: input.label(),
            ..Collected::default()
        };
        let kind = match input {
            #[cfg(not(target_arch = "wasm32"))]
            Input::Path(path) => match collect_path(&path, options, &gathered.budget, &mut collected) {
                Some(kind) => kind,
                None => {
                    gathered.failures.append(&mut collected.failures);
                    continue;
                }
            },
            Input::File { name, bytes } => {
                if is_zip(&name, &bytes) {
                    collected.expand_zip(
                        "",
                        std::io::Cursor::new(&bytes),
                        bytes.len() as u64,
                        options,
                        &gathered.budget,
                    );
                    "zip"
                } else {
                    collected.tree.push((String::new(), Contents::Held(bytes)));
                    "file"
                }
            }
            Input::Entries { entries, .. } => {
                for (path, bytes) in entries {
                    collected.add_entry(path, bytes, options, &gathered.budget);
                }
                "entries"
            }
            Input::Staged { entries, .. } => {
                let file = matches!(entries.as_slice(), [(path, _)] if path.is_empty());
                for (path, contents) in entries {
                    match contents {
                        Contents::Held(bytes) => collected.add_entry(path, bytes, options, &gathered.budget),
                        deferred @ Contents::Deferred(_) => collected.tree.push((path, deferred)),
                    }
                }
                if file { "file" } else { "entries" }
            }
        };
        let mut summary = InputSummary {
            input: collected.label.clone(),
            kind,
            media: collected.media,
            ignored: collected.ignored,
            nested_archives: collected.nested_archives,
            ..InputSummary::default()
        };
        gathered.failures.append(&mut collected.failures);
        classify(&collected.label, collected.tree, &mut summary, &mut gathered);
        gathered.inputs.push(summary);
    }
    gathered
}

/// One input's files as they are collected, before classification.
#[derive(Default)]
struct Collected {
    label: String,
    /// `(relative path, contents)` of every file read or deferred (only log entries, for ZIPs).
    tree: Vec<(String, Contents)>,
    media: usize,
    ignored: usize,
    nested_archives: usize,
    failures: Vec<FileFailure>,
}

impl Collected {
    fn fail(&mut self, path: String, error: Error) {
        self.failures.push(FileFailure {
            input: self.label.clone(),
            path,
            code: error.code,
            message: error.message,
        });
    }

    /// Adds one folder entry: a ZIP's log entries, or the file itself.
    fn add_entry(&mut self, path: String, bytes: Vec<u8>, options: &LoadOptions, budget: &LoadBudget) {
        let name = path.rsplit('/').next().unwrap_or_default();
        if is_zip(name, &bytes) && !is_log_name(name) {
            let len = bytes.len() as u64;
            self.expand_zip(&path, std::io::Cursor::new(&bytes), len, options, budget);
        } else {
            self.tree.push((path, Contents::Held(bytes)));
        }
    }

    /// Adds the log entries of the ZIP at `path` (`""`: the input itself), entry by entry.
    fn expand_zip<R: std::io::Read + std::io::Seek>(
        &mut self,
        path: &str,
        source: R,
        len: u64,
        options: &LoadOptions,
        budget: &LoadBudget,
    ) {
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        match unzip::read_zip(source, len, options, budget) {
            Ok(found) => {
                self.media += found.media;
                self.ignored += found.ignored;
                self.nested_archives += found.nested_archives;
                for (name, error) in found.failures {
                    self.fail(format!("{prefix}{name}"), error);
                }
                self.tree.extend(
                    found
                        .logs
                        .into_iter()
                        .map(|(name, bytes)| (format!("{prefix}{name}"), Contents::Held(bytes))),
                );
            }
            Err(error) => self.fail(path.to_owned(), error),
        }
    }
}

/// Whether `parts` (a path split at `/`) name a file directly inside a `media` directory.
fn is_media_path(parts: &[&str]) -> bool {
    parts.iter().rev().nth(1) == Some(&"media")
}

/// Sorts one input's files into logs (with their location binding), media and the rest.
fn classify(label: &str, tree: Vec<(String, Contents)>, summary: &mut InputSummary, gathered: &mut Gathered) {
    let mut logs = Vec::new();
    for (path, contents) in tree {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let name = parts.last().copied().unwrap_or_default();
        let single_file = path.is_empty();
        if !single_file && !is_log_name(name) {
            if is_media_path(&parts) {
                summary.media += 1;
            } else {
                summary.ignored += 1;
            }
            continue;
        }
        let binding = match binding_of(&parts) {
            Ok(binding) => binding,
            Err(message) => {
                gathered.failures.push(layout_failure(label, &path, message));
                continue;
            }
        };
        let (bytes, deferred) = match contents {
            Contents::Held(bytes) => (bytes, None),
            Contents::Deferred(deferred) => (Vec::new(), Some(deferred)),
        };
        let head = deferred.as_ref().map_or(&bytes[..], |d| &d.head[..]);
        logs.push(LogFile {
            input: label.into(),
            input_index: gathered.inputs.len(),
            encoding: encoding_of(name, head),
            path,
            bytes,
            deferred,
            binding,
        });
    }
    let minority = minority_encoding_logs(&logs);
    for (log, breaks_its_root) in logs.into_iter().zip(minority) {
        if breaks_its_root {
            let message = "a persistence root holds one encoding, and this log uses the other one";
            gathered.failures.push(layout_failure(label, &log.path, message));
            continue;
        }
        summary.logs += 1;
        gathered.logs.push(log);
    }
}

/// Where a log at the path `parts` lies in DSH's layouts, or why its place breaks them.
fn binding_of(parts: &[&str]) -> Result<Binding, &'static str> {
    let n = parts.len();
    let name = parts.last().copied().unwrap_or_default();
    let is_session_log = name == "session.jsonl" || name == "session.jsonl.zstd";
    if n >= 3 && is_session_log && layout::is_project_dir(parts[n - 3]) {
        return Ok(Binding::PersistenceRoot {
            root: parts[..n - 3].join("/"),
            project: parts[n - 3].into(),
            session_dir: parts[n - 2].into(),
        });
    }
    if n >= 2 && layout::is_project_dir(parts[n - 2]) && !is_session_log {
        return Err("a legacy flat log directly inside a project directory is not part of the persistence layout");
    }
    if n >= 3 && parts[n - 3] == "subagents" && name == "session.jsonl" {
        return Ok(Binding::ExportChild {
            safe_id: parts[n - 2].into(),
        });
    }
    Ok(Binding::None)
}

/// Per log, whether it breaks its persistence root's one encoding: where a root holds both,
/// the logs of the rarer one do (the compressed ones, on a tie).
fn minority_encoding_logs(logs: &[LogFile]) -> Vec<bool> {
    fn root_of(log: &LogFile) -> Option<&str> {
        match &log.binding {
            Binding::PersistenceRoot { root, .. } => Some(root),
            _ => None,
        }
    }
    let is_zstd = |log: &LogFile| log.path.ends_with(".zstd");
    // Per root: how many plain logs, how many compressed.
    let mut roots: HashMap<&str, [usize; 2]> = HashMap::new();
    for log in logs {
        if let Some(root) = root_of(log) {
            roots.entry(root).or_default()[usize::from(is_zstd(log))] += 1;
        }
    }
    let breaks = |log: &LogFile| {
        let Some([raw, zstd]) = root_of(log).and_then(|root| roots.get(root)) else {
            return false;
        };
        raw > &0 && zstd > &0 && is_zstd(log) == (raw >= zstd)
    };
    logs.iter().map(breaks).collect()
}

fn layout_failure(label: &str, path: &str, message: &str) -> FileFailure {
    FileFailure {
        input: label.into(),
        path: path.into(),
        code: ErrorCode::LoadLayout,
        message: message.into(),
    }
}

/// Collects a file or folder on disk: log files read with a size cap, ZIPs entry by entry
/// (never read whole), anything that is not a regular file reported and left unread.
/// `None` when the path itself cannot be used.
#[cfg(not(target_arch = "wasm32"))]
fn collect_path(
    path: &std::path::Path,
    options: &LoadOptions,
    budget: &LoadBudget,
    collected: &mut Collected,
) -> Option<&'static str> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            collected.fail(String::new(), Error::new(ErrorCode::LoadIo, e.to_string()));
            return None;
        }
    };
    if !meta.is_dir() {
        let file = match disk::regular_file(path) {
            Ok(file) => file,
            Err(e) => {
                collected.fail(String::new(), e);
                return None;
            }
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let zip = is_zip(&name, &[]) || disk::starts_like_zip(&file);
        collect_disk_file(String::new(), &file, zip, options, budget, collected);
        return Some(if zip { "zip" } else { "file" });
    }
    let listing = disk::walk(path, |name| {
        is_log_name(name) || name.to_ascii_lowercase().ends_with(".zip")
    });
    for (relative, error) in listing.failures {
        collected.fail(relative, error);
    }
    for (relative, file) in listing.files {
        let zip = !is_log_name(relative.rsplit('/').next().unwrap_or_default());
        collect_disk_file(relative, &file, zip, options, budget, collected);
    }
    Some("directory")
}

/// Reads one listed file: a ZIP through seeks, a log whole (capped, charged to the budget).
#[cfg(not(target_arch = "wasm32"))]
fn collect_disk_file(
    relative: String,
    file: &disk::DiskFile,
    zip: bool,
    options: &LoadOptions,
    budget: &LoadBudget,
    collected: &mut Collected,
) {
    if zip {
        match disk::open(file) {
            Ok(opened) => collected.expand_zip(&relative, std::io::BufReader::new(opened), file.len, options, budget),
            Err(e) => collected.fail(relative, e),
        }
        return;
    }
    if file.len > budget.remaining() {
        collected.fail(relative, budget.exhausted());
        return;
    }
    let read = disk::read_capped(file, options.max_file_bytes);
    match read.and_then(|bytes| budget.spend(bytes.len() as u64).map(|()| bytes)) {
        Ok(bytes) => collected.tree.push((relative, Contents::Held(bytes))),
        Err(e) => collected.fail(relative, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(path: &str) -> Vec<&str> {
        path.split('/').collect()
    }

    #[test]
    fn a_log_is_bound_by_where_it_lies() {
        assert_eq!(
            binding_of(&parts("r/--home-p--/s1/session.jsonl.zstd")),
            Ok(Binding::PersistenceRoot {
                root: "r".into(),
                project: "--home-p--".into(),
                session_dir: "s1".into(),
            })
        );
        assert_eq!(
            binding_of(&parts("export/subagents/child_1/session.jsonl")),
            Ok(Binding::ExportChild {
                safe_id: "child_1".into()
            })
        );
        assert!(binding_of(&parts("r/_no-cwd/flat.jsonl")).is_err());
        assert_eq!(binding_of(&parts("notes/flat.jsonl")), Ok(Binding::None));
        assert_eq!(binding_of(&parts("session.jsonl")), Ok(Binding::None));
    }

    #[test]
    fn a_root_of_both_encodings_refuses_the_rarer_one_and_the_compressed_on_a_tie() {
        let log = |path: &str| LogFile {
            input: "in".into(),
            input_index: 0,
            path: path.into(),
            encoding: Encoding::Raw,
            bytes: Vec::new(),
            deferred: None,
            binding: binding_of(&parts(path)).expect("a log's place in its root"),
        };
        let logs = [
            log("a/_no-cwd/1/session.jsonl"),
            log("a/_no-cwd/2/session.jsonl.zstd"),
            log("b/_no-cwd/1/session.jsonl"),
            log("b/_no-cwd/2/session.jsonl"),
            log("b/_no-cwd/3/session.jsonl.zstd"),
            log("c/_no-cwd/1/session.jsonl.zstd"),
            log("loose.jsonl.zstd"),
        ];
        assert_eq!(
            minority_encoding_logs(&logs),
            [false, true, false, false, true, false, false]
        );
    }
}
