//! `search`: typed requests over every page asked for, hits printed with their matches marked.

use crate::cli::commands::to_json;
use crate::cli::text::visible;
use crate::{BackendArg, Cli, Command, io_error};
use clap::CommandFactory;
use dsh_session_search::api::Archive;
use dsh_session_search::error::Error;
use dsh_session_search::filters::EventFilter;
use dsh_session_search::fold::SurfaceLabel;
use dsh_session_search::json::Json;
use dsh_session_search::search::backend::{Backend, SearchOptions};
use dsh_session_search::search::engine::EventHit;
use dsh_session_search::search::request::{EventSearchRequest, SessionSearchRequest};
use dsh_session_search::search::tokenizer::TokenizerMode;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// Han, Kana, Hangul and Thai: the scripts `--cjk` indexes as bigrams (a hint, not the index).
pub(crate) fn is_bigram_script(c: char) -> bool {
    matches!(c as u32, 0x0E00..=0x0E7F | 0x1100..=0x11FF | 0x3040..=0x30FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF)
}

/// `--backend` and `--index`: an index path means SQLite, the engine that can keep one.
pub(crate) fn search_backend(backend: Option<BackendArg>, index: Option<&Path>) -> Backend {
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

/// `search`: runs the query over every page asked for, prints it, and exits 1 (as grep does)
/// when nothing matched.
pub(crate) fn run_search_command(cli: &Cli, archive: &mut Archive) -> Result<ExitCode, Error> {
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
    build_index_with_progress(archive)?;
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

/// Builds the search index first, in steps, with a progress line on a terminal: a large
/// archive's first build takes seconds, and the search itself then answers at once.
fn build_index_with_progress(archive: &mut Archive) -> Result<(), Error> {
    const STEP_BYTES: u64 = 4 << 20;
    let show = std::io::stderr().is_terminal();
    loop {
        let progress = archive.index_step(STEP_BYTES)?;
        if show && progress.sessions_total > 0 {
            eprint!(
                "\rindexing: {}/{} events, {}/{} sessions",
                progress.events_done, progress.events_total, progress.sessions_done, progress.sessions_total
            );
            if progress.done {
                eprintln!();
            }
        }
        if progress.done {
            return Ok(());
        }
    }
}

/// One `search` command's request, as typed values.
pub(crate) struct Search<'a> {
    query: &'a str,
    session: Option<&'a str>,
    limit: u64,
    filters: Vec<EventFilter>,
    all_pages: bool,
    json: bool,
}

/// Runs a search and prints it: JSON pages with `--json`, else one line per hit with the
/// matches in bold on a terminal. Returns the number of hits printed.
pub(crate) fn run_search(
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
pub(crate) fn hit_line(header: Option<&Json>, hit: &EventHit, bold: bool) -> String {
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
