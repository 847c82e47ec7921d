//! Settings of an archive and of one load, read once from the JSON the faces receive: the
//! tokenizer and backend, every load limit, `strict`, and `prepare`'s options, each checked
//! into its range with a typed error.

use super::coerce::{optional_string, options_object};
use crate::archive::{LIMITS, LoadOptions};
use crate::error::{Error, ErrorCode};
use crate::json::{JsString, Json, JsonObject};
use crate::reference::{
    AppendOrder, BudgetOptions, CancellationToken, PrepareOptions, ReferenceConfig, RouteCapacity, SpillStore,
};
use crate::search::backend::{Backend, SearchOptions};
use crate::search::tokenizer::TokenizerMode;

/// How an archive indexes and what each load may cost.
#[derive(Clone, Debug, Default)]
pub struct ArchiveOptions {
    /// The search engine (backend, tokenizer).
    pub search: SearchOptions,
    /// Bounds applied to every load (a load's own options may override them).
    pub load: LoadOptions,
}

/// The search keys: `backend` (`tantivy`, `scan`, `sqlite`), `tokenizer` (`unicode61`, `cjk`)
/// and `indexPath` (a reusable SQLite file).
const SEARCH_KEYS: [&str; 3] = ["backend", "tokenizer", "indexPath"];

impl ArchiveOptions {
    /// `{tokenizer?, backend?, indexPath?, limits?: {maxDecompressedBytes?, …}}`; every key is
    /// known and every value of its type, else `SESSION_INVALID_ARGUMENT`.
    pub fn from_json(value: Option<&Json>) -> Result<ArchiveOptions, Error> {
        let mut allowed: Vec<&str> = SEARCH_KEYS.to_vec();
        allowed.push("limits");
        let Some(object) = options_object(value, 0, &allowed)? else {
            return Ok(ArchiveOptions::default());
        };
        let mut options = ArchiveOptions {
            search: search_options(object)?,
            load: LoadOptions::default(),
        };
        let limit_keys: Vec<&str> = LIMITS.iter().map(|limit| limit.name).collect();
        if let Some(limits) = options_object(object.get("limits"), 0, &limit_keys)? {
            apply_limits(limits, &mut options.load)?;
        }
        Ok(options)
    }
}

/// Sets every limit `object` names; each must be a non-negative integer, and every bound then
/// positive (`SESSION_LOAD_INVALID_OPTION`).
fn apply_limits(object: &JsonObject, load: &mut LoadOptions) -> Result<(), Error> {
    for limit in LIMITS {
        if let Some(value) = object.get(limit.name) {
            let n = value.as_index().ok_or_else(|| {
                Error::invalid_argument(format!("limit {} must be a non-negative integer", limit.name))
            })?;
            (limit.set)(load, n);
        }
    }
    load.validate()
}

/// Reads the search keys of an options object (`SESSION_QUERY_INVALID_CONFIG` for a bad value,
/// as the engine's own configuration errors are).
pub fn search_options(object: &JsonObject) -> Result<SearchOptions, Error> {
    let invalid = |m: String| Error::new(ErrorCode::QueryInvalidConfig, m);
    let path = match object.get("indexPath") {
        None => None,
        Some(Json::String(p)) => Some(p.to_lossy().into_owned()),
        Some(_) => return Err(invalid("indexPath must be a string".into())),
    };
    let backend = match object.get("backend").map(|b| b.as_str()) {
        None | Some(Some("tantivy")) => Backend::Tantivy,
        Some(Some("sqlite")) => Backend::Sqlite { path },
        Some(Some("scan")) => Backend::Scan,
        Some(other) => return Err(invalid(format!("unknown search backend {other:?}"))),
    };
    let tokenizer = match object.get("tokenizer") {
        None => TokenizerMode::default(),
        Some(value) => value
            .as_str()
            .and_then(TokenizerMode::parse)
            .ok_or_else(|| invalid(format!("unknown tokenizer {}", value.to_js_string())))?,
    };
    Ok(SearchOptions {
        backend,
        tokenizer,
        ..SearchOptions::default()
    })
}

/// One load's options. The JSON-RPC face also takes the archive's settings here (its archive
/// is created before any option is known): limits as flat keys and the search keys.
#[derive(Clone, Debug, Default)]
pub struct LoadCallOptions {
    /// Bounds and `strict` for this load.
    pub load: LoadOptions,
    /// A new search configuration, when the options named one (then the index is rebuilt).
    pub search: Option<SearchOptions>,
}

impl LoadCallOptions {
    /// `{strict?}` (the package's load), or with `legacy_keys` the JSON-RPC `load` options
    /// `{strict?, maxDecompressedBytes?, …, backend?, tokenizer?, indexPath?}`. `base` holds the
    /// archive's limits, which flat keys override.
    pub fn from_json(value: Option<&Json>, base: &LoadOptions, legacy_keys: bool) -> Result<LoadCallOptions, Error> {
        let mut allowed = vec!["strict"];
        if legacy_keys {
            allowed.extend(LIMITS.iter().map(|limit| limit.name));
            allowed.extend(SEARCH_KEYS);
        }
        let mut out = LoadCallOptions {
            load: *base,
            search: None,
        };
        let Some(object) = options_object(value, 1, &allowed)? else {
            return Ok(out);
        };
        out.load.strict = match object.get("strict") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(strict)) => *strict,
            Some(_) => return Err(Error::invalid_argument("option strict must be a boolean")),
        };
        apply_limits(object, &mut out.load)?;
        if SEARCH_KEYS.iter().any(|key| object.contains_key(key)) {
            out.search = Some(search_options(object)?);
        }
        Ok(out)
    }
}

