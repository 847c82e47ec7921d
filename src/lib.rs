//! Load, fold and search DeepSeek Harness (DSH) session logs locally, natively or in
//! WebAssembly.
//!
//! Data flows one way: bytes ([`archive`]) → log ([`log`]) → fold ([`fold`]) → corpus
//! ([`corpus`]). Every event gets the same `current` / `shadowed` / `log-only` label DSH gives
//! it, from the same fold that yields the model-facing surface.
//!
//! ```
//! use dsh_session_search::archive::{Input, LoadOptions};
//! use dsh_session_search::corpus::Corpus;
//!
//! let log = concat!(
//!     r#"{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}"#, "\n",
//!     r#"{"type":"user/message","seq":0,"time":2,"data":{"id":"m1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}"#, "\n",
//! );
//! let mut corpus = Corpus::new();
//! let report = corpus
//!     .load(vec![Input::File { name: "s1.jsonl".into(), bytes: log.as_bytes().to_vec() }], &LoadOptions::default())
//!     .expect("non-strict loads never fail as a whole");
//! assert!(report.failures.is_empty());
//! let events = corpus.list_events("s1").expect("loaded");
//! assert_eq!(events[0].surface.as_str(), "current");
//! ```

pub mod api;
pub mod archive;
#[cfg(all(feature = "component", target_arch = "wasm32", target_os = "wasi"))]
mod component;
pub mod corpus;
pub mod documents;
pub mod error;
pub mod event;
pub mod filters;
pub mod fold;
pub mod json;
pub mod log;
pub mod reads;
pub mod reference;
pub mod rpc;
pub mod search;
pub mod sorting;
#[cfg(test)]
mod testing;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub mod wasm;
mod word;
