//! The `dsh-session-search` command: load archives and read sessions from a terminal, or serve
//! the library over JSON-RPC on stdio.

use clap::{Parser, Subcommand};
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{Corpus, LoadReport};
use dsh_session_search::error::{Error, ErrorCode};
use dsh_session_search::filters::{EventFilter, SessionFilter};
use dsh_session_search::fold::SurfaceLabel;
use dsh_session_search::json::{JsString, Json, JsonObject};
use dsh_session_search::reference;
use dsh_session_search::rpc::RpcServer;
use dsh_session_search::search::backend::{Backend, SearchOptions};
use dsh_session_search::search::engine::EventHit;
use dsh_session_search::search::request::{parse_event_request, parse_session_request};
use dsh_session_search::search::tokenizer::TokenizerMode;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Load DeepSeek Harness session archives and read them locally.
#[derive(Parser)]
#[command(name = "dsh-session-search", version, about)]
struct Cli {
    /// A persistence root folder, a `.jsonl` / `.jsonl.zstd` log or a DSH export ZIP (repeatable).
    #[arg(long = "archive", short = 'a', value_name = "PATH", global = true)]
    archives: Vec<PathBuf>,
    /// Print machine-readable JSON (DSH's camelCase wire shapes) instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Fail the whole load if any session fails, as DSH does.
    #[arg(long, global = true)]
    strict: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List sessions, newest first.
    Sessions,
    /// Show one session: header, title and how its events are labelled.
    Show {
        /// The session id.
        id: String,
    },
    /// List every event of a session with its surface label.
    Events {
        /// The session id.
        id: String,
    },
    /// Print one event in full, with optional neighbours.
    Event {
        /// The session id.
        id: String,
        /// The event's seq.
        seq: u64,
        /// Events before it to include (at most 50).
        #[arg(long, default_value_t = 0)]
        before: u64,
        /// Events after it to include (at most 50).
        #[arg(long, default_value_t = 0)]
        after: u64,
    },
    /// Print a session's current model-facing surface.
    Surface {
        /// The session id.
        id: String,
    },
    /// Trace a session's lineage, or with SEQ one event's replacements and sources.
    Trace {
        /// The session id.
        id: String,
        /// An event seq.
        seq: Option<u64>,
    },
    /// Filter sessions, or with --session the documents of one session.
    Filter {
        /// Filter this session's documents instead of the session list.
        #[arg(long)]
        session: Option<String>,
        /// Keep events of this type (repeatable).
        #[arg(long = "type")]
        types: Vec<String>,
        /// Keep events with this label: current, shadowed, log-only (repeatable).
        #[arg(long)]
        surface: Vec<String>,
        /// Keep documents containing this text (literal, case-insensitive, flexible whitespace).
        #[arg(long)]
        text: Option<String>,
        /// Keep sessions with this cwd (repeatable; `-` for none).
        #[arg(long)]
        cwd: Vec<String>,
        /// Keep sessions whose parent is this id (repeatable; `-` for root sessions).
        #[arg(long)]
        parent: Vec<String>,
    },
    /// Print the load report: what loaded and what failed, with stable codes.
    Report,
    /// Sessions a message of session AGENT may cite, best first, with their mentions.
    Candidates {
        /// The citing (target) session; its header cwd ranks the candidates.
        #[arg(long)]
        agent: String,
        /// Keep candidates whose id, cwd, title or subagent label contains this (any case).
        #[arg(long, default_value = "")]
        query: String,
        /// At most this many candidates (default 50).
        #[arg(long)]
        limit: Option<u64>,
        /// Rank by this cwd instead of the agent's header cwd.
        #[arg(long)]
        cwd: Option<String>,
    },
    /// Prepare a message of session AGENT: print the exact context text DSH would append.
    Prepare {
        /// The citing (target) session.
        #[arg(long)]
        agent: String,
        /// The message text; its mentions and `dsh-session:` URIs become references.
        #[arg(long)]
        text: String,
        /// A further reference, `ID` or `ID=LABEL` (split at the first `=`; repeatable).
        #[arg(long = "ref", value_name = "ID[=LABEL]")]
        refs: Vec<String>,
        /// Per-source byte budget (default 65536).
        #[arg(long)]
        max_reference_bytes: Option<u64>,
        /// Order of the two messages in the `--json` result.
        #[arg(long, default_value = "context-first", value_parser = ["context-first", "readable-first"])]
        order: String,
    },
    /// Encode a session id as a `dsh-session:` URI, or decode one.
    Uri {
        /// `encode` or `decode`.
        #[arg(value_parser = ["encode", "decode"])]
        action: String,
        /// The id (encode) or the URI (decode).
        value: String,
    },
    /// Print the mention `@[label](dsh-session:…)` of a session.
    Mention {
        /// Display text (default: the id).
        #[arg(long)]
        label: Option<String>,
        /// The session id.
        id: String,
    },
    /// Replace the mentions in TEXT by `@label` and list the sessions they cite.
    Parse {
        /// The text to parse.
        text: String,
    },
    /// Full-text search: sessions by their best event, or with --session one session's events.
    Search {
        /// The query: one literal phrase (FTS syntax is plain text).
        query: String,
        /// Search the events of this session instead of across sessions.
        #[arg(long)]
        session: Option<String>,
        /// Hits per page (1–100).
        #[arg(long, default_value_t = 20)]
        limit: u64,
        /// Keep events with this label: current, shadowed, log-only (repeatable).
        #[arg(long)]
        surface: Vec<String>,
        /// Follow every next cursor and print all pages.
        #[arg(long)]
        all_pages: bool,
        /// The index engine.
        #[arg(long, value_parser = ["tantivy", "sqlite", "scan"], default_value = "tantivy")]
        backend: String,
        /// Keep the SQLite index at this path and reuse it across runs (implies --backend sqlite).
        #[arg(long, value_name = "PATH")]
        index: Option<PathBuf>,
        /// Also index CJK and Thai runs as bigrams (finds substrings `unicode61` cannot).
        #[arg(long)]
        cjk: bool,
    },
    /// Serve JSON-RPC 2.0 on stdin/stdout, one request per line.
    Rpc,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(error) if error.message == BROKEN_PIPE => ExitCode::SUCCESS,
        Err(error) => {
            if cli.json {
                let body = serde_json::json!({ "error": { "code": error.code.as_str(), "message": error.message } });
                println!("{body}");
            } else {
                eprintln!("error {}: {}", error.code, error.message);
            }
            ExitCode::FAILURE
        }
    }
}

