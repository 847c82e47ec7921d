//! The SQLite FTS5 provider (native only, feature `sqlite`): DSH's own index, in memory or in a
//! file that is reused across runs (sessions whose documents did not change are not re-indexed).
//!
//! # Layout
//!
//! * `dsh_docs`: an FTS5 table, `tokenize='unicode61'` with default options (DSH's), one row per
//!   document. Its rowid is `sid << 32 | ord`: the session's number in `dsh_sessions` and the
//!   document's index in the list the engine gave, so one session's rows are one rowid range
//!   (deleted with one range delete, and a session-restricted `MATCH` is a rowid range FTS5
//!   evaluates inside the index). In [`TokenizerMode::Unicode61`] the indexed column `body` is
//!   the sanitised text itself, as DSH stores it. In [`TokenizerMode::Cjk`] (which FTS5 cannot
//!   tokenize) `body` is the document's `cjk` token stream joined by spaces and the text is kept
//!   in the `UNINDEXED` column `raw` (see "Phrases").
//! * `dsh_sessions(sid, name, fingerprint, docs)`: per session id, a 128-bit XXH3 chain over
//!   its document texts (each link hashes the previous link and one length-prefixed text, in
//!   order, so a live session that grows extends it) and the document count.
//! * `dsh_meta`: the layout version and tokenizer mode; a file written with another layout or
//!   mode is rebuilt. Tables carry a `dsh_` prefix because the path is the caller's.
//!
//! DocIds are per process: the engine assigns them anew after a restart, so they are never
//! stored; the provider maps `(sid, ord)` to the DocIds of the last `replace_session` in memory.
//!
//! # Phrases and positions
//!
//! A phrase is one FTS5 phrase: the query tokens joined by spaces in double quotes (inner `"`
//! doubled), as DSH quotes its normalised query, passed to `MATCH` (plus the session's rowid
//! range). Occurrence start positions come one of two ways, the first while it stays cheaper
//! than the second would be (`instance_budget`: the rows `MATCH` counts, which costs FTS5 a walk
//! of its doclists, bound the occurrences read; past that bound the second way runs instead):
//!
//! * From the index: the connection's `fts5vocab` instance table lists every occurrence of a
//!   term as (rowid, position), read from FTS5's position lists without touching any text.
//!   One list per distinct phrase term (for a longer phrase only in the rows `MATCH` selects;
//!   that filter and the session's range run inside SQLite), joined on consecutive positions.
//!   It applies in `unicode61` mode when every query token is stored as itself (below). Its
//!   cost is the terms' occurrences in the whole corpus (the table is searchable by term only),
//!   so it wins for common words: `the` in the bench corpus is 219,000 occurrences in 38,500
//!   rows holding 53 MB of text.
//! * By re-tokenizing each matching row's text with our tokenizer and sliding the phrase over
//!   the token stream. It wins for rare phrases of common words (`the same`: 366 rows) and in
//!   small sessions, and is the only way in `cjk` mode (FTS5 re-tokenizes the stored `cjk`
//!   body, so its positions are not ours).
//!
//! Both are exact because our `unicode61` tokenizer yields SQLite's tokens and positions for
//! any input (property- and exhaustively tested against this very SQLite in
//! `tokenizer/tests.rs`), and the tests hold both ways to the scan provider's answers. FTS5's
//! per-instance API (`xInst`) is open only to C auxiliary functions (unsafe code, forbidden
//! here), and `highlight()` re-tokenizes and merges overlapping occurrences (`a a` in `a a a`
//! loses the second start).
//!
//! `MATCH` only selects candidate rows; a row whose re-tokenized stream lacks the phrase is
//! dropped, so the result is exactly the scan provider's. For the candidate set to be complete
//! the FTS5 phrase must be implied by every true occurrence:
//!
//! * `unicode61`: a query token that re-tokenizes to itself (every token except one FTS5 cut
//!   inside a character, whose text carries U+FFFD, see [`super::tokenizer::MAX_TERM_BYTES`])
//!   is queried as itself. When some token does not, the maximal runs of tokens that do are
//!   queried as separate phrases joined with `AND` (implied by the whole phrase); with no such
//!   token at all, every row in scope is a candidate.
//! * `cjk`: both the stored `body` and the query are `cjk` tokens joined by spaces, so FTS5
//!   sees `f(t1) f(t2) …` for some fixed function `f` of each token on both sides, and a `cjk`
//!   occurrence implies the FTS5 phrase. Positions come from the `cjk` tokenizer over `raw`.
//!
//! # Reuse across runs and removals
//!
//! `replace_session` computes the fingerprint first: equal to the stored one (same count) → the
//! rows are kept and only the in-memory DocId map changes (no write, no tokenizing); otherwise
//! the session's rows are replaced inside a savepoint (one session at a time is atomic). Writes
//! share one transaction, opened at the first write and committed by `commit`.
//!
//! A stored session the engine never replaces in this process is invisible (no DocId maps to
//! it). The engine's first reconcile replays every session of the corpus before its first
//! `commit`, so that `commit` also sweeps stored sessions not replaced since the provider was
//! opened (sessions deleted from the corpus between runs). Later commits only commit; removals
//! within the process arrive through `remove_session`. So the [`SearchProvider`] trait is used
//! unchanged. Consequence: one index file per corpus; if a first reconcile sees only part of the
//! corpus, sessions arriving later are re-indexed once (correct, just slower).

use super::engine::{DocId, SearchProvider};
use super::phrase::Phrase;
use super::tokenizer::{TokenizerMode, Tokens};
use crate::error::{Error, ErrorCode};
use rusqlite::{Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped whenever the stored layout (or what `body` holds) changes: older files are rebuilt.
const LAYOUT: &str = "2";
/// Bits of a rowid for the document's index in its session.
const ORD_BITS: u32 = 32;
/// Session numbers must leave the rowid positive.
const MAX_SID: i64 = (1 << (63 - ORD_BITS)) - 1;
/// FTS5's view of `dsh_docs`'s index, per connection (the temp schema: never stored):
/// `dsh_instances(term, doc, col, offset)`, one row per token occurrence, read by term.
const VOCABULARIES: &str = "CREATE VIRTUAL TABLE temp.dsh_instances USING fts5vocab(main, dsh_docs, instance);";
/// Re-reading and re-tokenizing one matching row (1.3 to 3.3 kB of text in the bench corpus)
/// costs about as much as handing this many occurrences from the instance vocabulary to Rust
/// (release build, bench corpus); skipping an occurrence inside SQLite costs about a third of
/// handing it over. `OCCURRENCES_PER_ROW` is a common term's typical count in a row that holds
/// it (2 to 10 in the bench corpus): the vocabulary's own counts cost a scan of the term.
const RESCAN_ROW_IN_INSTANCES: u64 = 60;
const SKIPPED_PER_HANDED: u64 = 3;
const OCCURRENCES_PER_ROW: u64 = 5;

fn sql_failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::QueryIndexFailed,
        format!("the SQLite search index failed to {what}: {e}"),
    )
}

