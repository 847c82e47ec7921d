//! Tests of the reference core as a whole: DSH's three worked reference examples reproduced byte for
//! byte from their source surfaces, and property tests (budget, framing, URI round-trip).

#[cfg(not(target_arch = "wasm32"))]
use super::text::from_code_points;
use super::*;
use crate::error::ErrorCode;
use crate::json::{JsString, Json, JsonObject, ParseLimits};

fn object(pairs: Vec<(&str, Json)>) -> Json {
    let mut object = JsonObject::new();
    for (key, value) in pairs {
        object.insert(key, value);
    }
    Json::Object(object)
}

fn parse(text: &str) -> Json {
    Json::parse(text, ParseLimits::default()).expect("valid JSON")
}

fn text_block(text: JsString) -> Json {
    object(vec![("type", Json::str("text")), ("text", Json::String(text))])
}

fn event(seq: u64, kind: &str, data: Json) -> Json {
    object(vec![
        ("type", Json::str(kind)),
        ("seq", Json::Number(seq as f64)),
        ("time", Json::int(1_700_000_000_000 + seq as i64)),
        ("data", data),
        ("surfaceOp", Json::str("append")),
    ])
}

fn user_message(seq: u64, content: Vec<Json>, source: Json) -> Json {
    event(
        seq,
        "user/message",
        object(vec![
            ("id", Json::str(&format!("m{seq}"))),
            ("role", Json::str("user")),
            ("content", Json::Array(content)),
            ("source", source),
        ]),
    )
}

