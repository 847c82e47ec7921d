//! The commands that read a loaded archive, and how each prints its answer: text for people,
//! DSH's wire JSON with `--json`.

use crate::cli::load::{count, failure_location};
use crate::cli::search::run_search_command;
use crate::cli::text::{iso_time, visible, visible_block};
use crate::{Cli, Command, OrderArg, SurfaceArg, UriAction, io_error};
use dsh_session_search::api::{AgentArg, Archive, PrepareSettings};
use dsh_session_search::corpus::{Corpus, LoadReport};
use dsh_session_search::error::Error;
use dsh_session_search::filters::{EventFilter, SessionFilter};
use dsh_session_search::fold::SurfaceLabel;
use dsh_session_search::json::{JsString, Json, JsonObject};
use dsh_session_search::reference;
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// The commands that read the loaded corpus.
pub(crate) fn run_corpus_command(cli: &Cli, archive: &mut Archive, report: &LoadReport) -> Result<ExitCode, Error> {
    if let Command::Search { .. } = &cli.command {
        return run_search_command(cli, archive);
    }
    let corpus = archive.corpus();
    let mut out = std::io::stdout().lock();
    let json = cli.json;
    match &cli.command {
        Command::Sessions => print_sessions(corpus, json, &mut out),
        Command::Show { id } => print_show(corpus, id, json, &mut out)?,
        Command::Events { id } => print_events(corpus, id, json, &mut out)?,
        Command::Event { id, seq, before, after } => print_event(corpus, id, *seq, (*before, *after), json, &mut out)?,
        Command::Surface { id } => print_surface(corpus, id, json, &mut out)?,
        Command::Trace { id, seq } => print_trace(corpus, id, *seq, json, &mut out)?,
        Command::Filter {
            session: Some(id),
            types,
            surface,
            text,
            ..
        } => print_documents(corpus, id, &event_filters(types, surface, text), json, &mut out)?,
        Command::Filter {
            session: None,
            cwd,
            parent,
            ..
        } => print_filtered_sessions(corpus, cwd, parent, json, &mut out),
        Command::Report => print_report(report, json, &mut out),
        Command::Search { .. } => Ok(()),
        Command::Candidates {
            agent,
            query,
            limit,
            cwd,
        } => print_candidates(corpus, agent, query, *limit, cwd.as_deref(), json, &mut out)?,
        Command::Prepare {
            agent,
            text,
            refs,
            max_reference_bytes,
            order,
        } => print_prepared(archive, agent, text, refs, *max_reference_bytes, *order, json, &mut out)?,
        Command::Rpc | Command::Uri { .. } | Command::Mention { .. } | Command::Parse { .. } => Ok(()),
    }
    .map_err(io_error)?;
    Ok(ExitCode::SUCCESS)
}

/// `trace ID [SEQ]`: a session's lineage, or one event's.
fn print_trace(
    corpus: &Corpus,
    id: &str,
    seq: Option<u64>,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    Ok(match seq {
        None => {
            let trace = corpus.trace_session(id)?;
            if json {
                writeln!(out, "{}", to_json(&trace))
            } else {
                print_lineage(&trace, out)
            }
        }
        Some(seq) => {
            let trace = corpus.trace_event(id, seq)?;
            if json {
                writeln!(out, "{}", to_json(&trace))
            } else {
                print_event_trace(&trace, out)
            }
        }
    })
}

/// `filter --session`'s clauses: event types, surface labels, a text.
fn event_filters(types: &[String], surface: &[SurfaceArg], text: &Option<String>) -> Vec<EventFilter> {
    let mut filters = Vec::new();
    if !types.is_empty() {
        filters.push(EventFilter::Type(types.to_vec()));
    }
    if !surface.is_empty() {
        filters.push(EventFilter::Surface(surface.iter().map(|&s| s.into()).collect()));
    }
    if let Some(text) = text {
        filters.push(EventFilter::Text(text.clone()));
    }
    filters
}

