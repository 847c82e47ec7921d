//! The `dsh-session-search` command: load archives and read sessions from a terminal, or serve
//! the library over JSON-RPC on stdio.

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use dsh_session_search::api::{Archive, ArchiveOptions};
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{Corpus, LoadFailure, LoadReport};
use dsh_session_search::error::{Error, ErrorCode};
use dsh_session_search::filters::{EventFilter, SessionFilter};
use dsh_session_search::fold::SurfaceLabel;
use dsh_session_search::json::{JsString, Json, JsonObject};
use dsh_session_search::reference;
use dsh_session_search::rpc::RpcServer;
use dsh_session_search::search::backend::{Backend, SearchOptions};
use dsh_session_search::search::engine::EventHit;
use dsh_session_search::search::request::{EventSearchRequest, SessionSearchRequest};
use dsh_session_search::search::tokenizer::TokenizerMode;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const EXIT_STATUS: &str = "Exit status: 0 on success; 1 on an error, when no given archive \
loaded, or when `search` finds nothing; 2 on a usage error.";

/// Load DeepSeek Harness session archives and read them locally.
#[derive(Parser)]
#[command(name = "dsh-session-search", version, about, after_help = EXIT_STATUS)]
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
    /// A load limit, e.g. `--load-limit maxLineBytes=1048576` (repeatable; names and defaults in the README).
    #[arg(long = "load-limit", value_name = "NAME=N", global = true)]
    limits: Vec<String>,
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
        /// Keep events with this surface label (repeatable).
        #[arg(long, value_enum)]
        surface: Vec<SurfaceArg>,
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
        #[arg(long, value_enum, default_value_t = OrderArg::ContextFirst)]
        order: OrderArg,
    },
    /// Encode a session id as a `dsh-session:` URI, or decode one.
    Uri {
        #[command(subcommand)]
        action: UriAction,
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
        /// Keep events with this surface label (repeatable).
        #[arg(long, value_enum)]
        surface: Vec<SurfaceArg>,
        /// Follow every next cursor and print all pages.
        #[arg(long)]
        all_pages: bool,
        /// The index engine [default: tantivy, or sqlite with --index].
        #[arg(long, value_enum)]
        backend: Option<BackendArg>,
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

#[derive(Subcommand)]
enum UriAction {
    /// Print the canonical `dsh-session:` URI of a session id.
    Encode {
        /// The session id.
        id: String,
    },
    /// Print the session id a `dsh-session:` URI names.
    Decode {
        /// The URI.
        uri: String,
    },
}

/// An event's place relative to the model's history (the library's [`SurfaceLabel`]).
#[derive(Clone, Copy, ValueEnum)]
enum SurfaceArg {
    /// On the surface after the whole log is folded.
    Current,
    /// Was on the surface and was removed by a later replacement.
    Shadowed,
    /// Never part of the surface.
    LogOnly,
}

impl From<SurfaceArg> for SurfaceLabel {
    fn from(arg: SurfaceArg) -> Self {
        match arg {
            SurfaceArg::Current => SurfaceLabel::Current,
            SurfaceArg::Shadowed => SurfaceLabel::Shadowed,
            SurfaceArg::LogOnly => SurfaceLabel::LogOnly,
        }
    }
}

/// The search index engine.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// tantivy, in memory.
    Tantivy,
    /// SQLite FTS5 (DSH's own index), in memory or at --index.
    Sqlite,
    /// A brute-force scan (the reference behaviour; small corpora).
    Scan,
}

/// The order of the two messages `prepare` writes.
#[derive(Clone, Copy, ValueEnum)]
enum OrderArg {
    /// The context message first, then the readable message (DSH's design).
    ContextFirst,
    /// The readable message first, then its context (DSH ≥ 0.1.0-rc.8).
    ReadableFirst,
}

