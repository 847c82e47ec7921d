//! Physical framing: raw JSONL and concatenated Zstandard frames to one header line plus the
//! committed event prefix, with torn tails ignored and damaged committed lines detected.

use super::rows::{StorageRecord, decode_storage_record};
use super::{LogFault, RawEvent, RawEvents, ReadLimits};
use crate::archive::budget::{LoadBudget, ratio_allowance};
use crate::error::ErrorCode;
use crate::event::{Noted, Printed, PrintedLines, SOURCE_EVENT_SEQS, SURFACE_OP};
use crate::json::{Elide, JsonRef, ParseError, TapeLine, TapeOptions};
use memchr::memchr;
use std::cell::RefCell;

/// What framing produced: the header line (without its LF) and the committed events, raw.
pub(crate) struct Framed {
    pub header_line: Vec<u8>,
    pub events: RawEvents,
    /// The lines of `events` that are their printed text (the text the tape points into).
    pub printed: PrintedLines,
    /// Bytes after the committed prefix that were ignored as a torn tail.
    pub torn_bytes: u64,
    /// Whether some of `events` were read with strings elided (their lines are in `printed`).
    pub elided: bool,
}

const ZSTD_MAGIC: u32 = 0xFD2F_B528;

/// How many times its size a `.jsonl.zstd` log's lines are reserved at most before they are
/// decoded, when its frames declare what they hold (more only grows as it comes).
const PLAUSIBLE_RATIO: u64 = 16;

/// How many times its size a `.jsonl.zstd` log's lines are reserved at most when a frame does
/// not declare what it holds, as DSH's never do: its blocks' bound is loose (the bench's logs
/// decode to about 3.5 times their size, and to about 0.4 of their bound). Lines that grow by
/// doubling instead cost a wasm instance a copy of the text at every step, about a twentieth
/// of a first load in Node.
const EXPECTED_RATIO: u64 = 4;

/// The most one block can decode to (RFC 8878 §3.1.1.2.4).
const BLOCK_SIZE_MAX: u64 = 128 * 1024;

thread_local! {
    /// The decoder's context (about 100 KiB of tables), made once per thread: logs are many
    /// small frames, and a fresh context per frame would cost more than decoding them.
    static DECODER: RefCell<zstd_safe::DCtx<'static>> = RefCell::new(zstd_safe::DCtx::create());
}

/// Splits a raw `.jsonl` file.
pub(crate) fn frame_raw(bytes: &[u8], limits: &ReadLimits) -> Result<Framed, LogFault> {
    let Some(header_end) = memchr(b'\n', bytes) else {
        return Err(LogFault::new(
            ErrorCode::LoadInvalidHeader,
            "empty or header-less session log",
        ));
    };
    let mut scanner = LineScanner::new(limits);
    scanner.reserve(bytes.len() - header_end - 1);
    scanner.write(&bytes[header_end + 1..])?;
    let torn = scanner.pending.len() as u64;
    Ok(Framed {
        header_line: bytes[..header_end].to_vec(),
        torn_bytes: torn,
        ..scanner.finish()
    })
}

/// How much one `.jsonl.zstd` log may still decode to: the tightest of the per-log limit,
/// the compression-ratio guard over the file's size, and what is left of the load's budget.
struct Allowance {
    remaining: u64,
    what: &'static str,
}

impl Allowance {
    fn for_log(compressed: usize, limits: &ReadLimits, budget: &LoadBudget) -> Allowance {
        let (remaining, what) = [
            (
                limits.max_decompressed_bytes,
                "the per-log limit (maxDecompressedBytes)",
            ),
            (
                ratio_allowance(compressed as u64, limits.max_compression_ratio),
                "the compression-ratio guard (maxCompressionRatio times the file's size)",
            ),
            (budget.remaining(), "what is left of this load's limit (maxLoadBytes)"),
        ]
        .into_iter()
        .min_by_key(|(limit, _)| *limit)
        .unwrap_or((0, "a limit"));
        Allowance { remaining, what }
    }

    fn exceeded(&self) -> LogFault {
        LogFault::new(
            ErrorCode::LoadLimitExceeded,
            format!("decompressed size exceeds {}", self.what),
        )
    }

    /// Fails when `bytes` more would not fit (without spending them).
    fn check(&self, bytes: u64) -> Result<(), LogFault> {
        if bytes > self.remaining {
            return Err(self.exceeded());
        }
        Ok(())
    }

    fn spend(&mut self, bytes: u64) -> Result<(), LogFault> {
        self.check(bytes)?;
        self.remaining -= bytes;
        Ok(())
    }
}