/// Counters of the work a [`SqliteProvider`] did since it was opened. Shared, so they can be
/// read after the provider moved into an engine ([`SqliteProvider::stats`]).
#[derive(Debug, Default)]
pub struct SqliteStats {
    rows_written: AtomicU64,
    rows_deleted: AtomicU64,
    sessions_written: AtomicU64,
    sessions_reused: AtomicU64,
    sessions_swept: AtomicU64,
}

impl SqliteStats {
    /// Documents inserted into the FTS5 table (tokenized by SQLite).
    pub fn rows_written(&self) -> u64 {
        self.rows_written.load(Ordering::Relaxed)
    }
    /// Documents deleted from the FTS5 table.
    pub fn rows_deleted(&self) -> u64 {
        self.rows_deleted.load(Ordering::Relaxed)
    }
    /// `replace_session` calls that rewrote the session's rows.
    pub fn sessions_written(&self) -> u64 {
        self.sessions_written.load(Ordering::Relaxed)
    }
    /// `replace_session` calls whose fingerprint matched: rows kept, nothing written.
    pub fn sessions_reused(&self) -> u64 {
        self.sessions_reused.load(Ordering::Relaxed)
    }
    /// Stored sessions dropped by the first commit because this process never replaced them.
    pub fn sessions_swept(&self) -> u64 {
        self.sessions_swept.load(Ordering::Relaxed)
    }
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Full-text search in SQLite FTS5, in memory or in a reusable file (module documentation).
pub struct SqliteProvider {
    conn: Connection,
    mode: TokenizerMode,
    /// A write transaction is open (committed by `commit`).
    in_tx: bool,
    /// Stored sessions not replaced in this process were dropped (first commit).
    swept: bool,
    /// Session id → its number, for sessions replaced in this process.
    sids: HashMap<String, i64>,
    /// Session number → DocIds by document index.
    docs: HashMap<i64, Vec<DocId>>,
    positions: Positions,
    stats: Arc<SqliteStats>,
}

/// One matching document and the start positions of its occurrences, as providers return them.
type PhraseMatch = (DocId, Vec<u32>);

/// How `phrase_matches` finds occurrence positions (module documentation, "Phrases"). The
/// forced ways exist for the tests that hold both to the scan provider's answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Positions {
    /// Whichever is estimated cheaper for the query (always, outside tests).
    Cheaper,
    /// Re-tokenize the rows `MATCH` selects.
    Rescan,
    /// Join the terms' occurrences from the instance vocabulary, where it applies.
    Instances,
}

/// The 128-bit fingerprint of a session's document list (texts in order): a chain, one link
/// per document, so a session that grows extends its stored fingerprint instead of re-reading
/// its older texts, and equals the fingerprint of the whole list given at once.
fn fingerprint(docs: &[(DocId, &str)]) -> [u8; 16] {
    extend_fingerprint([0; 16], docs)
}

fn extend_fingerprint(print: [u8; 16], docs: &[(DocId, &str)]) -> [u8; 16] {
    docs.iter().fold(print, |print, (_, text)| {
        let mut hasher = twox_hash::XxHash3_128::new();
        hasher.write(&print);
        hasher.write(&(text.len() as u64).to_le_bytes());
        hasher.write(text.as_bytes());
        hasher.finish_128().to_le_bytes()
    })
}

fn too_many_documents() -> Error {
    Error::new(
        ErrorCode::QueryIndexFailed,
        format!("the SQLite search index holds at most 2^{ORD_BITS} documents per session"),
    )
}

fn rowid_range(sid: i64) -> (i64, i64) {
    (sid << ORD_BITS, (sid << ORD_BITS) | ((1i64 << ORD_BITS) - 1))
}

/// `text` wrapped as one FTS5 string (a phrase), inner quotes doubled.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The `cjk` token stream of `text`, tokens separated by one space (the indexed `body`).
fn cjk_body(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut tokens = Tokens::new(text, TokenizerMode::Cjk);
    while let Some(token) = tokens.next_ref() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(token.text);
    }
    out
}

/// Whether FTS5 (`unicode61`) reads the token text `term` as exactly that one term.
fn round_trips(term: &str) -> bool {
    let mut tokens = Tokens::new(term, TokenizerMode::Unicode61);
    let first = tokens.next_ref().is_some_and(|t| t.text == term);
    first && tokens.next_ref().is_none()
}

/// Start positions of every occurrence of `phrase` in `text`'s token stream, ascending.
pub(crate) fn occurrences(text: &str, phrase: &[String], mode: TokenizerMode) -> Vec<u32> {
    if phrase.is_empty() {
        return Vec::new();
    }
    Phrase::new(phrase).occurrences(text, mode)
}

impl SqliteProvider {
    /// An index in memory (nothing persists).
    pub fn in_memory(mode: TokenizerMode) -> Result<Self, Error> {
        let conn = Connection::open_in_memory().map_err(|e| sql_failed("open an in-memory database", e))?;
        Self::with_connection(conn, mode)
    }

    /// The index stored at `path` (created if missing), reused when it was written by this
    /// layout with the same tokenizer `mode`, rebuilt otherwise.
    pub fn open(path: impl AsRef<Path>, mode: TokenizerMode) -> Result<Self, Error> {
        let path = path.as_ref();
        let conn = Connection::open(path).map_err(|e| sql_failed(&format!("open {}", path.display()), e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| sql_failed("set a busy timeout", e))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            .map_err(|e| sql_failed(&format!("configure {}", path.display()), e))?;
        Self::with_connection(conn, mode)
    }

    fn with_connection(conn: Connection, mode: TokenizerMode) -> Result<Self, Error> {
        let format = format!(
            "layout {LAYOUT}; {}",
            match mode {
                TokenizerMode::Unicode61 => "unicode61".to_owned(),
                // The stored body is our `cjk` tokenizer's output: rebuild on every release.
                TokenizerMode::Cjk => format!("cjk {}", env!("CARGO_PKG_VERSION")),
            }
        );
        let setup = || -> rusqlite::Result<()> {
            conn.execute_batch(
                "BEGIN IMMEDIATE;
                 CREATE TABLE IF NOT EXISTS dsh_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);",
            )?;
            let stored: Option<String> = conn
                .query_row("SELECT value FROM dsh_meta WHERE key = 'format'", [], |r| r.get(0))
                .optional()?;
            if stored.as_deref() != Some(format.as_str()) {
                conn.execute_batch(
                    "DROP TABLE IF EXISTS dsh_docs;
                     DROP TABLE IF EXISTS dsh_sessions;
                     DELETE FROM dsh_meta;
                     CREATE VIRTUAL TABLE dsh_docs USING fts5(body, raw UNINDEXED, tokenize = 'unicode61');
                     CREATE TABLE dsh_sessions(
                         sid INTEGER PRIMARY KEY,
                         name TEXT NOT NULL UNIQUE,
                         fingerprint BLOB NOT NULL,
                         docs INTEGER NOT NULL
                     );",
                )?;
                conn.execute("INSERT INTO dsh_meta(key, value) VALUES ('format', ?1)", [&format])?;
            }
            conn.execute_batch("COMMIT")
        };
        if let Err(e) = setup() {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(sql_failed("create its tables (is FTS5 available?)", e));
        }
        conn.execute_batch(VOCABULARIES)
            .map_err(|e| sql_failed("open the FTS5 vocabularies", e))?;
        Ok(SqliteProvider {
            conn,
            mode,
            in_tx: false,
            swept: false,
            sids: HashMap::new(),
            docs: HashMap::new(),
            positions: Positions::Cheaper,
            stats: Arc::default(),
        })
    }