/// `event ID SEQ`: the event with its neighbours, each line with its label and time.
fn print_event(
    corpus: &Corpus,
    id: &str,
    seq: u64,
    (before, after): (u64, u64),
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let window = corpus.read_event(id, seq, before, after)?;
    if json {
        return Ok(writeln!(out, "{}", to_json(&window)));
    }
    let labels = corpus.list_events(id)?;
    Ok(window.events.iter().try_for_each(|event| {
        let n = event.get("seq").and_then(Json::as_f64).unwrap_or_default() as usize;
        let marker = if n as u64 == seq { ">" } else { " " };
        let label = labels[n].surface.as_str();
        let time = iso_time(labels[n].time);
        writeln!(
            out,
            "{marker}{n:>5}  {label:<8}  {time}  {}",
            visible(&event.to_string())
        )
    }))
}

/// `surface ID`: the current surface, one line per event.
fn print_surface(corpus: &Corpus, id: &str, json: bool, out: &mut impl Write) -> Result<std::io::Result<()>, Error> {
    let surface = corpus.read_surface(id)?;
    if json {
        return Ok(writeln!(out, "{}", to_json(&surface)));
    }
    Ok(surface.events.iter().try_for_each(|event| {
        let seq = event.get("seq").map(|s| s.to_js_string()).unwrap_or_default();
        let time = event.get("time").and_then(Json::as_f64).map(|t| iso_time(t as i64));
        let kind = event.get("type").and_then(|t| t.as_str()).unwrap_or_default();
        let (time, kind) = (time.unwrap_or_default(), visible(kind));
        writeln!(out, "{seq:>6}  {time:<24}  {kind:<18}  {}", visible(&first_line(event)))
    }))
}

/// `filter --session ID …`: the documents passing every clause.
fn print_documents(
    corpus: &Corpus,
    id: &str,
    filters: &[EventFilter],
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let documents = corpus.filter_events(id, filters)?;
    if json {
        return Ok(writeln!(out, "{}", to_json(&documents)));
    }
    Ok(documents.iter().try_for_each(|d| {
        let text = d.text.to_lossy();
        let line: String = text.lines().next().unwrap_or_default().chars().take(100).collect();
        let record = &d.record;
        writeln!(
            out,
            "{:>6}  {:<8}  {}  {:<18}  {}",
            record.seq,
            record.surface.as_str(),
            iso_time(record.time),
            visible(&record.kind),
            visible(&line)
        )
    }))
}

/// `filter [--cwd C] [--parent P]`: the sessions passing every clause (`-` stands for none).
fn print_filtered_sessions(
    corpus: &Corpus,
    cwd: &[String],
    parent: &[String],
    json: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let nullable = |values: &[String]| values.iter().map(|v| (v != "-").then(|| v.clone())).collect::<Vec<_>>();
    let mut filters = Vec::new();
    if !cwd.is_empty() {
        filters.push(SessionFilter::Cwd(nullable(cwd)));
    }
    if !parent.is_empty() {
        filters.push(SessionFilter::Parent(nullable(parent)));
    }
    let records = corpus.filter_sessions(&filters);
    if json {
        return writeln!(out, "{}", to_json(&records));
    }
    records.iter().try_for_each(|r| {
        let header = &r.header;
        let cwd = header.cwd.as_deref().unwrap_or("(no cwd)");
        writeln!(out, "{}  {}", visible(&header.id), visible(cwd))
    })
}

/// `candidates --agent ID`: the sessions it may cite, best first.
fn print_candidates(
    corpus: &Corpus,
    agent: &str,
    query: &str,
    limit: Option<u64>,
    cwd: Option<&str>,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let mut agent = reference::ReferenceAgent::of_session(corpus, &agent.into());
    if let Some(cwd) = cwd {
        agent.cwd = Some(cwd.to_owned());
    }
    let candidates = reference::list_candidates(corpus, &agent, &query.into(), limit)?;
    if json {
        let list = Json::Array(candidates.iter().map(reference::Candidate::to_json).collect());
        return Ok(writeln!(out, "{list}"));
    }
    Ok(candidates.iter().try_for_each(|c| print_candidate(c, out)))
}