/// The option keys `prepare` accepts.
pub const PREPARE_OPTIONS: &[&str] = &[
    "maxReferences",
    "maxReferenceBytes",
    "route",
    "agentOptions",
    "order",
    "cancelled",
    "messageId",
    "contextMessageId",
];

/// `prepare`'s settings, owned, as parsed from its options object.
#[derive(Clone, Debug, Default)]
pub struct PrepareSettings {
    /// Distinct sources allowed (1 to 3; `None`: DSH's default).
    pub max_references: Option<u64>,
    /// The budget sources.
    pub budget: BudgetOptions,
    /// Order of the returned messages.
    pub order: AppendOrder,
    /// The readable message's id (fresh when `None`).
    pub message_id: Option<JsString>,
    /// The context message's id (fresh when `None`).
    pub context_message_id: Option<JsString>,
    /// `cancelled: true`: the call stands for an already-aborted signal.
    pub cancelled: bool,
}

impl PrepareSettings {
    /// `prepare`'s options. `maxReferences` and `maxReferenceBytes` are checked as DSH checks
    /// its configuration (`null` = default); `route: {contextWindow}` and `agentOptions:
    /// {maxReferenceBytes}` must hold positive safe integers (`SESSION_REFERENCE_INVALID_CONFIG`);
    /// `order` is `"context-first"` (default) or `"readable-first"`; `messageId` and
    /// `contextMessageId` are strings; `cancelled` a boolean.
    pub fn from_json(value: Option<&Json>) -> Result<PrepareSettings, Error> {
        let mut out = PrepareSettings::default();
        let Some(options) = options_object(value, 3, PREPARE_OPTIONS)? else {
            return Ok(out);
        };
        let given = |key: &str| options.get(key).filter(|v| !matches!(v, Json::Null));
        let mut config = JsonObject::new();
        for key in ["maxReferences", "maxReferenceBytes"] {
            if let Some(value) = given(key) {
                config.insert(key, value.clone());
            }
        }
        let config = ReferenceConfig::from_json(Some(&Json::Object(config)))?;
        out.max_references = Some(config.max_references);
        out.budget.call = given("maxReferenceBytes").map(|_| config.max_reference_bytes);
        if let Some(route) = given("route") {
            let route = route
                .as_object()
                .ok_or_else(|| Error::invalid_argument("option route must be an object {contextWindow}"))?;
            out.budget.route = positive(route.get("contextWindow"), "route.contextWindow")?
                .map(|context_window| RouteCapacity { context_window });
        }
        if let Some(agent) = given("agentOptions") {
            let agent = agent
                .as_object()
                .ok_or_else(|| Error::invalid_argument("option agentOptions must be an object {maxReferenceBytes?}"))?;
            out.budget.agent = positive(agent.get("maxReferenceBytes"), "agent maxReferenceBytes")?;
        }
        if let Some(order) = given("order") {
            out.order = order.as_str().and_then(AppendOrder::parse).ok_or_else(|| {
                Error::invalid_argument("option order must be \"context-first\" or \"readable-first\"")
            })?;
        }
        out.message_id = optional_string(Some(options), "messageId")?.cloned();
        out.context_message_id = optional_string(Some(options), "contextMessageId")?.cloned();
        out.cancelled = cancelled(Some(options))?;
        Ok(out)
    }

    /// The library's options for one call, with the caller's spill store and cancellation.
    pub fn options<'a>(
        &'a self,
        spill_store: Option<&'a dyn SpillStore>,
        cancel: Option<&'a CancellationToken>,
    ) -> PrepareOptions<'a> {
        PrepareOptions {
            max_references: self.max_references,
            budget: self.budget,
            order: self.order,
            spill_store,
            cancel,
            message_id: self.message_id.as_ref(),
            context_message_id: self.context_message_id.as_ref(),
        }
    }
}

/// An optional positive safe integer of a reference setting.
fn positive(value: Option<&Json>, name: &str) -> Result<Option<u64>, Error> {
    match value {
        None => Ok(None),
        Some(value) => match value.as_safe_integer() {
            Some(n) if n > 0 => Ok(Some(n as u64)),
            _ => Err(Error::new(
                ErrorCode::ReferenceInvalidConfig,
                format!("session-reference: {name} must be a positive safe integer"),
            )),
        },
    }
}

/// `cancelled: true` stands for an already-aborted signal (JSON has no `AbortSignal`).
pub fn cancelled(options: Option<&JsonObject>) -> Result<bool, Error> {
    match options.and_then(|o| o.get("cancelled")) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(cancelled)) => Ok(*cancelled),
        Some(_) => Err(Error::invalid_argument("option cancelled must be a boolean")),
    }
}
