//! Choosing a search backend at run time: the provider enum the faces (RPC, CLI, wasm) hold,
//! and the options that pick it (backend, tokenizer, index path).

use super::engine::{CountSink, DocId, ScanProvider, SearchEngine, SearchProvider, Settled};
use super::request::SearchConfig;
use super::tantivy::TantivyProvider;
use super::tokenizer::TokenizerMode;
use crate::error::Error;

/// Which engine stores the index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// tantivy, in memory (the default; the only one in wasm).
    #[default]
    Tantivy,
    /// Brute-force scan over token streams (reference behaviour; small corpora).
    Scan,
    /// SQLite FTS5, in memory or at a reusable on-disk path (native builds with `sqlite`).
    Sqlite {
        /// Where the index lives; `None` for memory.
        path: Option<String>,
    },
}

/// Everything that shapes a search engine.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// The backend.
    pub backend: Backend,
    /// `unicode61` (DSH-identical, default) or `cjk` (bigram recall for CJK and Thai).
    pub tokenizer: TokenizerMode,
    /// Page sizes and snippet length.
    pub config: SearchConfig,
}

impl SearchOptions {
    /// Builds an empty engine with these options.
    pub fn engine(&self) -> Result<SearchEngine<AnyProvider>, Error> {
        let provider = match &self.backend {
            Backend::Tantivy => AnyProvider::Tantivy(Box::new(TantivyProvider::new(self.tokenizer))),
            Backend::Scan => AnyProvider::Scan(ScanProvider::new(self.tokenizer)),
            Backend::Sqlite { path } => sqlite_provider(path.as_deref(), self.tokenizer)?,
        };
        Ok(SearchEngine::new(provider, self.config, self.tokenizer))
    }
}

#[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
fn sqlite_provider(path: Option<&str>, mode: TokenizerMode) -> Result<AnyProvider, Error> {
    let provider = match path {
        Some(path) => super::sqlite::SqliteProvider::open(path, mode)?,
        None => super::sqlite::SqliteProvider::in_memory(mode)?,
    };
    Ok(AnyProvider::Sqlite(Box::new(provider)))
}

#[cfg(not(all(feature = "sqlite", not(target_arch = "wasm32"))))]
fn sqlite_provider(_path: Option<&str>, _mode: TokenizerMode) -> Result<AnyProvider, Error> {
    Err(Error::new(
        crate::error::ErrorCode::QueryInvalidConfig,
        "the sqlite backend is not in this build (native, feature `sqlite`)",
    ))
}

/// Any provider, chosen at run time.
pub enum AnyProvider {
    /// tantivy in memory.
    Tantivy(Box<TantivyProvider>),
    /// The scanning reference provider.
    Scan(ScanProvider),
    /// SQLite FTS5.
    #[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
    Sqlite(Box<super::sqlite::SqliteProvider>),
}

macro_rules! delegate {
    ($self:ident, $p:ident => $call:expr) => {
        match $self {
            AnyProvider::Tantivy($p) => $call,
            AnyProvider::Scan($p) => $call,
            #[cfg(all(feature = "sqlite", not(target_arch = "wasm32")))]
            AnyProvider::Sqlite($p) => $call,
        }
    };
}

impl SearchProvider for AnyProvider {
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        delegate!(self, p => p.replace_session(session, docs))
    }

    fn appends(&self) -> bool {
        delegate!(self, p => p.appends())
    }

    fn grows(&self) -> bool {
        delegate!(self, p => p.grows())
    }

    fn append_documents(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        delegate!(self, p => p.append_documents(session, docs))
    }

    fn remove_session(&mut self, session: &str) -> Result<(), Error> {
        delegate!(self, p => p.remove_session(session))
    }

    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        delegate!(self, p => p.phrase_matches(phrase, session))
    }

    fn match_counts(&self, phrase: &[String], session: Option<&str>, sink: &mut dyn CountSink) -> Result<(), Error> {
        delegate!(self, p => p.match_counts(phrase, session, sink))
    }

    fn build_in_steps(&mut self, stepped: bool) {
        delegate!(self, p => p.build_in_steps(stepped))
    }

    fn commit(&mut self) -> Result<(), Error> {
        delegate!(self, p => p.commit())
    }

    fn hand_out(&mut self, slots: usize) {
        delegate!(self, p => p.hand_out(slots))
    }

    fn settle(&mut self) -> Result<Settled, Error> {
        delegate!(self, p => p.settle())
    }

    fn take_job(&mut self) -> Option<Vec<u8>> {
        delegate!(self, p => p.take_job())
    }

    fn supply_segment(&mut self, bytes: &[u8]) -> bool {
        delegate!(self, p => p.supply_segment(bytes))
    }

    fn reclaim_jobs(&mut self) {
        delegate!(self, p => p.reclaim_jobs())
    }
}
