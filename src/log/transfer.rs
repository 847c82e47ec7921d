//! A log read by one wasm instance and adopted by another, so a load can read its logs in
//! parallel: helpers read (decompress, parse, validate, fold) and write each log as bytes; the
//! instance that keeps the corpus adopts them in order, copying the events' text and checking
//! the header instead of reading every line again.
//!
//! A helper is told how to read a log by a [`DecodeTicket`] (encoding, limits, the load's
//! budget left) and says what it read: the events' text first (so the instance that adopts
//! the read keeps the bytes it is handed as that text, without a copy), then the file's size
//! and first bytes (checked against what was declared), what it decompressed (spent from the
//! load's budget when the log is adopted), the header line and the events' envelopes, and last
//! the text's length. Adoption refuses anything it cannot check; the load then reads that log
//! itself, so failures are always reported as a serial read reports them.

use super::{Encoding, FramedLog, LogFault, ReadLimits, SessionLog, frame_log, header};
use crate::archive::HEAD_BYTES;
use crate::archive::budget::LoadBudget;
use crate::error::{Error, ErrorCode};
use crate::event::transfer::{Reader, Writer, read_events, shared_text, write_events};
use crate::fold::fold_surface;

/// The last bytes of a read log's bytes: the format and its version.
const MAGIC: &[u8; 8] = b"dshlog\x00\x02";

/// What follows the rest of a read log's bytes: the text's length (a `u64`) and [`MAGIC`].
const TRAILER_BYTES: usize = 8 + MAGIC.len();

/// How a helper reads one log of a load: as the load itself would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeTicket {
    /// The encoding the load gathered the log with (a file whose bytes start with the
    /// Zstandard magic is read as Zstandard whatever its name).
    pub encoding: Encoding,
    /// The load's bounds for each log.
    pub limits: ReadLimits,
    /// What the load may still decompress.
    pub budget: u64,
}

impl ReadLimits {
    fn fields(&self) -> [u64; 5] {
        [
            self.max_decompressed_bytes,
            self.max_line_bytes as u64,
            self.max_json_depth as u64,
            self.max_object_keys as u64,
            self.max_compression_ratio,
        ]
    }
}

fn encoding_tag(encoding: Encoding) -> u8 {
    match encoding {
        Encoding::Raw => 0,
        Encoding::Zstd => 1,
    }
}

fn encoding_of_tag(tag: u8) -> Option<Encoding> {
    match tag {
        0 => Some(Encoding::Raw),
        1 => Some(Encoding::Zstd),
        _ => None,
    }
}

impl DecodeTicket {
    /// The ticket as bytes, handed to a helper with the log's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(encoding_tag(self.encoding));
        for field in self.limits.fields() {
            out.u64(field);
        }
        out.u64(self.budget);
        out.0
    }

    /// Reads [`DecodeTicket::to_bytes`]; `SESSION_INVALID_ARGUMENT` for anything else.
    pub fn from_bytes(bytes: &[u8]) -> Result<DecodeTicket, Error> {
        let mut input = Reader(bytes);
        let mut read = || -> Option<DecodeTicket> {
            let encoding = encoding_of_tag(input.u8()?)?;
            let limits = ReadLimits {
                max_decompressed_bytes: input.u64()?,
                max_line_bytes: input.usize()?,
                max_json_depth: input.usize()?,
                max_object_keys: input.usize()?,
                max_compression_ratio: input.u64()?,
            };
            let budget = input.u64()?;
            input.0.is_empty().then_some(DecodeTicket {
                encoding,
                limits,
                budget,
            })
        };
        read().ok_or_else(|| Error::invalid_argument("not a log-reading ticket"))
    }

    /// The encoding `bytes` are read with.
    fn encoding_for(&self, bytes: &[u8]) -> Encoding {
        crate::archive::encoding_of_bytes(self.encoding, bytes)
    }
}