const BROKEN_PIPE: &str = "broken pipe";

fn io_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Error::new(ErrorCode::LoadIo, BROKEN_PIPE);
    }
    Error::new(ErrorCode::LoadIo, e.to_string())
}

fn run(cli: &Cli) -> Result<ExitCode, Error> {
    if matches!(cli.command, Command::Rpc) {
        return serve_rpc(cli);
    }
    if let Some(result) = run_reference_text(cli) {
        return result.map(|()| ExitCode::SUCCESS);
    }
    let options = LoadOptions {
        strict: cli.strict,
        ..LoadOptions::default()
    };
    let mut corpus = Corpus::new();
    let inputs = cli.archives.iter().cloned().map(Input::Path).collect();
    let show_progress = std::io::stderr().is_terminal();
    let report = corpus.load_with_progress(inputs, &options, &mut |done, total| {
        if show_progress && (done % 16 == 0 || done == total) {
            eprint!("\rreading logs: {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    })?;
    let mut out = std::io::stdout().lock();
    let json = cli.json;
    match &cli.command {
        Command::Sessions => print_sessions(&corpus, json, &mut out),
        Command::Show { id } => print_show(&corpus, id, json, &mut out)?,
        Command::Events { id } => {
            let events = corpus.list_events(id)?;
            if json {
                writeln!(out, "{}", to_json(&events))
            } else {
                events.iter().try_for_each(|e| {
                    writeln!(
                        out,
                        "{:>6}  {:<8}  {:<13}  {}",
                        e.seq,
                        e.surface.as_str(),
                        e.time,
                        e.kind
                    )
                })
            }
        }
        Command::Event { id, seq, before, after } => {
            let window = corpus.read_event(id, *seq, *before, *after)?;
            if json {
                writeln!(out, "{}", to_json(&window))
            } else {
                let labels = corpus.list_events(id)?;
                window.events.iter().try_for_each(|event| {
                    let n = event.get("seq").and_then(Json::as_f64).unwrap_or_default() as usize;
                    let marker = if n as u64 == *seq { ">" } else { " " };
                    writeln!(out, "{marker}{n:>5}  {:<8}  {}", labels[n].surface.as_str(), event)
                })
            }
        }
        Command::Surface { id } => {
            let surface = corpus.read_surface(id)?;
            if json {
                writeln!(out, "{}", to_json(&surface))
            } else {
                surface.events.iter().try_for_each(|event| {
                    let seq = event.get("seq").map(|s| s.to_js_string()).unwrap_or_default();
                    let kind = event.get("type").and_then(|t| t.as_str()).unwrap_or_default();
                    writeln!(out, "{seq:>6}  {kind:<18}  {}", first_line(event))
                })
            }
        }
        Command::Trace { id, seq: None } => {
            let trace = corpus.trace_session(id)?;
            if json {
                writeln!(out, "{}", to_json(&trace))
            } else {
                print_lineage(&trace, &mut out)
            }
        }
        Command::Trace { id, seq: Some(seq) } => {
            let trace = corpus.trace_event(id, *seq)?;
            if json {
                writeln!(out, "{}", to_json(&trace))
            } else {
                writeln!(
                    out,
                    "event {} ({}, {})",
                    trace.target.seq,
                    trace.target.kind,
                    trace.target.surface.as_str()
                )
                .and_then(|_| writeln!(out, "replaced by:     {:?}", trace.replaced_by))
                .and_then(|_| writeln!(out, "replacement chain: {:?}", trace.replacement_chain))
                .and_then(|_| writeln!(out, "replaced:        {:?}", trace.replaced_event_seqs))
                .and_then(|_| {
                    let sources: Vec<String> = trace.source_event_seqs.iter().map(Json::to_js_string).collect();
                    writeln!(out, "sources:         [{}]", sources.join(", "))
                })
                .and_then(|_| writeln!(out, "derived:         {:?}", trace.derived_event_seqs))
            }
        }
        Command::Filter {
            session: Some(id),
            types,
            surface,
            text,
            ..
        } => {
            let mut filters = Vec::new();
            if !types.is_empty() {
                filters.push(EventFilter::Type(types.clone()));
            }
            if !surface.is_empty() {
                filters.push(EventFilter::Surface(
                    surface.iter().map(|s| parse_label(s)).collect::<Result<_, _>>()?,
                ));
            }
            if let Some(text) = text {
                filters.push(EventFilter::Text(text.clone()));
            }
            let documents = corpus.filter_events(id, &filters)?;
            if json {
                writeln!(out, "{}", to_json(&documents))
            } else {
                documents.iter().try_for_each(|d| {
                    let text = d.text.to_lossy();
                    let line = text
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .chars()
                        .take(100)
                        .collect::<String>();
                    writeln!(
                        out,
                        "{:>6}  {:<8}  {:<18}  {line}",
                        d.record.seq,
                        d.record.surface.as_str(),
                        d.record.kind
                    )
                })
            }
        }
        Command::Filter {
            session: None,
            cwd,
            parent,
            ..
        } => {
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
                writeln!(out, "{}", to_json(&records))
            } else {
                records.iter().try_for_each(|r| {
                    writeln!(
                        out,
                        "{}  {}",
                        r.header.id,
                        r.header.cwd.as_deref().unwrap_or("(no cwd)")
                    )
                })
            }
        }
        Command::Report => print_report(&report, json, &mut out),
        Command::Search {
            query,
            session,
            limit,
            surface,
            all_pages,
            backend,
            index,
            cjk,
        } => {
            let options = SearchOptions {
                backend: match (backend.as_str(), index) {
                    (_, Some(path)) => Backend::Sqlite {
                        path: Some(path.display().to_string()),
                    },
                    ("sqlite", None) => Backend::Sqlite { path: None },
                    ("scan", None) => Backend::Scan,
                    _ => Backend::Tantivy,
                },
                tokenizer: if *cjk {
                    TokenizerMode::Cjk
                } else {
                    TokenizerMode::Unicode61
                },
                ..SearchOptions::default()
            };
            run_search(
                &corpus,
                &options,
                query,
                session.as_deref(),
                *limit,
                surface,
                *all_pages,
                json,
                &mut out,
            )?
        }
        Command::Candidates {
            agent,
            query,
            limit,
            cwd,
        } => {
            let mut agent = reference::ReferenceAgent::of_session(&corpus, &agent.as_str().into());
            if cwd.is_some() {
                agent.cwd = cwd.clone();
            }
            let candidates = reference::list_candidates(&corpus, &agent, &query.as_str().into(), *limit)?;
            if json {
                let list = Json::Array(candidates.iter().map(reference::Candidate::to_json).collect());
                writeln!(out, "{list}")
            } else {
                candidates.iter().try_for_each(|c| {
                    let cwd = c.cwd.as_deref().unwrap_or("(no cwd)");
                    let same = if c.same_workspace { "  (same workspace)" } else { "" };
                    let subagent = c
                        .display_title
                        .as_ref()
                        .map(|t| format!("  subagent: {t}"))
                        .unwrap_or_default();
                    writeln!(out, "{}  {cwd}{same}{subagent}", c.mention)
                })
            }
        }
        Command::Prepare {
            agent,
            text,
            refs,
            max_reference_bytes,
            order,
        } => {
            let parsed = reference::parse_session_reference_text(&text.as_str().into())?;
            let mut references: Vec<reference::SessionReferenceInput> =
                parsed.references.into_iter().map(Into::into).collect();
            references.extend(refs.iter().map(|r| {
                let (id, label) = match r.split_once('=') {
                    Some((id, label)) => (id, Some(label.into())),
                    None => (r.as_str(), None),
                };
                reference::SessionReferenceInput {
                    session_id: id.into(),
                    label,
                }
            }));
            let mut block = JsonObject::new();
            block.insert("type", Json::str("text"));
            block.insert("text", Json::String(parsed.text));
            let options = reference::PrepareOptions {
                budget: reference::BudgetOptions {
                    call: *max_reference_bytes,
                    ..Default::default()
                },
                order: reference::AppendOrder::parse(order).unwrap_or_default(),
                ..Default::default()
            };
            let agent = reference::ReferenceAgent::of_session(&corpus, &agent.as_str().into());
            let content = Json::Array(vec![Json::Object(block)]);
            let prepared = reference::prepare(&corpus, &agent, &content, &references, &options)?;
            match (json, prepared.context_text()) {
                (true, _) => writeln!(out, "{}", prepared.to_json()),
                // The exact bytes: the prompt ends at its closing tag, with no newline.
                (false, Some(text)) => write!(out, "{text}"),
                (false, None) => {
                    eprintln!("the text cites no session: nothing to add");
                    Ok(())
                }
            }
        }
        Command::Rpc | Command::Uri { .. } | Command::Mention { .. } | Command::Parse { .. } => Ok(()),
    }
    .map_err(io_error)?;
    if !report.failures.is_empty() && !matches!(cli.command, Command::Report) && show_progress {
        eprintln!(
            "{} input(s) failed to load; run `report` for details",
            report.failures.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_label(label: &str) -> Result<SurfaceLabel, Error> {
    match label {
        "current" => Ok(SurfaceLabel::Current),
        "shadowed" => Ok(SurfaceLabel::Shadowed),
        "log-only" => Ok(SurfaceLabel::LogOnly),
        other => Err(Error::new(
            ErrorCode::QueryInvalidFilter,
            format!("session surface filter contains unknown value \"{other}\""),
        )),
    }
}

/// The reference commands that need no corpus (`uri`, `mention`, `parse`); `None` otherwise.
fn run_reference_text(cli: &Cli) -> Option<Result<(), Error>> {
    let mut out = std::io::stdout().lock();
    let printed = match &cli.command {
        Command::Uri { action, value } if action == "encode" => {
            writeln!(
                out,
                "{}",
                reference::encode_session_reference_uri(&value.as_str().into())
            )
        }
        Command::Uri { value, .. } => match reference::decode_session_reference_uri(value) {
            Ok(id) if cli.json => writeln!(out, "{}", Json::String(id)),
            Ok(id) => writeln!(out, "{id}"),
            Err(error) => return Some(Err(error)),
        },
        Command::Mention { label, id } => {
            let label = label.as_deref().map(JsString::from);
            writeln!(
                out,
                "{}",
                reference::format_session_reference_mention(label.as_ref(), &id.as_str().into())
            )
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
                writeln!(out, "{}", parsed.text).and_then(|()| {
                    parsed
                        .references
                        .iter()
                        .try_for_each(|r| writeln!(out, "-> {}  ({})", r.session_id, r.label))
                })
            }
        }
        _ => return None,
    };
    Some(printed.map_err(io_error))
}

/// Runs a search and prints it: JSON pages with `--json`, else one line per hit with the
/// matches in bold on a terminal.
#[allow(clippy::too_many_arguments)]
fn run_search(
    corpus: &Corpus,
    options: &SearchOptions,
    query: &str,
    session: Option<&str>,
    limit: u64,
    surface: &[String],
    all_pages: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<std::io::Result<()>, Error> {
    let mut engine = options.engine()?;
    let filters = if surface.is_empty() {
        serde_json::json!([])
    } else {
        serde_json::json!([{ "kind": "surface", "values": surface }])
    };
    let bold = std::io::stdout().is_terminal();
    let mut cursor: Option<String> = None;
    loop {
        let mut request = match session {
            // Machines get DSH's hit shape; people get the matches marked.
            Some(id) => {
                serde_json::json!({ "sessionId": id, "query": query, "filters": filters, "limit": limit, "highlights": !json })
            }
            None => serde_json::json!({ "query": query, "eventFilters": filters, "limit": limit, "highlights": !json }),
        };
        if let Some(c) = &cursor {
            request["cursor"] = serde_json::json!(c);
        }
        let request = Json::parse(&request.to_string(), Default::default())
            .map_err(|e| Error::new(ErrorCode::QueryInvalidQuery, e.to_string()))?;
        let (printed, next) = if let Some(_id) = session {
            let page = engine.search_events(corpus, &parse_event_request(&request, &options.config)?)?;
            let lines: Vec<String> = page.items.iter().map(|hit| hit_line(None, hit, bold)).collect();
            (if json { vec![to_json(&page)] } else { lines }, page.next_cursor)
        } else {
            let page = engine.search_sessions(corpus, &parse_session_request(&request, &options.config)?)?;
            let lines: Vec<String> = page
                .items
                .iter()
                .map(|hit| hit_line(Some(&hit.header), &hit.best_match, bold))
                .collect();
            (if json { vec![to_json(&page)] } else { lines }, page.next_cursor)
        };
        for line in printed {
            if let Err(e) = writeln!(out, "{line}") {
                return Ok(Err(e));
            }
        }
        match next {
            Some(next) if all_pages => cursor = Some(next),
            Some(_) if !json => return Ok(writeln!(out, "(more: add --all-pages)")),
            _ => return Ok(Ok(())),
        }
    }
}

/// `id  seq  label  type  snippet`, the matches marked.
fn hit_line(header: Option<&Json>, hit: &EventHit, bold: bool) -> String {
    let mut snippet = String::new();
    let chars: Vec<char> = hit.snippet.chars().collect();
    let mut at = 0;
    for highlight in hit.highlights.iter().flatten() {
        snippet.extend(&chars[at.min(highlight.start)..highlight.start]);
        let (open, close) = if bold { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
        snippet.push_str(open);
        snippet.extend(&chars[highlight.start..highlight.end]);
        snippet.push_str(close);
        at = highlight.end;
    }
    snippet.extend(&chars[at.min(chars.len())..]);
    let session = header
        .and_then(|h| h.get("id"))
        .map(|id| format!("{}  ", id.as_str().unwrap_or_default()))
        .unwrap_or_default();
    format!(
        "{session}{:>5}  {:<8}  {:<17}  {snippet}",
        hit.record.seq,
        hit.record.surface.as_str(),
        hit.record.kind
    )
}

/// JSON-RPC on stdio: archives given with `--archive` are loaded first.
fn serve_rpc(cli: &Cli) -> Result<ExitCode, Error> {
    let mut server = RpcServer::new();
    if !cli.archives.is_empty() {
        let paths: Vec<String> = cli.archives.iter().map(|p| p.display().to_string()).collect();
        let request = serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": "load", "params": [paths, { "strict": cli.strict }] });
        server.handle_line(&request.to_string());
    }
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = line.map_err(io_error)?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(response) = server.handle_line(&line) {
            writeln!(stdout, "{response}")
                .and_then(|_| stdout.flush())
                .map_err(io_error)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn print_sessions(corpus: &Corpus, json: bool, out: &mut impl Write) -> std::io::Result<()> {
    let records = corpus.list_sessions();
    if json {
        return writeln!(out, "{}", to_json(&records));
    }
    for record in records {
        let header = &record.header;
        let events = corpus.list_events(&header.id).map(|e| e.len()).unwrap_or_default();
        let title = corpus
            .read_title(&header.id)
            .ok()
            .flatten()
            .and_then(|t| t.title.as_js_string().map(|s| s.to_lossy().into_owned()));
        let parent = header
            .parent_session
            .as_deref()
            .map(|p| format!("  ↳ {p}"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}  {:>5} events  {}  {}{}",
            header.id,
            events,
            header.cwd.as_deref().unwrap_or("(no cwd)"),
            title.unwrap_or_default(),
            parent
        )?;
    }
    Ok(())
}

fn print_show(corpus: &Corpus, id: &str, json: bool, out: &mut impl Write) -> Result<std::io::Result<()>, Error> {
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
    Ok(writeln!(out, "id:          {}", header.id)
        .and_then(|_| writeln!(out, "created:     {} (epoch ms)", header.created_at))
        .and_then(|_| writeln!(out, "cwd:         {}", header.cwd.as_deref().unwrap_or("(none)")))
        .and_then(|_| {
            writeln!(
                out,
                "parent:      {}",
                header.parent_session.as_deref().unwrap_or("(none)")
            )
        })
        .and_then(|_| {
            let text = title
                .as_ref()
                .and_then(|t| t.title.as_js_string())
                .map(|t| t.to_lossy().into_owned());
            writeln!(out, "title:       {}", text.unwrap_or_else(|| "(none)".into()))
        })
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

fn print_lineage(trace: &dsh_session_search::reads::SessionTrace, out: &mut impl Write) -> std::io::Result<()> {
    for ancestor in trace.ancestors.iter().rev() {
        writeln!(out, "ancestor  {}", ancestor.header.id)?;
    }
    if let Some(missing) = &trace.unresolved_parent_id {
        writeln!(out, "ancestor  {missing} (not in the corpus: lineage incomplete)")?;
    }
    writeln!(out, "target    {}", trace.target.header.id)?;
    fn walk(
        nodes: &[dsh_session_search::reads::LineageNode],
        depth: usize,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        for node in nodes {
            writeln!(out, "{}└ {}", "  ".repeat(depth), node.session.header.id)?;
            walk(&node.descendants, depth + 1, out)?;
        }
        Ok(())
    }
    walk(&trace.descendants, 1, out)
}

fn print_report(report: &LoadReport, json: bool, out: &mut impl Write) -> std::io::Result<()> {
    if json {
        return writeln!(out, "{}", to_json(report));
    }
    for input in &report.inputs {
        writeln!(
            out,
            "{} ({}): {} logs, {} media, {} other files",
            input.input, input.kind, input.logs, input.media, input.ignored
        )?;
    }
    let closers: usize = report.sessions.iter().map(|s| s.synthetic_closers).sum();
    writeln!(
        out,
        "loaded {} sessions ({} synthetic closers added), {} failures",
        report.sessions.len(),
        closers,
        report.failures.len()
    )?;
    for failure in &report.failures {
        let id = failure
            .session_id
            .as_deref()
            .map(|id| format!(" [{id}]"))
            .unwrap_or_default();
        writeln!(out, "  {}  {}{}: {}", failure.code, failure.path, id, failure.message)?;
    }
    Ok(())
}

/// The first line of an event's visible text, for the human-readable surface view.
fn first_line(event: &Json) -> String {
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