/// `prepare --agent ID --text T [--ref ID[=LABEL]]…`: the exact context text DSH appends (the
/// whole result with `--json`). Options are checked as every face checks them.
#[allow(clippy::too_many_arguments)]
fn print_prepared(
    archive: &Archive,
    agent: &str,
    text: &str,
    refs: &[String],
    max_reference_bytes: Option<u64>,
    order: OrderArg,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let parsed = reference::parse_session_reference_text(&text.into())?;
    let mut references: Vec<Json> = parsed
        .references
        .into_iter()
        .map(|r| reference_json(Json::String(r.session_id), Some(Json::String(r.label))))
        .collect();
    references.extend(refs.iter().map(|r| match r.split_once('=') {
        Some((id, label)) => reference_json(Json::str(id), Some(Json::str(label))),
        None => reference_json(Json::str(r), None),
    }));
    let mut block = JsonObject::new();
    block.insert("type", Json::str("text"));
    block.insert("text", Json::String(parsed.text));
    let mut options = JsonObject::new();
    if let Some(bytes) = max_reference_bytes {
        options.insert("maxReferenceBytes", Json::Number(bytes as f64));
    }
    options.insert("order", Json::str(reference::AppendOrder::from(order).as_str()));
    let settings = PrepareSettings::from_json(Some(&Json::Object(options)))?;
    let agent = AgentArg {
        id: agent.into(),
        cwd: None,
    };
    let content = Json::Array(vec![Json::Object(block)]);
    let prepared = archive.prepare(&agent, &content, &references, &settings, None)?;
    Ok(match (json, prepared.context_text()) {
        (true, _) => writeln!(out, "{}", prepared.to_json()),
        // The exact bytes when piped: the prompt ends at its closing tag, with no newline. A
        // terminal gets the same text with its controls made visible.
        (false, Some(text)) if std::io::stdout().is_terminal() => write!(out, "{}", visible_block(text)),
        (false, Some(text)) => write!(out, "{text}"),
        (false, None) => {
            eprintln!("the text cites no session: nothing to add");
            Ok(())
        }
    })
}

/// `{sessionId, label?}`, a reference as `prepare` takes it.
fn reference_json(session_id: Json, label: Option<Json>) -> Json {
    let mut reference = JsonObject::new();
    reference.insert("sessionId", session_id);
    if let Some(label) = label {
        reference.insert("label", label);
    }
    Json::Object(reference)
}

pub(crate) fn print_events(
    corpus: &Corpus,
    id: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let events = corpus.list_events(id)?;
    if json {
        return Ok(writeln!(out, "{}", to_json(&events)));
    }
    Ok(events.iter().try_for_each(|e| {
        writeln!(
            out,
            "{:>6}  {:<8}  {}  {}",
            e.seq,
            e.surface.as_str(),
            iso_time(e.time),
            visible(&e.kind)
        )
    }))
}

pub(crate) fn print_event_trace(
    trace: &dsh_session_search::reads::EventTrace,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let seqs = |seqs: &[u64]| match seqs {
        [] => "(none)".to_owned(),
        _ => seqs.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
    };
    let target = &trace.target;
    let sources: Vec<String> = trace.source_event_seqs.iter().map(Json::to_js_string).collect();
    let sources = if sources.is_empty() {
        "(none)".to_owned()
    } else {
        sources.join(", ")
    };
    let replaced_by = trace.replaced_by.map_or("(none)".to_owned(), |seq| seq.to_string());
    writeln!(
        out,
        "event {} ({}, {}, {})",
        target.seq,
        visible(&target.kind),
        target.surface.as_str(),
        iso_time(target.time)
    )?;
    writeln!(out, "replaced by:       {replaced_by}")?;
    writeln!(out, "replacement chain: {}", seqs(&trace.replacement_chain))?;
    writeln!(out, "replaced:          {}", seqs(&trace.replaced_event_seqs))?;
    writeln!(out, "sources:           {}", visible(&sources))?;
    writeln!(out, "derived:           {}", seqs(&trace.derived_event_seqs))
}

pub(crate) fn print_candidate(candidate: &reference::Candidate, out: &mut impl Write) -> std::io::Result<()> {
    let cwd = candidate.cwd.as_deref().unwrap_or("(no cwd)");
    let same = if candidate.same_workspace {
        "  (same workspace)"
    } else {
        ""
    };
    let subagent = candidate
        .display_title
        .as_ref()
        .map(|t| format!("  subagent: {}", visible(&t.to_lossy())))
        .unwrap_or_default();
    let mention = candidate.mention.to_lossy();
    writeln!(out, "{}  {}{same}{subagent}", visible(&mention), visible(cwd))
}

