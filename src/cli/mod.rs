//! The command line's parts, in the order a run meets them: loading, the commands, search,
//! the JSON-RPC server, and the text helpers they print with.

pub(crate) mod commands;
pub(crate) mod load;
pub(crate) mod search;
pub(crate) mod serve;
pub(crate) mod text;