/// Splits a `.jsonl.zstd` file of concatenated frames, decoding at most what `budget` and
/// the limits allow (and spending from `budget` what was decoded).
pub(crate) fn frame_zstd(bytes: &[u8], limits: &ReadLimits, budget: &LoadBudget) -> Result<Framed, LogFault> {
    let scan = scan_frames(bytes)?;
    let Some(first) = scan.frames.first() else {
        return Err(LogFault::new(
            ErrorCode::LoadInvalidHeader,
            "empty or header-less Zstandard session log",
        ));
    };
    let mut allowance = Allowance::for_log(bytes.len(), limits, budget);
    let start_remaining = allowance.remaining;
    // A frame that declares its size is refused before any decoding when it cannot fit.
    allowance.check(scan.declared_total)?;
    let header = decode_frame(&bytes[first.start..first.end], first.bound, &mut allowance)?;
    if header.last() != Some(&b'\n') || memchr(b'\n', &header) != Some(header.len() - 1) {
        return Err(LogFault::damaged(
            "the first Zstandard frame is not exactly one header line",
        ));
    }
    let mut scanner = LineScanner::new(limits);
    scanner.reserve(usize::try_from(scan.expected_lines(bytes.len())).unwrap_or(0));
    for frame in &scan.frames[1..] {
        scanner.write(&decode_frame(
            &bytes[frame.start..frame.end],
            frame.bound,
            &mut allowance,
        )?)?;
    }
    if !scanner.pending.is_empty() || scanner.issue.is_some() {
        return Err(LogFault::damaged(
            "a complete Zstandard frame holds a damaged or unterminated JSONL record",
        ));
    }
    let mut torn_bytes = 0;
    if let Some(torn_start) = scan.torn_start {
        torn_bytes = (bytes.len() - torn_start) as u64;
        // Whatever the torn frame yields is appended; if it cannot be decoded it adds nothing.
        if let Some(plain) = decode_torn_frame(&bytes[torn_start..], &mut allowance)? {
            scanner.write(&plain)?;
        }
    }
    budget
        .spend(start_remaining - allowance.remaining)
        .map_err(|e| LogFault::new(e.code, e.message))?;
    let mut header_line = header;
    header_line.pop();
    header_line.shrink_to_fit();
    Ok(Framed {
        header_line,
        torn_bytes,
        ..scanner.finish()
    })
}

/// Only the header line (without its LF): the first line, or the first frame's plaintext.
pub(crate) fn header_line(bytes: &[u8], zstd: bool, limits: &ReadLimits) -> Result<Vec<u8>, LogFault> {
    if !zstd {
        let end = memchr(b'\n', bytes).ok_or_else(|| LogFault::new(ErrorCode::LoadInvalidHeader, "no header line"))?;
        return Ok(bytes[..end].to_vec());
    }
    let scan = scan_frames_up_to(bytes, 1)?;
    let frame = scan
        .frames
        .first()
        .ok_or_else(|| LogFault::new(ErrorCode::LoadInvalidHeader, "no complete Zstandard frame"))?;
    let mut allowance = Allowance::for_log(frame.end - frame.start, limits, &LoadBudget::unlimited());
    allowance.check(scan.declared_total)?;
    let mut line = decode_frame(&bytes[frame.start..frame.end], frame.bound, &mut allowance)?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    line.shrink_to_fit();
    Ok(line)
}

/// A structurally complete frame: where it lies, and the most it can decode to.
struct Frame {
    start: usize,
    end: usize,
    /// The content size it declares, or else the sum of its blocks' largest outputs.
    bound: u64,
}

struct FrameScan {
    frames: Vec<Frame>,
    torn_start: Option<usize>,
    /// The sum of the content sizes the complete frames declare (frames that declare none
    /// count 0; a frame's output is checked against its declaration by the decoder).
    declared_total: u64,
}

impl FrameScan {
    /// What the lines of the frames after the header frame are reserved before decoding:
    /// what those frames declare, or can at most hold where one declares nothing, up to what
    /// a file of `file_len` bytes plausibly holds (a file that declares more than it holds
    /// reserves no more than a few times its own size).
    fn expected_lines(&self, file_len: usize) -> u64 {
        let events = self.frames.get(1..).unwrap_or_default();
        let bound = events.iter().fold(0u64, |sum, frame| sum.saturating_add(frame.bound));
        let ratio = if bound <= self.declared_total {
            PLAUSIBLE_RATIO
        } else {
            EXPECTED_RATIO
        };
        bound.min(ratio.saturating_mul(file_len as u64))
    }
}

