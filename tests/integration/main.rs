//! The integration tests, one module per concern, in one test binary: one link against the
//! library and its heavy dependencies (tantivy, bundled SQLite) instead of one per file. A test
//! is named by its module, e.g. `cargo test --test integration golden::`. Natively every module
//! but `wasm` runs; on wasm32 (`make test-wasm`, under Node) `provider_contract`, `snapshot`,
//! `stepped_search`, `text_clauses` and `wasm` do: each module says where it runs with its own `#![cfg]`. `tests/soak.rs` stays a
//! binary of its own, because it measures the resident size of its whole process.

// Loading: the spec's fixtures, damaged and hostile inputs.
mod bad_input;
mod golden;
mod hostile;

// Search: the provider contract, snapshots, searching during a build, CJK recall, text clauses.
mod cjk_recall;
mod provider_contract;
mod snapshot;
mod stepped_search;
mod text_clauses;

// The faces: command line, JSON-RPC, JavaScript (wasm32 only).
mod cli;
mod rpc;
mod wasm;

// Against real DSH (with `DSH_ORACLE_DIR`; without it they say so and pass).
mod differential;
mod reference_differential;

// Repository hygiene.
mod tidy;

/// `plain` as one Zstandard frame, as DSH writes each durable batch of a log (libzstd's
/// default parameters: the content size declared, no checksum).
pub(crate) fn zstd_frame(plain: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(zstd_safe::compress_bound(plain.len()));
    zstd_safe::compress(&mut frame, plain, 1).expect("a buffer of the compression bound holds the frame");
    frame
}