/// What a helper read of one log, for [`adopt`]: the events' text, then what follows it
/// ([`TransferRead::parts`]), handed over one after the other. The text stays where the read
/// left it, in the log's arena, and is copied once, out of the helper, instead of first into
/// one buffer with the rest (a log's text is most of its read).
#[derive(Debug)]
pub struct TransferRead {
    /// The log read; its events share the text.
    log: SessionLog,
    /// What follows the text.
    rest: Vec<u8>,
}

impl TransferRead {
    /// The text, then what follows it: the read's bytes in two parts.
    pub fn parts(&self) -> [&[u8]; 2] {
        // The events share one plain arena (checked when read); were it otherwise, the text
        // would be missing, and adoption would refuse the bytes.
        let text = shared_text(&self.log.events).unwrap_or_default();
        [text.as_bytes(), &self.rest]
    }

    /// The read's bytes in one buffer.
    pub fn into_bytes(self) -> Vec<u8> {
        self.parts().concat()
    }
}

/// Reads one log's `bytes` as `ticket` says, and writes what it read for [`adopt`]. Fails as
/// the read fails (the load then reads the log itself, and reports that failure).
pub fn read_for_transfer(ticket: &DecodeTicket, bytes: &[u8]) -> Result<TransferRead, Error> {
    let encoding = ticket.encoding_for(bytes);
    let (framed, budget) = frame_as(ticket, bytes)?;
    let header_line = framed.0.header_line.clone();
    let log = framed.decode_unpacked(&ticket.limits)?;
    // A read log's events share one plain arena; were that to change, the load would read
    // such logs itself.
    let Some(text) = shared_text(&log.events) else {
        return Err(Error::new(
            ErrorCode::LoadCorrupt,
            "the log's events could not be written",
        ));
    };
    let text_len = text.len();
    let mut out = Writer(Vec::with_capacity(
        64 + header_line.len() + 48 * log.events.len() + TRAILER_BYTES,
    ));
    out.u64(bytes.len() as u64);
    out.bytes(&bytes[..bytes.len().min(HEAD_BYTES)]);
    out.u8(encoding_tag(encoding));
    out.u64(budget.used());
    out.bytes(&header_line);
    out.u64(log.synthetic_closers as u64);
    out.u64(log.torn_bytes);
    write_events(&log.events, &mut out);
    out.u64(text_len as u64);
    out.0.extend_from_slice(MAGIC);
    Ok(TransferRead { log, rest: out.0 })
}

/// Reads one log's `bytes` as `ticket` says, in the instance that keeps the load: what
/// [`adopt`] would make of [`read_for_transfer`]'s bytes, without writing and checking them.
pub fn read_ahead(ticket: &DecodeTicket, bytes: &[u8]) -> Result<Adopted, Error> {
    let (framed, budget) = frame_as(ticket, bytes)?;
    Ok(Adopted {
        log: framed.decode_unpacked(&ticket.limits)?,
        decompressed: budget.used(),
    })
}

/// The first half of a read as `ticket` says, and the budget it decompressed from.
fn frame_as(ticket: &DecodeTicket, bytes: &[u8]) -> Result<(FramedLog, LoadBudget), Error> {
    let budget = LoadBudget::new(ticket.budget);
    let framed = frame_log(bytes, ticket.encoding_for(bytes), &ticket.limits, &budget)?;
    Ok((framed, budget))
}

/// What a helper read, adopted: the log, and what its read decompressed.
#[derive(Debug)]
pub struct Adopted {
    /// The log, its text unpacked.
    pub log: SessionLog,
    /// Bytes its read decompressed, to be spent from the load's budget.
    pub decompressed: u64,
}

/// What the load knows of a log before its bytes are read: what a read of it must agree with.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    /// The file's declared size.
    pub size: u64,
    /// Its first bytes as declared (at most [`HEAD_BYTES`]; none when none were asked for).
    pub head: &'a [u8],
    /// How the load would read it.
    pub ticket: &'a DecodeTicket,
}

