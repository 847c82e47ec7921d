//! Loading the `--archive` paths as a person expects: each path once, progress on a terminal,
//! and every failure said by path on stderr.

use crate::cli::commands::print_report;
use crate::cli::text::visible;
use crate::{Cli, print_error};
use dsh_session_search::api::{Archive, ArchiveOptions};
use dsh_session_search::archive::{Input, LoadOptions};
use dsh_session_search::corpus::{LoadFailure, LoadReport};
use dsh_session_search::error::Error;
use dsh_session_search::json::{Json, JsonObject};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The archive's settings from `--load-limit NAME=N` (the API's limit names and checks).
pub(crate) fn archive_options(cli: &Cli) -> Result<ArchiveOptions, Error> {
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
pub(crate) fn load_archives(archive: &mut Archive, cli: &Cli) -> Result<LoadReport, Error> {
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
pub(crate) fn distinct_archives(paths: &[PathBuf]) -> Vec<PathBuf> {
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

pub(crate) fn shown_path(path: &Path) -> String {
    visible(&path.display().to_string()).into_owned()
}

/// Every given archive failed: not one session loaded, and something went wrong.
pub(crate) fn nothing_loaded(report: &LoadReport) -> bool {
    report.sessions.is_empty() && !report.failures.is_empty()
}

/// Says on stderr what failed, by path; `report` still prints its report. Exits non-zero.
pub(crate) fn explain_nothing_loaded(report: &LoadReport, json: bool, is_report: bool) -> ExitCode {
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
pub(crate) fn warn_about_load(report: &LoadReport) {
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

pub(crate) fn failure_line(failure: &LoadFailure) -> String {
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
pub(crate) fn failure_text(code: &str, input: &str, path: &str, message: &str) -> String {
    format!("{code}: {}: {}", location(input, path), visible(message))
}

pub(crate) fn failure_location(failure: &LoadFailure) -> String {
    location(&failure.input, &failure.path)
}

/// The input, and the path inside it when the failure is not the input itself.
pub(crate) fn location(input: &str, path: &str) -> String {
    match path {
        "" => visible(input).into_owned(),
        path => format!("{}: {}", visible(input), visible(path)),
    }
}

/// `1 failure`, `2 failures`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