    /// The provider finding positions only the given way (where it applies).
    #[cfg(test)]
    fn with_positions(mut self, positions: Positions) -> Self {
        self.positions = positions;
        self
    }

    /// The work counters (shared: still readable after the provider moved into an engine).
    pub fn stats(&self) -> Arc<SqliteStats> {
        Arc::clone(&self.stats)
    }

    /// Documents written to the FTS5 table since the provider was opened.
    pub fn rows_written(&self) -> u64 {
        self.stats.rows_written()
    }

    fn begin(&mut self) -> Result<(), Error> {
        if !self.in_tx {
            self.conn
                .execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| sql_failed("begin a transaction", e))?;
            self.in_tx = true;
        }
        Ok(())
    }

    /// Deletes one stored session's rows (and, with `forget`, its record). Returns rows deleted.
    fn delete_rows(&self, sid: i64, forget: bool) -> rusqlite::Result<u64> {
        let (lo, hi) = rowid_range(sid);
        let deleted = self
            .conn
            .prepare("DELETE FROM dsh_docs WHERE rowid BETWEEN ?1 AND ?2")?
            .execute((lo, hi))? as u64;
        if forget {
            self.conn
                .prepare("DELETE FROM dsh_sessions WHERE sid = ?1")?
                .execute([sid])?;
        }
        SqliteStats::add(&self.stats.rows_deleted, deleted);
        Ok(deleted)
    }

    /// Rewrites one session's rows; returns its number.
    fn write_session(
        &self,
        session: &str,
        existing: Option<i64>,
        docs: &[(DocId, &str)],
        print: &[u8; 16],
    ) -> rusqlite::Result<i64> {
        let count = docs.len() as i64;
        let sid = match existing {
            Some(sid) => {
                self.delete_rows(sid, false)?;
                self.conn
                    .prepare("UPDATE dsh_sessions SET fingerprint = ?2, docs = ?3 WHERE sid = ?1")?
                    .execute((sid, &print[..], count))?;
                sid
            }
            None => {
                self.conn
                    .prepare("INSERT INTO dsh_sessions(name, fingerprint, docs) VALUES (?1, ?2, ?3)")?
                    .execute((session, &print[..], count))?;
                self.conn.last_insert_rowid()
            }
        };
        if !(0..=MAX_SID).contains(&sid) {
            return Err(rusqlite::Error::IntegralValueOutOfRange(0, sid));
        }
        self.insert_rows(sid, 0, docs)?;
        Ok(sid)
    }

    /// Writes `docs` as the rows of session `sid` from index `first` on.
    fn insert_rows(&self, sid: i64, first: usize, docs: &[(DocId, &str)]) -> rusqlite::Result<()> {
        let mut insert = self
            .conn
            .prepare("INSERT INTO dsh_docs(rowid, body, raw) VALUES (?1, ?2, ?3)")?;
        let (base, _) = rowid_range(sid);
        for (ord, (_, text)) in docs.iter().enumerate() {
            let rowid = base | (first + ord) as i64;
            match self.mode {
                TokenizerMode::Unicode61 => insert.execute((rowid, *text, None::<&str>))?,
                TokenizerMode::Cjk => insert.execute((rowid, cjk_body(text), Some(*text)))?,
            };
        }
        Ok(())
    }

    /// Adds `docs` after the `held` rows of session `sid` and extends its stored record.
    fn grow_session(&self, sid: i64, held: usize, docs: &[(DocId, &str)]) -> rusqlite::Result<()> {
        let stored: Vec<u8> = self
            .conn
            .prepare("SELECT fingerprint FROM dsh_sessions WHERE sid = ?1")?
            .query_row([sid], |r| r.get(0))?;
        let print = <[u8; 16]>::try_from(stored.as_slice()).unwrap_or([0; 16]);
        let print = extend_fingerprint(print, docs);
        self.insert_rows(sid, held, docs)?;
        self.conn
            .prepare("UPDATE dsh_sessions SET fingerprint = ?2, docs = ?3 WHERE sid = ?1")?
            .execute((sid, &print[..], (held + docs.len()) as i64))?;
        Ok(())
    }

    /// Drops stored sessions this process never replaced (first commit; module documentation).
    fn sweep(&mut self) -> Result<(), Error> {
        let stale: Vec<i64> = {
            let mut statement = self
                .conn
                .prepare("SELECT sid, name FROM dsh_sessions")
                .map_err(|e| sql_failed("list stored sessions", e))?;
            let rows = statement
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
                .map_err(|e| sql_failed("list stored sessions", e))?;
            let mut stale = Vec::new();
            for row in rows {
                let (sid, name) = row.map_err(|e| sql_failed("list stored sessions", e))?;
                if !self.sids.contains_key(&name) {
                    stale.push(sid);
                }
            }
            stale
        };
        if !stale.is_empty() {
            self.begin()?;
            for sid in &stale {
                self.delete_rows(*sid, true)
                    .map_err(|e| sql_failed("drop a session no longer in the corpus", e))?;
            }
            SqliteStats::add(&self.stats.sessions_swept, stale.len() as u64);
        }
        Ok(())
    }

    /// The FTS5 query selecting candidate rows, or `None` when every row is a candidate.
    fn match_expression(&self, phrase: &[String]) -> Option<String> {
        match self.mode {
            TokenizerMode::Cjk => {
                let joined = phrase.join(" ");
                let mut fts_tokens = Tokens::new(&joined, TokenizerMode::Unicode61);
                fts_tokens.next_ref().is_some().then(|| quote(&joined))
            }
            TokenizerMode::Unicode61 => {
                let groups: Vec<String> = phrase
                    .split(|t| !round_trips(t))
                    .filter(|group| !group.is_empty())
                    .map(|group| quote(&group.join(" ")))
                    .collect();
                (!groups.is_empty()).then(|| groups.join(" AND "))
            }
        }
    }

    /// Whether FTS5 indexed `phrase`'s tokens as exactly these terms at our positions, so its
    /// instance vocabulary holds their occurrences (`unicode61` with every token round-tripping;
    /// a `cjk` body is re-tokenized by FTS5, so its positions are not ours).
    fn indexed_verbatim(&self, phrase: &[String]) -> bool {
        self.mode == TokenizerMode::Unicode61 && phrase.iter().all(|t| round_trips(t))
    }

    /// Rows in `lo..=hi` that the FTS5 query `expression` matches (FTS5 walks its doclists;
    /// no position list is decoded and no text is read).
    fn count_matching(&self, expression: &str, (lo, hi): (i64, i64)) -> Result<u64, Error> {
        let count: i64 = self
            .conn
            .prepare("SELECT count(*) FROM dsh_docs WHERE dsh_docs MATCH ?3 AND rowid BETWEEN ?1 AND ?2")
            .and_then(|mut s| s.query_row((lo, hi, expression), |r| r.get(0)))
            .map_err(|e| sql_failed("count a phrase's rows", e))?;
        Ok(count.max(0) as u64)
    }

    /// How many occurrences the instance vocabulary may hand over before re-tokenizing the
    /// `rows` matching rows would have been cheaper, or `None` when the occurrences it would
    /// skip inside SQLite (those of the phrase's terms outside a session) already cost more.
    fn instance_budget(&self, phrase: &[String], rows: u64, range: (i64, i64)) -> Result<Option<u64>, Error> {
        let budget = rows.saturating_mul(RESCAN_ROW_IN_INSTANCES);
        if range == (0, i64::MAX) {
            return Ok(Some(budget));
        }
        let mut skipped = 0u64;
        for (i, term) in phrase.iter().enumerate() {
            if !phrase[..i].contains(term) {
                let term = quote(term);
                let outside = self
                    .count_matching(&term, (0, i64::MAX))?
                    .saturating_sub(self.count_matching(&term, range)?);
                skipped += outside.saturating_mul(OCCURRENCES_PER_ROW);
            }
        }
        Ok((skipped / SKIPPED_PER_HANDED <= budget).then_some(budget))
    }

    /// Every occurrence of the term `term` in the rows of `lo..=hi`, as `(rowid, position)`,
    /// ascending, from FTS5's instance vocabulary (its position lists: no text is read), or
    /// `None` once more than `limit` are found. The range is checked inside SQLite, so only the
    /// occurrences in it cross into Rust.
    fn term_instances(&self, term: &str, (lo, hi): (i64, i64), limit: u64) -> Result<Option<Vec<(i64, u32)>>, Error> {
        let failed = |e: rusqlite::Error| sql_failed("read a term's occurrences", e);
        let sql = if (lo, hi) == (0, i64::MAX) {
            "SELECT doc, offset FROM temp.dsh_instances WHERE term = ?1 AND ?2 <= ?3"
        } else {
            "SELECT doc, offset FROM temp.dsh_instances WHERE term = ?1 AND doc BETWEEN ?2 AND ?3"
        };
        let mut statement = self.conn.prepare(sql).map_err(failed)?;
        let mut rows = statement.query((term, lo, hi)).map_err(failed)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(failed)? {
            if out.len() as u64 >= limit {
                return Ok(None);
            }
            let rowid: i64 = row.get(0).map_err(failed)?;
            let position: i64 = row.get(1).map_err(failed)?;
            let position = u32::try_from(position).map_err(|e| sql_failed("read a token position", e))?;
            out.push((rowid, position));
        }
        // FTS5 lists a term's rows in rowid order and positions in order; cheap to make sure.
        if !out.is_sorted() {
            out.sort_unstable();
        }
        Ok(Some(out))
    }

    /// [`SearchProvider::phrase_matches`] from the instance vocabulary: the occurrence lists of
    /// the phrase's terms, joined on consecutive positions in one ordered pass over each.
    /// `None` when more than `budget` occurrences would be read.
    fn matches_from_instances(
        &self,
        phrase: &[String],
        range: (i64, i64),
        mut budget: u64,
    ) -> Result<Option<Vec<PhraseMatch>>, Error> {
        let mut lists: Vec<(&str, Vec<(i64, u32)>)> = Vec::new();
        for term in phrase {
            if !lists.iter().any(|(t, _)| t == term) {
                let Some(list) = self.term_instances(term, range, budget)? else {
                    return Ok(None);
                };
                budget -= list.len() as u64;
                lists.push((term, list));
            }
        }
        let by_offset: Vec<&[(i64, u32)]> = phrase
            .iter()
            .map(|term| {
                lists
                    .iter()
                    .find(|(t, _)| t == term)
                    .map_or(&[][..], |(_, l)| l.as_slice())
            })
            .collect();
        let mut cursors = vec![0usize; phrase.len()];
        let mut out: Vec<PhraseMatch> = Vec::new();
        let mut last_row = None;
        let mut session: Option<(i64, Option<&Vec<DocId>>)> = None;
        for &(row, start) in by_offset[0] {
            let continues = (1..phrase.len()).all(|k| {
                let Some(want) = start.checked_add(k as u32).map(|p| (row, p)) else {
                    return false;
                };
                let (list, cursor) = (by_offset[k], &mut cursors[k]);
                while list.get(*cursor).is_some_and(|&have| have < want) {
                    *cursor += 1;
                }
                list.get(*cursor) == Some(&want)
            });
            if !continues {
                continue;
            }
            if last_row == Some(row) {
                if let Some((_, starts)) = out.last_mut() {
                    starts.push(start);
                }
                continue;
            }
            let (sid, ord) = (row >> ORD_BITS, (row & ((1 << ORD_BITS) - 1)) as usize);
            let ids = match session {
                Some((current, ids)) if current == sid => ids,
                _ => {
                    let ids = self.docs.get(&sid);
                    session = Some((sid, ids));
                    ids
                }
            };
            // Rows of sessions not replaced in this process are not part of the engine's index.
            if let Some(&id) = ids.and_then(|ids| ids.get(ord)) {
                out.push((id, vec![start]));
                last_row = Some(row);
            }
        }
        Ok(Some(out))
    }

    /// [`SearchProvider::phrase_matches`] by re-tokenizing every row `MATCH` selects (every row
    /// in `range` without an expression) and sliding the phrase over its tokens.
    fn matches_by_rescanning(
        &self,
        phrase: &[String],
        expression: Option<&str>,
        (lo, hi): (i64, i64),
    ) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        let sql = match expression {
            Some(_) => {
                "SELECT rowid, coalesce(raw, body) FROM dsh_docs WHERE dsh_docs MATCH ?3 AND rowid BETWEEN ?1 AND ?2"
            }
            None => "SELECT rowid, coalesce(raw, body) FROM dsh_docs WHERE rowid BETWEEN ?1 AND ?2 AND ?3 IS NULL",
        };
        let failed = |e: rusqlite::Error| sql_failed("run a phrase query", e);
        let mut statement = self.conn.prepare(sql).map_err(failed)?;
        let mut rows = statement.query((lo, hi, expression)).map_err(failed)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(failed)? {
            let rowid: i64 = row.get(0).map_err(failed)?;
            let (sid, ord) = (rowid >> ORD_BITS, (rowid & ((1 << ORD_BITS) - 1)) as usize);
            // Rows of sessions not replaced in this process are not part of the engine's index.
            let Some(&id) = self.docs.get(&sid).and_then(|ids| ids.get(ord)) else {
                continue;
            };
            let text = row
                .get_ref(1)
                .map_err(failed)?
                .as_str()
                .map_err(|e| sql_failed("read a document", e))?;
            let starts = occurrences(text, phrase, self.mode);
            if !starts.is_empty() {
                out.push((id, starts));
            }
        }
        Ok(out)
    }
}

