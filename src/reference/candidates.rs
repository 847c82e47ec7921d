//! Candidate discovery: the sessions a message may cite, ranked by working
//! directory, labelled by their latest title, filtered by a case-insensitive query, each with
//! its ready-made mention.
//!
//! DSH's fields (`sessionId`, `label`, `cwd`, `createdAt`, and `mention` as on its remote face)
//! are computed exactly as DSH computes them. `sameWorkspace` and `displayTitle` are extensions
//! that never change those fields: `sameWorkspace` is DSH's rank-0 test, and `displayTitle` is
//! the subagent creation label (the `label` of the first `subagent/descriptor` event).

use super::DEFAULT_CANDIDATE_LIMIT;
use super::cancel::{CancellationToken, check};
use super::mention::format_session_reference_mention;
use super::text::{JsStringBuilder, code_points};
use crate::corpus::{Corpus, SessionRecord};
use crate::error::{Error, ErrorCode};
use crate::json::{JsString, Json, JsonObject, MAX_SAFE_INTEGER};

/// The session a reference layer call is made for (DSH's `agent`): its id, to leave it out of
/// discovery and to refuse self references, and its header cwd, to rank candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceAgent {
    /// The requesting (target) session's id.
    pub id: JsString,
    /// The requesting session's header cwd, when it has one.
    pub cwd: Option<String>,
}

impl ReferenceAgent {
    /// An agent with an id and an optional cwd.
    pub fn new(id: impl Into<JsString>, cwd: Option<String>) -> Self {
        ReferenceAgent { id: id.into(), cwd }
    }

    /// The agent of session `id`, with the header cwd the corpus has for it, loaded or listed
    /// from its header (none when the corpus does not have the session).
    pub fn of_session(corpus: &Corpus, id: &JsString) -> Self {
        let cwd = corpus
            .source(&id.to_lossy())
            .ok()
            .map(|source| &source.log.header)
            .or_else(|| corpus.listed_header(&id.to_lossy()))
            .and_then(|header| header.cwd.clone());
        ReferenceAgent { id: id.clone(), cwd }
    }
}

/// One discovery result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The listed session's header id.
    pub session_id: JsString,
    /// The latest folded title, else the session id (feeds the mention).
    pub label: JsString,
    /// The header cwd; the key is left out when the header has none.
    pub cwd: Option<String>,
    /// The header `createdAt` (Unix epoch milliseconds).
    pub created_at: i64,
    /// `@[label](dsh-session:…)`, ready to insert.
    pub mention: JsString,
    /// Both cwds present and equal as strings (DSH's rank 0). Not in DSH.
    pub same_workspace: bool,
    /// The subagent creation label, when the session has one. Not in DSH; never replaces
    /// `label`.
    pub display_title: Option<JsString>,
}

impl Candidate {
    /// The wire shape: DSH's `sessionId, label, cwd?, createdAt, mention`, then the extensions
    /// `sameWorkspace` and `displayTitle?`.
    pub fn to_json(&self) -> Json {
        let mut object = JsonObject::new();
        object.insert("sessionId", Json::String(self.session_id.clone()));
        object.insert("label", Json::String(self.label.clone()));
        if let Some(cwd) = &self.cwd {
            object.insert("cwd", Json::str(cwd));
        }
        object.insert("createdAt", Json::int(self.created_at));
        object.insert("mention", Json::String(self.mention.clone()));
        object.insert("sameWorkspace", Json::Bool(self.same_workspace));
        if let Some(title) = &self.display_title {
            object.insert("displayTitle", Json::String(title.clone()));
        }
        Json::Object(object)
    }
}

/// DSH's `limit` argument read from a JSON value: absent is `None` (the default, 50); a present
/// value must be a positive safe integer (`null`, `"3"` and `1.5` are not), else
/// `SESSION_REFERENCE_INVALID_REFERENCE`.
pub fn candidate_limit(value: Option<&Json>) -> Result<Option<u64>, Error> {
    match value {
        None => Ok(None),
        Some(value) => match value.as_safe_integer() {
            Some(n) if n > 0 => Ok(Some(n as u64)),
            _ => Err(invalid_limit()),
        },
    }
}

fn invalid_limit() -> Error {
    Error::new(
        ErrorCode::ReferenceInvalidReference,
        "candidate limit must be a positive safe integer",
    )
}

/// [`list_candidates_cancellable`] without cancellation.
pub fn list_candidates(
    corpus: &Corpus,
    agent: &ReferenceAgent,
    query: &JsString,
    limit: Option<u64>,
) -> Result<Vec<Candidate>, Error> {
    list_candidates_cancellable(corpus, agent, query, limit, None)
}

