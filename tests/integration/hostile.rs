//! Hostile archives: ZIPs read entry by entry (one bad entry fails alone), bombs stopped by
//! the ratio guard and the per-load budget, files on disk that are not regular files, and a
//! matrix of malformed inputs, each with its code, its time and its peak memory.
#![cfg(not(target_arch = "wasm32"))]

use crate::zstd_frame;
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{Corpus, LoadReport};
use dsh_session_search::error::ErrorCode;
use std::io::Write;
use std::time::{Duration, Instant};

const CWD: &str = "/home/dev/app";
const PROJECT: &str = "--home-dev-app--";

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":0,"id":"{id}","createdAt":1700000000000,"cwd":"{CWD}","delegationDepth":0}}"#
    )
}

fn raw_log(id: &str) -> Vec<u8> {
    let lines = [
        r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#,
        r#"{"type":"user/message","seq":1,"time":2,"data":{"id":"m1","role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#,
        r#"{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
    ];
    let mut text = header(id) + "\n";
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text.into_bytes()
}

fn zstd_log(id: &str) -> Vec<u8> {
    let log = raw_log(id);
    let split = log.iter().position(|b| *b == b'\n').expect("header line") + 1;
    let mut out = zstd_frame(&log[..split]);
    out.extend(zstd_frame(&log[split..]));
    out
}

fn root_entry(id: &str, zstd: bool) -> String {
    format!("{PROJECT}/{id}/session.jsonl{}", if zstd { ".zstd" } else { "" })
}

fn zip_with(entries: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(method)
        .large_file(false);
    for (name, bytes) in entries {
        writer.start_file(*name, options).expect("entry");
        writer.write_all(bytes).expect("write");
    }
    writer.finish().expect("finish").into_inner()
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    zip_with(entries, zip::CompressionMethod::Deflated)
}

fn load_with(inputs: Vec<Input>, options: LoadOptions) -> (Corpus, LoadReport) {
    let mut corpus = Corpus::new();
    let report = corpus.load(inputs, &options).expect("non-strict load");
    (corpus, report)
}

fn load_zip(bytes: Vec<u8>, options: LoadOptions) -> (Corpus, LoadReport) {
    load_with(
        vec![Input::File {
            name: "export.zip".into(),
            bytes,
        }],
        options,
    )
}

fn failure_codes(report: &LoadReport) -> Vec<(String, ErrorCode)> {
    report.failures.iter().map(|f| (f.path.clone(), f.code)).collect()
}

/// 25 sessions in one persistence root, as `(entry name, log)`.
fn root_of_25() -> Vec<(String, Vec<u8>)> {
    (0..25)
        .map(|i| {
            let id = format!("s{i:02}");
            (root_entry(&id, false), raw_log(&id))
        })
        .collect()
}

fn zip_of_owned(entries: &[(String, Vec<u8>)], method: zip::CompressionMethod) -> Vec<u8> {
    let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    zip_with(&borrowed, method)
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("marker present")
}