/// Locates complete frames structurally, without decompressing.
fn scan_frames(bytes: &[u8]) -> Result<FrameScan, LogFault> {
    scan_frames_up_to(bytes, usize::MAX)
}

/// Locates at most `max_frames` complete frames.
fn scan_frames_up_to(bytes: &[u8], max_frames: usize) -> Result<FrameScan, LogFault> {
    let mut frames = Vec::new();
    let mut declared_total = 0u64;
    let mut at = 0usize;
    let torn = |frames, start, declared_total| {
        Ok(FrameScan {
            frames,
            torn_start: Some(start),
            declared_total,
        })
    };
    while at < bytes.len() {
        let start = at;
        if bytes.len() - at < 4 {
            return torn(frames, start, declared_total);
        }
        let magic = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        if magic != ZSTD_MAGIC {
            return Err(LogFault::frame(format!("invalid Zstandard frame magic at byte {at}")));
        }
        if bytes.get(at + 4).is_some_and(|descriptor| descriptor & 0x18 != 0) {
            return Err(LogFault::frame(format!("reserved frame-header bit at byte {}", at + 4)));
        }
        let Some(header) = FrameHeader::read(&bytes[at..]) else {
            return torn(frames, start, declared_total);
        };
        at += header.len;
        let mut blocks_bound = 0u64;
        loop {
            let Some(block) = BlockHeader::read(bytes, at) else {
                return torn(frames, start, declared_total);
            };
            if block.kind() == 3 {
                return Err(LogFault::frame(format!("reserved block type at byte {at}")));
            }
            if bytes.len() - at - 3 < block.payload() {
                return torn(frames, start, declared_total);
            }
            at += 3 + block.payload();
            blocks_bound += block.bound();
            if block.is_last() {
                break;
            }
        }
        if header.checksum {
            if bytes.len() - at < 4 {
                return torn(frames, start, declared_total);
            }
            at += 4;
        }
        let bound = header.declared.unwrap_or(blocks_bound);
        frames.push(Frame { start, end: at, bound });
        declared_total = declared_total.saturating_add(header.declared.unwrap_or(0));
        if frames.len() == max_frames {
            break;
        }
    }
    Ok(FrameScan {
        frames,
        torn_start: None,
        declared_total,
    })
}

/// The Frame_Content_Size field (RFC 8878 §3.1.1.1.4): 0, 1, 2, 4 or 8 little-endian bytes;
/// the 2-byte form is offset by 256.
fn declared_content_size(field: &[u8]) -> u64 {
    let value = field.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    if field.len() == 2 { value + 256 } else { value }
}

/// A frame header (RFC 8878 §3.1.1.1) after its magic number: where its fields lie.
struct FrameHeader {
    descriptor: u8,
    single_segment: bool,
    checksum: bool,
    /// Where the dictionary id starts, and where the content size does (it ends the header).
    dictionary_at: usize,
    content_size_at: usize,
    /// The header's length, magic number included.
    len: usize,
    /// The content size the frame declares, if it does.
    declared: Option<u64>,
}

impl FrameHeader {
    /// The header at the start of `frame` (whose magic number the caller checked); `None` when
    /// `frame` ends inside it.
    fn read(frame: &[u8]) -> Option<FrameHeader> {
        let descriptor = *frame.get(4)?;
        let single_segment = descriptor & 0x20 != 0;
        let dictionary_bytes = match descriptor & 3 {
            3 => 4,
            n => usize::from(n),
        };
        let content_size_bytes = match descriptor >> 6 {
            0 => usize::from(single_segment),
            n => 1 << n,
        };
        let dictionary_at = 5 + usize::from(!single_segment);
        let content_size_at = dictionary_at + dictionary_bytes;
        let len = content_size_at + content_size_bytes;
        let field = frame.get(content_size_at..len)?;
        Some(FrameHeader {
            descriptor,
            single_segment,
            checksum: descriptor & 0x04 != 0,
            dictionary_at,
            content_size_at,
            len,
            declared: (content_size_bytes > 0).then(|| declared_content_size(field)),
        })
    }
}

/// A block's 3-byte header (RFC 8878 §3.1.1.2).
#[derive(Clone, Copy)]
struct BlockHeader(u32);

impl BlockHeader {
    /// The block header at `at`, `None` when `bytes` end inside it.
    fn read(bytes: &[u8], at: usize) -> Option<BlockHeader> {
        let field = bytes.get(at..at + 3)?;
        Some(BlockHeader(
            u32::from(field[0]) | u32::from(field[1]) << 8 | u32::from(field[2]) << 16,
        ))
    }

