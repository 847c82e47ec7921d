//! `#[wasm_bindgen]` exports only: parse arguments, call the library, return JSON text.
//!
//! Results cross the boundary as JSON strings that the JavaScript side parses with
//! `JSON.parse`, so lone UTF-16 surrogates in logs arrive in JavaScript exactly as DSH holds
//! them. Errors are JavaScript `Error`s with a stable `code` property.

use crate::archive::{Input, LoadOptions};
use crate::corpus::Corpus;
use crate::error::Error;
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

impl From<Error> for JsValue {
    fn from(error: Error) -> JsValue {
        let js = js_sys::Error::new(&error.message);
        // Setting a property on a fresh Error object cannot fail.
        let _ = js_sys::Reflect::set(&js, &JsValue::from_str("code"), &JsValue::from_str(error.code.as_str()));
        js.into()
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))
}

/// An in-memory corpus of loaded sessions.
#[wasm_bindgen]
#[derive(Default)]
pub struct SessionSearch {
    corpus: Corpus,
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
        to_json(&self.corpus.load(vec![Input::File { name, bytes }], &options)?)
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
        to_json(&self.corpus.load(vec![Input::Entries { name, entries }], &options)?)
    }

    /// DSH's `listSessions`, as JSON text.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(&self) -> Result<String, JsValue> {
        to_json(&self.corpus.list_sessions())
    }

    /// DSH's `listEvents`, as JSON text.
    #[wasm_bindgen(js_name = listEvents)]
    pub fn list_events(&self, session_id: &str) -> Result<String, JsValue> {
        to_json(&self.corpus.list_events(session_id)?)
    }

    /// DSH's `readSurface`, as JSON text.
    #[wasm_bindgen(js_name = readSurface)]
    pub fn read_surface(&self, session_id: &str) -> Result<String, JsValue> {
        to_json(&self.corpus.read_surface(session_id)?)
    }
}
