//! Cross-session references, the pure core: `dsh-session:` URIs, mentions and their
//! parsing, input normalization, projection and byte-budget retention of a source surface, and
//! the prompt, source record and context message, all byte-identical to DSH.
//!
//! The core reads no corpus and does no I/O. Two corpus-backed calls sit on top of it:
//! [`list_candidates`] (discovery) and [`prepare()`], which runs [`normalize_references`] (or
//! [`normalize_reference_values`]), reads each source's surface (what `Corpus::read_surface`
//! reads, its events borrowed from the log instead of copied), then fits and renders them as
//! [`render_sources`] does with the normalized labels, and adds the design's budget resolution,
//! spill reports, cancellation and append order. Retention builds only the texts
//! it keeps, so preparing a long source costs about its snapshot, not its length.
//!
//! Ids, labels and texts are JavaScript strings ([`JsString`](crate::json::JsString)) because
//! DSH accepts any string, lone UTF-16 surrogates included.

mod cancel;
mod candidates;
mod input;
mod mention;
mod prepare;
mod render;
mod snapshot;
mod text;
mod uri;

#[cfg(test)]
mod tests;

pub use cancel::CancellationToken;
pub use candidates::{Candidate, ReferenceAgent, candidate_limit, list_candidates, list_candidates_cancellable};
pub use input::{ReferenceConfig, SessionReferenceInput, normalize_reference_values, normalize_references};
pub use mention::{
    ParsedReferenceText, SessionReference, format_session_reference_mention, parse_session_reference_text,
};
pub use prepare::{
    AppendOrder, BudgetOptions, BudgetOrigin, NO_SPILL_STORE, PrepareOptions, PreparedReferences, ReferenceReport,
    ResolvedBudget, RouteCapacity, SpillOutcome, SpillRequest, SpillStore, fresh_message_id, prepare, prepare_values,
};
pub use render::{PROMPT_PREFIX, PROMPT_SUFFIX, RenderedReferences, render_prompt, render_sources, source_record};
pub use snapshot::{
    ProjectedMessage, ReferenceStats, RetainedSource, Role, SourceSurface, is_compact_checkpoint_source,
    omission_notice, project_conversation, retain_source, tag_safe_json, truncate_with_notice,
};
pub use uri::{SESSION_REFERENCE_SCHEME, decode_session_reference_uri, encode_session_reference_uri};

/// Hard ceiling on distinct sources in one message; configuration may lower it, never raise it.
pub const MAX_REFERENCES: u64 = 3;
/// Default number of discovery candidates.
pub const DEFAULT_CANDIDATE_LIMIT: u64 = 50;
/// Default per-source budget, in bytes of the snapshot object's tag-safe JSON.
pub const DEFAULT_MAX_REFERENCE_BYTES: u64 = 65536;
