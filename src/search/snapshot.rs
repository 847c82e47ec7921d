//! Index snapshots: the built in-memory tantivy index exported as bytes and reopened
//! later over the same corpus without re-indexing — refused when the crate version, the
//! tokenizer or any session's indexed content differs.
//!
//! Layout: `DSHIDX` magic, a format byte, an XXH64 checksum of everything after it, a JSON
//! manifest (crate version, tokenizer, each session's content fingerprint and document ids in
//! document order), then the tantivy segment files. The checksum is verified before anything
//! else is read, so a changed or cut snapshot is refused instead of reaching tantivy, whose
//! readers trust their files (a damaged segment can abort the process there).
//!
//! The snapshot holds no document text: the corpus it reopens over has it. Reopening remakes
//! each session's document records from the corpus, as a build would, and accepts the session
//! only if their hashes sum to the fingerprint it was indexed with (the sum covers each
//! document's text, type, time, seq and label, and the session's header and availability).

use super::backend::AnyProvider;
use super::build::{docs_sum, document_meta, fingerprint_of, session_texts};
use super::engine::{DocId, DocIdMap, DocMeta, DocStore, IndexedSession, Interner, NO_DOC, SearchEngine};
use super::request::SearchConfig;
use super::tantivy::{SegmentFiles, TantivyProvider};
use super::tokenizer::TokenizerMode;
use crate::corpus::{Corpus, Source};
use crate::error::{Error, ErrorCode};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use twox_hash::XxHash64;

const MAGIC: &[u8] = b"DSHIDX";
const FORMAT: u8 = 4;
/// Seed of the snapshot checksum (any fixed value; it only has to match across builds).
pub const CHECKSUM_SEED: u64 = 0x4453_4849_4458_0002;