    /// 0 raw, 1 RLE, 2 compressed, 3 reserved.
    fn kind(self) -> u32 {
        (self.0 >> 1) & 3
    }

    fn is_last(self) -> bool {
        self.0 & 1 != 0
    }

    /// The bytes that follow the header: an RLE block holds one, the others say how many.
    fn payload(self) -> usize {
        if self.kind() == 1 { 1 } else { (self.0 >> 3) as usize }
    }

    /// The most the block decodes to: a raw or RLE block says its size, a compressed one is
    /// at most the largest block.
    fn bound(self) -> u64 {
        match self.kind() {
            0 | 1 => u64::from(self.0 >> 3),
            _ => BLOCK_SIZE_MAX,
        }
    }

    /// The same block, not the last of its frame.
    fn not_last(self) -> [u8; 3] {
        let cleared = self.0 & !1;
        [cleared as u8, (cleared >> 8) as u8, (cleared >> 16) as u8]
    }
}

/// Decodes one structurally complete frame, `bound` bytes at most, and verifies its checksum.
///
/// The frame is decoded in one call into a buffer of its bound (or of what the allowance has
/// left, if less): no window buffer is allocated, so memory follows the output, never the
/// window size a frame declares.
fn decode_frame(frame: &[u8], bound: u64, allowance: &mut Allowance) -> Result<Vec<u8>, LogFault> {
    let capacity = bound.min(allowance.remaining);
    let mut out = Vec::with_capacity(usize::try_from(capacity).map_err(|_| allowance.exceeded())?);
    if let Err(code) = DECODER.with_borrow_mut(|decoder| decoder.decompress(&mut out, frame)) {
        if is_destination_too_small(code) && capacity < bound {
            return Err(allowance.exceeded());
        }
        return Err(LogFault::frame(format!(
            "Zstandard frame failed validation: {}",
            zstd_safe::get_error_name(code)
        )));
    }
    allowance.spend(out.len() as u64)?;
    Ok(out)
}

/// Whether libzstd failed for want of room in the output buffer (error codes are returned
/// negated, as `size_t`).
fn is_destination_too_small(code: zstd_safe::ErrorCode) -> bool {
    code == 0usize.wrapping_sub(zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall as usize)
}

/// Decodes what a torn final frame holds: every complete block, plus the available bytes of a
/// raw block cut short (a streaming decoder emits those too). `None` if it cannot be decoded.
fn decode_torn_frame(torn: &[u8], allowance: &mut Allowance) -> Result<Option<Vec<u8>>, LogFault> {
    // Rebuild the available part as a finished frame: the header, the complete blocks, and a
    // closing raw block, so the decoder hands back everything it produced.
    let Some(header) = FrameHeader::read(torn) else {
        return Ok(None);
    };
    let Some(mut rebuilt) = header.reopened(torn) else {
        return Ok(None);
    };
    let mut bound = 0u64;
    let mut at = header.len;
    let mut tail_raw: &[u8] = &[];
    while let Some(block) = BlockHeader::read(torn, at) {
        if torn.len() - at - 3 < block.payload() {
            if block.kind() == 0 {
                tail_raw = &torn[at + 3..];
            }
            break;
        }
        rebuilt.extend_from_slice(&block.not_last());
        rebuilt.extend_from_slice(&torn[at + 3..at + 3 + block.payload()]);
        bound += block.bound();
        at += 3 + block.payload();
    }
    let last = 1 | ((tail_raw.len() as u32) << 3);
    rebuilt.extend_from_slice(&[last as u8, (last >> 8) as u8, (last >> 16) as u8]);
    rebuilt.extend_from_slice(tail_raw);
    bound += tail_raw.len() as u64;
    let out = match decode_frame(&rebuilt, bound, allowance) {
        Ok(out) => out,
        Err(fault) if fault.code == ErrorCode::LoadLimitExceeded => return Err(fault),
        Err(_) => return Ok(None),
    };
    // A frame never decodes to more than it declares; a streaming decoder refuses the block
    // that would go past it.
    if header.declared.is_some_and(|declared| out.len() as u64 > declared) {
        return Ok(None);
    }
    Ok(Some(out))
}

