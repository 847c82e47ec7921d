//! `prepare` rendering: whatever text a cited session holds, the context message has exactly one
//! opening and one closing frame tag, no `<` from the data inside the frame, and every snapshot
//! within the per-source budget; or the call fails with a reference code.
#![no_main]

use dsh_session_search::corpus::Corpus;
use dsh_session_search::json::{JsString, Json, JsonObject, ParseLimits};
use dsh_session_search::reference::{
    self, BudgetOptions, PrepareOptions, ReferenceAgent, SessionReferenceInput, tag_safe_json,
};
use libfuzzer_sys::fuzz_target;

const OPEN: &str = "<referenced-sessions>\n";
const CLOSE: &str = "\n</referenced-sessions>";

fn header(id: &str) -> Json {
    let text = format!(r#"{{"version":0,"id":"{id}","createdAt":1,"cwd":"/w","delegationDepth":0}}"#);
    Json::parse(&text, ParseLimits::default()).expect("a header")
}

/// One user message per line of the fuzz text (at most 32).
fn messages(text: &str) -> Vec<Json> {
    text.split('\n')
        .take(32)
        .enumerate()
        .map(|(seq, line)| {
            let mut block = JsonObject::new();
            block.insert("type", Json::str("text"));
            block.insert("text", Json::str(if line.trim().is_empty() { "." } else { line }));
            let mut data = JsonObject::new();
            data.insert("id", Json::str(&format!("m{seq}")));
            data.insert("role", Json::str("user"));
            data.insert("content", Json::Array(vec![Json::Object(block)]));
            let mut source = JsonObject::new();
            source.insert("kind", Json::str("user"));
            data.insert("source", Json::Object(source));
            let mut event = JsonObject::new();
            event.insert("type", Json::str("user/message"));
            event.insert("seq", Json::Number(seq as f64));
            event.insert("time", Json::Number(seq as f64 + 2.0));
            event.insert("data", Json::Object(data));
            event.insert("surfaceOp", Json::str("append"));
            Json::Object(event)
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&budget_byte, text)) = data.split_first() else {
        return;
    };
    let budget = 200 + u64::from(budget_byte) * 64;
    let mut corpus = Corpus::new();
    corpus.add_live(&header("t"), Vec::new()).expect("the citing session");
    if corpus.add_live(&header("src"), messages(&String::from_utf8_lossy(text))).is_err() {
        return;
    }
    let agent = ReferenceAgent::of_session(&corpus, &JsString::from("t"));
    let references = [SessionReferenceInput {
        session_id: "src".into(),
        label: Some(JsString::from(String::from_utf8_lossy(text).chars().take(40).collect::<String>().as_str())),
    }];
    let options = PrepareOptions {
        budget: BudgetOptions {
            call: Some(budget),
            ..Default::default()
        },
        ..Default::default()
    };
    let content = Json::Array(Vec::new());
    let prepared = match reference::prepare(&corpus, &agent, &content, &references, &options) {
        Ok(prepared) => prepared,
        Err(error) => return assert!(error.code.as_str().starts_with("SESSION_REFERENCE_"), "{error}"),
    };
    let context = prepared.context_text().expect("a cited session gives a context message");
    assert_eq!(context.matches("<referenced-sessions>").count(), 1);
    assert_eq!(context.matches("</referenced-sessions>").count(), 1);
    let start = context.find(OPEN).expect("the opening tag") + OPEN.len();
    let end = context.rfind(CLOSE).expect("the closing tag");
    let framed = &context[start..end];
    assert!(!framed.contains('<'), "no raw < inside the frame");
    let snapshots = Json::parse(framed, ParseLimits::default()).expect("the frame holds JSON");
    for snapshot in snapshots.as_array().expect("an array of snapshots") {
        assert!(tag_safe_json(snapshot).len() as u64 <= budget, "a snapshot over its budget");
    }
});