fn refused(why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::QueryIndexFailed,
        format!("the index snapshot cannot be used: {why}"),
    )
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        if self.bytes.len() < n {
            return Err(refused("it is truncated"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, Error> {
        let bytes: [u8; 8] = self.take(8)?.try_into().map_err(|_| refused("it is truncated"))?;
        Ok(u64::from_le_bytes(bytes))
    }
}

/// A provider whose index can be written out and read back as segment files.
pub trait SegmentStore: super::engine::SearchProvider + Sized {
    /// Every segment index's files.
    fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error>;
    /// Rebuilds the provider from exported files and each session's live documents (their new
    /// ids); `renumber` maps the ids the segments store to the new ones (`DocId::MAX` for
    /// documents no session holds any more).
    fn import_segments(
        mode: TokenizerMode,
        segments: Vec<SegmentFiles>,
        by_session: HashMap<String, std::collections::HashSet<DocId>>,
        renumber: &dyn Fn(DocId) -> DocId,
    ) -> Result<Self, Error>;
}

impl SegmentStore for TantivyProvider {
    fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error> {
        TantivyProvider::export_segments(self)
    }

    fn import_segments(
        mode: TokenizerMode,
        segments: Vec<SegmentFiles>,
        by_session: HashMap<String, std::collections::HashSet<DocId>>,
        renumber: &dyn Fn(DocId) -> DocId,
    ) -> Result<Self, Error> {
        TantivyProvider::import_segments(mode, segments, by_session, renumber)
    }
}

impl SegmentStore for AnyProvider {
    fn export_segments(&mut self) -> Result<Vec<SegmentFiles>, Error> {
        match self {
            AnyProvider::Tantivy(provider) => provider.export_segments(),
            _ => Err(refused("snapshots are made of the tantivy backend's index")),
        }
    }

    fn import_segments(
        mode: TokenizerMode,
        segments: Vec<SegmentFiles>,
        by_session: HashMap<String, std::collections::HashSet<DocId>>,
        renumber: &dyn Fn(DocId) -> DocId,
    ) -> Result<Self, Error> {
        Ok(AnyProvider::Tantivy(Box::new(TantivyProvider::import_segments(
            mode, segments, by_session, renumber,
        )?)))
    }
}

impl<P: SegmentStore> SearchEngine<P> {
    /// Exports the index (after reconciling with `corpus`) as bytes.
    pub fn export_snapshot(&mut self, corpus: &Corpus) -> Result<Vec<u8>, Error> {
        self.reconcile(corpus)?;
        let sessions: Vec<serde_json::Value> = self
            .sessions
            .iter()
            .map(|(id, s)| json!({ "id": id, "fingerprint": format!("{:016x}", s.fingerprint()), "docs": s.docs }))
            .collect();
        let segments = self.provider.export_segments()?;
        let manifest = json!({
            "crate": env!("CARGO_PKG_VERSION"),
            "tokenizer": TokenizerMode::as_str(self.mode),
            "sessions": sessions,
            "segments": segments.iter().map(|files| files.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>()).collect::<Vec<_>>(),
        })
        .to_string();
        let mut body = Vec::with_capacity(manifest.len() + 64);
        body.extend_from_slice(&(manifest.len() as u64).to_le_bytes());
        body.extend_from_slice(manifest.as_bytes());
        for files in &segments {
            for (_, data) in files {
                body.extend_from_slice(&(data.len() as u64).to_le_bytes());
                body.extend_from_slice(data);
            }
        }
        let mut out = Vec::with_capacity(body.len() + MAGIC.len() + 9);
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        out.extend_from_slice(&XxHash64::oneshot(CHECKSUM_SEED, &body).to_le_bytes());
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Reopens a snapshot over `corpus`. Every session of the corpus must have been indexed
    /// with the same content, by the same crate version and tokenizer; otherwise the snapshot
    /// is refused with `SESSION_QUERY_INDEX_FAILED` (and nothing is built).
    pub fn import_snapshot(bytes: &[u8], corpus: &Corpus, config: SearchConfig) -> Result<Self, Error> {
        let mut reader = Reader { bytes };
        let (manifest, mode) = read_manifest(&mut reader)?;
        let indexed = stored_sessions(&manifest);
        let renumbered = renumbering(&indexed);
        let mut docs = DocStore::default();
        let mut kinds = Interner::default();
        let sessions = reopen_sessions(corpus, &indexed, &renumbered, &mut docs, &mut kinds)?;
        let segments = read_segments(&manifest, &mut reader)?;
        let by_session = sessions
            .iter()
            .map(|(id, s)| (id.clone(), s.docs.iter().copied().collect()))
            .collect();
        let renumber = |old: DocId| renumbered.get(&old).copied().unwrap_or(NO_DOC);
        let provider = P::import_segments(mode, segments, by_session, &renumber)?;
        let epoch = sessions.len() as u64;
        let mut engine = SearchEngine::new(provider, config, mode);
        engine.sessions = sessions;
        engine.docs = docs;
        engine.kinds = kinds;
        engine.next_doc = renumbered.len() as DocId;
        engine.next_epoch = epoch;
        engine.committed_epoch = epoch;
        // Cursors are bound to the engine instance, so a reopened index starts a new history.
        engine.generation = 1;
        Ok(engine)
    }
}

/// Checks a snapshot's magic, format and checksum, and reads its manifest: built by this
/// version, with a tokenizer this version knows.
fn read_manifest(reader: &mut Reader<'_>) -> Result<(serde_json::Value, TokenizerMode), Error> {
    if reader.take(MAGIC.len())? != MAGIC {
        return Err(refused("it is not an index snapshot"));
    }
    if reader.take(1)?[0] != FORMAT {
        return Err(refused("it uses another snapshot format"));
    }
    let checksum = reader.u64()?;
    if XxHash64::oneshot(CHECKSUM_SEED, reader.bytes) != checksum {
        return Err(refused("its checksum does not match: it was changed or cut"));
    }
    let manifest_len = reader.u64()? as usize;
    let manifest: serde_json::Value =
        serde_json::from_slice(reader.take(manifest_len)?).map_err(|e| refused(format!("bad manifest: {e}")))?;
    let version = manifest["crate"].as_str().unwrap_or_default();
    if version != env!("CARGO_PKG_VERSION") {
        return Err(refused(format!(
            "it was built by version {version}, this is {}",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let name = manifest["tokenizer"].as_str();
    let Some(mode) = name.and_then(TokenizerMode::parse) else {
        return Err(refused(format!("unknown tokenizer {name:?}")));
    };
    Ok((manifest, mode))
}

/// The stored documents numbered afresh, in the order of their stored ids (so a session's run
/// of ids stays a run); the engine continues from their count, so memory follows what the
/// snapshot holds, whatever ids it claims.
fn renumbering(indexed: &HashMap<String, (String, Vec<DocId>)>) -> DocIdMap<DocId> {
    let mut stored: Vec<DocId> = indexed.values().flat_map(|(_, ids)| ids.iter().copied()).collect();
    stored.sort_unstable();
    stored.dedup();
    stored
        .iter()
        .enumerate()
        .map(|(new, old)| (*old, new as DocId))
        .collect()
}

/// The engine's record of every session of `corpus`, each found in the snapshot unchanged
/// (its documents' metadata go to `docs`); the snapshot may hold no other session.
fn reopen_sessions(
    corpus: &Corpus,
    indexed: &HashMap<String, (String, Vec<DocId>)>,
    renumbered: &DocIdMap<DocId>,
    docs: &mut DocStore,
    kinds: &mut Interner,
) -> Result<HashMap<String, IndexedSession>, Error> {
    let mut sessions = HashMap::new();
    for (id, source) in corpus.sources() {
        let Some((fingerprint, ids)) = indexed.get(id) else {
            return Err(refused(format!("session {id:?} is not in it")));
        };
        let ids: Vec<DocId> = ids.iter().map(|old| renumbered[old]).collect();
        let changed = || refused(format!("session {id:?} changed since it was indexed"));
        let (metas, docs_sum) = reopened_documents(kinds, id, &source, ids.len()).ok_or_else(changed)?;
        let record = source.record();
        if format!("{:016x}", fingerprint_of(&record, docs_sum)) != *fingerprint {
            return Err(changed());
        }
        for (doc, meta) in ids.iter().zip(metas) {
            docs.insert(*doc, meta);
        }
        let session = IndexedSession {
            generation: corpus.session_generation(id),
            lineage: corpus.session_lineage(id),
            events: source.log.events.len(),
            replacements: source.log.surface.replacements.len(),
            docs_sum,
            live: source.live,
            persisted: source.persisted,
            record,
            docs: ids,
            epoch: sessions.len() as u64 + 1,
        };
        sessions.insert(id.clone(), session);
    }
    if sessions.len() != indexed.len() {
        return Err(refused("it holds sessions the corpus does not have"));
    }
    Ok(sessions)
}

/// The segments' files, named in the manifest and stored after it in its order.
fn read_segments(manifest: &serde_json::Value, reader: &mut Reader<'_>) -> Result<Vec<SegmentFiles>, Error> {
    let mut segments = Vec::new();
    for names in manifest["segments"].as_array().into_iter().flatten() {
        let mut files = Vec::new();
        for name in names.as_array().into_iter().flatten() {
            let len = reader.u64()? as usize;
            files.push((name.as_str().unwrap_or_default().to_owned(), reader.take(len)?.to_vec()));
        }
        segments.push(files);
    }
    Ok(segments)
}

/// Each stored session's fingerprint and document ids (in the session's document order).
fn stored_sessions(manifest: &serde_json::Value) -> HashMap<String, (String, Vec<DocId>)> {
    manifest["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let ids = s["docs"].as_array().into_iter().flatten();
            (
                s["id"].as_str().unwrap_or_default().to_owned(),
                (
                    s["fingerprint"].as_str().unwrap_or_default().to_owned(),
                    ids.filter_map(|d| Some(d.as_u64()? as DocId)).collect(),
                ),
            )
        })
        .collect()
}

/// A session's documents as the build records them, remade from the corpus, with the sum of
/// their hashes; `None` when the session no longer has the `count` documents it was indexed
/// with. The snapshot holds no text: the sum (in the session's fingerprint) is what tells
/// the indexed content from the corpus's.
fn reopened_documents(
    kinds: &mut Interner,
    id: &str,
    source: &Source<'_>,
    count: usize,
) -> Option<(Vec<DocMeta>, u64)> {
    let documents = session_texts(source);
    if documents.len() != count {
        return None;
    }
    let session: Arc<str> = Arc::from(id);
    let metas: Vec<DocMeta> = documents
        .iter()
        .map(|(record, text, changed)| document_meta(kinds, &session, record, text, *changed))
        .collect();
    let sum = docs_sum(metas.iter().zip(documents.iter().map(|(_, text, _)| text.as_str())));
    Some((metas, sum))
}