/// The reference commands that need no corpus (`uri`, `mention`, `parse`); `None` otherwise.
pub(crate) fn run_reference_text(cli: &Cli) -> Option<Result<(), Error>> {
    let mut out = std::io::stdout().lock();
    let printed = match &cli.command {
        Command::Uri {
            action: UriAction::Encode { id },
        } => {
            let uri = reference::encode_session_reference_uri(&id.as_str().into());
            writeln!(out, "{}", visible(&uri))
        }
        Command::Uri {
            action: UriAction::Decode { uri },
        } => match reference::decode_session_reference_uri(uri) {
            Ok(id) if cli.json => writeln!(out, "{}", Json::String(id)),
            Ok(id) => writeln!(out, "{}", visible(&id.to_lossy())),
            Err(error) => return Some(Err(error)),
        },
        Command::Mention { label, id } => {
            let label = label.as_deref().map(JsString::from);
            let mention = reference::format_session_reference_mention(label.as_ref(), &id.as_str().into());
            writeln!(out, "{}", visible(&mention.to_lossy()))
        }
        Command::Parse { text } => {
            let parsed = match reference::parse_session_reference_text(&text.as_str().into()) {
                Ok(parsed) => parsed,
                Err(error) => return Some(Err(error)),
            };
            if cli.json {
                let references = parsed
                    .references
                    .iter()
                    .map(|r| {
                        let mut object = JsonObject::new();
                        object.insert("sessionId", Json::String(r.session_id.clone()));
                        object.insert("label", Json::String(r.label.clone()));
                        Json::Object(object)
                    })
                    .collect();
                let mut object = JsonObject::new();
                object.insert("text", Json::String(parsed.text));
                object.insert("references", Json::Array(references));
                writeln!(out, "{}", Json::Object(object))
            } else {
                writeln!(out, "{}", visible_block(&parsed.text.to_lossy())).and_then(|()| {
                    parsed.references.iter().try_for_each(|r| {
                        let (id, label) = (r.session_id.to_lossy(), r.label.to_lossy());
                        writeln!(out, "-> {}  ({})", visible(&id), visible(&label))
                    })
                })
            }
        }
        _ => return None,
    };
    Some(printed.map_err(io_error))
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

pub(crate) fn print_sessions(corpus: &Corpus, json: bool, out: &mut impl Write) -> std::io::Result<()> {
    let records = corpus.list_sessions();
    if json {
        return writeln!(out, "{}", to_json(&records));
    }
    let cwd_of = |header: &dsh_session_search::log::SessionHeader| {
        visible(header.cwd.as_deref().unwrap_or("(no cwd)")).into_owned()
    };
    let cwd_width = records
        .iter()
        .map(|r| cwd_of(&r.header).chars().count())
        .max()
        .unwrap_or(0);
    for record in records {
        let header = &record.header;
        let events = corpus.list_events(&header.id).map(|e| e.len()).unwrap_or_default();
        let title = corpus
            .read_title(&header.id)
            .ok()
            .flatten()
            .and_then(|t| t.title.as_js_string().map(|s| s.to_lossy().into_owned()));
        let parent = header.parent_session.as_deref().map(|p| format!("↳ {}", visible(p)));
        let title = title.filter(|t| !t.is_empty()).map(|t| visible(&t).into_owned());
        let about: Vec<String> = title.into_iter().chain(parent).collect();
        let line = format!(
            "{}  {}  {:>5} events  {:<cwd_width$}  {}",
            visible(&header.id),
            iso_time(header.created_at),
            events,
            cwd_of(header),
            about.join("  ")
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

pub(crate) fn print_show(
    corpus: &Corpus,
    id: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let session = corpus.read_session(id)?;
    let title = corpus.read_title(id)?;
    let events = corpus.list_events(id)?;
    if json {
        let body = format!(
            "{{\"session\":{},\"title\":{},\"events\":{}}}",
            to_json(&session.session),
            to_json(&title),
            to_json(&events)
        );
        return Ok(writeln!(out, "{body}"));
    }
    let count = |label: SurfaceLabel| events.iter().filter(|e| e.surface == label).count();
    let header = &session.session;
    let title = title
        .as_ref()
        .and_then(|t| t.title.as_js_string())
        .map(|t| t.to_lossy().into_owned());
    let field = |value: Option<&str>| visible(value.unwrap_or("(none)")).into_owned();
    Ok(writeln!(out, "id:          {}", visible(&header.id))
        .and_then(|_| writeln!(out, "created:     {}", iso_time(header.created_at)))
        .and_then(|_| writeln!(out, "cwd:         {}", field(header.cwd.as_deref())))
        .and_then(|_| writeln!(out, "parent:      {}", field(header.parent_session.as_deref())))
        .and_then(|_| writeln!(out, "title:       {}", field(title.as_deref())))
        .and_then(|_| {
            writeln!(
                out,
                "events:      {} ({} current, {} shadowed, {} log-only)",
                events.len(),
                count(SurfaceLabel::Current),
                count(SurfaceLabel::Shadowed),
                count(SurfaceLabel::LogOnly)
            )
        }))
}

pub(crate) fn print_lineage(
    trace: &dsh_session_search::reads::SessionTrace,
    out: &mut impl Write,
) -> std::io::Result<()> {
    for ancestor in trace.ancestors.iter().rev() {
        writeln!(out, "ancestor  {}", visible(&ancestor.header.id))?;
    }
    if let Some(missing) = &trace.unresolved_parent_id {
        writeln!(
            out,
            "ancestor  {} (not in the corpus: lineage incomplete)",
            visible(missing)
        )?;
    }
    writeln!(out, "target    {}", visible(&trace.target.header.id))?;
    fn walk(
        nodes: &[dsh_session_search::reads::LineageNode],
        depth: usize,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        for node in nodes {
            writeln!(out, "{}└ {}", "  ".repeat(depth), visible(&node.session.header.id))?;
            walk(&node.descendants, depth + 1, out)?;
        }
        Ok(())
    }
    walk(&trace.descendants, 1, out)
}

pub(crate) fn print_report(report: &LoadReport, json: bool, out: &mut impl Write) -> std::io::Result<()> {
    if json {
        return writeln!(out, "{}", to_json(report));
    }
    for input in &report.inputs {
        writeln!(
            out,
            "{} ({}): {}, {} media, {}",
            visible(&input.input),
            input.kind,
            count(input.logs, "log"),
            input.media,
            count(input.ignored, "other file")
        )?;
    }
    writeln!(out, "{}", report_summary(report))?;
    for failure in &report.failures {
        let id = failure
            .session_id
            .as_deref()
            .map(|id| format!(" [{}]", visible(id)))
            .unwrap_or_default();
        let message = visible(&failure.message);
        writeln!(out, "  {}  {}{id}: {message}", failure.code, failure_location(failure))?;
    }
    Ok(())
}

/// `loaded 25 sessions (25 added, 0 replaced), 25 duplicates skipped, 0 failures`: the
/// outcomes `--json` lists session by session, counted.
pub(crate) fn report_summary(report: &LoadReport) -> String {
    let outcomes = |outcome: &str| report.sessions.iter().filter(|s| s.outcome == outcome).count();
    let loaded: BTreeSet<&str> = report
        .sessions
        .iter()
        .filter(|s| s.outcome != "duplicate")
        .map(|s| s.session_id.as_str())
        .collect();
    let closers: usize = report.sessions.iter().map(|s| s.synthetic_closers).sum();
    let closers = match closers {
        0 => String::new(),
        n => format!(", {} added to interrupted turns", count(n, "synthetic closer")),
    };
    format!(
        "loaded {} ({} added, {} replaced), {} skipped{closers}, {}",
        count(loaded.len(), "session"),
        outcomes("added"),
        outcomes("replaced"),
        count(outcomes("duplicate"), "duplicate"),
        count(report.failures.len(), "failure")
    )
}

/// The first line of an event's visible text, for the human-readable surface view.
pub(crate) fn first_line(event: &Json) -> String {
    let data = event.get("data");
    let message = match event.get("type").and_then(|t| t.as_str()) {
        Some("user/message") => data,
        _ => data.and_then(|d| d.get("message")),
    };
    let text = message
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|blocks| blocks.iter().find_map(|b| b.get("text").and_then(|t| t.as_js_string())))
        .map(|t| t.to_lossy().into_owned())
        .unwrap_or_default();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    line.chars().take(100).collect()
}
