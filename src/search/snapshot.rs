//! Index snapshots: the built in-memory tantivy index exported as bytes and reopened
//! later over the same corpus without re-indexing — refused when the crate version, the
//! tokenizer or any session's indexed content differs.
//!
//! Layout: `DSHIDX` magic, a format byte, an XXH64 checksum of everything after it, a JSON
//! manifest (crate version, tokenizer, sessions with their content fingerprints, documents),
//! then the tantivy segment files. The checksum is verified before anything else is read, so a
//! changed or cut snapshot is refused instead of reaching tantivy, whose readers trust their
//! files (a damaged segment can abort the process there).

use super::backend::AnyProvider;
use super::build::{docs_sum, fingerprint_of};
use super::engine::{
    DocId, DocIdMap, DocMeta, DocStore, IndexedSession, Interner, NO_DOC, SearchEngine, document_text,
};
use super::request::SearchConfig;
use super::tantivy::{SegmentFiles, TantivyProvider};
use super::tokenizer::TokenizerMode;
use crate::corpus::{Corpus, SessionRecord};
use crate::documents::session_documents;
use crate::error::{Error, ErrorCode};
use crate::fold::SurfaceLabel;
use serde_json::json;
use std::collections::HashMap;
use twox_hash::XxHash64;

const MAGIC: &[u8] = b"DSHIDX";
const FORMAT: u8 = 3;
/// Seed of the snapshot checksum (any fixed value; it only has to match across builds).
pub const CHECKSUM_SEED: u64 = 0x4453_4849_4458_0002;

fn refused(why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::QueryIndexFailed,
        format!("the index snapshot cannot be used: {why}"),
    )
}

fn label(name: &str) -> SurfaceLabel {
    SurfaceLabel::parse(name).unwrap_or(SurfaceLabel::LogOnly)
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
    /// ids); `renumber` maps the ids the segments store to the new ones ([`NO_DOC`] for
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
        let docs: Vec<serde_json::Value> = self
            .docs
            .iter()
            .map(|(id, d)| {
                let (text, session, kind) = (document_text(corpus, d)?, &*d.session, &*d.kind);
                let doc = json!({ "id": id, "session": session, "seq": d.seq, "kind": kind, "time": d.time,
                                  "surface": d.surface.as_str(), "text": text });
                Ok(doc)
            })
            .collect::<Result<_, Error>>()?;
        let segments = self.provider.export_segments()?;
        let manifest = json!({
            "crate": env!("CARGO_PKG_VERSION"),
            "tokenizer": TokenizerMode::as_str(self.mode),
            "sessions": sessions,
            "docs": docs,
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
        // The stored documents are numbered afresh, in the order of their stored ids (so a
        // session's run of ids stays a run), and the engine continues from their count: memory
        // follows what the snapshot holds, whatever ids it claims.
        let mut stored: Vec<(DocId, &serde_json::Value)> = manifest["docs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|doc| (doc["id"].as_u64().unwrap_or_default() as DocId, doc))
            .collect();
        stored.sort_by_key(|(id, _)| *id);
        stored.dedup_by_key(|(id, _)| *id);
        let renumbered: DocIdMap<DocId> = stored
            .iter()
            .enumerate()
            .map(|(new, (old, _))| (*old, new as DocId))
            .collect();
        let mut docs = DocStore::default();
        // The stored texts, only to check them against the corpus below.
        let mut texts: Vec<&str> = Vec::with_capacity(stored.len());
        let mut kinds = Interner::default();
        let mut names = Interner::default();
        for (new, (_, doc)) in stored.iter().enumerate() {
            let text = doc["text"].as_str().unwrap_or_default();
            docs.insert(
                new as DocId,
                DocMeta {
                    session: names.get(doc["session"].as_str().unwrap_or_default()),
                    seq: doc["seq"].as_u64().unwrap_or_default(),
                    kind: kinds.get(doc["kind"].as_str().unwrap_or_default()),
                    time: doc["time"].as_i64().unwrap_or_default(),
                    surface: label(doc["surface"].as_str().unwrap_or_default()),
                    length: text.chars().count() as u64,
                    // Unknown here: a hit checks its text again.
                    sanitising_changes: true,
                },
            );
            texts.push(text);
        }
        let indexed: HashMap<String, (String, Vec<DocId>)> = manifest["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let docs = s["docs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|d| renumbered.get(&(d.as_u64()? as DocId)).copied())
                    .collect();
                (
                    s["id"].as_str().unwrap_or_default().to_owned(),
                    (s["fingerprint"].as_str().unwrap_or_default().to_owned(), docs),
                )
            })
            .collect();
        // The corpus must be exactly what was indexed.
        let mut sessions = HashMap::new();
        let mut epoch = 0;
        for (id, source) in corpus.sources() {
            let Some((fingerprint, ids)) = indexed.get(id) else {
                return Err(refused(format!("session {id:?} is not in it")));
            };
            let record = SessionRecord {
                header: source.log.header.clone(),
                live: source.live,
                persisted: source.persisted,
            };
            let current = session_documents(&source.log.header.raw_id, &source.log.events, &source.log.surface);
            let stored: Vec<(&DocMeta, &str)> = ids
                .iter()
                .filter_map(|d| Some((docs.get(d)?, *texts.get(*d as usize)?)))
                .collect();
            let same_texts = current.len() == stored.len()
                && current
                    .iter()
                    .zip(&stored)
                    .all(|(c, (_, s))| super::request::sanitize_text(&c.text.to_lossy()) == *s);
            let docs_sum = docs_sum(stored.iter().copied());
            let expected = fingerprint_of(&record, docs_sum);
            if !same_texts || format!("{expected:016x}") != *fingerprint {
                return Err(refused(format!("session {id:?} changed since it was indexed")));
            }
            epoch += 1;
            sessions.insert(
                id.clone(),
                IndexedSession {
                    generation: corpus.session_generation(id),
                    lineage: corpus.session_lineage(id),
                    events: source.log.events.len(),
                    replacements: source.log.surface.replacements.len(),
                    docs_sum,
                    live: source.live,
                    persisted: source.persisted,
                    record,
                    docs: ids.clone(),
                    epoch,
                },
            );
        }
        if sessions.len() != indexed.len() {
            return Err(refused("it holds sessions the corpus does not have"));
        }
        let mut segments = Vec::new();
        for names in manifest["segments"].as_array().into_iter().flatten() {
            let mut files = Vec::new();
            for name in names.as_array().into_iter().flatten() {
                let len = reader.u64()? as usize;
                files.push((name.as_str().unwrap_or_default().to_owned(), reader.take(len)?.to_vec()));
            }
            segments.push(files);
        }
        let by_session = sessions
            .iter()
            .map(|(id, s)| (id.clone(), s.docs.iter().copied().collect()))
            .collect();
        let renumber = |old: DocId| renumbered.get(&old).copied().unwrap_or(NO_DOC);
        let provider = P::import_segments(mode, segments, by_session, &renumber)?;
        let mut engine = SearchEngine::new(provider, config, mode);
        engine.sessions = sessions;
        engine.docs = docs;
        engine.kinds = kinds;
        engine.next_doc = stored.len() as DocId;
        engine.next_epoch = epoch;
        // Cursors are bound to the engine instance, so a reopened index starts a new history.
        engine.generation = 1;
        Ok(engine)
    }
}
