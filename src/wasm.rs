//! `#[wasm_bindgen]` exports only: parse arguments, call the library, return JSON text.
//!
//! Results cross the boundary as JSON strings that the JavaScript side parses with
//! `JSON.parse`, so lone UTF-16 surrogates in logs arrive in JavaScript exactly as DSH holds
//! them. Errors are JavaScript `Error`s with a stable `code` property.

use crate::archive::{Input, LoadOptions};
use crate::error::Error;
use crate::json::{Json, ParseLimits};
use crate::rpc::{Failure, RpcServer};
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

impl From<Error> for JsValue {
    fn from(error: Error) -> JsValue {
        js_error(error.code.as_str(), &error.message)
    }
}

fn js_error(code: &str, message: &str) -> JsValue {
    let js = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail.
    let _ = js_sys::Reflect::set(&js, &JsValue::from_str("code"), &JsValue::from_str(code));
    js.into()
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))
}

/// Loaded sessions and everything DSH's query, search and reference services answer over them.
#[wasm_bindgen]
#[derive(Default)]
pub struct SessionSearch {
    server: RpcServer,
}

#[wasm_bindgen]
impl SessionSearch {
    /// An empty corpus.
    #[wasm_bindgen(constructor)]
    pub fn new() -> SessionSearch {
        SessionSearch::default()
    }

    /// Loads one file (a ZIP, `.jsonl` or `.jsonl.zstd`). Returns the load report as JSON text.
    #[wasm_bindgen(js_name = loadFile)]
    pub fn load_file(&mut self, name: String, bytes: Vec<u8>, strict: bool) -> Result<String, JsValue> {
        let options = LoadOptions {
            strict,
            ..LoadOptions::default()
        };
        to_json(
            &self
                .server
                .corpus_mut()
                .load(vec![Input::File { name, bytes }], &options)?,
        )
    }

    /// Loads a dropped folder given as parallel lists of relative paths and contents.
    /// Returns the load report as JSON text.
    #[wasm_bindgen(js_name = loadEntries)]
    pub fn load_entries(
        &mut self,
        name: String,
        paths: Vec<String>,
        contents: Vec<Uint8Array>,
        strict: bool,
    ) -> Result<String, JsValue> {
        if paths.len() != contents.len() {
            return Err(js_sys::Error::new("paths and contents must have the same length").into());
        }
        let entries = paths.into_iter().zip(contents.iter().map(Uint8Array::to_vec)).collect();
        let options = LoadOptions {
            strict,
            ..LoadOptions::default()
        };
        to_json(
            &self
                .server
                .corpus_mut()
                .load(vec![Input::Entries { name, entries }], &options)?,
        )
    }

    /// Calls any method of the JSON-RPC face (`listSessions`, `searchSessions`, `prepare`, …)
    /// with its by-position params as JSON text; returns the result as JSON text.
    pub fn call(&mut self, method: &str, params: &str) -> Result<String, JsValue> {
        let params = Json::parse(params, ParseLimits::default())
            .map_err(|e| js_error("SESSION_RPC_INVALID_PARAMS", &format!("params are not JSON: {e}")))?;
        let list = params
            .as_array()
            .ok_or_else(|| js_error("SESSION_RPC_INVALID_PARAMS", "params must be an array"))?;
        self.server.call_method(method, list).map_err(|failure| match failure {
            Failure::Library(error) => error.into(),
            Failure::Protocol(_, message) => js_error("SESSION_RPC_INVALID_PARAMS", &message),
        })
    }

    /// The built search index as bytes (e.g. to keep in IndexedDB or OPFS).
    #[wasm_bindgen(js_name = exportIndex)]
    pub fn export_index(&mut self) -> Result<Vec<u8>, JsValue> {
        Ok(self.server.export_index()?)
    }

    /// Reopens an index exported over the same archives; throws `SESSION_QUERY_INDEX_FAILED`
    /// if it does not match what is loaded.
    #[wasm_bindgen(js_name = importIndex)]
    pub fn import_index(&mut self, bytes: Vec<u8>) -> Result<(), JsValue> {
        Ok(self.server.import_index(&bytes)?)
    }

    /// DSH's `prepare` with `[agent, content, references, options?]` as JSON text and an
    /// optional `AbortSignal`: an aborted signal fails the call with
    /// `SESSION_REFERENCE_CANCELLED`, and nothing is published.
    pub fn prepare(&mut self, params: &str, signal: JsValue) -> Result<String, JsValue> {
        let aborted = js_sys::Reflect::get(&signal, &JsValue::from_str("aborted")).is_ok_and(|a| a.is_truthy());
        if !aborted {
            return self.call("prepare", params);
        }
        let mut list = match Json::parse(params, ParseLimits::default()) {
            Ok(Json::Array(list)) => list,
            _ => return Err(js_error("SESSION_RPC_INVALID_PARAMS", "params must be a JSON array")),
        };
        while list.len() < 4 {
            list.push(Json::Object(crate::json::JsonObject::new()));
        }
        if let Some(options) = list[3].as_object_mut() {
            options.insert("cancelled", Json::Bool(true));
        }
        self.call("prepare", &Json::Array(list).to_js_string())
    }

    /// DSH's `listSessions`, as JSON text.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(&mut self) -> Result<String, JsValue> {
        self.call("listSessions", "[]")
    }

    /// DSH's `listEvents`, as JSON text.
    #[wasm_bindgen(js_name = listEvents)]
    pub fn list_events(&mut self, session_id: &str) -> Result<String, JsValue> {
        self.call("listEvents", &format!("[{}]", Json::str(session_id)))
    }

    /// DSH's `readSurface`, as JSON text.
    #[wasm_bindgen(js_name = readSurface)]
    pub fn read_surface(&mut self, session_id: &str) -> Result<String, JsValue> {
        self.call("readSurface", &format!("[{}]", Json::str(session_id)))
    }

    /// DSH's `searchSessions` with a request object as JSON text.
    #[wasm_bindgen(js_name = searchSessions)]
    pub fn search_sessions(&mut self, request: &str) -> Result<String, JsValue> {
        self.call("searchSessions", &format!("[{request}]"))
    }

    /// DSH's `searchEvents` with a request object as JSON text.
    #[wasm_bindgen(js_name = searchEvents)]
    pub fn search_events(&mut self, request: &str) -> Result<String, JsValue> {
        self.call("searchEvents", &format!("[{request}]"))
    }
}