impl FrameHeader {
    /// `frame`'s header rewritten so the frame can close early: without the content size (it
    /// ends sooner than declared) or the checksum (a torn frame's is never there). A
    /// single-segment frame's window was its content size: it gets the smallest window
    /// descriptor that covers that size.
    fn reopened(&self, frame: &[u8]) -> Option<Vec<u8>> {
        let window = match self.declared {
            Some(size) if self.single_segment => window_covering(size)?,
            _ => frame[5],
        };
        // Keep the dictionary flag and the reserved bits (a decoder refuses those as before).
        let mut bytes = vec![frame[0], frame[1], frame[2], frame[3], self.descriptor & 0x1B, window];
        bytes.extend_from_slice(&frame[self.dictionary_at..self.content_size_at]);
        Some(bytes)
    }
}

/// The Window_Descriptor of the smallest power-of-two window (at least 1 KiB) that holds
/// `size` bytes, if the format can say it.
fn window_covering(size: u64) -> Option<u8> {
    let log = 64 - size.saturating_sub(1).leading_zeros();
    u8::try_from(log.max(10) - 10)
        .ok()
        .filter(|exponent| *exponent < 32)
        .map(|exponent| exponent << 3)
}

/// How many bytes at the start of `bytes` are LFs: whole blocks are compared with `memcmp`,
/// which is fast in any build, so a gigabyte of empty lines is one quick pass.
fn leading_newlines(bytes: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    static NEWLINES: [u8; BLOCK] = [b'\n'; BLOCK];
    let mut run = 0;
    while bytes.len() - run >= BLOCK && bytes[run..run + BLOCK] == NEWLINES {
        run += BLOCK;
    }
    run + bytes[run..].iter().take_while(|b| **b == b'\n').count()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// Whether a line read after damage could still end a turn or be a `null` record.
fn might_matter_after_damage(line: &[u8]) -> bool {
    memchr(b'\\', line).is_some() || contains(line, b"turn/end") || contains(line, b"null")
}

/// A line read: its one event on the tape, or what its tree holds, with where its fold
/// members' values start when it is kept as its event's printed text.
enum Decoded {
    Taped(TapeLine),
    Tree(StorageRecord, Option<Noted>),
}

/// Where the fold's members' values start, as a parse notes them.
fn noted([surface_op, sources]: [Option<usize>; 2]) -> Noted {
    Noted { surface_op, sources }
}

/// Accepts complete lines into the contiguous committed prefix, as DSH's scanner does.
struct LineScanner<'a> {
    limits: &'a ReadLimits,
    events: RawEvents,
    printed: PrintedLines,
    pending: Vec<u8>,
    line_number: usize,
    /// The first damage seen; once set, only a later `turn/end` matters (it makes the log corrupt).
    issue: Option<String>,
    /// Whether a kept line was read with strings elided.
    elided: bool,
}

impl<'a> LineScanner<'a> {
    fn new(limits: &'a ReadLimits) -> Self {
        LineScanner {
            limits,
            events: RawEvents::default(),
            printed: PrintedLines::default(),
            pending: Vec::new(),
            line_number: 0,
            issue: None,
            elided: false,
        }
    }

    /// Makes room for what `bytes` of lines are read into: their text, and their nodes.
    fn reserve(&mut self, bytes: usize) {
        self.printed.reserve(bytes);
        self.events.tape.reserve_for_text(bytes);
    }

    fn write(&mut self, mut chunk: &[u8]) -> Result<(), LogFault> {
        loop {
            // A run of empty lines costs one pass over the run, not one parse per line.
            if self.pending.is_empty() {
                let run = leading_newlines(chunk);
                if run > 0 {
                    self.empty_lines(run);
                    chunk = &chunk[run..];
                }
            }
            let Some(newline) = memchr(b'\n', chunk) else {
                break;
            };
            if self.pending.is_empty() {
                self.line(&chunk[..newline])?;
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(&chunk[..newline]);
                self.line(&line)?;
            }
            chunk = &chunk[newline + 1..];
        }
        if self.pending.len() + chunk.len() > self.limits.max_line_bytes {
            return Err(LogFault::new(
                ErrorCode::LoadLimitExceeded,
                "a log line exceeds the configured length limit",
            ));
        }
        self.pending.extend_from_slice(chunk);
        Ok(())
    }

    /// `count` empty lines: each is an unparsable record, as `JSON.parse("")` fails.
    fn empty_lines(&mut self, count: usize) {
        let first = self.line_number + 1;
        self.line_number += count;
        self.issue
            .get_or_insert_with(|| format!("unparsable committed event at line {first}"));
    }

