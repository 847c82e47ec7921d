//! ZIP archives read entry by entry: a bad entry fails alone, media and other entries are
//! counted without being inflated, and inflation stops at the first bound it reaches — the
//! entry's, the archive's, the load's, or the compression-ratio guard's.

use super::budget::{LoadBudget, ratio_allowance};
use super::{LoadOptions, is_log_name, is_media_path};
use crate::error::{Error, ErrorCode};
use std::io::{Read, Seek};

/// What one archive yielded.
#[derive(Debug, Default)]
pub(super) struct Unzipped {
    /// Log entries, inflated: `(entry name, bytes)`.
    pub logs: Vec<(String, Vec<u8>)>,
    /// Entries under a `media/` directory (counted, never inflated).
    pub media: usize,
    /// Other entries passed over (not inflated).
    pub ignored: usize,
    /// ZIPs inside the archive (not opened: an archive may not hold archives).
    pub nested_archives: usize,
    /// Entries that failed, each alone: `(entry name, why)`.
    pub failures: Vec<(String, Error)>,
}

/// What an entry is, from its name alone.
enum EntryKind {
    Directory,
    Log,
    Media,
    NestedArchive,
    Other,
}

fn entry_kind(name: &str, is_dir: bool) -> EntryKind {
    let parts: Vec<&str> = name.split('/').filter(|p| !p.is_empty()).collect();
    let file_name = parts.last().copied().unwrap_or_default();
    if is_dir {
        EntryKind::Directory
    } else if is_log_name(file_name) {
        EntryKind::Log
    } else if is_media_path(&parts) {
        EntryKind::Media
    } else if file_name.to_ascii_lowercase().ends_with(".zip") {
        EntryKind::NestedArchive
    } else {
        EntryKind::Other
    }
}

fn invalid(e: &dyn std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::LoadInvalidArchive,
        format!("not a readable ZIP archive: {e}"),
    )
}

fn over(what: &str, limit: u64) -> Error {
    Error::new(
        ErrorCode::LoadLimitExceeded,
        format!("the entry decompresses beyond {what} ({limit} bytes)"),
    )
}

/// Reads the archive in `source` (`archive_len` bytes long). Fails as a whole only when the
/// archive cannot be opened or has too many entries; every other problem is one entry's.
pub(super) fn read_zip<R: Read + Seek>(
    source: R,
    archive_len: u64,
    options: &LoadOptions,
    budget: &LoadBudget,
) -> Result<Unzipped, Error> {
    let mut archive = zip::ZipArchive::new(source).map_err(|e| invalid(&e))?;
    if archive.len() > options.max_archive_entries {
        return Err(Error::new(
            ErrorCode::LoadLimitExceeded,
            format!(
                "the archive has {} entries, more than the limit of {} (maxArchiveEntries)",
                archive.len(),
                options.max_archive_entries
            ),
        ));
    }
    // Entries may share compressed bytes (many names, one range), so the ratio guard also
    // bounds the archive as a whole by its own size.
    let ratio = options.limits.max_compression_ratio;
    let archive_allowance = options.max_archive_bytes.min(ratio_allowance(archive_len, ratio));
    let mut inflated = 0u64;
    let mut out = Unzipped::default();
    for index in 0..archive.len() {
        let (name, kind, compressed, declared) = match archive.by_index_raw(index) {
            Ok(entry) => {
                let name = String::from_utf8_lossy(entry.name_raw()).replace('\\', "/");
                let kind = entry_kind(&name, entry.is_dir());
                (name, kind, entry.compressed_size(), entry.size())
            }
            Err(e) => {
                out.failures.push((format!("#{index}"), invalid(&e)));
                continue;
            }
        };
        match kind {
            EntryKind::Directory => {}
            EntryKind::Media => out.media += 1,
            EntryKind::NestedArchive => out.nested_archives += 1,
            EntryKind::Other => out.ignored += 1,
            EntryKind::Log => {
                let bounds = EntryBounds {
                    per_log: options.limits.max_decompressed_bytes,
                    archive: archive_allowance - inflated,
                    ratio: ratio_allowance(compressed, ratio),
                    load: budget.remaining(),
                };
                match inflate(&mut archive, index, declared, &bounds) {
                    Ok(bytes) => match budget.spend(bytes.len() as u64) {
                        Ok(()) => {
                            inflated += bytes.len() as u64;
                            out.logs.push((name, bytes));
                        }
                        Err(e) => out.failures.push((name, e)),
                    },
                    Err(e) => out.failures.push((name, e)),
                }
            }
        }
    }
    Ok(out)
}

/// The bounds on one entry's output, each with the name a report gives it.
struct EntryBounds {
    per_log: u64,
    archive: u64,
    ratio: u64,
    load: u64,
}

impl EntryBounds {
    /// The tightest bound and its description.
    fn tightest(&self) -> (u64, &'static str) {
        [
            (self.per_log, "the per-log limit (maxDecompressedBytes)"),
            (
                self.archive,
                "what is left of the archive's limit (maxArchiveBytes, or the compression-ratio guard on the whole archive)",
            ),
            (
                self.ratio,
                "the compression-ratio guard (maxCompressionRatio times its compressed size)",
            ),
            (self.load, "what is left of this load's limit (maxLoadBytes)"),
        ]
        .into_iter()
        .min_by_key(|(limit, _)| *limit)
        .unwrap_or((0, "a limit"))
    }
}

/// Inflates entry `index`, refusing before any work when its declared size is already over
/// the tightest bound, and stopping as soon as its output passes it.
fn inflate<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    index: usize,
    declared: u64,
    bounds: &EntryBounds,
) -> Result<Vec<u8>, Error> {
    let (limit, what) = bounds.tightest();
    if declared > limit {
        return Err(over(what, limit));
    }
    let entry = archive.by_index(index).map_err(|e| invalid(&e))?;
    let mut data = Vec::with_capacity(declared.min(limit).min(64 << 20) as usize);
    entry
        .take(limit.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| {
            Error::new(
                ErrorCode::LoadInvalidArchive,
                format!("the entry cannot be inflated: {e}"),
            )
        })?;
    if data.len() as u64 > limit {
        return Err(over(what, limit));
    }
    Ok(data)
}
