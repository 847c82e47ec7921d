//! `rpc`: the JSON-RPC face on stdin and stdout, every line answered.

use crate::cli::load::{archive_options, explain_nothing_loaded, load_archives, nothing_loaded, warn_about_load};
use crate::{Cli, io_error};
use dsh_session_search::api::Archive;
use dsh_session_search::error::Error;
use dsh_session_search::rpc::RpcServer;
use std::io::{BufRead, Write};
use std::process::ExitCode;

/// JSON-RPC on stdio: archives given with `--archive` are loaded first (as every command loads
/// them: a failed strict load, or one where nothing loaded, exits 1 before serving). Each line
/// is answered, whatever its bytes.
pub(crate) fn serve_rpc(cli: &Cli) -> Result<ExitCode, Error> {
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
