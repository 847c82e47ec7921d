//! Full-text search over the documents of a corpus (spec 04): the tokenizer that defines recall.
pub mod engine;
pub mod rank;
pub mod request;
pub mod tantivy;
pub mod tokenizer;