/// Sessions `agent` may cite, best first: rank 0 (same cwd as the agent), then 1 (no cwd),
/// then 2 (any other cwd, or any cwd when the agent has none); within a rank, the listing's
/// newest-first order. The agent itself is left out; nothing else is.
///
/// `query` (not trimmed) keeps a session when its lower-cased text contains the lower-cased
/// query in its id, cwd, label or display title; message bodies are never searched. `limit`
/// defaults to 50 and must be a positive safe integer, else the call fails with
/// `SESSION_REFERENCE_INVALID_REFERENCE` (checked first). A cancelled token fails the call
/// with `SESSION_REFERENCE_CANCELLED`.
pub fn list_candidates_cancellable(
    corpus: &Corpus,
    agent: &ReferenceAgent,
    query: &JsString,
    limit: Option<u64>,
    cancel: Option<&CancellationToken>,
) -> Result<Vec<Candidate>, Error> {
    let limit = limit.unwrap_or(DEFAULT_CANDIDATE_LIMIT);
    if limit == 0 || limit as f64 > MAX_SAFE_INTEGER {
        return Err(invalid_limit());
    }
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let needle = js_lowercase(query);
    check(cancel)?;

    let agent_cwd = agent.cwd.as_deref();
    let rank = |record: &SessionRecord| candidate_rank(record.header.cwd.as_deref(), agent_cwd);
    let mut records: Vec<(usize, SessionRecord)> = corpus
        .list_sessions()
        .into_iter()
        .filter(|record| record.header.raw_id != agent.id)
        .enumerate()
        .collect();
    check(cancel)?;
    // The sort is stable, so the listing order (the index) breaks rank ties.
    crate::sorting::sort_by_key(&mut records, |(index, record)| (rank(record), *index));
    if needle.is_empty() {
        // Only the candidates that will be shown have their titles read.
        records.truncate(limit);
    }
    let mut candidates = Vec::new();
    for (_, record) in &records {
        let (label, display_title) = labels(corpus, record);
        let keep = needle.is_empty() || mentions(record, &label, display_title.as_ref(), &needle);
        if !keep {
            continue;
        }
        let header = &record.header;
        candidates.push(Candidate {
            mention: format_session_reference_mention(Some(&label), &header.raw_id),
            session_id: header.raw_id.clone(),
            label,
            cwd: header.cwd.clone(),
            created_at: header.created_at,
            same_workspace: rank(record) == 0,
            display_title,
        });
        if candidates.len() == limit {
            break;
        }
    }
    check(cancel)?;
    Ok(candidates)
}

/// Whether the lowercased `needle` is in a candidate's id, cwd, label or display title,
/// each lowercased as JavaScript does.
fn mentions(record: &SessionRecord, label: &JsString, display_title: Option<&JsString>, needle: &JsString) -> bool {
    let cwd = record.header.cwd.as_deref().map(JsString::from);
    let texts = [Some(&record.header.raw_id), cwd.as_ref(), Some(label), display_title];
    texts
        .into_iter()
        .flatten()
        .any(|text| contains(&js_lowercase(text), needle))
}

/// DSH's rank groups: 0 same cwd (both present), 1 no candidate cwd, 2 everything else.
fn candidate_rank(candidate: Option<&str>, agent: Option<&str>) -> u8 {
    match (candidate, agent) {
        (Some(c), Some(a)) if c == a => 0,
        (None, _) => 1,
        _ => 2,
    }
}

/// The label (the latest `session/title`'s string `title`, else the id) and the display title
/// (the first `subagent/descriptor`'s string `label`) of a listed session.
fn labels(corpus: &Corpus, record: &SessionRecord) -> (JsString, Option<JsString>) {
    let id = &record.header.id;
    // A title that fails to read, is missing, or is not a string labels the session by its id.
    // (DSH would use a non-string, non-null title as is; no DSH writer produces one.)
    let label = corpus
        .read_title(id)
        .ok()
        .flatten()
        .and_then(|title| title.title.as_js_string().cloned())
        .unwrap_or_else(|| record.header.raw_id.clone());
    let display_title = corpus.source(id).ok().and_then(|source| {
        source
            .log
            .events
            .iter()
            .find(|event| event.kind() == "subagent/descriptor")
            .and_then(|event| event.data().get("label").and_then(Json::as_js_string).cloned())
    });
    (label, display_title)
}

/// JavaScript's `toLocaleLowerCase` outside Turkic and Lithuanian locales: full Unicode lower
/// casing with final-sigma context (Rust's `str::to_lowercase`); lone surrogates are kept.
pub(crate) fn js_lowercase(text: &JsString) -> JsString {
    if let Some(text) = text.as_str() {
        return JsString::from(text.to_lowercase());
    }
    let mut out = JsStringBuilder::new();
    let mut run = String::new();
    for cp in code_points(text.as_wtf8()) {
        match char::from_u32(cp) {
            Some(c) => run.push(c),
            None => {
                out.push_str(&run.to_lowercase());
                run.clear();
                out.push(cp);
            }
        }
    }
    out.push_str(&run.to_lowercase());
    out.finish()
}

