//! The `dsh-session-search` command: load archives and read sessions from a terminal, or serve
//! the library over JSON-RPC on stdio.

mod cli;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use cli::commands::{run_corpus_command, run_reference_text};
use cli::load::{archive_options, explain_nothing_loaded, load_archives, nothing_loaded, warn_about_load};
use cli::serve::serve_rpc;
use cli::text::visible;
use dsh_session_search::api::Archive;
use dsh_session_search::error::{Error, ErrorCode};
use dsh_session_search::fold::SurfaceLabel;
use dsh_session_search::reference;
use std::path::PathBuf;
use std::process::ExitCode;

const EXIT_STATUS: &str = "Exit status: 0 on success; 1 on an error, when no given archive \
loaded, or when `search` finds nothing; 2 on a usage error.";

/// Load DeepSeek Harness session archives and read them locally.
#[derive(Parser)]
#[command(name = "dsh-session-search", version, about, after_help = EXIT_STATUS)]
pub(crate) struct Cli {
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
pub(crate) enum Command {
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
pub(crate) enum UriAction {
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
pub(crate) enum SurfaceArg {
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
pub(crate) enum BackendArg {
    /// tantivy, in memory.
    Tantivy,
    /// SQLite FTS5 (DSH's own index), in memory or at --index.
    Sqlite,
    /// A brute-force scan (the reference behaviour; small corpora).
    Scan,
}

/// The order of the two messages `prepare` writes.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum OrderArg {
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
pub(crate) fn print_error(error: &Error, json: bool) {
    if json {
        let body = serde_json::json!({ "error": { "code": error.code.as_str(), "message": error.message } });
        println!("{body}");
    } else {
        eprintln!("error {}: {}", error.code, visible(&error.message));
    }
}

pub(crate) const BROKEN_PIPE: &str = "broken pipe";

pub(crate) fn io_error(e: std::io::Error) -> Error {
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