impl From<OrderArg> for reference::AppendOrder {
    fn from(arg: OrderArg) -> Self {
        match arg {
            OrderArg::ContextFirst => reference::AppendOrder::ContextFirst,
            OrderArg::ReadableFirst => reference::AppendOrder::ReadableFirst,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(error) if error.message == BROKEN_PIPE => ExitCode::SUCCESS,
        Err(error) => {
            print_error(&error, cli.json);
            ExitCode::FAILURE
        }
    }
}

/// An error as the user sees it: one line on stderr, or `{"error": …}` on stdout with `--json`.
fn print_error(error: &Error, json: bool) {
    if json {
        let body = serde_json::json!({ "error": { "code": error.code.as_str(), "message": error.message } });
        println!("{body}");
    } else {
        eprintln!("error {}: {}", error.code, visible(&error.message));
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
    if cli.archives.is_empty() {
        Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "this command reads sessions: give at least one --archive PATH \
                 (a persistence root such as ~/.dsh/sessions, a log, or an export ZIP)",
            )
            .exit();
    }
    let mut archive = Archive::new(archive_options(cli)?);
    let report = load_archives(&mut archive, cli)?;
    let is_report = matches!(cli.command, Command::Report);
    if nothing_loaded(&report) {
        return Ok(explain_nothing_loaded(&report, cli.json, is_report));
    }
    if !is_report {
        warn_about_load(&report);
    }
    run_corpus_command(cli, &mut archive, &report)
}

/// The archive's settings from `--load-limit NAME=N` (the API's limit names and checks).
fn archive_options(cli: &Cli) -> Result<ArchiveOptions, Error> {
    let mut limits = JsonObject::new();
    for limit in &cli.limits {
        let (name, value) = limit
            .split_once('=')
            .ok_or_else(|| Error::invalid_argument(format!("--load-limit {limit:?}: write NAME=N")))?;
        let value: f64 = value
            .parse()
            .map_err(|_| Error::invalid_argument(format!("--load-limit {name}: {value:?} is not a number")))?;
        limits.insert(name, Json::Number(value));
    }
    let mut options = JsonObject::new();
    options.insert("limits", Json::Object(limits));
    ArchiveOptions::from_json(Some(&Json::Object(options)))
}

/// Loads the `--archive` paths (each once), with a progress line on a terminal.
fn load_archives(archive: &mut Archive, cli: &Cli) -> Result<LoadReport, Error> {
    let options = LoadOptions {
        strict: cli.strict,
        ..archive.options().load
    };
    let inputs = distinct_archives(&cli.archives).into_iter().map(Input::Path).collect();
    let show_progress = std::io::stderr().is_terminal();
    archive.load_with_progress(inputs, &options, &mut |done, total| {
        if show_progress && (done % 16 == 0 || done == total) {
            eprint!("\rreading logs: {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    })
}

/// The archives to load, each once. The same path given twice (however it is spelled) would
/// otherwise be one persistence root read twice, where every session looks repeated.
fn distinct_archives(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut first_spelling: std::collections::BTreeMap<PathBuf, &Path> = Default::default();
    let mut distinct = Vec::new();
    for path in paths {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        match first_spelling.get(&key) {
            Some(first) if *first == path.as_path() => {
                eprintln!("note: {} given twice; loaded once", shown_path(path));
            }
            Some(first) => {
                eprintln!(
                    "note: {} is {} given again; loaded once",
                    shown_path(path),
                    shown_path(first)
                );
            }
            None => {
                first_spelling.insert(key, path);
                distinct.push(path.clone());
            }
        }
    }
    distinct
}

fn shown_path(path: &Path) -> String {
    visible(&path.display().to_string()).into_owned()
}

/// Every given archive failed: not one session loaded, and something went wrong.
fn nothing_loaded(report: &LoadReport) -> bool {
    report.sessions.is_empty() && !report.failures.is_empty()
}

/// Says on stderr what failed, by path; `report` still prints its report. Exits non-zero.
fn explain_nothing_loaded(report: &LoadReport, json: bool, is_report: bool) -> ExitCode {
    if is_report {
        // The report itself lists the failures; a broken pipe has nothing left to say.
        let _ = print_report(report, json, &mut std::io::stdout().lock());
        eprintln!("error: nothing loaded ({})", count(report.failures.len(), "failure"));
        return ExitCode::FAILURE;
    }
    for failure in &report.failures {
        eprintln!("error {}", failure_line(failure));
    }
    if json {
        let first = &report.failures[0];
        let message = format!("nothing loaded: {}: {}", failure_location(first), first.message);
        print_error(&Error::new(first.code, message), true);
    }
    ExitCode::FAILURE
}

/// Partial success: one line about the failures, and a note for each input holding no log.
fn warn_about_load(report: &LoadReport) {
    for input in report.inputs.iter().filter(|i| i.logs == 0) {
        eprintln!("note: {}: no session logs found", visible(&input.input));
    }
    if let Some(first) = report.failures.first() {
        eprintln!(
            "warning: {} while loading (first: {}); `report` lists them",
            count(report.failures.len(), "failure"),
            failure_line(first)
        );
    }
}

fn failure_line(failure: &LoadFailure) -> String {
    let LoadFailure {
        input,
        path,
        code,
        message,
        ..
    } = failure;
    failure_text(code.as_str(), input, path, message)
}

/// `CODE: where: what`, session data made visible.
fn failure_text(code: &str, input: &str, path: &str, message: &str) -> String {
    format!("{code}: {}: {}", location(input, path), visible(message))
}

fn failure_location(failure: &LoadFailure) -> String {
    location(&failure.input, &failure.path)
}

/// The input, and the path inside it when the failure is not the input itself.
fn location(input: &str, path: &str) -> String {
    match path {
        "" => visible(input).into_owned(),
        path => format!("{}: {}", visible(input), visible(path)),
    }
}

/// `1 failure`, `2 failures`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The commands that read the loaded corpus.
fn run_corpus_command(cli: &Cli, archive: &mut Archive, report: &LoadReport) -> Result<ExitCode, Error> {
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
        Command::Event { id, seq, before, after } => {
            let window = corpus.read_event(id, *seq, *before, *after)?;
            if json {
                writeln!(out, "{}", to_json(&window))
            } else {
                let labels = corpus.list_events(id)?;
                window.events.iter().try_for_each(|event| {
                    let n = event.get("seq").and_then(Json::as_f64).unwrap_or_default() as usize;
                    let marker = if n as u64 == *seq { ">" } else { " " };
                    let label = labels[n].surface.as_str();
                    let time = iso_time(labels[n].time);
                    writeln!(
                        out,
                        "{marker}{n:>5}  {label:<8}  {time}  {}",
                        visible(&event.to_string())
                    )
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
                    let time = event.get("time").and_then(Json::as_f64).map(|t| iso_time(t as i64));
                    let kind = event.get("type").and_then(|t| t.as_str()).unwrap_or_default();
                    let (time, kind) = (time.unwrap_or_default(), visible(kind));
                    writeln!(out, "{seq:>6}  {time:<24}  {kind:<18}  {}", visible(&first_line(event)))
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
                print_event_trace(&trace, &mut out)
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
                filters.push(EventFilter::Surface(surface.iter().map(|&s| s.into()).collect()));
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
                    let header = &r.header;
                    let cwd = header.cwd.as_deref().unwrap_or("(no cwd)");
                    writeln!(out, "{}  {}", visible(&header.id), visible(cwd))
                })
            }
        }
        Command::Report => print_report(report, json, &mut out),
        Command::Search { .. } => Ok(()),
        Command::Candidates {
            agent,
            query,
            limit,
            cwd,
        } => {
            let mut agent = reference::ReferenceAgent::of_session(corpus, &agent.as_str().into());
            if cwd.is_some() {
                agent.cwd = cwd.clone();
            }
            let candidates = reference::list_candidates(corpus, &agent, &query.as_str().into(), *limit)?;
            if json {
                let list = Json::Array(candidates.iter().map(reference::Candidate::to_json).collect());
                writeln!(out, "{list}")
            } else {
                candidates.iter().try_for_each(|c| print_candidate(c, &mut out))
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
                order: (*order).into(),
                ..Default::default()
            };
            let agent = reference::ReferenceAgent::of_session(corpus, &agent.as_str().into());
            let content = Json::Array(vec![Json::Object(block)]);
            let prepared = reference::prepare(corpus, &agent, &content, &references, &options)?;
            match (json, prepared.context_text()) {
                (true, _) => writeln!(out, "{}", prepared.to_json()),
                // The exact bytes when piped: the prompt ends at its closing tag, with no
                // newline. A terminal gets the same text with its controls made visible.
                (false, Some(text)) if std::io::stdout().is_terminal() => write!(out, "{}", visible_block(text)),
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
    Ok(ExitCode::SUCCESS)
}

/// Han, Kana, Hangul and Thai: the scripts `--cjk` indexes as bigrams (a hint, not the index).
fn is_bigram_script(c: char) -> bool {
    matches!(c as u32, 0x0E00..=0x0E7F | 0x1100..=0x11FF | 0x3040..=0x30FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF)
}

/// `--backend` and `--index`: an index path means SQLite, the engine that can keep one.
fn search_backend(backend: Option<BackendArg>, index: Option<&Path>) -> Backend {
    match (backend, index) {
        (None | Some(BackendArg::Sqlite), Some(path)) => Backend::Sqlite {
            path: Some(path.display().to_string()),
        },
        (Some(_), Some(_)) => Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--index keeps a SQLite index: it goes with --backend sqlite only",
            )
            .exit(),
        (Some(BackendArg::Sqlite), None) => Backend::Sqlite { path: None },
        (Some(BackendArg::Scan), None) => Backend::Scan,
        (None | Some(BackendArg::Tantivy), None) => Backend::Tantivy,
    }
}

fn print_events(corpus: &Corpus, id: &str, json: bool, out: &mut impl Write) -> Result<std::io::Result<()>, Error> {
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

fn print_event_trace(trace: &dsh_session_search::reads::EventTrace, out: &mut impl Write) -> std::io::Result<()> {
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

fn print_candidate(candidate: &reference::Candidate, out: &mut impl Write) -> std::io::Result<()> {
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
fn run_reference_text(cli: &Cli) -> Option<Result<(), Error>> {
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

/// `search`: runs the query over every page asked for, prints it, and exits 1 (as grep does)
/// when nothing matched.
fn run_search_command(cli: &Cli, archive: &mut Archive) -> Result<ExitCode, Error> {
    let Command::Search {
        query,
        session,
        limit,
        surface,
        all_pages,
        backend,
        index,
        cjk,
    } = &cli.command
    else {
        return Ok(ExitCode::SUCCESS);
    };
    archive.set_search_options(SearchOptions {
        backend: search_backend(*backend, index.as_deref()),
        tokenizer: if *cjk {
            TokenizerMode::Cjk
        } else {
            TokenizerMode::Unicode61
        },
        ..SearchOptions::default()
    });
    let labels: Vec<SurfaceLabel> = surface.iter().map(|&s| s.into()).collect();
    let filters = if labels.is_empty() {
        Vec::new()
    } else {
        vec![EventFilter::Surface(labels)]
    };
    let search = Search {
        query,
        session: session.as_deref(),
        limit: *limit,
        filters,
        all_pages: *all_pages,
        json: cli.json,
    };
    let hits = run_search(archive, &search, &mut std::io::stdout().lock())?.map_err(io_error)?;
    if hits > 0 {
        return Ok(ExitCode::SUCCESS);
    }
    // Nothing on stdout (but the empty page with --json), a word on stderr, exit 1.
    if !cli.json {
        // `unicode61` keeps a run of CJK or Thai letters as one token: a word inside it is
        // found only by the bigram tokenizer.
        let hint = if !*cjk && query.chars().any(is_bigram_script) {
            " (add --cjk to find words inside CJK or Thai text)"
        } else {
            ""
        };
        eprintln!("no matches for {}{hint}", visible(&format!("{query:?}")));
    }
    Ok(ExitCode::FAILURE)
}

/// One `search` command's request, as typed values.
struct Search<'a> {
    query: &'a str,
    session: Option<&'a str>,
    limit: u64,
    filters: Vec<EventFilter>,
    all_pages: bool,
    json: bool,
}

/// Runs a search and prints it: JSON pages with `--json`, else one line per hit with the
/// matches in bold on a terminal. Returns the number of hits printed.
fn run_search(
    archive: &mut Archive,
    search: &Search<'_>,
    out: &mut impl Write,
) -> Result<std::io::Result<usize>, Error> {
    let config = archive.options().search.config;
    let bold = std::io::stdout().is_terminal();
    // Machines get DSH's hit shape; people get the matches marked.
    let highlights = !search.json;
    let mut cursor: Option<String> = None;
    let mut hits = 0;
    loop {
        let (printed, next) = match search.session {
            Some(id) => {
                let mut request =
                    EventSearchRequest::new(id, search.query, search.filters.clone(), search.limit, &config)?;
                (request.cursor, request.highlights) = (cursor.take(), highlights);
                let page = archive.search_events(&request)?;
                hits += page.items.len();
                let lines = page.items.iter().map(|hit| hit_line(None, hit, bold)).collect();
                (if search.json { vec![to_json(&page)] } else { lines }, page.next_cursor)
            }
            None => {
                let mut request =
                    SessionSearchRequest::new(search.query, search.filters.clone(), search.limit, &config)?;
                (request.cursor, request.highlights) = (cursor.take(), highlights);
                let page = archive.search_sessions(&request)?;
                hits += page.items.len();
                let lines = page
                    .items
                    .iter()
                    .map(|hit| hit_line(Some(&hit.header), &hit.best_match, bold))
                    .collect();
                (if search.json { vec![to_json(&page)] } else { lines }, page.next_cursor)
            }
        };
        for line in printed {
            if let Err(e) = writeln!(out, "{line}") {
                return Ok(Err(e));
            }
        }
        match next {
            Some(next) if search.all_pages => cursor = Some(next),
            Some(_) if !search.json => {
                eprintln!("(more hits: add --all-pages, or a larger --limit)");
                return Ok(Ok(hits));
            }
            _ => return Ok(Ok(hits)),
        }
    }
}

/// `id  seq  label  type  snippet`, the matches marked.
fn hit_line(header: Option<&Json>, hit: &EventHit, bold: bool) -> String {
    let mut snippet = String::new();
    let chars: Vec<char> = hit.snippet.chars().collect();
    let mut at = 0;
    // Each piece of session text is made visible on its own; only our markers are escapes.
    let piece = |range: &[char]| visible(&range.iter().collect::<String>()).into_owned();
    for highlight in hit.highlights.iter().flatten() {
        snippet.push_str(&piece(&chars[at.min(highlight.start)..highlight.start]));
        let (open, close) = if bold { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
        snippet.push_str(open);
        snippet.push_str(&piece(&chars[highlight.start..highlight.end]));
        snippet.push_str(close);
        at = highlight.end;
    }
    snippet.push_str(&piece(&chars[at.min(chars.len())..]));
    let session = header
        .and_then(|h| h.get("id"))
        .map(|id| format!("{}  ", visible(id.as_str().unwrap_or_default())))
        .unwrap_or_default();
    format!(
        "{session}{:>5}  {:<8}  {:<17}  {snippet}",
        hit.record.seq,
        hit.record.surface.as_str(),
        visible(&hit.record.kind)
    )
}

/// JSON-RPC on stdio: archives given with `--archive` are loaded first (as every command loads
/// them: a failed strict load, or one where nothing loaded, exits 1 before serving). Each line
/// is answered, whatever its bytes.
fn serve_rpc(cli: &Cli) -> Result<ExitCode, Error> {
    let mut archive = Archive::new(archive_options(cli)?);
    if !cli.archives.is_empty() {
        let report = load_archives(&mut archive, cli)?;
        if nothing_loaded(&report) {
            return Ok(explain_nothing_loaded(&report, false, false));
        }
        warn_about_load(&report);
    }
    let mut server = RpcServer::with_archive(archive);
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line).map_err(io_error)? == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Some(response) = server.handle_bytes(line.trim_ascii_end()) {
            writeln!(stdout, "{response}")
                .and_then(|_| stdout.flush())
                .map_err(io_error)?;
        }
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn print_sessions(corpus: &Corpus, json: bool, out: &mut impl Write) -> std::io::Result<()> {
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

fn print_lineage(trace: &dsh_session_search::reads::SessionTrace, out: &mut impl Write) -> std::io::Result<()> {
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

fn print_report(report: &LoadReport, json: bool, out: &mut impl Write) -> std::io::Result<()> {
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
fn report_summary(report: &LoadReport) -> String {
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

/// One line of session data, safe on a terminal: every control character (C0, DEL, C1; ESC
/// and so the CSI/OSC sequences it starts; NUL; newline and tab too, which would break the
/// line) and every bidirectional override is printed as a visible escape such as `\u{1b}`.
fn visible(text: &str) -> Cow<'_, str> {
    escape_controls(text, false)
}

/// [`visible`] for text printed as a block: its newlines and tabs stay layout.
fn visible_block(text: &str) -> Cow<'_, str> {
    escape_controls(text, true)
}

fn escape_controls(text: &str, keep_layout: bool) -> Cow<'_, str> {
    let is_layout = |c: char| keep_layout && matches!(c, '\n' | '\t');
    // Bidi embeddings, overrides and isolates reorder what follows them on screen.
    let is_hidden = |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(|c| is_hidden(c) && !is_layout(c)) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if is_layout(c) || !is_hidden(c) => shown.push(c),
            '\n' => shown.push_str("\\n"),
            '\t' => shown.push_str("\\t"),
            '\r' => shown.push_str("\\r"),
            c => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(shown)
}

/// Epoch milliseconds as ISO 8601 UTC, exactly as JavaScript's `Date.prototype.toISOString`
/// prints them (`2026-11-30T12:34:56.789Z`; years outside 0–9999 as `+275760` / `-000001`).
/// Outside JavaScript's date range (±8.64e15 ms) the number itself is printed.
fn iso_time(epoch_ms: i64) -> String {
    const JS_DATE_LIMIT_MS: i64 = 8_640_000_000_000_000;
    if epoch_ms.abs() > JS_DATE_LIMIT_MS {
        return format!("{epoch_ms} (epoch ms)");
    }
    let (days, ms_of_day) = (epoch_ms.div_euclid(86_400_000), epoch_ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let year = match year {
        0..=9999 => format!("{year:04}"),
        _ => format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs()),
    };
    let (hours, minutes) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (seconds, millis) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`: shift to eras of 400 years starting on 0000-03-01).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{iso_time, visible, visible_block};

    #[test]
    fn iso_time_prints_what_to_iso_string_prints() {
        // Each expected value is `new Date(ms).toISOString()` in Node.
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_796_042_096_789, "2026-11-30T12:34:56.789Z"),
            (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),
            (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
            (-62_167_219_200_001, "-000001-12-31T23:59:59.999Z"),
            (253_402_300_800_000, "+010000-01-01T00:00:00.000Z"),
            (8_640_000_000_000_000, "+275760-09-13T00:00:00.000Z"),
            (-8_640_000_000_000_000, "-271821-04-20T00:00:00.000Z"),
        ];
        for (ms, iso) in cases {
            assert_eq!(iso_time(ms), iso, "{ms}");
        }
        assert_eq!(iso_time(8_640_000_000_000_001), "8640000000000001 (epoch ms)");
    }

    #[test]
    fn controls_are_shown_not_sent() {
        assert_eq!(
            visible("a\u{1b}]0;x\u{7}b\0\u{7f}\u{9b}"),
            "a\\u{1b}]0;x\\u{7}b\\u{0}\\u{7f}\\u{9b}"
        );
        assert_eq!(visible("one\ntwo\tthree\r"), "one\\ntwo\\tthree\\r");
        assert_eq!(visible_block("one\ntwo\tthree\u{1b}[2J"), "one\ntwo\tthree\\u{1b}[2J");
        assert_eq!(visible("abc\u{202e}cba"), "abc\\u{202e}cba");
        assert!(matches!(visible("plain, ünïcödé, 修复"), std::borrow::Cow::Borrowed(_)));
    }
}