    fn line(&mut self, line: &[u8]) -> Result<(), LogFault> {
        self.line_number += 1;
        if line.len() > self.limits.max_line_bytes {
            return Err(LogFault::new(
                ErrorCode::LoadLimitExceeded,
                "a log line exceeds the configured length limit",
            ));
        }
        // After damage only a later `turn/end` or a `null` record changes the outcome, and a
        // line without a backslash escape can only hold those spelled out.
        if self.issue.is_some() && !might_matter_after_damage(line) {
            return Ok(());
        }
        let text = super::line_text(line);
        let mark = self.events.tape.len();
        let Some(decoded) = self.record(&text)? else {
            self.issue
                .get_or_insert_with(|| format!("unparsable committed event at line {}", self.line_number));
            return Ok(());
        };
        if !self.check(&decoded, &text)? {
            self.events.tape.truncate(mark);
            return Ok(());
        }
        match decoded {
            Decoded::Taped(read) => {
                self.events.events.push(RawEvent::Taped(read.root));
                self.printed.push(Some(Printed {
                    text: &text,
                    noted: noted(read.noted_at),
                }));
            }
            Decoded::Tree(record, noted) => {
                let printed_line = noted.map(|noted| Printed { text: &text, noted });
                for event in record {
                    self.events.events.push(RawEvent::Tree(event));
                    self.printed.push(printed_line);
                }
            }
        }
        Ok(())
    }

