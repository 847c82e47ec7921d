//! Files and folders on disk (native builds): only regular files are opened (a symlink only
//! when it resolves to one), opening never blocks on a FIFO, and reads are capped.

use crate::error::{Error, ErrorCode};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A regular file found on disk, not yet read.
#[derive(Debug)]
pub(super) struct DiskFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size when it was listed.
    pub len: u64,
}

/// What walking one path found.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// `(relative path, file)` for every log or ZIP name, in path order.
    pub files: Vec<(String, DiskFile)>,
    /// Names that would be read but are not regular files, or could not be listed.
    pub failures: Vec<(String, Error)>,
}

fn io_error(e: &std::io::Error) -> Error {
    Error::new(ErrorCode::LoadIo, e.to_string())
}

fn not_regular(what: &str) -> Error {
    Error::new(
        ErrorCode::LoadIo,
        format!("not a regular file ({what}); it is not read"),
    )
}

/// What a non-regular file is, for the report.
fn describe(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a FIFO";
        } else if kind.is_socket() {
            return "a socket";
        } else if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if meta.is_dir() { "a directory" } else { "not a file" }
}

/// The regular file `path` resolves to (following symlinks), or why it is not one.
pub(super) fn regular_file(path: &Path) -> Result<DiskFile, Error> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(&e))?;
    if !meta.is_file() {
        return Err(not_regular(describe(&meta)));
    }
    Ok(DiskFile {
        path: path.to_path_buf(),
        len: meta.len(),
    })
}

/// Opens a listed file without ever blocking (a FIFO swapped in after listing opens at once
/// on Linux) and checks that what was opened is still a regular file.
pub(super) fn open(file: &DiskFile) -> Result<File, Error> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(all(
        target_os = "linux",
        any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "arm",
            target_arch = "riscv64"
        )
    ))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK on these architectures; it changes nothing for regular files.
        options.custom_flags(0o4000);
    }
    let opened = options.open(&file.path).map_err(|e| io_error(&e))?;
    let meta = opened.metadata().map_err(|e| io_error(&e))?;
    if !meta.is_file() {
        return Err(not_regular(describe(&meta)));
    }
    Ok(opened)
}

/// Reads a listed file whole, refusing (before reading anything, when its size says so) one
/// larger than `max_bytes`.
pub(super) fn read_capped(file: &DiskFile, max_bytes: u64) -> Result<Vec<u8>, Error> {
    let too_big = || {
        Error::new(
            ErrorCode::LoadLimitExceeded,
            format!("the file is larger than the limit of {max_bytes} bytes (maxFileBytes)"),
        )
    };
    if file.len > max_bytes {
        return Err(too_big());
    }
    let opened = open(file)?;
    let mut bytes = Vec::with_capacity(file.len as usize);
    opened
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Whether a listed file starts like a ZIP (reads four bytes).
pub(super) fn starts_like_zip(file: &DiskFile) -> bool {
    let mut magic = [0u8; 4];
    open(file)
        .and_then(|mut f| f.read_exact(&mut magic).map_err(|e| io_error(&e)))
        .is_ok_and(|()| super::is_zip("", &magic))
}

/// Walks a folder: every file whose name `wanted` accepts, in path order. Symlinked folders
/// are not followed (no cycles); symlinked files are, when they resolve to regular files.
pub(super) fn walk(root: &Path, wanted: impl Fn(&str) -> bool) -> Listing {
    let mut listing = Listing::default();
    let mut pending = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, relative)) = pending.pop() {
        let children = match std::fs::read_dir(&dir) {
            Ok(read) => read.filter_map(Result::ok).collect::<Vec<_>>(),
            Err(e) => {
                listing.failures.push((relative, io_error(&e)));
                continue;
            }
        };
        for child in children {
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
            } else if wanted(&name) {
                match regular_file(&child.path()) {
                    Ok(file) => listing.files.push((child_relative, file)),
                    Err(e) => listing.failures.push((child_relative, e)),
                }
            }
        }
    }
    crate::sorting::sort_by(&mut listing.files, |a, b| a.0.cmp(&b.0));
    crate::sorting::sort_by(&mut listing.failures, |a, b| a.0.cmp(&b.0));
    listing
}
