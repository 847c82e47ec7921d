//! Full-text search over the documents of a corpus: the tokenizer that defines recall.
pub mod backend;
pub mod build;
pub mod engine;
mod pending;
pub(crate) mod phrase;
pub mod rank;
pub mod request;
pub mod snapshot;
#[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
pub mod sqlite;
pub mod tantivy;
pub mod tokenizer;