/// Substring test (on WTF-8 bytes, which is exact for well-formed text).
fn contains(haystack: &JsString, needle: &JsString) -> bool {
    let (haystack, needle) = (haystack.as_wtf8(), needle.as_wtf8());
    needle.is_empty() || haystack.windows(needle.len()).any(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::{Input, LoadOptions};

    fn header(id: &str, cwd: Option<&str>, created_at: i64) -> String {
        let cwd = cwd.map(|c| format!(r#","cwd":{}"#, Json::str(c))).unwrap_or_default();
        format!(
            r#"{{"type":"session","version":0,"id":{},"createdAt":{created_at}{cwd},"delegationDepth":0}}"#,
            Json::str(id)
        )
    }

    fn user(seq: u64, text: &str) -> String {
        format!(
            r#"{{"type":"user/message","seq":{seq},"time":{},"data":{{"id":"m{seq}","role":"user","content":[{{"type":"text","text":{}}}],"source":{{"kind":"user"}}}},"surfaceOp":"append"}}"#,
            1000 + seq,
            Json::str(text)
        )
    }

    fn title(seq: u64, text: &str) -> String {
        format!(
            r#"{{"type":"session/title","seq":{seq},"time":{},"data":{{"title":{},"messageSeqs":[0],"source":{{"kind":"fallback"}}}}}}"#,
            1000 + seq,
            Json::str(text)
        )
    }

    fn descriptor(seq: u64, label: &str) -> String {
        format!(
            r#"{{"type":"subagent/descriptor","seq":{seq},"time":{},"data":{{"version":2,"mode":"continuable","label":{}}}}}"#,
            1000 + seq,
            Json::str(label)
        )
    }

    /// Sessions as `(id, cwd, createdAt, lines after the header)`.
    fn corpus(sessions: &[(&str, Option<&str>, i64, Vec<String>)]) -> Corpus {
        let inputs = sessions
            .iter()
            .map(|(id, cwd, created_at, lines)| {
                let mut text = header(id, *cwd, *created_at);
                text.push('\n');
                for line in lines {
                    text.push_str(line);
                    text.push('\n');
                }
                Input::File {
                    name: format!("{id}.jsonl"),
                    bytes: text.into_bytes(),
                }
            })
            .collect();
        let mut corpus = Corpus::new();
        let report = corpus.load(inputs, &LoadOptions::default()).expect("loads");
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        corpus
    }

    /// DSH's candidate example corpus, plus a subagent child with a creation label.
    fn example() -> Corpus {
        corpus(&[
            ("t0", Some("/w/app"), 100, vec![user(0, "hello")]),
            (
                "s1",
                Some("/w/app"),
                90,
                vec![user(0, "secret body text"), title(1, "Old"), title(2, "Fix login")],
            ),
            ("s2", None, 95, vec![user(0, "x")]),
            ("s3", Some("/w/other"), 99, vec![user(0, "x"), title(1, "Deploy notes")]),
            ("s4", Some("/w/app"), 80, vec![user(0, "x")]),
            (
                "k1",
                Some("/w/other"),
                70,
                vec![descriptor(0, "Reviewer ΣΑΣ"), user(1, "x"), descriptor(2, "later")],
            ),
        ])
    }

    fn ids(candidates: &[Candidate]) -> Vec<String> {
        candidates.iter().map(|c| c.session_id.to_string()).collect()
    }

    fn list(corpus: &Corpus, agent: &ReferenceAgent, query: &str, limit: Option<u64>) -> Vec<String> {
        ids(&list_candidates(corpus, agent, &JsString::from(query), limit).expect("lists"))
    }

    #[test]
    fn spec_example_ranks_and_labels() {
        let corpus = example();
        let agent = ReferenceAgent::of_session(&corpus, &JsString::from("t0"));
        assert_eq!(agent.cwd.as_deref(), Some("/w/app"));
        let all = list_candidates(&corpus, &agent, &JsString::from(""), None).expect("lists");
        assert_eq!(ids(&all), ["s1", "s4", "s2", "s3", "k1"]);
        let labels: Vec<String> = all.iter().map(|c| c.label.to_string()).collect();
        assert_eq!(labels, ["Fix login", "s4", "s2", "Deploy notes", "k1"]);
        assert_eq!(
            all.iter().map(|c| c.same_workspace).collect::<Vec<_>>(),
            [true, true, false, false, false]
        );
        assert_eq!(all[2].cwd, None);
        assert_eq!(all[0].mention, JsString::from("@[Fix login](dsh-session:InMxIg)"));
        assert_eq!(
            all[0].to_json().to_js_string(),
            r#"{"sessionId":"s1","label":"Fix login","cwd":"/w/app","createdAt":90,"mention":"@[Fix login](dsh-session:InMxIg)","sameWorkspace":true}"#
        );
        assert_eq!(all[2].to_json().get("cwd"), None);
        // The first descriptor's label, never the label itself.
        assert_eq!(all[4].display_title, Some(JsString::from("Reviewer ΣΑΣ")));
        assert_eq!(all[4].label, JsString::from("k1"));
        assert_eq!(all[0].display_title, None);
    }

    #[test]
    fn filters_id_cwd_title_and_display_title_never_bodies() {
        let corpus = example();
        let agent = ReferenceAgent::of_session(&corpus, &JsString::from("t0"));
        assert_eq!(list(&corpus, &agent, "APP", None), ["s1", "s4"]);
        assert_eq!(list(&corpus, &agent, "notes", None), ["s3"]);
        assert_eq!(list(&corpus, &agent, "S2", None), ["s2"]);
        assert!(list(&corpus, &agent, "secret", None).is_empty());
        // Only the latest title counts.
        assert!(list(&corpus, &agent, "old", None).is_empty());
        // Final sigma lower-cases in context on both sides.
        assert_eq!(list(&corpus, &agent, "reviewer σας", None), ["k1"]);
        assert_eq!(list(&corpus, &agent, "ΑΣ", None), ["k1"]);
        // Not trimmed: " " matches only texts with a space.
        assert_eq!(list(&corpus, &agent, " ", None), ["s1", "s3", "k1"]);
        // The agent never lists itself, even when it matches.
        assert!(list(&corpus, &agent, "t0", None).is_empty());
    }

    #[test]
    fn an_agent_without_cwd_lists_cwdless_sessions_first() {
        let corpus = example();
        let agent = ReferenceAgent::new("elsewhere", None);
        assert_eq!(list(&corpus, &agent, "", None), ["s2", "t0", "s3", "s1", "s4", "k1"]);
        let agent = ReferenceAgent::new("elsewhere", Some("/w/other".into()));
        assert_eq!(list(&corpus, &agent, "", None), ["s3", "k1", "s2", "t0", "s1", "s4"]);
        // No path normalization.
        let agent = ReferenceAgent::new("elsewhere", Some("/w/other/".into()));
        assert_eq!(list(&corpus, &agent, "", Some(2)), ["s2", "t0"]);
    }

    #[test]
    fn limits() {
        let corpus = example();
        let agent = ReferenceAgent::of_session(&corpus, &JsString::from("t0"));
        assert_eq!(list(&corpus, &agent, "", Some(2)), ["s1", "s4"]);
        assert_eq!(list(&corpus, &agent, "s", Some(3)), ["s1", "s4", "s2"]);
        assert_eq!(list(&corpus, &agent, "", Some(9_007_199_254_740_991)).len(), 5);
        for bad in [0, 9_007_199_254_740_992] {
            let error = list_candidates(&corpus, &agent, &JsString::from(""), Some(bad)).expect_err("bad limit");
            assert_eq!(error.code, ErrorCode::ReferenceInvalidReference);
        }
    }

    #[test]
    fn the_default_limit_is_50() {
        let sessions: Vec<(String, i64)> = (0..60).map(|i| (format!("s{i:02}"), i)).collect();
        let specs: Vec<(&str, Option<&str>, i64, Vec<String>)> = sessions
            .iter()
            .map(|(id, at)| (id.as_str(), None, *at, vec![user(0, "x")]))
            .collect();
        let corpus = corpus(&specs);
        let agent = ReferenceAgent::new("none", None);
        let listed = list(&corpus, &agent, "", None);
        assert_eq!(listed.len(), 50);
        assert_eq!(listed[0], "s59");
    }

    #[test]
    fn cancellation_is_checked_after_the_limit() {
        let corpus = example();
        let agent = ReferenceAgent::of_session(&corpus, &JsString::from("t0"));
        let token = CancellationToken::new();
        token.cancel();
        let query = JsString::from("");
        let error = list_candidates_cancellable(&corpus, &agent, &query, Some(0), Some(&token)).expect_err("bad limit");
        assert_eq!(error.code, ErrorCode::ReferenceInvalidReference);
        let error = list_candidates_cancellable(&corpus, &agent, &query, None, Some(&token)).expect_err("cancelled");
        assert_eq!(error.code, ErrorCode::ReferenceCancelled);
    }

    #[test]
    fn lowercase_keeps_lone_surrogates() {
        let Json::String(text) = Json::parse(r#""AB\ud800ΣC""#, crate::json::ParseLimits::default()).expect("valid")
        else {
            panic!("string");
        };
        assert_eq!(Json::String(js_lowercase(&text)).to_js_string(), r#""ab\ud800σc""#);
    }
}