#[test]
fn a_bad_checksum_fails_only_its_entry() {
    let entries = root_of_25();
    let mut zip = zip_of_owned(&entries, zip::CompressionMethod::Stored);
    // Stored data: flip one byte inside s07's log, so only its CRC-32 disagrees.
    let at = find(&zip, br#""id":"s07""#);
    zip[at + 7] = b'x';
    let (corpus, report) = load_zip(zip, LoadOptions::default());
    assert_eq!(corpus.len(), 24, "{report:?}");
    assert_eq!(
        failure_codes(&report),
        [(root_entry("s07", false), ErrorCode::LoadInvalidArchive)]
    );
}

#[test]
fn corrupt_deflate_data_fails_only_its_entry() {
    let entries = root_of_25();
    let clean = zip_of_owned(&entries, zip::CompressionMethod::Deflated);
    // Overwrite the middle of s12's deflate stream with bytes that are not a valid block.
    let archive = zip::ZipArchive::new(std::io::Cursor::new(&clean)).expect("zip");
    let index = archive.index_for_name(&root_entry("s12", false)).expect("entry");
    let mut archive = archive;
    let entry = archive.by_index_raw(index).expect("entry");
    let (start, len) = (
        entry.data_start().expect("offset") as usize,
        entry.compressed_size() as usize,
    );
    drop(entry);
    let mut zip = clean.clone();
    for byte in &mut zip[start..start + len] {
        *byte = 0xFF;
    }
    let (corpus, report) = load_zip(zip, LoadOptions::default());
    assert_eq!(corpus.len(), 24, "{report:?}");
    assert_eq!(
        failure_codes(&report),
        [(root_entry("s12", false), ErrorCode::LoadInvalidArchive)]
    );
}

#[test]
fn an_over_limit_entry_fails_alone_and_media_are_counted_without_inflating() {
    let mut entries = root_of_25();
    // A bomb among the logs, and a media entry whose deflate data is garbage: counting
    // it must not inflate it (else it would fail).
    entries.push((root_entry("bomb", false), vec![b'\n'; 8 << 20]));
    entries.push(("media/sha256:00.png".into(), vec![0u8; 1 << 20]));
    entries.push(("nested/inner.zip".into(), b"PK\x03\x04".to_vec()));
    entries.push(("notes.txt".into(), b"hello".to_vec()));
    let clean = zip_of_owned(&entries, zip::CompressionMethod::Deflated);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&clean)).expect("zip");
    let index = archive.index_for_name("media/sha256:00.png").expect("media");
    let entry = archive.by_index_raw(index).expect("entry");
    let (start, len) = (
        entry.data_start().expect("offset") as usize,
        entry.compressed_size() as usize,
    );
    drop(entry);
    let mut zip = clean.clone();
    zip[start..start + len].fill(0xFF);
    let (corpus, report) = load_zip(zip, LoadOptions::default());
    assert_eq!(corpus.len(), 25, "{report:?}");
    assert_eq!(
        failure_codes(&report),
        [(root_entry("bomb", false), ErrorCode::LoadLimitExceeded)]
    );
    let summary = &report.inputs[0];
    assert_eq!((summary.media, summary.nested_archives, summary.ignored), (1, 1, 1));
}

/// A ZIP whose central directory lists `copies` names that all point at one entry's data.
fn overlapping_zip(copies: usize, plain: &[u8]) -> Vec<u8> {
    let zip = zip_of(&[("a/session.jsonl", plain)]);
    let eocd = zip.len() - 22;
    assert_eq!(&zip[eocd..eocd + 4], b"PK\x05\x06");
    let cd_offset = u32::from_le_bytes(zip[eocd + 16..eocd + 20].try_into().expect("4")) as usize;
    let record = zip[cd_offset..eocd].to_vec();
    let name_at = 46;
    let mut out = zip[..cd_offset].to_vec();
    for i in 0..copies {
        let mut copy = record.clone();
        // Same length as "a/session.jsonl": "{i:05}/s.jsonl" + padding.
        let name = format!("{i:07}/x.jsonl");
        assert_eq!(name.len(), "a/session.jsonl".len());
        copy[name_at..name_at + name.len()].copy_from_slice(name.as_bytes());
        out.extend(copy);
    }
    let cd_size = out.len() - cd_offset;
    let mut end = zip[eocd..].to_vec();
    end[8..10].copy_from_slice(&(copies as u16).to_le_bytes());
    end[10..12].copy_from_slice(&(copies as u16).to_le_bytes());
    end[12..16].copy_from_slice(&(cd_size as u32).to_le_bytes());
    end[16..20].copy_from_slice(&(cd_offset as u32).to_le_bytes());
    out.extend(end);
    out
}

#[test]
fn overlapping_entries_cannot_multiply_what_is_inflated() {
    // 1,000 names over one 16 MiB entry that compresses to about 16 KiB.
    let zip = overlapping_zip(1000, &vec![b' '; 16 << 20]);
    assert!(zip.len() < 200 << 10, "{}", zip.len());
    let started = Instant::now();
    let (corpus, report) = load_zip(zip.clone(), LoadOptions::default());
    let spent = started.elapsed();
    assert!(corpus.is_empty());
    assert_eq!(report.failures.len(), 1000, "every name is reported");
    assert!(
        report.failures.iter().all(|f| f.code == ErrorCode::LoadLimitExceeded),
        "{:?}",
        &report.failures[..3]
    );
    // Each copy stops at the ratio guard (100 × 16 KiB + 1 MiB); before, each inflated 16 MiB.
    assert!(spent < Duration::from_secs(30), "took {spent:?}");

    // Copies each within the entry guard (1 MiB from 1 KiB) still share one archive-wide
    // allowance of 100 × the archive's size: a few inflate, the rest are refused.
    let zip = overlapping_zip(1000, &vec![b' '; 1 << 20]);
    let (_, report) = load_zip(zip, LoadOptions::default());
    let refused = report
        .failures
        .iter()
        .filter(|f| f.code == ErrorCode::LoadLimitExceeded && f.message.contains("maxArchiveBytes"))
        .count();
    assert!(refused >= 980, "{refused} refused: {:?}", &report.failures[..3]);
}