impl SearchProvider for SqliteProvider {
    fn replace_session(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        if docs.len() as u64 > 1u64 << ORD_BITS {
            return Err(too_many_documents());
        }
        let print = fingerprint(docs);
        let stored: Option<(i64, Vec<u8>, i64)> = self
            .conn
            .prepare("SELECT sid, fingerprint, docs FROM dsh_sessions WHERE name = ?1")
            .and_then(|mut s| {
                s.query_row([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(|e| sql_failed("read a session's fingerprint", e))?;
        let sid = match stored {
            Some((sid, stored_print, count)) if stored_print == print && count == docs.len() as i64 => {
                SqliteStats::add(&self.stats.sessions_reused, 1);
                sid
            }
            _ => {
                self.begin()?;
                self.conn
                    .execute_batch("SAVEPOINT dsh_replace")
                    .map_err(|e| sql_failed("open a savepoint", e))?;
                match self.write_session(session, stored.map(|s| s.0), docs, &print) {
                    Ok(sid) => {
                        self.conn
                            .execute_batch("RELEASE dsh_replace")
                            .map_err(|e| sql_failed("release a savepoint", e))?;
                        SqliteStats::add(&self.stats.rows_written, docs.len() as u64);
                        SqliteStats::add(&self.stats.sessions_written, 1);
                        sid
                    }
                    Err(e) => {
                        let _ = self.conn.execute_batch("ROLLBACK TO dsh_replace; RELEASE dsh_replace");
                        return Err(sql_failed(&format!("index session {session:?}"), e));
                    }
                }
            }
        };
        if let Some(old) = self.sids.insert(session.to_owned(), sid)
            && old != sid
        {
            self.docs.remove(&old);
        }
        self.docs.insert(sid, docs.iter().map(|(id, _)| *id).collect());
        Ok(())
    }

    fn grows(&self) -> bool {
        true
    }

    /// Grows a session this process indexed: its new rows only, and its fingerprint extended,
    /// so appending to a live session costs its new documents, not the session.
    fn append_documents(&mut self, session: &str, docs: &[(DocId, &str)]) -> Result<(), Error> {
        let Some(&sid) = self.sids.get(session) else {
            return Err(Error::new(
                ErrorCode::QueryIndexFailed,
                format!("session {session:?} is not in the SQLite search index"),
            ));
        };
        let held = self.docs.get(&sid).map_or(0, Vec::len);
        if (held + docs.len()) as u64 > 1u64 << ORD_BITS {
            return Err(too_many_documents());
        }
        self.begin()?;
        self.conn
            .execute_batch("SAVEPOINT dsh_grow")
            .map_err(|e| sql_failed("open a savepoint", e))?;
        if let Err(e) = self.grow_session(sid, held, docs) {
            let _ = self.conn.execute_batch("ROLLBACK TO dsh_grow; RELEASE dsh_grow");
            return Err(sql_failed(&format!("add to session {session:?}"), e));
        }
        self.conn
            .execute_batch("RELEASE dsh_grow")
            .map_err(|e| sql_failed("release a savepoint", e))?;
        SqliteStats::add(&self.stats.rows_written, docs.len() as u64);
        self.docs.entry(sid).or_default().extend(docs.iter().map(|(id, _)| *id));
        Ok(())
    }

    fn remove_session(&mut self, session: &str) -> Result<(), Error> {
        let stored: Option<i64> = self
            .conn
            .prepare("SELECT sid FROM dsh_sessions WHERE name = ?1")
            .and_then(|mut s| s.query_row([session], |r| r.get(0)).optional())
            .map_err(|e| sql_failed("find a session", e))?;
        if let Some(sid) = stored {
            self.begin()?;
            self.delete_rows(sid, true)
                .map_err(|e| sql_failed(&format!("remove session {session:?}"), e))?;
        }
        if let Some(sid) = self.sids.remove(session) {
            self.docs.remove(&sid);
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), Error> {
        if !self.swept {
            self.sweep()?;
            self.swept = true;
        }
        if self.in_tx {
            self.conn.execute_batch("COMMIT").map_err(|e| sql_failed("commit", e))?;
            self.in_tx = false;
        }
        Ok(())
    }

    fn phrase_matches(&self, phrase: &[String], session: Option<&str>) -> Result<Vec<(DocId, Vec<u32>)>, Error> {
        if phrase.is_empty() {
            return Ok(Vec::new());
        }
        let range = match session {
            Some(name) => match self.sids.get(name) {
                Some(sid) => rowid_range(*sid),
                None => return Ok(Vec::new()),
            },
            None => (0, i64::MAX),
        };
        let expression = self.match_expression(phrase);
        if let Some(verbatim) = expression.as_deref().filter(|_| self.indexed_verbatim(phrase)) {
            let budget = match self.positions {
                Positions::Rescan => None,
                Positions::Instances => Some(u64::MAX),
                Positions::Cheaper => match self.count_matching(verbatim, range)? {
                    0 => return Ok(Vec::new()),
                    rows => self.instance_budget(phrase, rows, range)?,
                },
            };
            if let Some(budget) = budget
                && let Some(found) = self.matches_from_instances(phrase, range, budget)?
            {
                return Ok(found);
            }
        }
        self.matches_by_rescanning(phrase, expression.as_deref(), range)
    }
}

impl std::fmt::Debug for SqliteProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteProvider")
            .field("mode", &self.mode)
            .field("sessions", &self.sids.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::engine::ScanProvider;
    use crate::search::tantivy::TantivyProvider;
    use crate::search::tokenizer::{MAX_TERM_BYTES, tokenize};
    use proptest::prelude::*;
    use std::path::PathBuf;

    /// A directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let dir = std::env::temp_dir().join(format!("dsh-sqlite-{tag}-{}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn terms(text: &str, mode: TokenizerMode) -> Vec<String> {
        tokenize(text, mode).into_iter().map(|t| t.text.into_owned()).collect()
    }

    fn sorted(mut found: Vec<(DocId, Vec<u32>)>) -> Vec<(DocId, Vec<u32>)> {
        found.sort();
        found
    }

    /// `sessions[i]` = documents of session `s{i}`; DocIds numbered from `first_id`.
    fn load(provider: &mut (impl SearchProvider + ?Sized), sessions: &[Vec<String>], first_id: DocId) {
        let mut id = first_id;
        for (i, docs) in sessions.iter().enumerate() {
            let docs = numbered(docs, &mut id);
            provider.replace_session(&format!("s{i}"), &docs).expect("indexes");
        }
        provider.commit().expect("commits");
    }

    /// `texts` under the DocIds after `last`, which moves past them.
    fn numbered<'a>(texts: &'a [String], last: &mut DocId) -> Vec<(DocId, &'a str)> {
        texts
            .iter()
            .map(|text| {
                *last += 1;
                (*last, text.as_str())
            })
            .collect()
    }

    #[test]
    fn occurrences_slide_over_the_token_stream() {
        let phrase = |q: &str| terms(q, TokenizerMode::Unicode61);
        let find = |text: &str, q: &str| occurrences(text, &phrase(q), TokenizerMode::Unicode61);
        assert_eq!(find("a a a", "a a"), [0, 1]);
        assert_eq!(find("x y x y", "x y"), [0, 2]);
        assert_eq!(find("one two three two three", "two three"), [1, 3]);
        assert_eq!(find("alpha middle beta", "alpha beta"), Vec::<u32>::new());
        assert_eq!(find("Café, CAFE café", "cafe"), [0, 1, 2]);
        assert_eq!(find("a a b a a a b", "a a b"), [0, 4]);
        let cjk = occurrences(
            "我喜欢数据库 ok",
            &terms("数据库", TokenizerMode::Cjk),
            TokenizerMode::Cjk,
        );
        assert_eq!(cjk, [3]);
    }

    /// The instance join sees what the rescan sees after rows are rewritten and removed (FTS5
    /// keeps deletions as markers until segments merge), across many segments, and skips rows
    /// of sessions this process never replaced.
    #[test]
    fn instances_follow_rewrites_removals_and_unreplaced_sessions() {
        let dir = TempDir::new("instances");
        let path = dir.0.join("index.sqlite");
        let texts = |seed: usize| -> Vec<String> {
            (0..40)
                .map(|i| format!("a a a b {seed} the parser {} crash a b a a b", i % 7))
                .collect()
        };
        let mut sessions: Vec<Vec<String>> = (0..6).map(texts).collect();
        {
            let mut first = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("creates");
            load(&mut first, &sessions, 0);
        }
        sessions[2] = texts(99);
        sessions.truncate(4);
        let mut provider = SqliteProvider::open(&path, TokenizerMode::Unicode61)
            .expect("reopens")
            .with_positions(Positions::Instances);
        let mut scan = ScanProvider::new(TokenizerMode::Unicode61);
        // Session s3 is left out of the first reconcile of this process: stored, not replaced.
        let mut id = 0;
        for (i, docs) in sessions.iter().enumerate().take(3) {
            let docs = numbered(docs, &mut id);
            provider.replace_session(&format!("s{i}"), &docs).expect("indexes");
            scan.replace_session(&format!("s{i}"), &docs).expect("indexes");
        }
        provider.remove_session("s1").expect("removes");
        scan.remove_session("s1").expect("removes");
        provider.commit().expect("commits");
        for query in [
            "a a",
            "a b",
            "a a b",
            "b a a",
            "99",
            "2",
            "the parser",
            "crash a b a",
            "zz",
        ] {
            let phrase = terms(query, TokenizerMode::Unicode61);
            for scope in [None, Some("s0"), Some("s1"), Some("s2"), Some("s3")] {
                assert_eq!(
                    sorted(provider.phrase_matches(&phrase, scope).expect("query")),
                    sorted(scan.phrase_matches(&phrase, scope).expect("query")),
                    "{query:?} in {scope:?}"
                );
            }
        }
        let all = provider
            .phrase_matches(&terms("a a", TokenizerMode::Unicode61), None)
            .expect("query");
        assert_eq!(all.len(), 80, "s0 and s2, 40 rows each");
        assert!(all.iter().all(|(_, starts)| starts == &[0, 1, 11]));
    }

    /// The fast path of `match_expression` relies on folded tokens re-tokenizing to themselves;
    /// this checks it for every code point (the fallback keeps results exact regardless).
    #[test]
    fn folded_single_characters_round_trip() {
        let mut failures = Vec::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let text = c.to_string();
            for token in tokenize(&text, TokenizerMode::Unicode61) {
                if !round_trips(&token.text) {
                    failures.push(c);
                }
            }
        }
        assert!(failures.is_empty(), "{:?}", &failures[..failures.len().min(20)]);
    }

    #[test]
    fn terms_cut_inside_a_character_are_still_found() {
        let han = "数".repeat(11_000);
        let long = format!("alpha {han} beta");
        for mode in [TokenizerMode::Unicode61, TokenizerMode::Cjk] {
            let docs = vec![vec![long.clone(), "alpha beta".to_owned(), han.clone()]];
            let mut sqlite = SqliteProvider::in_memory(mode).expect("opens");
            let mut scan = ScanProvider::new(mode);
            load(&mut sqlite, &docs, 0);
            load(&mut scan, &docs, 0);
            for query in [long.as_str(), han.as_str(), "alpha", "beta"] {
                let phrase = terms(query, mode);
                assert_eq!(
                    sorted(sqlite.phrase_matches(&phrase, None).expect("query")),
                    sorted(scan.phrase_matches(&phrase, None).expect("query")),
                    "{mode:?} {}",
                    &query[..query.len().min(20)]
                );
            }
        }
        let phrase = terms(&long, TokenizerMode::Unicode61);
        assert!(
            phrase[1].contains('\u{FFFD}'),
            "the middle term is cut inside a character"
        );
    }

    fn word() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "parser",
            "Parser",
            "PARSER",
            "crash",
            "café",
            "CAFE",
            "cafe",
            "naïve",
            "a",
            "b",
            "x²",
            "ǅ",
            "ß",
            "数据库",
            "我喜欢数据库",
            "数",
            "日本語のテキスト",
            "foo_bar",
            "it🥰",
            "😀",
            "don't",
            "v1.2.3",
            "ok数据",
            "Ångström",
            "tiếng",
            "ΣΑΣ",
            "\u{FFFD}",
            "a\u{0301}b",
            "AND",
            "\"q\"",
        ])
    }

    fn sep() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![" ", "  ", ", ", "\n", "-", "", "。", "\u{00A0}", "*"])
    }

    fn document() -> impl Strategy<Value = String> {
        prop::collection::vec((word(), sep()), 0..14)
            .prop_map(|parts| parts.into_iter().map(|(w, s)| format!("{w}{s}")).collect())
    }

    fn corpus() -> impl Strategy<Value = Vec<Vec<String>>> {
        prop::collection::vec(prop::collection::vec(document(), 0..6), 1..5)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Every phrase (windows of the documents' own tokens, and random word pairs) finds the
        /// same documents at the same positions as the tantivy and scan providers, in every
        /// scope, in both tokenizer modes.
        #[test]
        fn positions_equal_tantivy_and_scan(
            sessions in corpus(),
            extra in prop::collection::vec((word(), sep(), word()), 4),
            cjk in any::<bool>(),
        ) {
            let mode = if cjk { TokenizerMode::Cjk } else { TokenizerMode::Unicode61 };
            let mut sqlite = SqliteProvider::in_memory(mode).expect("opens");
            let mut rescanning =
                SqliteProvider::in_memory(mode).expect("opens").with_positions(Positions::Rescan);
            let mut from_instances =
                SqliteProvider::in_memory(mode).expect("opens").with_positions(Positions::Instances);
            let mut tantivy = TantivyProvider::new(mode);
            let mut scan = ScanProvider::new(mode);
            load(&mut sqlite, &sessions, 0);
            load(&mut rescanning, &sessions, 0);
            load(&mut from_instances, &sessions, 0);
            load(&mut tantivy, &sessions, 0);
            load(&mut scan, &sessions, 0);
            let mut phrases: Vec<Vec<String>> = Vec::new();
            for text in sessions.iter().flatten() {
                let tokens = terms(text, mode);
                for len in 1..=3 {
                    phrases.extend(tokens.windows(len).step_by(2).map(<[String]>::to_vec));
                }
            }
            phrases.extend(extra.iter().map(|(a, s, b)| terms(&format!("{a}{s}{b}"), mode)));
            phrases.retain(|p| !p.is_empty());
            let scopes: Vec<Option<String>> =
                std::iter::once(None).chain((0..=sessions.len()).map(|i| Some(format!("s{i}")))).collect();
            for phrase in &phrases {
                for scope in &scopes {
                    let expected = sorted(scan.phrase_matches(phrase, scope.as_deref()).expect("scan"));
                    let fts = sorted(sqlite.phrase_matches(phrase, scope.as_deref()).expect("sqlite"));
                    let tv = sorted(tantivy.phrase_matches(phrase, scope.as_deref()).expect("tantivy"));
                    prop_assert_eq!(&fts, &tv, "{:?} in {:?}", phrase, scope);
                    prop_assert_eq!(&fts, &expected, "{:?} in {:?}", phrase, scope);
                    for forced in [&rescanning, &from_instances] {
                        let found = sorted(forced.phrase_matches(phrase, scope.as_deref()).expect("sqlite"));
                        prop_assert_eq!(&found, &expected, "{:?} in {:?} ({:?})", phrase, scope, forced.positions);
                    }
                }
            }
        }
    }

    fn ascii_text() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "a", "A", "ab", "aB", "the", "The", "THE", "x1", "0", "00", " ", "  ", ".", "_", "-", "'", "\n", "\0",
            "\t", "e\u{7f}", "~a",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The ASCII scan finds exactly what the tokenizer finds, for phrases of the text's own
        /// tokens.
        #[test]
        fn ascii_scan_equals_the_tokenizer(text in ascii_text(), from in 0usize..20, len in 1usize..4) {
            let tokens = terms(&text, TokenizerMode::Unicode61);
            let phrase: Vec<String> = tokens.iter().skip(from).take(len).cloned().collect();
            prop_assume!(!phrase.is_empty());
            let mut expected = Vec::new();
            let mut stream = Tokens::new(&text, TokenizerMode::Unicode61);
            while let Some(token) = stream.next_ref() {
                let at = token.position;
                if tokens.get(at..at + phrase.len()) == Some(&phrase[..]) {
                    expected.push(at as u32);
                }
            }
            prop_assert_eq!(occurrences(&text, &phrase, TokenizerMode::Unicode61), expected);
        }
    }

    #[test]
    fn ascii_terms_are_cut_like_fts5() {
        let long = "A".repeat(MAX_TERM_BYTES + 5);
        let text = format!("{long} b");
        let cut = vec![long[..MAX_TERM_BYTES].to_lowercase(), "b".to_owned()];
        assert_eq!(terms(&text, TokenizerMode::Unicode61), cut);
        assert_eq!(occurrences(&text, &cut, TokenizerMode::Unicode61), [0]);
    }

    fn session_docs(seed: usize, count: usize) -> Vec<String> {
        (0..count)
            .map(|i| format!("session {seed} document {i}: the parser crash {} café", i % 3))
            .collect()
    }

    #[test]
    fn on_disk_index_is_reused_rewritten_and_swept() {
        let dir = TempDir::new("reuse");
        let path = dir.0.join("index.sqlite");
        let mut sessions: Vec<Vec<String>> = (0..5).map(|s| session_docs(s, 4 + s)).collect();
        let total: u64 = sessions.iter().map(|s| s.len() as u64).sum();
        let phrase = terms("the parser crash", TokenizerMode::Unicode61);
        let fresh_results = |sessions: &[Vec<String>], first: DocId| {
            let mut fresh = SqliteProvider::in_memory(TokenizerMode::Unicode61).expect("opens");
            load(&mut fresh, sessions, first);
            sorted(fresh.phrase_matches(&phrase, None).expect("query"))
        };
        {
            let mut first = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("creates");
            load(&mut first, &sessions, 0);
            assert_eq!(first.rows_written(), total);
            assert_eq!(
                sorted(first.phrase_matches(&phrase, None).expect("query")),
                fresh_results(&sessions, 0)
            );
        }
        // Same corpus after a restart (new DocIds): nothing is written.
        {
            let mut second = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("reopens");
            load(&mut second, &sessions, 1000);
            let stats = second.stats();
            assert_eq!(
                (stats.rows_written(), stats.rows_deleted(), stats.sessions_swept()),
                (0, 0, 0)
            );
            assert_eq!(stats.sessions_reused(), 5);
            assert_eq!(
                sorted(second.phrase_matches(&phrase, None).expect("query")),
                fresh_results(&sessions, 1000)
            );
            let scoped = second.phrase_matches(&phrase, Some("s2")).expect("query");
            assert_eq!(scoped.len(), 6);
        }
        // One session changes and one disappears: only the changed one is rewritten, the
        // missing one is swept by the first commit.
        sessions[1].push("a new parser crash".to_owned());
        let removed = sessions.pop().expect("five sessions");
        {
            let mut third = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("reopens");
            load(&mut third, &sessions, 2000);
            let stats = third.stats();
            assert_eq!(stats.rows_written(), sessions[1].len() as u64);
            assert_eq!(stats.sessions_written(), 1);
            assert_eq!(stats.sessions_swept(), 1);
            assert_eq!(stats.rows_deleted(), 5 + removed.len() as u64);
            assert_eq!(
                sorted(third.phrase_matches(&phrase, None).expect("query")),
                fresh_results(&sessions, 2000)
            );
        }
        // The sweep was committed; removal within a process reaches the file too.
        {
            let mut fourth = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("reopens");
            load(&mut fourth, &sessions, 3000);
            assert_eq!(fourth.rows_written(), 0);
            fourth.remove_session("s0").expect("removes");
            fourth.commit().expect("commits");
            assert!(fourth.phrase_matches(&phrase, Some("s0")).expect("query").is_empty());
            let expected = fresh_results(&sessions[1..], 0).len();
            assert_eq!(fourth.phrase_matches(&phrase, None).expect("query").len(), expected);
        }
        let count: i64 = Connection::open(&path)
            .and_then(|c| c.query_row("SELECT count(*) FROM dsh_sessions", [], |r| r.get(0)))
            .expect("readable");
        assert_eq!(count, 3);
    }

    #[test]
    fn a_grown_session_writes_its_new_rows_only_and_equals_a_whole_replacement() {
        let dir = TempDir::new("grow");
        let path = dir.0.join("index.sqlite");
        let sessions: Vec<Vec<String>> = (0..3).map(|s| session_docs(s, 5 + s)).collect();
        let added = vec!["the parser crash again".to_owned(), "then the parser crash".to_owned()];
        let mut last = 0;
        let numbered_sessions: Vec<_> = sessions.iter().map(|docs| numbered(docs, &mut last)).collect();
        let appended = numbered(&added, &mut last);
        let phrase = terms("the parser crash", TokenizerMode::Unicode61);
        // The same documents under the same ids, session 1 given whole.
        let mut fresh = SqliteProvider::in_memory(TokenizerMode::Unicode61).expect("opens");
        for (i, docs) in numbered_sessions.iter().enumerate() {
            let mut docs = docs.clone();
            if i == 1 {
                docs.extend(appended.iter().copied());
            }
            fresh.replace_session(&format!("s{i}"), &docs).expect("indexes");
        }
        fresh.commit().expect("commits");
        let expected = sorted(fresh.phrase_matches(&phrase, None).expect("query"));
        {
            let mut grown = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("creates");
            for (i, docs) in numbered_sessions.iter().enumerate() {
                grown.replace_session(&format!("s{i}"), docs).expect("indexes");
            }
            grown.commit().expect("commits");
            let before = grown.rows_written();
            grown.append_documents("s1", &appended).expect("grows");
            grown.commit().expect("commits");
            assert_eq!(grown.rows_written() - before, added.len() as u64);
            assert_eq!(sorted(grown.phrase_matches(&phrase, None).expect("query")), expected);
            assert_eq!(grown.phrase_matches(&phrase, Some("s1")).expect("query").len(), 8);
            let unknown = grown.append_documents("s9", &appended).expect_err("not indexed");
            assert_eq!(unknown.code, ErrorCode::QueryIndexFailed);
        }
        // A later process given the grown session whole reuses every row: the extended
        // fingerprint equals the whole list's.
        let mut whole = sessions.clone();
        whole[1].extend(added.iter().cloned());
        let mut reopened = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("reopens");
        load(&mut reopened, &whole, 100);
        assert_eq!((reopened.rows_written(), reopened.stats().sessions_reused()), (0, 3));
    }

    #[test]
    fn another_mode_rebuilds_the_file() {
        let dir = TempDir::new("mode");
        let path = dir.0.join("index.sqlite");
        let sessions = vec![vec!["我喜欢数据库".to_owned()]];
        let mut unicode = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("creates");
        load(&mut unicode, &sessions, 0);
        assert!(
            unicode
                .phrase_matches(&terms("数据库", TokenizerMode::Unicode61), None)
                .expect("query")
                .is_empty()
        );
        drop(unicode);
        let mut cjk = SqliteProvider::open(&path, TokenizerMode::Cjk).expect("reopens");
        load(&mut cjk, &sessions, 0);
        assert_eq!(cjk.rows_written(), 1, "rebuilt, not reused");
        let found = cjk
            .phrase_matches(&terms("数据库", TokenizerMode::Cjk), None)
            .expect("query");
        assert_eq!(found, [(1, vec![3])]);
    }

    /// Timings against tantivy on a few thousand documents:
    /// `cargo test --release --features sqlite --lib sqlite::tests::throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn throughput_against_tantivy() {
        use std::time::Instant;
        let mut rng = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut next = |n: u64| rng(n as usize) as u64;
        let common = ["the", "parser", "crash", "on", "input", "fix", "token", "error"];
        let sessions: Vec<Vec<String>> = (0..100)
            .map(|_| {
                (0..50)
                    .map(|_| {
                        (0..20 + next(60))
                            .map(|_| match next(3) {
                                0 => common[next(common.len() as u64) as usize].to_owned(),
                                _ => format!("w{}", next(3000)),
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect()
            })
            .collect();
        let bytes: usize = sessions.iter().flatten().map(String::len).sum();
        let queries = ["the", "w17", "parser crash", "the parser crash", "w5 w6"];
        let dir = TempDir::new("bench");
        let time = |name: &str, provider: &mut dyn SearchProvider| {
            let start = Instant::now();
            load(provider, &sessions, 0);
            let indexed = start.elapsed();
            let mut line = format!("{name:>16}: index {:>7.1} ms", indexed.as_secs_f64() * 1e3);
            for query in queries {
                let phrase = terms(query, TokenizerMode::Unicode61);
                let start = Instant::now();
                let mut hits = 0;
                for _ in 0..10 {
                    hits = provider.phrase_matches(&phrase, None).expect("query").len();
                }
                let all = start.elapsed().as_secs_f64() * 1e3 / 10.0;
                let start = Instant::now();
                for i in 0..10 {
                    provider.phrase_matches(&phrase, Some(&format!("s{i}"))).expect("query");
                }
                let one = start.elapsed().as_secs_f64() * 1e3 / 10.0;
                line += &format!(" | {query:?} {hits} docs {all:.2} ms, one session {one:.3} ms");
            }
            println!("{line}");
        };
        println!("{} documents, {:.1} MB", sessions.len() * 50, bytes as f64 / 1e6);
        time("tantivy", &mut TantivyProvider::new(TokenizerMode::Unicode61));
        time(
            "sqlite memory",
            &mut SqliteProvider::in_memory(TokenizerMode::Unicode61).expect("opens"),
        );
        time(
            "sqlite cjk",
            &mut SqliteProvider::in_memory(TokenizerMode::Cjk).expect("opens"),
        );
        let path = dir.0.join("bench.sqlite");
        time(
            "sqlite disk new",
            &mut SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("opens"),
        );
        let mut reopened = SqliteProvider::open(&path, TokenizerMode::Unicode61).expect("opens");
        time("sqlite disk reuse", &mut reopened);
        assert_eq!(reopened.rows_written(), 0);
    }

    #[test]
    fn sqlite_failures_are_index_failures() {
        let dir = TempDir::new("fail");
        let error = SqliteProvider::open(&dir.0, TokenizerMode::Unicode61).expect_err("a directory");
        assert_eq!(error.code, ErrorCode::QueryIndexFailed);
        assert!(error.message.contains("SQLite"), "{}", error.message);
        let garbage = dir.0.join("garbage");
        std::fs::write(&garbage, vec![b'x'; 4096]).expect("writes");
        let error = SqliteProvider::open(&garbage, TokenizerMode::Unicode61).expect_err("not a database");
        assert_eq!(error.code, ErrorCode::QueryIndexFailed);
    }
}