fn user(seq: u64, text: &str) -> Json {
    user_message(seq, vec![text_block(text.into())], parse(r#"{"kind":"user"}"#))
}

fn checkpoint(seq: u64, text: &str, compaction_id: &str) -> Json {
    user_message(
        seq,
        vec![text_block(text.into())],
        object(vec![
            ("kind", Json::str("plugin")),
            ("plugin", Json::str("compact")),
            ("compactionId", Json::str(compaction_id)),
        ]),
    )
}

fn assistant_message(seq: u64, content: Vec<Json>) -> Json {
    event(
        seq,
        "assistant/message",
        object(vec![
            ("turn", Json::int(1)),
            ("step", Json::int(1)),
            (
                "message",
                object(vec![
                    ("id", Json::str(&format!("m{seq}"))),
                    ("role", Json::str("assistant")),
                    ("content", Json::Array(content)),
                    (
                        "source",
                        parse(r#"{"kind":"model","provider":"deepseek","model":"deepseek-chat"}"#),
                    ),
                ]),
            ),
        ]),
    )
}

fn assistant(seq: u64, text: &str) -> Json {
    assistant_message(seq, vec![text_block(text.into())])
}

fn tool_result(seq: u64, text: &str) -> Json {
    event(
        seq,
        "tool/result",
        object(vec![(
            "message",
            object(vec![
                ("id", Json::str(&format!("m{seq}"))),
                ("role", Json::str("user")),
                (
                    "content",
                    Json::Array(vec![object(vec![
                        ("type", Json::str("tool-result")),
                        ("toolCallId", Json::str("c1")),
                        ("content", Json::Array(vec![text_block(text.into())])),
                    ])]),
                ),
                ("source", parse(r#"{"kind":"tool","callId":"c1"}"#)),
            ]),
        )]),
    )
}

/// Normalizes the parsed references of `text` and renders them over `surfaces` (by id).
fn prepare_from_text<'a>(
    text: &str,
    surfaces: &[SourceSurface<'a>],
    max_bytes: u64,
) -> (ParsedReferenceText, Result<RenderedReferences, crate::error::Error>) {
    let parsed = parse_session_reference_text(&JsString::from(text)).expect("text parses");
    let inputs: Vec<SessionReferenceInput> = parsed.references.iter().cloned().map(Into::into).collect();
    let normalized =
        normalize_references(&JsString::from("target"), &inputs, MAX_REFERENCES).expect("valid references");
    let sources: Vec<(SourceSurface<'_>, &JsString)> = normalized
        .iter()
        .map(|reference| {
            let surface = surfaces
                .iter()
                .find(|surface| reference.session_id == *surface.session_id)
                .copied()
                .expect("source exists");
            (surface, &reference.label)
        })
        .collect();
    let rendered = render_sources(sources, max_bytes);
    (parsed, rendered)
}

fn framed(array: &str) -> String {
    format!("{PROMPT_PREFIX}{array}{PROMPT_SUFFIX}")
}

#[test]
fn worked_example_1_plain_source() {
    let alpha = vec![
        user(0, "Why does checkout fail on empty carts?"),
        assistant_message(
            2,
            vec![
                object(vec![
                    ("type", Json::str("reasoning")),
                    ("text", Json::str("thinking...")),
                ]),
                text_block("The total is computed before the guard.".into()),
            ],
        ),
        tool_result(4, "ls output"),
        user_message(
            5,
            vec![text_block("Remember: deploy on Fridays only.".into())],
            parse(r#"{"kind":"plugin","plugin":"goal"}"#),
        ),
        assistant(6, "Fixed in cart.ts; added a test."),
    ];
    let mention = format_session_reference_mention(Some(&"Checkout bug".into()), &"sess-alpha".into());
    assert_eq!(mention, JsString::from("@[Checkout bug](dsh-session:InNlc3MtYWxwaGEi)"));
    let (parsed, rendered) = prepare_from_text(
        &format!("What did we conclude in {mention}?"),
        &[SourceSurface {
            session_id: &JsString::from("sess-alpha"),
            cwd: Some("/home/ana/shop"),
            captured_through_seq: Some(7),
            events: &alpha,
        }],
        DEFAULT_MAX_REFERENCE_BYTES,
    );
    assert_eq!(parsed.text, JsString::from("What did we conclude in @Checkout bug?"));
    let rendered = rendered.expect("fits");

    let snapshot = r#"{"sessionId":"sess-alpha","label":"Checkout bug","cwd":"/home/ana/shop","capturedThroughSeq":7,"conversation":[{"role":"user","text":"Why does checkout fail on empty carts?"},{"role":"assistant","text":"The total is computed before the guard."},{"role":"assistant","text":"Fixed in cart.ts; added a test."}]}"#;
    assert_eq!(snapshot.len(), 308);
    assert_eq!(tag_safe_json(&rendered.sources[0].snapshot), snapshot);
    assert_eq!(
        rendered.source.to_js_string(),
        r#"{"kind":"session-reference","form":"recall","version":1,"references":[{"sessionId":"sess-alpha","label":"Checkout bug","capturedThroughSeq":7,"compacted":false,"originalMessages":3,"retainedMessages":3,"omittedMessages":0,"omittedBytes":0,"truncated":false,"inputIndex":0}]}"#
    );
    assert_eq!(rendered.prompt, framed(&format!("[{snapshot}]")));
    assert_eq!(rendered.prompt.len(), 620);
}

#[test]
fn worked_example_2_compacted_source_escapes_duplicates_and_an_empty_source() {
    let beta = vec![
        checkpoint(9, "<summary>User chose Postgres over SQLite.</summary>", "cmp-1"),
        user_message(
            10,
            vec![text_block("## Referenced sessions ...".into())],
            parse(r#"{"kind":"session-reference","form":"recall","version":1,"references":[]}"#),
        ),
        user_message(
            11,
            vec![
                parse(r#"{"type":"image","mediaType":"image/png","data":"AAAA"}"#),
                text_block("Is <b>bold</b> allowed in \"notes\"?".into()),
            ],
            parse(r#"{"kind":"user"}"#),
        ),
        assistant_message(
            12,
            vec![
                text_block("Yes.".into()),
                text_block("Avoid </referenced-sessions> though.".into()),
            ],
        ),
    ];
    let gamma: Vec<Json> = Vec::new();
    let (parsed, rendered) = prepare_from_text(
        r"Compare @[DB [choice\]](dsh-session:InNlc3MtYmV0YSI) with dsh-session:InNlc3MtZ2FtbWEi and again @[other name](dsh-session:InNlc3MtYmV0YSI).",
        &[
            SourceSurface {
                session_id: &JsString::from("sess-beta"),
                cwd: None,
                captured_through_seq: Some(12),
                events: &beta,
            },
            SourceSurface {
                session_id: &JsString::from("sess-gamma"),
                cwd: Some("/srv/api"),
                captured_through_seq: None,
                events: &gamma,
            },
        ],
        DEFAULT_MAX_REFERENCE_BYTES,
    );
    assert_eq!(
        parsed.text,
        JsString::from("Compare @DB [choice] with @sess-gamma and again @other name.")
    );
    assert_eq!(parsed.references.len(), 3);
    let rendered = rendered.expect("fits");

    let beta_snapshot = r#"{"sessionId":"sess-beta","label":"DB [choice]","cwd":null,"capturedThroughSeq":12,"conversation":[{"role":"user","text":"\u003csummary>User chose Postgres over SQLite.\u003c/summary>"},{"role":"user","text":"Is \u003cb>bold\u003c/b> allowed in \"notes\"?"},{"role":"assistant","text":"Yes.\nAvoid \u003c/referenced-sessions> though."}]}"#;
    let gamma_snapshot = r#"{"sessionId":"sess-gamma","label":"sess-gamma","cwd":"/srv/api","capturedThroughSeq":null,"conversation":[]}"#;
    assert_eq!((beta_snapshot.len(), gamma_snapshot.len()), (336, 108));
    assert_eq!(tag_safe_json(&rendered.sources[0].snapshot), beta_snapshot);
    assert_eq!(tag_safe_json(&rendered.sources[1].snapshot), gamma_snapshot);
    assert_eq!(
        rendered.source.to_js_string(),
        r#"{"kind":"session-reference","form":"recall","version":1,"references":[{"sessionId":"sess-beta","label":"DB [choice]","capturedThroughSeq":12,"compacted":true,"originalMessages":3,"retainedMessages":3,"omittedMessages":0,"omittedBytes":0,"truncated":false,"inputIndex":0},{"sessionId":"sess-gamma","label":"sess-gamma","capturedThroughSeq":null,"compacted":false,"originalMessages":0,"retainedMessages":0,"omittedMessages":0,"omittedBytes":0,"truncated":false,"inputIndex":1}]}"#
    );
    assert_eq!(rendered.prompt, framed(&format!("[{beta_snapshot},{gamma_snapshot}]")));
    assert_eq!(rendered.prompt.len(), 757);
    assert_eq!(rendered.prompt.matches("</referenced-sessions>").count(), 1);
}

/// Example 3's source `build-log`: its surface and the long CJK text `L`.
fn build_log() -> Vec<Json> {
    let l = "构建失败：".to_owned() + &"链接器错误".repeat(12) + " <exit 2>";
    vec![
        user(0, "Run the nightly build."),
        assistant(1, "Started."),
        checkpoint(3, "Summary: build scripts moved to make.", "cmp-1"),
        user(5, "Paste the failure."),
        assistant(8, &l),
    ]
}

fn retain_build_log(max_bytes: u64) -> Result<RetainedSource, crate::error::Error> {
    let events = build_log();
    let surface = SourceSurface {
        session_id: &JsString::from("build-log"),
        cwd: Some("/repo"),
        captured_through_seq: Some(9),
        events: &events,
    };
    retain_source(&surface, &"Nightly build".into(), max_bytes)
}

#[test]
fn worked_example_3_retention_with_a_utf8_cut() {
    let events = build_log();
    let surface = SourceSurface {
        session_id: &JsString::from("build-log"),
        cwd: Some("/repo"),
        captured_through_seq: Some(9),
        events: &events,
    };
    let label = JsString::from("Nightly build");
    let rendered = render_sources([(surface, &label)], 300).expect("fits");
    let snapshot = r#"{"sessionId":"build-log","label":"Nightly build","cwd":"/repo","capturedThroughSeq":9,"conversation":[{"role":"user","text":"Summary: build scripts moved to make."},{"role":"assistant","text":"构建失败：链接器错误链错误链接器错误 \u003cexit 2>\n[… omitted 141 UTF-8 bytes …]"}]}"#;
    assert_eq!(snapshot.len(), 300);
    assert_eq!(tag_safe_json(&rendered.sources[0].snapshot), snapshot);
    assert_eq!(
        rendered.source.to_js_string(),
        r#"{"kind":"session-reference","form":"recall","version":1,"references":[{"sessionId":"build-log","label":"Nightly build","capturedThroughSeq":9,"compacted":true,"originalMessages":5,"retainedMessages":2,"omittedMessages":3,"omittedBytes":189,"truncated":true,"inputIndex":0}]}"#
    );
    assert_eq!(rendered.prompt, framed(&format!("[{snapshot}]")));
    assert_eq!(rendered.prompt.len(), 612);
    // Without a budget problem nothing is cut: the full object is 537 bytes.
    let full = retain_build_log(537).expect("fits");
    assert_eq!(full.stats.omitted_bytes, 0);
    assert_eq!(tag_safe_json(&full.snapshot).len(), 537);
    assert!(retain_build_log(536).expect("fits").stats.truncated);
}

#[test]
fn worked_example_3_other_budgets() {
    let texts = |source: &RetainedSource| -> Vec<String> {
        source
            .snapshot
            .get("conversation")
            .and_then(Json::as_array)
            .expect("array")
            .iter()
            .map(|item| item.get("text").and_then(Json::as_str).expect("text").to_owned())
            .collect()
    };
    let summary = "Summary: build scripts moved to make.";

    let at_250 = retain_build_log(250).expect("fits");
    assert_eq!(
        texts(&at_250),
        vec![
            summary.to_owned(),
            "构建exit 2>\n[… omitted 191 UTF-8 bytes …]".to_owned()
        ]
    );
    assert_eq!(tag_safe_json(&at_250.snapshot).len(), 245);
    assert_eq!(at_250.stats.omitted_bytes, 239);

    let at_200 = retain_build_log(200).expect("fits");
    assert_eq!(texts(&at_200), vec![summary.to_owned(), String::new()]);
    assert_eq!(tag_safe_json(&at_200.snapshot).len(), 197);
    assert_eq!(at_200.stats.omitted_bytes, 252);

    // The intended overshoot: 20 bytes of room for the checkpoint are below the smallest notice.
    let at_180 = retain_build_log(180).expect("fits");
    assert_eq!(texts(&at_180), vec![String::new(), String::new()]);
    assert_eq!(tag_safe_json(&at_180.snapshot).len(), 160);
    assert_eq!(at_180.stats.omitted_bytes, 289);
    assert_eq!(
        (
            at_180.stats.original_messages,
            at_180.stats.retained_messages,
            at_180.stats.omitted_messages
        ),
        (5, 2, 3)
    );

    assert!(retain_build_log(160).is_ok());
    let error = retain_build_log(159).expect_err("fixed fields cannot fit");
    assert_eq!(error.code, ErrorCode::ReferenceBudgetExceeded);
    assert_eq!(
        error.message,
        "referenced session snapshot cannot fit the configured byte budget"
    );
}

#[test]
fn an_empty_source_over_budget_cannot_fit() {
    let surface = SourceSurface {
        session_id: &JsString::from("sess-gamma"),
        cwd: Some("/srv/api"),
        captured_through_seq: None,
        events: &[],
    };
    let label = JsString::from("sess-gamma");
    assert!(retain_source(&surface, &label, 108).is_ok());
    let error = retain_source(&surface, &label, 107).expect_err("too small");
    assert_eq!(error.code, ErrorCode::ReferenceBudgetExceeded);
    // The first source that cannot fit fails the whole call.
    let error = render_sources([(surface, &label), (surface, &label)], 16).expect_err("too small");
    assert_eq!(error.code, ErrorCode::ReferenceBudgetExceeded);
}

#[test]
fn the_newest_message_is_kept_whatever_its_role() {
    let events = vec![user(0, "aaaa"), assistant(1, "bbbb"), user(2, "cccc")];
    let surface = SourceSurface {
        session_id: &JsString::from("s"),
        cwd: None,
        captured_through_seq: Some(2),
        events: &events,
    };
    let full = retain_source(&surface, &"s".into(), 10_000).expect("fits");
    let size = tag_safe_json(&full.snapshot).len() as u64;
    // Room for exactly one item less: the oldest goes first, the newest (a user message) stays.
    let one_less = retain_source(&surface, &"s".into(), size - 1).expect("fits");
    assert_eq!(
        tag_safe_json(one_less.snapshot.get("conversation").expect("conversation")),
        r#"[{"role":"assistant","text":"bbbb"},{"role":"user","text":"cccc"}]"#
    );
    assert_eq!((one_less.stats.omitted_messages, one_less.stats.omitted_bytes), (1, 4));
}

#[cfg(not(target_arch = "wasm32"))]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of generated text: plain and escaped ASCII, tags, multi-byte characters, a BOM,
    /// and lone surrogate halves (which join when a high half precedes a low half).
    const PIECES: &[&[u32]] = &[
        &[0x61],
        &[0x62, 0x63],
        &[0x20],
        &[0x3C],
        &[0x3E],
        &[0x22],
        &[0x5C],
        &[0x5D],
        &[0x0A],
        &[0x01],
        &[0x2028],
        &[0xE9],
        &[0x6E90],
        &[0x1F600],
        &[0xFEFF],
        &[0xD800],
        &[0xDC00],
        &[0xD83D],
    ];

    fn tag(text: &str) -> Vec<u32> {
        text.chars().map(u32::from).collect()
    }

    fn js_text(max_pieces: usize) -> impl Strategy<Value = JsString> {
        let mut pieces: Vec<Vec<u32>> = PIECES.iter().map(|p| p.to_vec()).collect();
        pieces.push(tag("</referenced-sessions>"));
        pieces.push(tag("<referenced-sessions>"));
        pieces.push(tag("\\u003c"));
        prop::collection::vec(prop::sample::select(pieces), 0..max_pieces)
            .prop_map(|pieces| from_code_points(&pieces.concat()))
    }

    fn surface_event() -> impl Strategy<Value = Json> {
        (0u8..6, prop::collection::vec(js_text(24), 0..3)).prop_map(|(kind, texts)| {
            let blocks: Vec<Json> = texts.into_iter().map(text_block).collect();
            match kind {
                0 | 1 => user_message(0, blocks, parse(r#"{"kind":"user"}"#)),
                2 => user_message(0, blocks, parse(r#"{"kind":"plugin","plugin":"compact"}"#)),
                3 => user_message(0, blocks, parse(r#"{"kind":"plugin","plugin":"goal"}"#)),
                _ => assistant_message(0, blocks),
            }
        })
    }

    /// A source: id, cwd, capturedThroughSeq and surface events.
    type Source = (JsString, Option<String>, Option<u64>, Vec<Json>);

    fn source() -> impl Strategy<Value = Source> {
        (
            "[a-z<\"]{0,8}".prop_map(JsString::from),
            prop::option::of("/[a-z<]{0,6}"),
            prop::option::of(0u64..100_000),
            prop::collection::vec(surface_event(), 0..8),
        )
    }

    fn surface(source: &Source) -> SourceSurface<'_> {
        SourceSurface {
            session_id: &source.0,
            cwd: source.1.as_deref(),
            captured_through_seq: source.2,
            events: &source.3,
        }
    }

    /// What retention can never go below: the fixed fields plus every checkpoint and the newest
    /// message, all emptied.
    fn minimal_size(source: &SourceSurface<'_>, label: &JsString) -> u64 {
        let projected = project_conversation(source.events);
        let last = projected.len().checked_sub(1);
        let kept: Vec<Json> = projected
            .iter()
            .enumerate()
            .filter(|(i, m)| m.checkpoint || Some(*i) == last)
            .map(|(_, m)| object(vec![("role", Json::str(m.role.as_str())), ("text", Json::str(""))]))
            .collect();
        let mut minimal = JsonObject::new();
        minimal.insert("sessionId", Json::String(source.session_id.clone()));
        minimal.insert("label", Json::String(label.clone()));
        minimal.insert("cwd", source.cwd.map_or(Json::Null, Json::str));
        minimal.insert(
            "capturedThroughSeq",
            source
                .captured_through_seq
                .map_or(Json::Null, |s| Json::Number(s as f64)),
        );
        minimal.insert("conversation", Json::Array(kept));
        tag_safe_json(&Json::Object(minimal)).len() as u64
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn snapshots_fit_the_budget_or_fail_with_budget_exceeded(
            source in source(),
            label in js_text(12),
            max_bytes in 1u64..1500,
        ) {
            let surface = surface(&source);
            match retain_source(&surface, &label, max_bytes) {
                Ok(retained) => {
                    let size = tag_safe_json(&retained.snapshot).len() as u64;
                    prop_assert!(size <= max_bytes, "{size} > {max_bytes}");
                    let stats = &retained.stats;
                    prop_assert_eq!(stats.original_messages, project_conversation(surface.events).len());
                    prop_assert_eq!(stats.original_messages, stats.retained_messages + stats.omitted_messages);
                    prop_assert_eq!(stats.truncated, stats.omitted_messages > 0 || stats.omitted_bytes > 0);
                    prop_assert!(minimal_size(&surface, &label) <= max_bytes);
                }
                Err(error) => {
                    prop_assert_eq!(error.code, ErrorCode::ReferenceBudgetExceeded);
                    prop_assert!(minimal_size(&surface, &label) > max_bytes);
                }
            }
        }

        #[test]
        fn no_data_can_change_the_framing(
            sources in prop::collection::vec((source(), js_text(12)), 0..4),
        ) {
            let inputs: Vec<(SourceSurface<'_>, &JsString)> =
                sources.iter().map(|(source, label)| (surface(source), label)).collect();
            let rendered = render_sources(inputs, DEFAULT_MAX_REFERENCE_BYTES).expect("large budget");
            let prompt = &rendered.prompt;
            prop_assert!(prompt.starts_with(PROMPT_PREFIX) && prompt.ends_with(PROMPT_SUFFIX));
            prop_assert_eq!(prompt.matches("<referenced-sessions>").count(), 1);
            prop_assert_eq!(prompt.matches("</referenced-sessions>").count(), 1);
            prop_assert_eq!(prompt.find("<referenced-sessions>"), Some(PROMPT_PREFIX.len() - 22));
            prop_assert_eq!(prompt.find("</referenced-sessions>"), Some(prompt.len() - 22));
            let middle = &prompt[PROMPT_PREFIX.len()..prompt.len() - PROMPT_SUFFIX.len()];
            prop_assert!(!middle.contains('<'));
            prop_assert!(!middle.contains('\n'));
            let array = Json::parse(middle, ParseLimits::default()).expect("the middle is JSON");
            let snapshots: Vec<Json> = rendered.sources.iter().map(|s| s.snapshot.clone()).collect();
            prop_assert_eq!(array, Json::Array(snapshots));
        }

        #[test]
        fn uri_and_mention_round_trip_for_any_id(id in js_text(16), label in prop::option::of(js_text(16))) {
            let uri = encode_session_reference_uri(&id);
            prop_assert_eq!(decode_session_reference_uri(&uri).expect("canonical"), id.clone());
            // As a bare URI in text, between characters that cannot extend it.
            let parsed = parse_session_reference_text(&JsString::from(format!("({uri})").as_str())).expect("parses");
            prop_assert_eq!(&parsed.references, &vec![SessionReference { session_id: id.clone(), label: id.clone() }]);
            // As a mention: the label comes back verbatim, whatever it holds.
            let mention = format_session_reference_mention(label.as_ref(), &id);
            let parsed = parse_session_reference_text(&mention).expect("parses");
            let label = label.unwrap_or_else(|| id.clone());
            let mut readable = super::super::text::JsStringBuilder::new();
            readable.push_str("@");
            readable.push_js(&label);
            prop_assert_eq!(parsed.text, readable.finish());
            prop_assert_eq!(&parsed.references, &vec![SessionReference { session_id: id, label }]);
        }

        #[test]
        fn truncation_stays_within_target(text in js_text(80), target in 0usize..200) {
            let (shortened, cut) = truncate_with_notice(&text, target);
            let total = text.as_wtf8().len();
            if total <= target {
                prop_assert_eq!(shortened, text);
                prop_assert_eq!(cut, 0);
            } else {
                prop_assert!(shortened.as_wtf8().len() <= target);
                prop_assert!(cut as usize <= total && cut > 0);
                // An emptied text means every byte was cut.
                prop_assert!(!shortened.is_empty() || cut as usize == total);
            }
        }
    }
}