#[test]
fn a_deflate_bomb_stops_at_the_ratio_guard() {
    // 64 MiB of one byte deflates to about 64 KiB: 1000:1.
    let zip = zip_of(&[("s/session.jsonl", &vec![b'x'; 64 << 20])]);
    let (_, report) = load_zip(zip, LoadOptions::default());
    assert_eq!(report.failures[0].code, ErrorCode::LoadLimitExceeded);
    assert!(
        report.failures[0].message.contains("maxCompressionRatio"),
        "{}",
        report.failures[0].message
    );
}

#[test]
fn one_budget_bounds_every_input_of_a_load() {
    let options = LoadOptions {
        max_load_bytes: 4096,
        ..LoadOptions::default()
    };
    let inputs: Vec<Input> = (0..10)
        .map(|i| {
            let id = format!("z{i}");
            Input::File {
                name: format!("{id}.zip"),
                bytes: zip_of(&[(root_entry(&id, false).as_str(), raw_log(&id).as_slice())]),
            }
        })
        .collect();
    let each = raw_log("z0").len() as u64;
    let (corpus, report) = load_with(inputs, options);
    let expected = (4096 / each) as usize;
    assert_eq!(corpus.len(), expected, "{report:?}");
    assert_eq!(report.failures.len(), 10 - expected);
    assert!(report.failures.iter().all(|f| f.code == ErrorCode::LoadLimitExceeded));
    assert!(report.failures[0].message.contains("maxLoadBytes"));
}

#[test]
fn zero_bounds_are_refused_by_validation() {
    let mut options = LoadOptions::default();
    assert!(options.validate().is_ok());
    options.max_load_bytes = 0;
    let error = options.validate().expect_err("zero refused");
    assert_eq!(error.code, ErrorCode::LoadInvalidOption);
    assert!(error.message.contains("maxLoadBytes"));
}

#[cfg(unix)]
mod disk {
    use super::*;
    use std::path::Path;

    fn temp_root(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dsh-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn write_session(root: &Path, id: &str) {
        let dir = root.join(PROJECT).join(id);
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("session.jsonl"), raw_log(id)).expect("write");
    }