/// Adopts what [`read_for_transfer`] wrote for a log the load `expected`, keeping `bytes`
/// as the events' text; `None` when they are not such a read of such a file (the load then
/// reads the file itself).
pub fn adopt(mut bytes: Vec<u8>, expected: &Expected) -> Option<Adopted> {
    let text_len = text_len(&bytes)?;
    // What follows the text is small (some forty bytes an event): copied, so that the text
    // can keep the bytes.
    let fields = bytes[text_len..bytes.len() - TRAILER_BYTES].to_vec();
    let mut input = Reader(&fields);
    let size = input.u64()?;
    let head = input.bytes()?;
    let encoding = encoding_of_tag(input.u8()?)?;
    let agrees = size == expected.size
        && head.len() == size.min(HEAD_BYTES as u64) as usize
        && head.starts_with(expected.head)
        && encoding == expected.ticket.encoding_for(head);
    if !agrees {
        return None;
    }
    let decompressed = input.u64()?;
    let header_line = input.bytes()?;
    let synthetic_closers = input.usize()?;
    let torn_bytes = input.u64()?;
    bytes.truncate(text_len);
    // The whole text of a log a helper read: most of what a load adopts from its helpers.
    let text = crate::event::utf8_text(bytes)?.into_boxed_str();
    let events = read_events(&mut input, text)?;
    if !input.0.is_empty() || synthetic_closers > events.len() {
        return None;
    }
    let header = adopted_header(header_line, &expected.ticket.limits).ok()?;
    let surface = fold_surface(&events).ok()?;
    let log = SessionLog {
        header,
        events,
        synthetic_closers,
        torn_bytes,
        surface,
    };
    Some(Adopted { log, decompressed })
}

/// The length of the text a read log's `bytes` start with, when they end as
/// [`read_for_transfer`] ends them.
fn text_len(bytes: &[u8]) -> Option<usize> {
    let rest = bytes.strip_suffix(MAGIC)?;
    let (rest, len) = rest.split_last_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then_some(len)
}