    /// Whether the events of a line read go into the committed prefix (`Err` when the line
    /// makes the log damaged); notes the first damage.
    fn check(&mut self, decoded: &Decoded, text: &str) -> Result<bool, LogFault> {
        let base = self.printed.text().len();
        let (taped, trees): ([JsonRef<'_>; 1], Vec<JsonRef<'_>>);
        let events: &[JsonRef<'_>] = match decoded {
            Decoded::Taped(read) => {
                taped = [self.events.tape.get(text, base, read.root)];
                &taped
            }
            Decoded::Tree(record, _) => {
                trees = record.events().iter().map(JsonRef::Tree).collect();
                &trees
            }
        };
        // A `null` line breaks DSH's reader outright.
        if events.iter().any(|e| e.is_null()) {
            return Err(LogFault::damaged(format!("a null record at line {}", self.line_number)));
        }
        // Only damage makes a `turn/end` matter, so a sound line is not searched for one.
        let has_turn_end = || {
            events
                .iter()
                .any(|e| e.get("type").and_then(JsonRef::as_str) == Some("turn/end"))
        };
        if let Some(issue) = &self.issue {
            if has_turn_end() {
                return Err(LogFault::damaged(format!(
                    "{issue}, and a later committed turn/end follows it"
                )));
            }
            return Ok(false);
        }
        let row_start = self.events.events.len();
        let gap = events
            .iter()
            .zip(row_start..)
            .position(|(event, seq)| event.get("seq").and_then(JsonRef::as_f64) != Some(seq as f64));
        if let Some(at) = gap {
            let issue = format!("seq gap at line {} (expected {})", self.line_number, row_start + at);
            if has_turn_end() {
                return Err(LogFault::damaged(format!("{issue} in a line that ends a turn")));
            }
            self.issue = Some(issue);
            return Ok(false);
        }
        Ok(true)
    }

    /// What a line holds (`None`: it is not JSON, or a malformed row, which the caller notes
    /// as damage). A line that is its one event's printed text is read onto the tape; any
    /// other is parsed as a tree, with the long strings [`super::ELIDED`] names left out, and
    /// again in full when it is not kept as the printed text (its events are printed from
    /// what is read; a packed row stands for several events, none of them printed as the
    /// line).
    fn record(&mut self, text: &str) -> Result<Option<Decoded>, LogFault> {
        if let Some(read) = self.read_taped(text) {
            return Ok(Some(Decoded::Taped(read)));
        }
        let mut elide = super::ELIDED;
        loop {
            let parsed = match self
                .limits
                .parse_record_noting(text, &[SURFACE_OP, SOURCE_EVENT_SEQS], elide)
            {
                Err(ParseError::TooDeep) => {
                    return Err(LogFault::new(
                        ErrorCode::LoadLimitExceeded,
                        "a log line nests JSON deeper than the configured limit",
                    ));
                }
                Err(ParseError::TooManyKeys) => {
                    return Err(LogFault::new(
                        ErrorCode::LoadLimitExceeded,
                        "a log line holds an object with more keys than the configured limit",
                    ));
                }
                Err(ParseError::Syntax(_)) => return Ok(None),
                Ok(parsed) => parsed,
            };
            let Ok(record) = decode_storage_record(parsed.value) else {
                return Ok(None);
            };
            let kept = parsed.printed && matches!(record, StorageRecord::Event(_));
            if parsed.elided && !kept {
                elide = Elide::NONE;
                continue;
            }
            self.elided |= parsed.elided;
            return Ok(Some(Decoded::Tree(record, kept.then(|| noted(parsed.noted_at)))));
        }
    }

    /// `text` read onto the tape, when it is one event's printed text (not a packed row, which
    /// stands for several) that the tape reads (see [`crate::json::Tape`]).
    fn read_taped(&mut self, text: &str) -> Option<TapeLine> {
        let options = TapeOptions {
            limits: crate::json::ParseLimits {
                max_depth: self.limits.max_json_depth,
            },
            max_keys: self.limits.max_object_keys,
            noted_keys: &[SURFACE_OP, SOURCE_EVENT_SEQS],
            elide: super::ELIDED,
        };
        let base = self.printed.text().len();
        let mark = self.events.tape.len();
        let read = self.events.tape.read_printed(text, base, options)?;
        let event = self.events.tape.get(text, base, read.root);
        if !event.is_object() || super::rows::row_tag(event).is_some() {
            self.events.tape.truncate(mark);
            return None;
        }
        Some(read)
    }

    /// The events read and their printed lines; the caller adds the header and torn tail.
    fn finish(self) -> Framed {
        Framed {
            header_line: Vec::new(),
            events: self.events,
            printed: self.printed,
            torn_bytes: 0,
            elided: self.elided,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ReadLimits {
        ReadLimits::default()
    }

    #[test]
    fn raw_torn_tail_is_ignored() {
        let log = b"{\"type\":\"session\"}\n{\"seq\":0}\n{\"seq\":1}\n{\"se";
        let framed = frame_raw(log, &limits()).expect("frames");
        assert_eq!(framed.events.events.len(), 2);
        assert_eq!(framed.torn_bytes, 4);
    }

    #[test]
    fn damage_before_a_turn_end_is_corrupt() {
        let log = b"{\"type\":\"session\"}\n{\"seq\":0}\nnot json\n{\"seq\":2,\"type\":\"turn/end\"}\n";
        assert!(frame_raw(log, &limits()).is_err());
        let tolerated = b"{\"type\":\"session\"}\n{\"seq\":0}\nnot json\n{\"seq\":2,\"type\":\"turn/start\"}\n";
        assert_eq!(frame_raw(tolerated, &limits()).expect("frames").events.events.len(), 1);
    }

    #[test]
    fn seq_gap_drops_the_rest() {
        let log = b"{\"type\":\"session\"}\n{\"seq\":0}\n{\"seq\":5}\n{\"seq\":1}\n";
        assert_eq!(frame_raw(log, &limits()).expect("frames").events.events.len(), 1);
    }

    #[test]
    fn skippable_frames_are_corrupt() {
        let bytes = [0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0];
        let fault = frame_zstd(&bytes, &limits(), &LoadBudget::unlimited())
            .err()
            .expect("refused");
        assert_eq!(fault.code, ErrorCode::LoadCorruptFrame);
    }

    #[test]
    fn runs_of_empty_lines_are_counted_as_unparsable_lines() {
        for blank in [1, 4095, 4096, 4097, 3 * 4096 + 5] {
            let mut log = b"{\"type\":\"session\"}\n{\"seq\":0}\n".to_vec();
            log.resize(log.len() + blank, b'\n');
            log.extend_from_slice(b"{\"seq\":1,\"type\":\"turn/end\"}\n");
            let fault = frame_raw(&log, &limits()).err().expect("damage before a turn end");
            assert!(fault.message.contains("line 2"), "{blank}: {}", fault.message);
            let mut run = vec![b'\n'; blank];
            run.push(b'x');
            assert_eq!(leading_newlines(&run), blank);
        }
    }

    #[test]
    fn a_few_trailing_bytes_are_a_torn_frame() {
        let scan = scan_frames(&[0x28, 0xB5]).expect("scans");
        assert_eq!(scan.torn_start, Some(0));
    }

    /// Text around more than two blocks of incompressible bytes, so a frame of it holds
    /// compressed blocks and raw ones.
    fn mixed_plaintext() -> Vec<u8> {
        let mut next = crate::testing::xorshift(7);
        let mut plain = b"{\"type\":\"session\"}\n".repeat(2000);
        plain.extend((0..300_000).map(|_| next(256) as u8));
        plain.extend(b"{\"seq\":1}\n".repeat(1000));
        plain
    }

    fn compressed(plain: &[u8], declare_size: bool) -> Vec<u8> {
        let mut context = zstd_safe::CCtx::create();
        context
            .set_parameter(zstd_safe::CParameter::ContentSizeFlag(declare_size))
            .expect("a valid parameter");
        context
            .set_parameter(zstd_safe::CParameter::ChecksumFlag(true))
            .expect("a valid parameter");
        let mut frame = Vec::with_capacity(zstd_safe::compress_bound(plain.len()));
        context.compress2(&mut frame, plain).expect("compresses");
        frame
    }

    /// What DSH recovers from a torn frame: everything a streaming decoder emits for the
    /// available bytes, or nothing if it fails on them.
    fn streamed(torn: &[u8]) -> Option<Vec<u8>> {
        let mut decoder = zstd_safe::DCtx::create();
        let mut input = zstd_safe::InBuffer::around(torn);
        let mut plain = Vec::new();
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            let mut output = zstd_safe::OutBuffer::around(chunk.as_mut_slice());
            decoder.decompress_stream(&mut output, &mut input).ok()?;
            let produced = output.pos();
            plain.extend_from_slice(&chunk[..produced]);
            if produced < chunk.len() && input.pos() == torn.len() {
                return Some(plain);
            }
        }
    }

    #[test]
    fn a_torn_frame_recovers_what_a_streaming_decoder_emits_at_every_cut() {
        let plain = mixed_plaintext();
        for declare_size in [true, false] {
            let frame = compressed(&plain, declare_size);
            let cuts = (0..64)
                .chain((64..frame.len()).step_by(379))
                .chain(frame.len() - 64..frame.len());
            for cut in cuts {
                let mut allowance = Allowance {
                    remaining: u64::MAX,
                    what: "no limit",
                };
                let recovered = decode_torn_frame(&frame[..cut], &mut allowance).expect("within the allowance");
                let expected = streamed(&frame[..cut]).filter(|plain| !plain.is_empty());
                assert_eq!(
                    recovered.filter(|plain| !plain.is_empty()).map(|p| p.len()),
                    expected.as_ref().map(Vec::len),
                    "cut at {cut} of {} (content size declared: {declare_size})",
                    frame.len()
                );
                assert!(expected.is_none_or(|expected| plain.starts_with(&expected)));
            }
        }
    }

    /// Lines are reserved what the frames declare, up to sixteen times the file; where a
    /// frame declares nothing, what its blocks can hold, up to four times the file.
    #[test]
    fn the_lines_reserved_follow_declared_sizes_or_else_a_plausible_ratio() {
        let header = compressed(b"{\"type\":\"session\"}\n", true);
        let text = b"{\"seq\":1,\"data\":\"abcabcabc\"}\n".repeat(20_000);
        for declare_size in [true, false] {
            let file = [header.clone(), compressed(&text, declare_size)].concat();
            let scan = scan_frames(&file).expect("scans");
            let expected = scan.expected_lines(file.len());
            if declare_size {
                assert_eq!(expected, (16 * file.len() as u64).min(text.len() as u64));
            } else {
                assert!(scan.frames[1].bound > 4 * file.len() as u64, "a loose bound");
                assert_eq!(expected, 4 * file.len() as u64);
            }
        }
        let mixed = [header.clone(), compressed(&mixed_plaintext(), false)].concat();
        let scan = scan_frames(&mixed).expect("scans");
        assert_eq!(
            scan.expected_lines(mixed.len()),
            scan.frames[1].bound.min(4 * mixed.len() as u64)
        );
        let alone = scan_frames(&header).expect("scans");
        assert_eq!(alone.expected_lines(header.len()), 0, "no frame after the header");
    }

    #[test]
    fn a_frame_over_the_allowance_is_refused_before_its_output_grows_past_it() {
        let plain = mixed_plaintext();
        let frame = compressed(&plain, false);
        let mut allowance = Allowance {
            remaining: 1000,
            what: "a small limit",
        };
        let scan = scan_frames(&frame).expect("scans");
        let error = decode_frame(&frame, scan.frames[0].bound, &mut allowance).expect_err("over the allowance");
        assert_eq!(error.code, ErrorCode::LoadLimitExceeded);
        let damaged = [&frame[..frame.len() / 2], &[0xFF; 8], &frame[frame.len() / 2 + 8..]].concat();
        let mut allowance = Allowance {
            remaining: u64::MAX,
            what: "no limit",
        };
        let error = decode_frame(&damaged, scan.frames[0].bound, &mut allowance).expect_err("damaged");
        assert_eq!(error.code, ErrorCode::LoadCorruptFrame);
    }
}