    #[test]
    fn a_fifo_in_a_persistence_root_is_reported_not_read() {
        let root = temp_root("fifo");
        write_session(&root, "good");
        let fifo_dir = root.join(PROJECT).join("fifo");
        std::fs::create_dir_all(&fifo_dir).expect("dir");
        let fifo = fifo_dir.join("session.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        // A symlink to an endless device, named like a log.
        let dev_dir = root.join(PROJECT).join("dev");
        std::fs::create_dir_all(&dev_dir).expect("dir");
        std::os::unix::fs::symlink("/dev/zero", dev_dir.join("session.jsonl")).expect("symlink");
        let started = Instant::now();
        let (corpus, report) = load_with(vec![Input::Path(root.clone())], LoadOptions::default());
        eprintln!("a FIFO and a symlink to /dev/zero: {:?}", started.elapsed());
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(corpus.get("good").is_some(), "{report:?}");
        let codes = failure_codes(&report);
        assert!(
            codes.contains(&(format!("{PROJECT}/fifo/session.jsonl"), ErrorCode::LoadIo)),
            "{codes:?}"
        );
        assert!(
            codes.contains(&(format!("{PROJECT}/dev/session.jsonl"), ErrorCode::LoadIo)),
            "{codes:?}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_file_over_the_cap_is_refused_without_reading_it() {
        let root = temp_root("sparse");
        write_session(&root, "good");
        let dir = root.join(PROJECT).join("huge");
        std::fs::create_dir_all(&dir).expect("dir");
        // A 3 GiB sparse file: reading it whole would take 3 GiB.
        let file = std::fs::File::create(dir.join("session.jsonl")).expect("create");
        file.set_len(3 << 30).expect("sparse");
        let started = Instant::now();
        let (corpus, report) = load_with(vec![Input::Path(root.clone())], LoadOptions::default());
        eprintln!("a 3 GiB sparse file: {:?}", started.elapsed());
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(corpus.get("good").is_some());
        assert_eq!(
            failure_codes(&report),
            [(format!("{PROJECT}/huge/session.jsonl"), ErrorCode::LoadLimitExceeded)]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_zip_on_disk_is_read_entry_by_entry_and_a_symlinked_log_is_followed() {
        let root = temp_root("zip");
        let entries = root_of_25();
        std::fs::write(
            root.join("export.zip"),
            zip_of_owned(&entries, zip::CompressionMethod::Deflated),
        )
        .expect("zip");
        let elsewhere = temp_root("zip-target");
        std::fs::write(elsewhere.join("loose.jsonl"), raw_log("loose")).expect("log");
        std::os::unix::fs::symlink(elsewhere.join("loose.jsonl"), root.join("loose.jsonl")).expect("symlink");
        let (corpus, report) = load_with(vec![Input::Path(root.clone())], LoadOptions::default());
        assert!(report.failures.is_empty(), "{report:?}");
        assert_eq!(corpus.len(), 26);
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }
}

/// A `.jsonl.zstd` log whose second frame is `blocks` RLE blocks of 128 KiB of `byte` each:
/// 4 bytes of input per 128 KiB of output. With `declare`, the frame states its content size.
fn zstd_bomb(id: &str, blocks: usize, byte: u8, declare: Option<u64>) -> Vec<u8> {
    let mut out = zstd_frame(format!("{}\n", header(id)).as_bytes());
    out.extend_from_slice(&[0x28, 0xB5, 0x2F, 0xFD]);
    match declare {
        // Frame_Content_Size of 8 bytes, single segment (no window descriptor).
        Some(size) => {
            out.push(0xE0);
            out.extend_from_slice(&size.to_le_bytes());
        }
        // No content size; a window descriptor of 1 MiB.
        None => out.extend_from_slice(&[0x00, 0x50]),
    }
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = last | (1 << 1) | ((128 << 10) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(byte);
    }
    out
}

#[test]
fn a_zstd_bomb_stops_at_the_ratio_guard() {
    // 8,192 RLE blocks: 1 GiB from 32 KiB.
    let bomb = zstd_bomb("bomb", 8192, b' ', None);
    assert!(bomb.len() < 40 << 10);
    let started = Instant::now();
    let (_, report) = load_with(
        vec![Input::Entries {
            name: "root".into(),
            entries: vec![
                (root_entry("bomb", true), bomb),
                (root_entry("good", true), zstd_log("good")),
            ],
        }],
        LoadOptions::default(),
    );
    let spent = started.elapsed();
    assert_eq!(
        failure_codes(&report),
        [(root_entry("bomb", true), ErrorCode::LoadLimitExceeded)]
    );
    assert!(report.failures[0].message.contains("maxCompressionRatio"), "{report:?}");
    assert_eq!(report.sessions.len(), 1);
    // It decodes at most 100 × 32 KiB + 1 MiB (4.2 MiB), not 1 GiB.
    assert!(spent < Duration::from_secs(10), "took {spent:?}");
}

#[test]
fn a_declared_content_size_over_the_budget_is_refused_before_decoding() {
    // Declares 1 TiB; decoding would first run into the ratio guard, but it never starts.
    let bomb = zstd_bomb("bomb", 4, b' ', Some(1 << 40));
    let (_, report) = load_with(
        vec![Input::Entries {
            name: "root".into(),
            entries: vec![(root_entry("bomb", true), bomb)],
        }],
        LoadOptions::default(),
    );
    assert_eq!(report.failures[0].code, ErrorCode::LoadLimitExceeded, "{report:?}");
}

#[test]
fn twenty_zstd_bombs_in_a_small_zip_cost_little() {
    let bombs: Vec<(String, Vec<u8>)> = (0..20)
        .map(|i| {
            let id = format!("b{i:02}");
            (root_entry(&id, true), zstd_bomb(&id, 8192, b'x', None))
        })
        .collect();
    let zip = zip_of_owned(&bombs, zip::CompressionMethod::Deflated);
    let zip_len = zip.len();
    assert!(zip_len < 64 << 10, "{zip_len}");
    let started = Instant::now();
    let (_, report) = load_zip(zip, LoadOptions::default());
    let spent = started.elapsed();
    assert_eq!(report.failures.len(), 20, "{report:?}");
    assert!(report.failures.iter().all(|f| f.code == ErrorCode::LoadLimitExceeded));
    // Was 13.8 s (each bomb decoded to the 1 GiB limit); now 20 × at most 4.2 MiB.
    eprintln!("20 zstd bombs in a {} byte ZIP: {spent:?}", zip_len);
    assert!(spent < Duration::from_secs(20), "took {spent:?}");
}

#[test]
fn the_load_budget_covers_zstd_decoding_through_read_log_within() {
    use dsh_session_search::archive::LoadBudget;
    use dsh_session_search::log::{Encoding, ReadLimits, read_log_within};
    let log = zstd_log("s");
    let budget = LoadBudget::new(100);
    let error = read_log_within(&log, Encoding::Zstd, &ReadLimits::default(), &budget).expect_err("over budget");
    assert_eq!(error.code, ErrorCode::LoadLimitExceeded);
    assert!(error.message.contains("maxLoadBytes"), "{}", error.message);
    let budget = LoadBudget::new(1 << 20);
    read_log_within(&log, Encoding::Zstd, &ReadLimits::default(), &budget).expect("fits");
    assert_eq!(budget.used(), raw_log("s").len() as u64, "the decoded bytes are spent");
}

#[test]
fn many_empty_lines_cost_one_pass() {
    // 256 MiB of empty lines (was ~5 s per 256 MiB in a release build: one parse per line).
    let mut log = raw_log("blank");
    log.resize(log.len() + (256 << 20), b'\n');
    let started = Instant::now();
    let (corpus, report) = load_with(
        vec![Input::File {
            name: "blank.jsonl".into(),
            bytes: log,
        }],
        LoadOptions::default(),
    );
    let spent = started.elapsed();
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(corpus.get("blank").map(|s| s.log.events.len()), Some(3));
    assert!(spent < Duration::from_secs(15), "took {spent:?}");
}

/// One malformed input of the matrix: what it is, and what it must cost.
/// A chain of sessions each the parent of the next, deeper than the nesting the trace answers:
/// tracing its first session fails with a code (tens of thousands of levels once overflowed
/// the call stack), and the sessions a level below and at the end still answer.
#[test]
fn a_lineage_deeper_than_the_trace_nests_fails_with_a_code() {
    let depth = dsh_session_search::reads::MAX_LINEAGE_DEPTH + 1;
    let entries = (0..=depth)
        .map(|i| {
            let mut log = raw_log(&format!("s{i}"));
            if i > 0 {
                let header = header(&format!("s{i}"));
                let child = header.replace(
                    r#""delegationDepth":0"#,
                    &format!(
                        r#""parentSession":"s{}","origin":"subagent","delegationDepth":1"#,
                        i - 1
                    ),
                );
                log.splice(..header.len(), child.into_bytes());
            }
            (format!("chain/s{i}.jsonl"), log)
        })
        .collect();
    let (corpus, report) = load_with(
        vec![Input::Entries {
            name: "chain".into(),
            entries,
        }],
        LoadOptions::default(),
    );
    assert_eq!(report.sessions.len(), depth + 1, "{:?}", report.failures);
    let error = corpus.trace_session("s0").expect_err("too deep");
    assert_eq!(error.code, ErrorCode::QueryInvalidLineage);
    let below = corpus.trace_session("s1").expect("as deep as answered");
    let mut levels = 0;
    let mut node = below.descendants.first();
    while let Some(next) = node {
        levels += 1;
        node = next.descendants.first();
    }
    assert_eq!(levels, depth - 1);
    let last = corpus.trace_session(&format!("s{depth}")).expect("no descendants");
    assert_eq!(last.ancestors.len(), depth);
}

struct Case {
    name: &'static str,
    /// The inputs: the malformed one beside a valid session.
    inputs: fn() -> Vec<Input>,
    options: fn() -> LoadOptions,
    /// The code reported for the malformed part (`None`: it must load, without failures).
    code: Option<ErrorCode>,
    /// Sessions that must load beside it.
    loaded: usize,
}

fn defaults() -> LoadOptions {
    LoadOptions::default()
}

fn beside_good(bad_path: String, bad: Vec<u8>) -> Vec<Input> {
    let zstd = bad_path.ends_with(".zstd");
    let good = if zstd { zstd_log("good") } else { raw_log("good") };
    vec![Input::Entries {
        name: "root".into(),
        entries: vec![(root_entry("good", zstd), good), (bad_path, bad)],
    }]
}

fn zip_beside_good(extra: Vec<(String, Vec<u8>)>, method: zip::CompressionMethod) -> Vec<u8> {
    let mut entries = vec![(root_entry("good", false), raw_log("good"))];
    entries.extend(extra);
    zip_of_owned(&entries, method)
}

/// A ZIP whose one log entry inflates to `mib` MiB of `x`, written without holding them.
fn streamed_deflate_bomb(mib: usize) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    writer.start_file(root_entry("good", false), options).expect("entry");
    writer.write_all(&raw_log("good")).expect("write");
    writer.start_file(root_entry("bomb", false), options).expect("entry");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..mib {
        writer.write_all(&chunk).expect("write");
    }
    writer.finish().expect("finish").into_inner()
}

fn zip_input(bytes: Vec<u8>) -> Vec<Input> {
    vec![Input::File {
        name: "export.zip".into(),
        bytes,
    }]
}

fn with_line(id: &str, line: &str) -> Vec<u8> {
    let mut log = raw_log(id);
    // Before the turn/end: the third line of the turn.
    let last_line = log[..log.len() - 1].iter().rposition(|b| *b == b'\n').expect("lines") + 1;
    let tail = log.split_off(last_line);
    log.extend_from_slice(line.as_bytes());
    log.push(b'\n');
    let renumbered = String::from_utf8(tail)
        .expect("utf8")
        .replace(r#""seq":2"#, r#""seq":3"#);
    log.extend_from_slice(renumbered.as_bytes());
    log
}

const CASES: &[Case] = &[
    Case {
        name: "zip-bad-crc",
        inputs: || {
            let mut zip = zip_beside_good(
                vec![(root_entry("bad", false), raw_log("bad"))],
                zip::CompressionMethod::Stored,
            );
            let at = find(&zip, br#""id":"bad""#);
            zip[at + 6] = b'x';
            zip_input(zip)
        },
        options: defaults,
        code: Some(ErrorCode::LoadInvalidArchive),
        loaded: 1,
    },
    Case {
        name: "zip-not-a-zip",
        inputs: || {
            vec![
                Input::File {
                    name: "broken.zip".into(),
                    bytes: b"PK\x03\x04 not really".to_vec(),
                },
                Input::File {
                    name: "good.jsonl".into(),
                    bytes: raw_log("good"),
                },
            ]
        },
        options: defaults,
        code: Some(ErrorCode::LoadInvalidArchive),
        loaded: 1,
    },
    Case {
        name: "zip-deflate-bomb-64MiB",
        inputs: || zip_input(streamed_deflate_bomb(64)),
        options: defaults,
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "zip-overlapping-1000x16MiB",
        inputs: || {
            let mut inputs = zip_input(overlapping_zip(1000, &vec![b' '; 16 << 20]));
            inputs.push(Input::File {
                name: "good.jsonl".into(),
                bytes: raw_log("good"),
            });
            inputs
        },
        options: defaults,
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "zip-too-many-entries",
        inputs: || {
            let extra = (0..50).map(|i| (format!("junk/{i}.txt"), vec![b'j'])).collect();
            let mut inputs = zip_input(zip_beside_good(extra, zip::CompressionMethod::Stored));
            inputs.push(Input::File {
                name: "good2.jsonl".into(),
                bytes: raw_log("good2"),
            });
            inputs
        },
        options: || LoadOptions {
            max_archive_entries: 10,
            ..LoadOptions::default()
        },
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "zstd-rle-bomb-1GiB",
        inputs: || beside_good(root_entry("bomb", true), zstd_bomb("bomb", 8192, b' ', None)),
        options: defaults,
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "zstd-declares-1TiB",
        inputs: || beside_good(root_entry("bomb", true), zstd_bomb("bomb", 4, b' ', Some(1 << 40))),
        options: defaults,
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "zstd-bad-checksum",
        inputs: || {
            let mut log = zstd_log("bad");
            let last = log.len() - 1;
            log[last] ^= 0xFF;
            beside_good(root_entry("bad", true), log)
        },
        options: defaults,
        code: Some(ErrorCode::LoadCorruptFrame),
        loaded: 1,
    },
    Case {
        name: "zstd-foreign-bytes",
        inputs: || beside_good(root_entry("bad", true), b"this is not zstd at all\n".to_vec()),
        options: defaults,
        code: Some(ErrorCode::LoadCorruptFrame),
        loaded: 1,
    },
    Case {
        name: "json-50000-deep-depth-1e9",
        inputs: || {
            let deep = "[".repeat(50_000) + &"]".repeat(50_000);
            let line = format!(r#"{{"type":"todo/write","seq":2,"time":1,"data":{deep}}}"#);
            beside_good(root_entry("deep", false), with_line("deep", &line))
        },
        options: || LoadOptions {
            limits: dsh_session_search::log::ReadLimits {
                max_json_depth: 1_000_000_000,
                ..Default::default()
            },
            ..LoadOptions::default()
        },
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "json-80000-key-line",
        inputs: || {
            let keys: Vec<String> = (0..80_000).map(|i| format!(r#""k{i}":{i}"#)).collect();
            let line = format!(
                r#"{{"type":"todo/write","seq":2,"time":1,"data":{{"todos":[],{}}}}}"#,
                keys.join(",")
            );
            beside_good(root_entry("wide", false), with_line("wide", &line))
        },
        options: || LoadOptions {
            limits: dsh_session_search::log::ReadLimits {
                max_object_keys: 50_000,
                ..Default::default()
            },
            ..LoadOptions::default()
        },
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        // The closers' walk keeps the calls waiting for a result; each is found by its id,
        // not by a scan of the others (100,000 calls once took time quadratic in them).
        name: "open-turn-asking-100000-calls",
        inputs: || {
            let calls: Vec<String> = (0..100_000)
                .map(|i| format!(r#"{{"type":"tool-call","id":"c{i}","name":"n","arguments":"{{}}"}}"#))
                .collect();
            let lines = [
                header("calls"),
                r#"{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}"#.to_owned(),
                r#"{"type":"step/start","seq":1,"time":2,"data":{"turn":1,"step":1}}"#.to_owned(),
                format!(
                    r#"{{"type":"assistant/message","seq":2,"time":3,"data":{{"turn":1,"step":1,"message":{{"id":"m2","role":"assistant","content":[{}],"source":{{"kind":"model","provider":"p","model":"m"}}}}}},"surfaceOp":"append"}}"#,
                    calls.join(",")
                ),
                r#"{"type":"step/end","seq":3,"time":4,"data":{"turn":1,"step":1}}"#.to_owned(),
            ];
            beside_good(root_entry("calls", false), (lines.join("\n") + "\n").into_bytes())
        },
        options: defaults,
        code: None,
        loaded: 2,
    },
    Case {
        name: "line-over-max-line-bytes",
        inputs: || {
            let line = format!(
                r#"{{"type":"todo/write","seq":2,"time":1,"data":{{"pad":"{}"}}}}"#,
                "x".repeat(8 << 20)
            );
            beside_good(root_entry("long", false), with_line("long", &line))
        },
        options: || LoadOptions {
            limits: dsh_session_search::log::ReadLimits {
                max_line_bytes: 1 << 20,
                ..Default::default()
            },
            ..LoadOptions::default()
        },
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 1,
    },
    Case {
        name: "empty-lines-128MiB",
        inputs: || {
            let mut log = raw_log("blank");
            log.resize(log.len() + (128 << 20), b'\n');
            beside_good(root_entry("blank", false), log)
        },
        options: defaults,
        code: None,
        loaded: 2,
    },
    Case {
        name: "header-less",
        inputs: || beside_good(root_entry("none", false), b"no newline at all".to_vec()),
        options: defaults,
        code: Some(ErrorCode::LoadInvalidHeader),
        loaded: 1,
    },
    Case {
        name: "future-version",
        inputs: || {
            let log =
                String::from_utf8(raw_log("future"))
                    .expect("utf8")
                    .replacen(r#""version":0"#, r#""version":7"#, 1);
            beside_good(root_entry("future", false), log.into_bytes())
        },
        options: defaults,
        code: Some(ErrorCode::LoadUnsupportedVersion),
        loaded: 1,
    },
    Case {
        name: "ten-bomb-zips-one-budget",
        inputs: || {
            let mut inputs: Vec<Input> = (0..10)
                .map(|i| Input::File {
                    name: format!("b{i}.zip"),
                    bytes: streamed_deflate_bomb(4),
                })
                .collect();
            inputs.push(Input::File {
                name: "last.jsonl".into(),
                bytes: raw_log("last"),
            });
            inputs
        },
        options: || LoadOptions {
            max_load_bytes: 8 << 20,
            ..LoadOptions::default()
        },
        code: Some(ErrorCode::LoadLimitExceeded),
        loaded: 2,
    },
];

/// Peak resident memory (VmHWM) and current (VmRSS), in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Runs the case named in `HOSTILE_CASE` in this (fresh) process and prints what it cost.
/// Driven by [`bad_input_matrix`]; ignored on its own.
#[test]
#[ignore = "run by bad_input_matrix in a child process"]
fn matrix_case() {
    let name = std::env::var("HOSTILE_CASE").expect("HOSTILE_CASE names a case");
    let case = CASES.iter().find(|c| c.name == name).expect("known case");
    let inputs = (case.inputs)();
    let options = (case.options)();
    // Reset the peak, so it measures the load (with its inputs already resident).
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let (_, before) = memory_kib();
    let started = Instant::now();
    let mut corpus = Corpus::new();
    let report = corpus.load(inputs, &options).expect("non-strict load");
    let millis = started.elapsed().as_millis();
    let (peak, _) = memory_kib();
    let codes: Vec<ErrorCode> = report.failures.iter().map(|f| f.code).collect();
    match case.code {
        Some(code) => assert!(
            !codes.is_empty() && codes.iter().all(|c| *c == code),
            "{name}: {report:?}"
        ),
        None => assert!(codes.is_empty(), "{name}: {report:?}"),
    }
    assert_eq!(corpus.len(), case.loaded, "{name}: {report:?}");
    println!(
        "COST {name} ms={millis} extra_kib={} pid={}",
        peak.saturating_sub(before),
        std::process::id()
    );
}

/// The name the test harness knows [`matrix_case`] by: its module path without the crate's
/// name (`hostile::matrix_case` in the integration binary), so `--exact` matches it alone.
fn matrix_case_name() -> String {
    match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::matrix_case"),
        None => "matrix_case".to_owned(),
    }
}

/// Every malformed input gets its code, its valid neighbours load, and the load stays within
/// generous bounds of time and extra peak memory (each case in its own process, so peaks do
/// not mix). The figures measured are in README's Reliability section.
#[test]
fn bad_input_matrix() {
    const MAX_MILLIS: u128 = 30_000;
    const MAX_EXTRA_KIB: u64 = 256 << 10;
    let exe = std::env::current_exe().expect("test binary");
    let filter = matrix_case_name();
    let mut table = Vec::new();
    for case in CASES {
        let output = std::process::Command::new(&exe)
            .args(["--exact", &filter, "--ignored", "--nocapture", "--test-threads=1"])
            .env("HOSTILE_CASE", case.name)
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{}: {stdout}\n{}",
            case.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("COST ").map(|(_, cost)| cost))
            .unwrap_or_else(|| panic!("{}: no cost line in {stdout}", case.name));
        let number = |key: &str| -> u128 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(|n| n.parse().ok())
                .expect("figure")
        };
        let (millis, extra) = (number("ms="), number("extra_kib=") as u64);
        // The figures are the child's own: measured in this process, peaks would mix.
        assert_ne!(
            number("pid="),
            u128::from(std::process::id()),
            "{}: measured in the matrix's process",
            case.name
        );
        table.push(format!("{:<28} {millis:>6} ms {:>8} KiB", case.name, extra));
        eprintln!("{}", table.last().expect("row"));
        assert!(millis <= MAX_MILLIS, "{}: {millis} ms", case.name);
        assert!(extra <= MAX_EXTRA_KIB, "{}: {extra} KiB", case.name);
    }
    println!("{}", table.join("\n"));
}

/// What zstd logs decode to is spent from the one budget of their load: once it is used up,
/// the next log fails with `SESSION_LOAD_LIMIT_EXCEEDED` and the ones before it stay loaded.
#[test]
fn zstd_decoding_spends_the_load_budget() {
    let decoded = raw_log("a").len() as u64;
    let inputs = ["a", "b", "c"]
        .iter()
        .map(|id| Input::File {
            name: format!("{id}.jsonl.zstd"),
            bytes: zstd_log(id),
        })
        .collect();
    let options = LoadOptions {
        max_load_bytes: decoded * 2 + decoded / 2,
        ..LoadOptions::default()
    };
    let (corpus, report) = load_with(inputs, options);
    assert_eq!(corpus.len(), 2, "{report:?}");
    assert_eq!(report.failures.len(), 1, "{report:?}");
    assert_eq!(report.failures[0].code, ErrorCode::LoadLimitExceeded);
    let (corpus, report) = load_with(
        ["a", "b", "c"]
            .iter()
            .map(|id| Input::File {
                name: format!("{id}.jsonl.zstd"),
                bytes: zstd_log(id),
            })
            .collect(),
        LoadOptions::default(),
    );
    assert_eq!(corpus.len(), 3, "the default budget holds all three: {report:?}");
}

/// Two inputs with the same label (the same folder name picked twice) are two roots, not one:
/// their sessions are duplicates of each other, never a layout error.
#[test]
fn inputs_sharing_a_label_are_separate_roots() {
    let root = || Input::Entries {
        name: "sessions".into(),
        entries: vec![
            (root_entry("s1", false), raw_log("s1")),
            (root_entry("s2", false), raw_log("s2")),
        ],
    };
    let (corpus, report) = load_with(vec![root(), root()], LoadOptions::default());
    assert!(report.failures.is_empty(), "{report:?}");
    assert_eq!(corpus.len(), 2);
    let outcomes: Vec<&str> = report.sessions.iter().map(|s| s.outcome).collect();
    assert_eq!(outcomes, ["added", "added", "duplicate", "duplicate"]);
}