fn adopted_header(line: &[u8], limits: &ReadLimits) -> Result<super::SessionHeader, LogFault> {
    let parsed = header::parse_header_line(line, limits)?;
    parsed.validate()?;
    Ok(parsed.header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::read_log;

    const LOG: &str = include_str!("../../tests/fixtures/spec/compaction_shadows_prefix.jsonl");

    fn ticket() -> DecodeTicket {
        DecodeTicket {
            encoding: Encoding::Raw,
            limits: ReadLimits::default(),
            budget: u64::MAX,
        }
    }

    fn expected<'a>(bytes: &'a [u8], ticket: &'a DecodeTicket) -> Expected<'a> {
        Expected {
            size: bytes.len() as u64,
            head: &bytes[..HEAD_BYTES],
            ticket,
        }
    }

    /// Everything a later stage reads of a log, as text.
    fn reads(log: &SessionLog) -> String {
        let events: Vec<String> = log
            .events
            .iter()
            .map(|e| {
                let message = e.conversation_message();
                format!(
                    "{} {} {} {:?} {:?} {:?} {}",
                    e.seq(),
                    e.time(),
                    e.kind(),
                    message,
                    e.surface_op(),
                    e.source_event_seqs(),
                    &*e.text()
                )
            })
            .collect();
        let header = serde_json::to_string(&log.header).expect("a header serializes");
        format!(
            "{header} {} {} {:?} {:?} {:?}\n{}",
            log.synthetic_closers,
            log.torn_bytes,
            log.surface.nodes,
            log.surface.labels(),
            log.surface.replace_generation(),
            events.join("\n")
        )
    }

    #[test]
    fn an_adopted_log_reads_as_the_log_itself() {
        let ticket = ticket();
        // A torn tail travels too.
        let text = format!("{LOG}{{\"seq\":");
        let bytes = text.as_bytes();
        let written = read_for_transfer(&ticket, bytes).expect("the log reads").into_bytes();
        let at = written.as_ptr();
        let adopted = adopt(written, &expected(bytes, &ticket)).expect("adopted");
        // The bytes handed over are the text (the first event's line starts it), not a copy.
        assert_eq!(adopted.log.events[0].text().as_ptr(), at);
        let direct = read_log(bytes, Encoding::Raw, &ReadLimits::default()).expect("the log reads");
        assert!(direct.torn_bytes > 0);
        assert_eq!(reads(&adopted.log), reads(&direct));
        assert_eq!(adopted.decompressed, 0, "a plain log decompresses nothing");
    }

    #[test]
    fn a_read_hands_over_the_text_where_the_read_left_it() {
        let ticket = ticket();
        let read = read_for_transfer(&ticket, LOG.as_bytes()).expect("the log reads");
        let [text, rest] = read.parts();
        // The first part is the events' arena itself (the first event's line starts it).
        assert_eq!(text.as_ptr(), read.log.events[0].text().as_ptr());
        let mut written = text.to_vec();
        written.extend_from_slice(rest);
        assert_eq!(written, read.into_bytes());
    }

    #[test]
    fn a_zstd_log_carries_what_it_decompressed() {
        let bytes = zstd(LOG);
        let ticket = DecodeTicket {
            encoding: Encoding::Raw,
            ..ticket()
        };
        let written = read_for_transfer(&ticket, &bytes)
            .expect("read as zstd by its magic")
            .into_bytes();
        let adopted = adopt(written, &expected(&bytes, &ticket)).expect("adopted");
        assert_eq!(adopted.decompressed, LOG.len() as u64);
        let tight = DecodeTicket { budget: 10, ..ticket };
        let error = read_for_transfer(&tight, &bytes).expect_err("over the budget");
        assert_eq!(error.code, ErrorCode::LoadLimitExceeded);
    }

    /// `log` as DSH writes it compressed: the header line in a frame of its own, then the
    /// events in another.
    fn zstd(log: &str) -> Vec<u8> {
        use crate::testing::zstd_frame;
        let split = log.find('\n').expect("a header line") + 1;
        let mut out = zstd_frame(&log.as_bytes()[..split]);
        out.extend(zstd_frame(&log.as_bytes()[split..]));
        out
    }

    #[test]
    fn a_read_of_another_file_or_altered_bytes_is_refused() {
        let ticket = ticket();
        let bytes = LOG.as_bytes();
        let written = read_for_transfer(&ticket, bytes).expect("the log reads").into_bytes();
        let other_size = Expected {
            size: bytes.len() as u64 + 1,
            ..expected(bytes, &ticket)
        };
        assert!(adopt(written.clone(), &other_size).is_none());
        let other_head = Expected {
            head: b"{\"x",
            ..expected(bytes, &ticket)
        };
        assert!(adopt(written.clone(), &other_head).is_none());
        // Every truncation and every flipped byte is refused or adopted, never a panic.
        for end in 0..written.len() {
            assert!(
                adopt(written[..end].to_vec(), &expected(bytes, &ticket)).is_none(),
                "{end}"
            );
        }
        for at in (0..written.len()).step_by(7) {
            let mut altered = written.clone();
            altered[at] ^= 0xA5;
            let _ = adopt(altered, &expected(bytes, &ticket));
        }
    }

    #[test]
    fn a_ticket_reads_back_as_written_and_nothing_else_does() {
        let ticket = DecodeTicket {
            encoding: Encoding::Zstd,
            limits: ReadLimits {
                max_json_depth: 7,
                ..ReadLimits::default()
            },
            budget: 12345,
        };
        let bytes = ticket.to_bytes();
        assert_eq!(DecodeTicket::from_bytes(&bytes).expect("reads back"), ticket);
        for end in 0..bytes.len() {
            assert!(DecodeTicket::from_bytes(&bytes[..end]).is_err());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            DecodeTicket::from_bytes(&longer).expect_err("trailing bytes").code,
            ErrorCode::InvalidArgument
        );
    }
}
