//! Warming up: a small log loaded as a browser's load reads its logs, a few dozen times, and
//! searched as an app's first search is, so that a JIT engine (V8 in browsers, Node, Deno and
//! workerd) optimises the hot functions of both before a first real load and search need them.
//!
//! A WebAssembly engine starts every function on quickly compiled baseline code and compiles
//! the ones that run hot again, optimised, on background threads. A first load therefore runs
//! its first part slowly and shares its cores with those compiles. Done while the app is idle
//! (after the archive is created, before the user picks files), the same work leaves a first
//! load running optimised code from its start. The package ships the log it warms up with
//! (`pkg-config/data/warm-up.jsonl.zstd`, one session DSH wrote) and counts the rounds; each
//! round here takes one of the load's three ways to a log: read where the load runs, read as a
//! helper would and adopted, and read ahead while waiting for a helper. Every fourth round then
//! searches the log while its index builds, which reads all its text: over the 100k bench
//! corpus in Chromium that first search took 54 ms after a warm-up against 60 without it (ten
//! alternating pairs, medians), for about 10 ms more of warm-up.

use super::{Archive, IndexProgress, LoadCallOptions};
use crate::archive::HEAD_BYTES;
use crate::error::Error;
use crate::search::request::{SearchConfig, SessionSearchRequest};

/// How one round reads the log.
#[derive(Clone, Copy)]
enum Way {
    /// Its bytes supplied to the load, which reads them.
    Here,
    /// Read for another instance, then adopted.
    Adopted,
    /// Read ahead by the load's own instance, then taken.
    Ahead,
}

/// Round `round` of a warm-up: loads `log`, a log at `path` (a dropped folder's path, so its
/// header must agree with it), into a throwaway archive, every fourth round searches it while
/// its index builds, and drops it. Fails, with the load's own error, unless the log loads
/// whole: a warm-up that loads less does less than it says.
pub fn warm_up_round(round: u32, path: &str, log: &[u8]) -> Result<(), Error> {
    let mut archive = load_once(path, log, [Way::Here, Way::Adopted, Way::Ahead][round as usize % 3])?;
    if round % 4 == 3 {
        search_while_building(&mut archive)?;
    }
    Ok(())
}

fn load_once(path: &str, log: &[u8], way: Way) -> Result<Archive, Error> {
    let head = log[..log.len().min(HEAD_BYTES)].to_vec();
    let mut archive = Archive::default();
    archive.begin_load(LoadCallOptions::default());
    archive.defer_entry(path.to_owned(), log.len() as u64, Some(head))?;
    let Some(needed) = archive.step_load()?.need else {
        return Err(Error::invalid_argument("warm-up: the load did not ask for its log"));
    };
    let taken = match way {
        Way::Here => archive.supply_entry(needed.entry, log.to_vec()).map(|()| true)?,
        Way::Adopted => {
            let read = super::read_log_for_transfer(&archive.entry_ticket(needed.entry)?, log)?;
            archive.supply_read_entry(needed.entry, read.into_bytes())?
        }
        Way::Ahead => archive.read_entry_ahead(needed.entry, log)? && archive.supply_read_ahead(needed.entry)?,
    };
    if !taken {
        return Err(Error::invalid_argument("warm-up: the load refused its log as read"));
    }
    let report = archive.commit_load()?;
    match report.failures.into_iter().next() {
        Some(failure) => Err(Error::new(failure.code, format!("warm-up: {}", failure.message))),
        None => Ok(archive),
    }
}

/// What the search rounds look for: words the warm-up log does not hold, so that the search
/// reads all of its text (a search reads every event the build has not reached in any case).
const NOWHERE: &str = "xyzzy plugh";

/// An app's first search: asked once the index build has begun, it reads every event's text
/// that the build has not reached. Returns how far the build had come.
fn search_while_building(archive: &mut Archive) -> Result<IndexProgress, Error> {
    let progress = archive.index_step(1)?;
    archive.search_sessions(&nowhere()?)?;
    Ok(progress)
}

fn nowhere() -> Result<SessionSearchRequest, Error> {
    SessionSearchRequest::new(NOWHERE, Vec::new(), 1, &SearchConfig::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The package's log, where its `warmUp` puts it.
    const LOG: &[u8] = include_bytes!("../../pkg-config/data/warm-up.jsonl.zstd");
    const LOG_PATH: &str = "warm-up/--srv-build-web-ui--/9c1df3f9-1bdf-47ac-a5ff-26699fb617d7/session.jsonl.zstd";

    #[test]
    fn every_way_loads_the_log_whole() {
        for round in 0..4 {
            warm_up_round(round, LOG_PATH, LOG).expect("a round loads the package's log");
        }
    }

    #[test]
    fn the_search_reads_text_the_build_has_not_reached() {
        let mut archive = load_once(LOG_PATH, LOG, Way::Here).expect("loads");
        let progress = search_while_building(&mut archive).expect("searches");
        assert!(
            progress.events_done < progress.events_total / 10,
            "{} of {} events indexed before the search",
            progress.events_done,
            progress.events_total
        );
        let page = archive
            .search_sessions(&nowhere().expect("a request"))
            .expect("searches");
        assert!(page.items.is_empty(), "the log holds {NOWHERE:?}");
    }

    #[test]
    fn a_damaged_log_fails_every_way() {
        // A torn tail would load (as DSH reads one); a changed byte inside a frame does not.
        let mut damaged = LOG.to_vec();
        damaged[LOG.len() / 2] ^= 0x55;
        for way in [Way::Here, Way::Adopted, Way::Ahead] {
            assert!(load_once(LOG_PATH, &damaged, way).is_err());
        }
    }

    #[test]
    fn a_log_elsewhere_than_its_header_says_fails() {
        let moved = LOG_PATH.replace("--srv-build-web-ui--", "--elsewhere--");
        assert!(warm_up_round(0, &moved, LOG).is_err());
        assert!(warm_up_round(0, "x/y", &LOG[..2]).is_err());
    }

    #[test]
    fn the_log_is_one_session_of_many_events() {
        let mut archive = Archive::default();
        let report = archive
            .load_entries(vec![(LOG_PATH.to_owned(), LOG.to_vec())], LoadCallOptions::default())
            .expect("loads");
        assert_eq!(report.sessions.len(), 1);
        let events = report.sessions[0].events;
        assert!(events > 150, "{events} events: too few to warm per-event work");
    }
}
