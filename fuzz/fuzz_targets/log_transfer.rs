//! A log read for another instance and adopted: any bytes read as a raw log and, when they
//! read, written and adopted back; the bytes themselves and a cut or altered copy of what was
//! written, adopted as if a helper had written them.
#![no_main]

use dsh_session_search::log::transfer::{DecodeTicket, Expected, adopt, read_for_transfer};
use dsh_session_search::log::{Encoding, ReadLimits, read_log};
use libfuzzer_sys::fuzz_target;

#[path = "shared/log_reads.rs"]
mod log_reads;
use log_reads::reads;

fuzz_target!(|data: &[u8]| {
    let ticket = DecodeTicket {
        encoding: Encoding::Raw,
        limits: ReadLimits {
            max_line_bytes: 1 << 20,
            ..ReadLimits::default()
        },
        budget: 32 << 20,
    };
    let expected = Expected {
        size: data.len() as u64,
        head: &data[..data.len().min(4)],
        ticket: &ticket,
    };
    let _ = adopt(data.to_vec(), &expected);
    let Ok(read) = read_for_transfer(&ticket, data) else {
        return;
    };
    let written = read.into_bytes();
    let adopted = adopt(written.clone(), &expected).expect("what a read wrote is adopted");
    let direct = read_log(data, Encoding::Raw, &ticket.limits).expect("what read for transfer reads alone");
    assert_eq!(reads(&adopted.log), reads(&direct));
    // A cut or altered copy is refused or adopted, never a panic.
    let at = data.first().map_or(0, |&b| usize::from(b) * 31) % written.len();
    let _ = adopt(written[..at].to_vec(), &expected);
    let mut altered = written;
    altered[at] ^= data.last().copied().unwrap_or(1) | 1;
    let _ = adopt(altered, &expected);
});
