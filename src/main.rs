//! The `dsh-session-search` command: load archives and read sessions from a terminal.

use clap::{Parser, Subcommand};
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{Corpus, LoadReport};
use dsh_session_search::error::Error;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Load DeepSeek Harness session archives and read them locally.
#[derive(Parser)]
#[command(name = "dsh-session-search", version, about)]
struct Cli {
    /// A persistence root folder, a `.jsonl` / `.jsonl.zstd` log or a DSH export ZIP (repeatable).
    #[arg(long = "archive", short = 'a', value_name = "PATH", required = true)]
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
    /// List every event of a session with its surface label.
    Events {
        /// The session id.
        id: String,
    },
    /// Print a session's current model-facing surface.
    Surface {
        /// The session id.
        id: String,
    },
    /// Print the load report: what loaded and what failed, with stable codes.
    Report,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
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

fn run(cli: &Cli) -> Result<ExitCode, Error> {
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
    let result = match &cli.command {
        Command::Sessions => print_sessions(&corpus, cli.json, &mut out),
        Command::Events { id } => {
            let events = corpus.list_events(id)?;
            if cli.json {
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
        Command::Surface { id } => {
            let surface = corpus.read_surface(id)?;
            if cli.json {
                writeln!(out, "{}", to_json(&surface))
            } else {
                surface.events.iter().try_for_each(|event| {
                    let seq = event
                        .get("seq")
                        .map(|s| s.to_js_string())
                        .unwrap_or_default();
                    let kind = event
                        .get("type")
                        .and_then(|t| t.as_str())
                        .unwrap_or_default();
                    writeln!(out, "{seq:>6}  {kind:<18}  {}", first_line(event))
                })
            }
        }
        Command::Report => print_report(&report, cli.json, &mut out),
    };
    result.map_err(|e| Error::new(dsh_session_search::error::ErrorCode::LoadIo, e.to_string()))?;
    if !report.failures.is_empty() && !matches!(cli.command, Command::Report) && show_progress {
        eprintln!(
            "{} input(s) failed to load; run `report` for details",
            report.failures.len()
        );
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
        let entry = corpus.get(&header.id);
        let events = entry.map(|e| e.log.events.len()).unwrap_or_default();
        let parent = header
            .parent_session
            .as_deref()
            .map(|p| format!("  parent {p}"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}  {:>5} events  {}{}",
            header.id,
            events,
            header.cwd.as_deref().unwrap_or("(no cwd)"),
            parent
        )?;
    }
    Ok(())
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
        writeln!(
            out,
            "  {}  {}{}: {}",
            failure.code, failure.path, id, failure.message
        )?;
    }
    Ok(())
}

/// The first line of an event's visible text, for the human-readable surface view.
fn first_line(event: &dsh_session_search::json::Json) -> String {
    let data = event.get("data");
    let message = match event.get("type").and_then(|t| t.as_str()) {
        Some("user/message") => data,
        _ => data.and_then(|d| d.get("message")),
    };
    let text = message
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|blocks| {
            blocks
                .iter()
                .find_map(|b| b.get("text").and_then(|t| t.as_js_string()))
        })
        .map(|t| t.to_lossy().into_owned())
        .unwrap_or_default();
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    line.chars().take(100).collect()
}
