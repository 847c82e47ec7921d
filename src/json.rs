//! JSON values as JavaScript sees them: ordered objects, `f64` numbers, and strings that may
//! hold lone UTF-16 surrogates, parsed like `JSON.parse` and written like `JSON.stringify`.
//!
//! DSH writes logs with `JSON.stringify`, so a stream chunk cut inside an emoji is stored as a
//! lone `\uD83D` escape. Rust's `String` cannot hold that, so [`JsString`] keeps such strings as
//! WTF-8 (a lone surrogate becomes its generalized 3-byte UTF-8 form). Text for search maps each
//! lone surrogate to U+FFFD (what DSH's SQLite binding stores); re-emitted JSON writes the
//! original `\udXXX` escape back, as DSH's own output does.

use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::OnceLock;

mod tape;
pub(crate) use tape::{JsonRef, Tape, TapeLine, TapeOptions};

/// A parsed JSON value.
#[derive(Clone, Debug)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Every JSON number, as JavaScript holds it.
    Number(f64),
    /// A string (possibly with lone surrogates).
    String(JsString),
    /// An array.
    Array(Vec<Json>),
    /// An object with JavaScript's property order.
    Object(JsonObject),
}

/// A JavaScript string: UTF-8 when well formed, WTF-8 when it holds lone surrogates.
///
/// Strings compare, hash and order by their WTF-8 bytes, whichever form holds them.
#[derive(Clone)]
pub enum JsString {
    /// A well-formed string.
    Utf8(Box<str>),
    /// A string with at least one lone surrogate, in WTF-8.
    Wtf8(Box<[u8]>),
    /// A well-formed string of a parse's [`Vocabulary`]: a log repeats its keys and type names
    /// on every line, and sharing them spares an allocation and a free for each.
    Known(&'static str),
    /// A string a parse checked but did not keep ([`Elide`]), by its length in WTF-8 bytes:
    /// its bytes read as empty, and printing it is a bug (the log reader parses again, in
    /// full, every line whose value it may print).
    Elided(usize),
}

impl PartialEq for JsString {
    fn eq(&self, other: &Self) -> bool {
        self.as_wtf8() == other.as_wtf8()
    }
}

impl Eq for JsString {}

impl Hash for JsString {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_wtf8().hash(state);
    }
}

impl PartialOrd for JsString {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JsString {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_wtf8().cmp(other.as_wtf8())
    }
}

/// A fixed set of strings that a parse hands out as [`JsString::Known`] instead of allocating
/// a copy: an open-addressed table, built at compile time, at most half full. It also tells a
/// word's place among its words ([`Vocabulary::place`]).
pub struct Vocabulary {
    slots: [Option<&'static str>; VOCABULARY_SLOTS],
    /// Each slot's word's place, in the order the words were first given.
    places: [u8; VOCABULARY_SLOTS],
    count: usize,
    longest: usize,
}

const VOCABULARY_SLOTS: usize = 256;

impl Vocabulary {
    /// No strings: every parsed string is allocated.
    pub const EMPTY: Vocabulary = Vocabulary {
        slots: [None; VOCABULARY_SLOTS],
        places: [0; VOCABULARY_SLOTS],
        count: 0,
        longest: 0,
    };

    /// The strings of `lists` (each non-empty; repeats are kept once).
    pub const fn new(lists: &[&[&'static str]]) -> Vocabulary {
        let mut vocabulary = Vocabulary::EMPTY;
        let mut list = 0;
        while list < lists.len() {
            let mut at = 0;
            while at < lists[list].len() {
                vocabulary.insert(lists[list][at]);
                at += 1;
            }
            list += 1;
        }
        vocabulary
    }

    /// Adds `word`, at the next place, unless it is there.
    const fn insert(&mut self, word: &'static str) {
        assert!(!word.is_empty(), "a vocabulary holds no empty string");
        let mut at = vocabulary_slot(word.as_bytes());
        while let Some(taken) = self.slots[at] {
            if const_bytes_eq(taken.as_bytes(), word.as_bytes()) {
                return;
            }
            at = (at + 1) % VOCABULARY_SLOTS;
        }
        assert!(
            (self.count + 1) * 2 <= VOCABULARY_SLOTS,
            "a vocabulary fills at most half of its slots"
        );
        self.slots[at] = Some(word);
        self.places[at] = self.count as u8;
        self.count += 1;
        if word.len() > self.longest {
            self.longest = word.len();
        }
    }

    /// The slot holding `text`, if the vocabulary holds it. Inlined: a parse asks it of
    /// nearly every key and short string (three million times over the 100k bench corpus), and
    /// in wasm the call cost more than a third of the lookup.
    #[inline(always)]
    fn slot_of(&self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        if bytes.is_empty() || bytes.len() > self.longest {
            return None;
        }
        let mut at = vocabulary_slot(bytes);
        while let Some(word) = self.slots[at] {
            if same_bytes(word.as_bytes(), bytes) {
                return Some(at);
            }
            at = (at + 1) % VOCABULARY_SLOTS;
        }
        None
    }

    /// The vocabulary's copy of `text`, if it holds it.
    fn get(&self, text: &str) -> Option<&'static str> {
        self.slot_of(text).and_then(|at| self.slots[at])
    }

    /// Where `text` came among the words the vocabulary was made of (repeats counted once),
    /// if it holds it: for a vocabulary of one list without repeats, its index in the list.
    pub fn place(&self, text: &str) -> Option<usize> {
        self.slot_of(text).map(|at| usize::from(self.places[at]))
    }
}

/// Which strings a parse checks but does not keep ([`JsString::Elided`]): the string values
/// of members named one of `keys`. A reader that holds the text it parsed, and needs of such a
/// string only its length, is spared decoding, copying, allocating and freeing it.
#[derive(Clone, Copy, Debug)]
pub struct Elide {
    /// The member names whose string values are elided.
    pub keys: &'static [&'static str],
}

impl Elide {
    /// Nothing elided: every string is kept.
    pub const NONE: Elide = Elide { keys: &[] };
}

/// A string's first slot: its length and three of its bytes, mixed (cheap, and spread enough
/// for a few hundred short words).
const fn vocabulary_slot(bytes: &[u8]) -> usize {
    let len = bytes.len();
    let mixed = len.wrapping_mul(0x9E37)
        ^ (bytes[0] as usize).wrapping_mul(0x2F1)
        ^ (bytes[len / 2] as usize).wrapping_mul(0x1C3)
        ^ (bytes[len - 1] as usize).wrapping_mul(0x61);
    mixed % VOCABULARY_SLOTS
}

/// Whether two byte strings are equal. Keys and known words are short and compared very often
/// while parsing; slice equality calls `memcmp`, which in a wasm build compares one byte at a
/// time behind a call (7% of a load's instructions went there), where this compares four bytes
/// at a time, inline.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    memchr::arch::all::is_equal(a, b)
}

const fn const_bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut at = 0;
    while at < a.len() {
        if a[at] != b[at] {
            return false;
        }
        at += 1;
    }
    true
}

/// An object: keys in JavaScript's order (array-index keys ascending, then insertion order).
///
/// Objects with more than [`INDEXED_OBJECT_KEYS`] keys also keep a hash index from key to
/// position, so parsing, lookups, assignment and equality stay linear in the key count (an
/// object of 80 000 keys would otherwise cost 3·10⁹ key comparisons).
#[derive(Clone, Default)]
pub struct JsonObject {
    entries: Vec<(JsString, Json)>,
    /// Boxed: most objects are small and never have one, and a value stays four words (the
    /// lint's extra allocation is paid only by the few objects large enough to be indexed).
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<JsString, usize, KeyedHasher>>>,
}

/// Objects up to this many keys are searched linearly; larger ones are hash-indexed.
pub const INDEXED_OBJECT_KEYS: usize = 16;

/// The deepest nesting any parse accepts, whatever [`ParseLimits::max_depth`] asks for.
///
/// Parsing keeps open containers on the heap, but printing, comparing, cloning and dropping a
/// value recurse once per level (and so do the readers of event payloads), so the configurable
/// depth is clamped to what the smallest stack we run on holds: wasm's 1 MiB default. A test
/// walks a value this deep on a 1 MiB thread in an unoptimised build (larger frames than any
/// release build).
pub const MAX_JSON_DEPTH: usize = 1_000;

/// Default bound on the keys of one object ([`Json::parse_bounded`]).
pub const DEFAULT_MAX_OBJECT_KEYS: usize = 1_000_000;

/// Limits applied while parsing one JSON text.
#[derive(Clone, Copy, Debug)]
pub struct ParseLimits {
    /// Maximum nesting depth of arrays and objects (clamped to [`MAX_JSON_DEPTH`]).
    pub max_depth: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits { max_depth: 512 }
    }
}

/// Why a text is not a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Not valid JSON at this byte offset.
    Syntax(usize),
    /// Nesting deeper than [`ParseLimits::max_depth`] (or [`MAX_JSON_DEPTH`]).
    TooDeep,
    /// An object with more keys than the bound given to [`Json::parse_bounded`].
    TooManyKeys,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax(at) => write!(f, "invalid JSON at byte {at}"),
            ParseError::TooDeep => write!(f, "JSON nested too deeply"),
            ParseError::TooManyKeys => write!(f, "a JSON object has too many keys"),
        }
    }
}

impl std::error::Error for ParseError {}

impl JsString {
    /// The string as `&str` when it has no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsString::Utf8(s) => Some(s),
            JsString::Known(s) => Some(s),
            JsString::Wtf8(_) | JsString::Elided(_) => None,
        }
    }

    /// The raw WTF-8 bytes (plain UTF-8 for well-formed strings; none for an elided one).
    pub fn as_wtf8(&self) -> &[u8] {
        match self {
            JsString::Utf8(s) => s.as_bytes(),
            JsString::Known(s) => s.as_bytes(),
            JsString::Wtf8(b) => b,
            JsString::Elided(_) => &[],
        }
    }

    /// The length in WTF-8 bytes (`Buffer.byteLength` of the string, a lone surrogate taking
    /// the 3 bytes of the U+FFFD it becomes), elided or not.
    pub fn wtf8_len(&self) -> usize {
        match self {
            JsString::Elided(len) => *len,
            other => other.as_wtf8().len(),
        }
    }

    /// The text with every lone surrogate replaced by U+FFFD.
    pub fn to_lossy(&self) -> Cow<'_, str> {
        match self {
            JsString::Utf8(s) => Cow::Borrowed(s),
            JsString::Known(s) => Cow::Borrowed(s),
            JsString::Wtf8(b) => Cow::Owned(wtf8_to_lossy(b)),
            JsString::Elided(_) => Cow::Borrowed(""),
        }
    }

    /// [`JsString::to_lossy`] as an owned string: a well-formed one is handed over, not copied.
    pub fn into_lossy(self) -> String {
        match self {
            JsString::Utf8(s) => s.into(),
            JsString::Known(s) => s.to_owned(),
            JsString::Wtf8(b) => wtf8_to_lossy(&b),
            JsString::Elided(_) => String::new(),
        }
    }

    /// Number of code points, counting one per lone surrogate.
    pub fn code_points(&self) -> usize {
        self.as_wtf8().iter().filter(|b| (**b & 0xC0) != 0x80).count()
    }

    /// The UTF-16 code units JavaScript sees (lone surrogates included).
    pub fn utf16_units(&self) -> Vec<u16> {
        let bytes = self.as_wtf8();
        let mut units = Vec::with_capacity(bytes.len());
        let mut at = 0;
        while at < bytes.len() {
            let lead = bytes[at];
            let (len, init) = match lead {
                0x00..=0x7F => (1, u32::from(lead)),
                0xC0..=0xDF => (2, u32::from(lead & 0x1F)),
                0xE0..=0xEF => (3, u32::from(lead & 0x0F)),
                _ => (4, u32::from(lead & 0x07)),
            };
            let code = bytes[at + 1..(at + len).min(bytes.len())]
                .iter()
                .fold(init, |acc, b| (acc << 6) | u32::from(b & 0x3F));
            at += len;
            if code >= 0x10000 {
                let c = code - 0x10000;
                units.push(0xD800 | (c >> 10) as u16);
                units.push(0xDC00 | (c & 0x3FF) as u16);
            } else {
                units.push(code as u16);
            }
        }
        units
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.as_wtf8().is_empty()
    }

    /// Builds a string from WTF-8 bytes produced by this module.
    pub(crate) fn from_wtf8(bytes: Vec<u8>, has_surrogate: bool) -> JsString {
        if has_surrogate {
            JsString::Wtf8(bytes.into_boxed_slice())
        } else {
            match String::from_utf8(bytes) {
                Ok(s) => JsString::Utf8(s.into_boxed_str()),
                Err(e) => JsString::Wtf8(e.into_bytes().into_boxed_slice()),
            }
        }
    }
}

fn wtf8_to_lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                // Every invalid sequence in our WTF-8 is one 3-byte surrogate.
                out.push('\u{FFFD}');
                rest = &after[after.len().min(3)..];
            }
        }
    }
    out
}

impl From<&str> for JsString {
    fn from(s: &str) -> Self {
        JsString::Utf8(s.into())
    }
}

impl From<String> for JsString {
    fn from(s: String) -> Self {
        JsString::Utf8(s.into_boxed_str())
    }
}

impl PartialEq<str> for JsString {
    fn eq(&self, other: &str) -> bool {
        self.as_wtf8() == other.as_bytes()
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_lossy(), f)
    }
}

impl fmt::Display for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_lossy())
    }
}

/// A string is looked up by its WTF-8 bytes (its equality and hash are theirs), so that an
/// object's key index answers a `&str` lookup without an allocation.
impl Borrow<[u8]> for JsString {
    fn borrow(&self) -> &[u8] {
        self.as_wtf8()
    }
}

/// SipHash keyed once per process from the system's entropy, so that keys chosen to collide
/// cannot turn the index back into a linear scan. (std's `RandomState` has fixed keys on
/// `wasm32-unknown-unknown`.)
#[derive(Clone, Copy, Default)]
struct KeyedHasher;

impl BuildHasher for KeyedHasher {
    type Hasher = std::collections::hash_map::DefaultHasher;

    fn build_hasher(&self) -> Self::Hasher {
        static SECRET: OnceLock<[u8; 16]> = OnceLock::new();
        let secret = SECRET.get_or_init(|| {
            let mut bytes = [0u8; 16];
            // Without entropy the index still works; it is only predictable.
            let _ = getrandom::fill(&mut bytes);
            bytes
        });
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        hasher.write(secret);
        hasher
    }
}

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        JsonObject::default()
    }

    /// The position of `key`: through the index when there is one, else a short scan.
    fn position(&self, key: &[u8]) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| same_bytes(k.as_wtf8(), key)),
        }
    }

    /// An object of `entries` whose keys are known to be distinct, indexed if it is large.
    fn from_distinct_keys(entries: Vec<(JsString, Json)>) -> JsonObject {
        let mut object = JsonObject { entries, index: None };
        // Tested here, not called: a parse makes most objects, nearly all small.
        if object.entries.len() > INDEXED_OBJECT_KEYS {
            object.reindex();
        }
        object
    }

    /// Rebuilds the index after positions moved (or drops it for a small object).
    fn reindex(&mut self) {
        self.index = (self.entries.len() > INDEXED_OBJECT_KEYS).then(|| {
            let mut index = HashMap::with_capacity_and_hasher(self.entries.len(), KeyedHasher);
            for (at, (key, _)) in self.entries.iter().enumerate() {
                index.insert(key.clone(), at);
            }
            Box::new(index)
        });
    }

    /// Appends a key known to be absent, keeping the index in step.
    fn push_new(&mut self, key: JsString, value: Json) {
        match &mut self.index {
            Some(index) => {
                index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
            None => {
                self.entries.push((key, value));
                if self.entries.len() > INDEXED_OBJECT_KEYS {
                    self.reindex();
                }
            }
        }
    }

    /// Assigns without restoring JavaScript's key order; returns whether the key is new.
    fn assign(&mut self, key: JsString, value: Json) -> bool {
        match self.position(key.as_wtf8()) {
            Some(at) => {
                self.entries[at].1 = value;
                false
            }
            None => {
                self.push_new(key, value);
                true
            }
        }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.get_js(key.as_bytes())
    }

    /// The value of a key given as WTF-8 bytes.
    pub(crate) fn get_js(&self, key: &[u8]) -> Option<&Json> {
        self.position(key).map(|at| &self.entries[at].1)
    }

    /// A mutable reference to the value of `key`, if present.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        let at = self.position(key.as_bytes())?;
        Some(&mut self.entries[at].1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key.as_bytes()).is_some()
    }

    /// Sets `key` the way a JavaScript assignment does: an existing key keeps its place.
    pub fn insert(&mut self, key: impl Into<JsString>, value: Json) {
        let key = key.into();
        let index_key = is_array_index(key.as_wtf8());
        if self.assign(key, value) && index_key {
            self.order_like_js();
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        let at = self.position(key.as_bytes())?;
        let (_, value) = self.entries.remove(at);
        if self.index.is_some() {
            self.reindex();
        }
        Some(value)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The members as they are held, in order.
    pub(crate) fn entries(&self) -> &[(JsString, Json)] {
        &self.entries
    }

    /// Keys and values in property order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsString, &Json)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Keys in property order.
    pub fn keys(&self) -> impl Iterator<Item = &JsString> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// Whether the key set is exactly `keys` (in any order).
    pub fn has_exact_keys(&self, keys: &[&str]) -> bool {
        self.entries.len() == keys.len() && keys.iter().all(|k| self.contains_key(k))
    }

    /// JavaScript lists array-index keys first, in ascending numeric order.
    fn order_like_js(&mut self) {
        crate::sorting::sort_by_key(&mut self.entries, |(k, _)| match array_index_value(k.as_wtf8()) {
            Some(n) => (0, n),
            None => (1, 0),
        });
        if self.index.is_some() {
            self.reindex();
        }
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsonObject").field(&self.entries).finish()
    }
}

fn array_index_value(key: &[u8]) -> Option<u64> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    if !key.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(key).ok()?.parse().ok()?;
    (n < u64::from(u32::MAX)).then_some(n)
}

/// Inlined for its first test: nearly every key starts with a letter, and then the call
/// would cost more than the answer.
#[inline]
fn is_array_index(key: &[u8]) -> bool {
    key.first().is_some_and(u8::is_ascii_digit) && array_index_value(key).is_some()
}

impl FromIterator<(JsString, Json)> for JsonObject {
    fn from_iter<I: IntoIterator<Item = (JsString, Json)>>(iter: I) -> Self {
        let mut object = JsonObject::new();
        let mut needs_reorder = false;
        for (k, v) in iter {
            let index_key = is_array_index(k.as_wtf8());
            needs_reorder |= object.assign(k, v) && index_key;
        }
        if needs_reorder {
            object.order_like_js();
        }
        object
    }
}

/// Serialized through serde_json as the exact `JSON.stringify` text (lone surrogates kept).
impl serde::Serialize for JsString {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = String::new();
        write_string(self, &mut text);
        let raw = serde_json::value::RawValue::from_string(text).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// Objects compare as JSON values: same key set, equal values, order ignored.
impl PartialEq for JsonObject {
    fn eq(&self, other: &Self) -> bool {
        // Keys are unique, so equal sizes plus every key found with an equal value suffice.
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .all(|(k, v)| other.get_js(k.as_wtf8()).is_some_and(|v2| v == v2))
    }
}

/// Values compare by JSON meaning: numbers by value, objects without regard to key order.
impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => a == b,
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => a == b,
            (Json::Object(a), Json::Object(b)) => a == b,
            _ => false,
        }
    }
}

/// Largest integer JavaScript represents exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `Number.isSafeInteger`.
pub fn is_safe_integer(n: f64) -> bool {
    n.is_finite() && n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER
}

impl Json {
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&JsonObject> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The mutable object, if this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut JsonObject> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_js_string(&self) -> Option<&JsString> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The well-formed string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        self.as_js_string().and_then(JsString::as_str)
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The value as a safe integer (`Number.isSafeInteger`).
    pub fn as_safe_integer(&self) -> Option<i64> {
        // A safe integer fits i64 exactly.
        self.as_f64().filter(|n| is_safe_integer(*n)).map(|n| n as i64)
    }

    /// The value as a non-negative safe integer that is not `-0`.
    pub fn as_index(&self) -> Option<u64> {
        let n = self.as_f64()?;
        (is_safe_integer(n) && n >= 0.0 && !(n == 0.0 && n.is_sign_negative())).then_some(n as u64)
    }

    /// `obj[key]` for objects, `None` otherwise.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    /// Whether this is a non-empty string.
    pub fn is_non_empty_string(&self) -> bool {
        matches!(self, Json::String(s) if !s.is_empty())
    }

    /// A string value.
    pub fn str(s: &str) -> Json {
        Json::String(JsString::from(s))
    }

    /// A number from an integer (exact for safe integers).
    pub fn int(n: i64) -> Json {
        Json::Number(n as f64)
    }

    /// Parses a JSON text with `JSON.parse`'s grammar (objects bounded by
    /// [`DEFAULT_MAX_OBJECT_KEYS`]).
    pub fn parse(text: &str, limits: ParseLimits) -> Result<Json, ParseError> {
        Json::parse_bounded(text, limits, DEFAULT_MAX_OBJECT_KEYS)
    }

    /// [`Json::parse`] with at most `max_keys` distinct keys in any one object.
    pub fn parse_bounded(text: &str, limits: ParseLimits, max_keys: usize) -> Result<Json, ParseError> {
        Json::parse_noting_printed(text, limits, max_keys, &[], &Vocabulary::EMPTY, Elide::NONE)
            .map(|parsed| parsed.value)
    }

    /// [`Json::parse_bounded`], noting whether `text` is already `JSON.stringify` of the value
    /// and where the values of the top-level members `keys` (at most [`NOTED_KEYS`]) start in
    /// it. Strings of `vocabulary` are shared, not allocated; those `elide` names are checked
    /// but not kept.
    pub fn parse_noting_printed(
        text: &str,
        limits: ParseLimits,
        max_keys: usize,
        keys: &[&str],
        vocabulary: &Vocabulary,
        elide: Elide,
    ) -> Result<Parsed, ParseError> {
        assert!(keys.len() <= NOTED_KEYS, "at most {NOTED_KEYS} keys are noted");
        let mut parser = Parser {
            text,
            bytes: text.as_bytes(),
            at: 0,
            max_depth: limits.max_depth.min(MAX_JSON_DEPTH),
            max_keys,
            printed: true,
            noted_keys: keys,
            noted_at: [None; NOTED_KEYS],
            vocabulary,
            elide,
            elided: false,
        };
        parser.skip_ws();
        let value = parser.value()?;
        parser.skip_ws();
        if parser.at != parser.bytes.len() {
            return Err(ParseError::Syntax(parser.at));
        }
        Ok(Parsed {
            value,
            printed: parser.printed,
            noted_at: parser.noted_at,
            elided: parser.elided,
        })
    }

    /// `JSON.stringify(value)`.
    pub fn to_js_string(&self) -> String {
        let mut out = String::new();
        write_value(self, &mut out);
        out
    }

    /// Whether a string in the value was elided by the parse that read it ([`Elide`]): the value
    /// then cannot be printed.
    pub fn holds_elided(&self) -> bool {
        match self {
            Json::String(JsString::Elided(_)) => true,
            Json::Array(items) => items.iter().any(Json::holds_elided),
            Json::Object(object) => object.iter().any(|(_, value)| value.holds_elided()),
            _ => false,
        }
    }

    /// `JSON.stringify(value)` for an error message about a value the log reader may have read
    /// with strings elided: those print as `"…"` (their text was not kept) where
    /// [`Json::to_js_string`] would panic. Out of line: only refusals print so.
    #[cold]
    #[inline(never)]
    pub fn to_js_string_for_message(&self) -> String {
        fn kept(value: &Json) -> Json {
            match value {
                Json::String(JsString::Elided(_)) => Json::str("…"),
                Json::Array(items) => Json::Array(items.iter().map(kept).collect()),
                Json::Object(object) => Json::Object(object.iter().map(|(k, v)| (k.clone(), kept(v))).collect()),
                other => other.clone(),
            }
        }
        kept(self).to_js_string()
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_js_string())
    }
}

/// Serialized through serde_json as the exact `JSON.stringify` text (lone surrogates kept).
impl serde::Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.to_js_string()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// A value parsed by [`Json::parse_noting_printed`].
pub struct Parsed {
    /// The value.
    pub value: Json,
    /// Whether the text is already `JSON.stringify(value)` (no whitespace, repeated or
    /// reordered keys, or number or escape spelled otherwise), so that a caller holding the
    /// text need not print the value again. `false` may also be said of a few printed texts
    /// (rare escapes): it only costs the caller a print.
    pub printed: bool,
    /// Where the value of each noted top-level key starts in the text (its last occurrence),
    /// in the order the keys were given.
    pub noted_at: [Option<usize>; NOTED_KEYS],
    /// Whether some string was elided ([`Elide`]): the value is then not to be printed.
    pub elided: bool,
}

/// How many top-level keys [`Json::parse_noting_printed`] can note.
pub const NOTED_KEYS: usize = 2;

struct Parser<'a> {
    /// The text parsed, for slicing out runs that start and end at ASCII bytes (so at char
    /// boundaries: no second UTF-8 check).
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    max_depth: usize,
    max_keys: usize,
    /// Whether everything so far is spelled as `JSON.stringify` spells it.
    printed: bool,
    /// The top-level keys whose values' starts are noted in `noted_at`.
    noted_keys: &'a [&'a str],
    noted_at: [Option<usize>; NOTED_KEYS],
    /// Strings shared rather than allocated (only those without escapes are looked up).
    vocabulary: &'a Vocabulary,
    /// Strings checked but not kept, and whether there was one.
    elide: Elide,
    elided: bool,
}

/// A container the parser is inside. An array's items and a small object's members so far
/// wait on the [`Scratch`] stacks from `start` on, so that each container is allocated once, at
/// its final size, when it closes; an object past [`INDEXED_OBJECT_KEYS`] keys moves into its
/// own indexed [`JsonObject`], so that a repeated key is still found without a scan.
enum Open {
    Array {
        start: usize,
    },
    Object {
        start: usize,
        /// The key whose value comes next.
        key: JsString,
        /// Whether an array-index key was added (printing puts those first).
        needs_reorder: bool,
        large: Option<JsonObject>,
    },
}

/// The parser's stacks, kept per thread between parses: a log is parsed line by line, and
/// growing fresh stacks for every line cost more than the values themselves.
#[derive(Default)]
struct Scratch {
    open: Vec<Open>,
    items: Vec<Json>,
    members: Vec<(JsString, Json)>,
}

impl Scratch {
    /// Stacks that grew past this many entries (a huge value) are dropped, not kept.
    const KEPT_ENTRIES: usize = 4096;

    fn with<T>(use_it: impl FnOnce(&mut Scratch) -> T) -> T {
        thread_local! {
            static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
        }
        SCRATCH.with(|cell| {
            let mut scratch = cell.take();
            let result = use_it(&mut scratch);
            scratch.open.clear();
            scratch.items.clear();
            scratch.members.clear();
            let kept = scratch.items.capacity().max(scratch.members.capacity()) <= Self::KEPT_ENTRIES;
            if kept {
                cell.set(scratch);
            }
            result
        })
    }
}

impl Parser<'_> {
    /// Inlined: called before and after every value and key, and a printed text (nearly every
    /// line of a log) has no whitespace to skip, so the call would cost more than the test.
    #[inline]
    fn skip_ws(&mut self) {
        let from = self.at;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
        self.printed &= self.at == from;
    }

    fn fail<T>(&self) -> Result<T, ParseError> {
        self.fail_at(self.at)
    }

    fn fail_at<T>(&self, at: usize) -> Result<T, ParseError> {
        Err(ParseError::Syntax(at))
    }

    /// One value, nested arrays and objects included, without recursion: open containers
    /// live on an explicit stack, so nesting costs heap (bounded by the depth limit), not stack.
    fn value(&mut self) -> Result<Json, ParseError> {
        Scratch::with(|scratch| self.value_with(scratch))
    }

    fn value_with(&mut self, scratch: &mut Scratch) -> Result<Json, ParseError> {
        loop {
            let mut done = match self.bytes.get(self.at) {
                Some(b'{') => {
                    self.enter(scratch.open.len())?;
                    if self.bytes.get(self.at) == Some(&b'}') {
                        self.at += 1;
                        Json::Object(JsonObject::new())
                    } else {
                        let key = self.member_key()?;
                        if scratch.open.is_empty() {
                            self.note(&key);
                        }
                        scratch.open.push(Open::Object {
                            start: scratch.members.len(),
                            key,
                            needs_reorder: false,
                            large: None,
                        });
                        continue;
                    }
                }
                Some(b'[') => {
                    self.enter(scratch.open.len())?;
                    if self.bytes.get(self.at) == Some(&b']') {
                        self.at += 1;
                        Json::Array(Vec::new())
                    } else {
                        scratch.open.push(Open::Array {
                            start: scratch.items.len(),
                        });
                        continue;
                    }
                }
                Some(b'"') if self.elides_value_of(scratch.open.last()) => Json::String(self.elided_string()?),
                _ => self.scalar()?,
            };
            // Hand the finished value to its container; close every container it completes.
            loop {
                let top_level = scratch.open.len() == 1;
                let Some(top) = scratch.open.last_mut() else {
                    return Ok(done);
                };
                self.skip_ws();
                let next = self.bytes.get(self.at).copied();
                self.at += 1;
                match top {
                    Open::Array { start } => {
                        scratch.items.push(done);
                        match next {
                            Some(b',') => {
                                self.skip_ws();
                                break;
                            }
                            Some(b']') => done = Json::Array(scratch.items.split_off(*start)),
                            _ => return self.fail_at(self.at - 1),
                        }
                    }
                    Open::Object {
                        start,
                        key,
                        needs_reorder,
                        large,
                    } => {
                        let member = std::mem::replace(key, JsString::Known(""));
                        self.add_member(&mut scratch.members, *start, large, needs_reorder, member, done)?;
                        match next {
                            Some(b',') => {
                                self.skip_ws();
                                *key = self.member_key()?;
                                if top_level {
                                    self.note(key);
                                }
                                break;
                            }
                            Some(b'}') => {
                                let mut object = match large.take() {
                                    Some(object) => object,
                                    None => JsonObject::from_distinct_keys(scratch.members.split_off(*start)),
                                };
                                if *needs_reorder {
                                    object.order_like_js();
                                }
                                done = Json::Object(object);
                            }
                            _ => return self.fail_at(self.at - 1),
                        }
                    }
                }
                scratch.open.pop();
            }
        }
    }

    /// Adds a member to the innermost open object (whose members so far are `members[start..]`,
    /// or `large` once there are many). A repeated key keeps its first place and takes the last
    /// value, like `JSON.parse`; printing puts array-index keys first and a repeated key once,
    /// so either means the text was not printed.
    fn add_member(
        &mut self,
        members: &mut Vec<(JsString, Json)>,
        start: usize,
        large: &mut Option<JsonObject>,
        needs_reorder: &mut bool,
        key: JsString,
        value: Json,
    ) -> Result<(), ParseError> {
        let index_key = is_array_index(key.as_wtf8());
        self.printed &= !index_key;
        let added = match large {
            Some(object) => object.assign(key, value).then_some(object.len()),
            None => {
                let small = &mut members[start..];
                match small.iter().position(|(k, _)| same_bytes(k.as_wtf8(), key.as_wtf8())) {
                    Some(at) => {
                        small[at].1 = value;
                        None
                    }
                    None => {
                        members.push((key, value));
                        Some(members.len() - start)
                    }
                }
            }
        };
        let Some(keys) = added else {
            self.printed = false;
            return Ok(());
        };
        *needs_reorder |= index_key;
        if keys > self.max_keys {
            return Err(ParseError::TooManyKeys);
        }
        if large.is_none() && keys > INDEXED_OBJECT_KEYS {
            *large = Some(JsonObject::from_distinct_keys(members.split_off(start)));
        }
        Ok(())
    }

    /// Notes where the value of a top-level member starts, if `key` is the one asked for.
    /// Inlined: asked of every top-level key, it usually compares two lengths.
    #[inline]
    fn note(&mut self, key: &JsString) {
        if let Some(noted) = self
            .noted_keys
            .iter()
            .position(|noted| same_bytes(noted.as_bytes(), key.as_wtf8()))
        {
            self.noted_at[noted] = Some(self.at);
        }
    }

    /// A value that is neither an array nor an object.
    fn scalar(&mut self) -> Result<Json, ParseError> {
        match self.bytes.get(self.at) {
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fail(),
        }
    }

    /// Whether the value that comes next, in `open`, is a member elided.
    fn elides_value_of(&self, open: Option<&Open>) -> bool {
        let Some(Open::Object { key, .. }) = open else {
            return false;
        };
        let key = key.as_wtf8();
        self.elide.keys.iter().any(|elided| same_bytes(elided.as_bytes(), key))
    }

    /// The string at the parser, of a member elided: checked as [`Parser::string`] checks it,
    /// and not kept.
    fn elided_string(&mut self) -> Result<JsString, ParseError> {
        let extent = string_extent(self.bytes, self.at).map_err(ParseError::Syntax)?;
        self.printed &= extent.printed;
        self.at = extent.end;
        self.elided = true;
        Ok(JsString::Elided(extent.wtf8_len))
    }

    /// `"key" :` of an object member, leaving the parser at the member's value. Inlined into
    /// the value loop, where it reads nearly every key of a log.
    #[inline(always)]
    fn member_key(&mut self) -> Result<JsString, ParseError> {
        if self.bytes.get(self.at) != Some(&b'"') {
            return self.fail();
        }
        let key = self.string()?;
        self.skip_ws();
        if self.bytes.get(self.at) != Some(&b':') {
            return self.fail();
        }
        self.at += 1;
        self.skip_ws();
        Ok(key)
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json, ParseError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            self.fail()
        }
    }

    /// Steps into a container opened inside `open_containers` others.
    fn enter(&mut self, open_containers: usize) -> Result<(), ParseError> {
        if open_containers + 1 > self.max_depth {
            return Err(ParseError::TooDeep);
        }
        self.at += 1;
        self.skip_ws();
        Ok(())
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.bytes.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at - from
        };
        let negative = self.bytes.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        let integer_start = self.at;
        match self.bytes.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return self.fail(),
        }
        if let Some(n) = self.small_integer(integer_start, negative) {
            return Ok(Json::Number(n));
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return self.fail();
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return self.fail();
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).map_err(|_| ParseError::Syntax(start))?;
        // Rust's float parsing rounds to nearest like JavaScript's; overflow becomes infinity.
        let n = text.parse::<f64>().map_err(|_| ParseError::Syntax(start))?;
        if self.printed {
            self.printed = number_is_printed(text, n);
        }
        Ok(Json::Number(n))
    }

    /// The number whose integer digits are `bytes[start..self.at]`, when nothing follows them
    /// and they are at most 15 (exact in an `f64`): most numbers of a log (seq, time, turn,
    /// step), which then need neither the float parser nor a check of their spelling beyond
    /// `-0`, which `JSON.stringify` prints as `0`.
    fn small_integer(&mut self, start: usize, negative: bool) -> Option<f64> {
        let digits = self.bytes.get(start..self.at)?;
        if digits.len() > 15 || matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let n = digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64;
        if negative {
            self.printed &= n != 0.0;
            return Some(-n);
        }
        Some(n)
    }

    fn string(&mut self) -> Result<JsString, ParseError> {
        self.at += 1;
        let start = self.at;
        // Fast path: no escapes. One scan finds the first quote, backslash or control
        // character (not allowed raw in a JSON string).
        let rest = self.bytes.get(start..).unwrap_or_default();
        let run = word::escaped(rest, 0);
        if rest.get(run) == Some(&b'"') {
            let s = self.text.get(start..start + run).ok_or(ParseError::Syntax(start))?;
            self.at = start + run + 1;
            return Ok(match self.vocabulary.get(s) {
                Some(known) => JsString::Known(known),
                None => JsString::Utf8(s.into()),
            });
        }
        // The run the scan found is copied as it is, and decoding goes on from where it stopped.
        let mut buf = rest[..run].to_vec();
        let mut has_surrogate = false;
        let end =
            unescape(self.bytes, start + run, &mut buf, &mut has_surrogate, usize::MAX).map_err(ParseError::Syntax)?;
        if self.printed {
            self.printed = escapes_are_printed(&self.bytes[start + run..end.at - 1]);
        }
        self.at = end.at;
        Ok(JsString::from_wtf8(buf, has_surrogate))
    }
}

/// Whether a number spelled `text` (valid JSON, value `n`) is spelled as `JSON.stringify`
/// spells `n`: an integer of up to 15 digits other than `-0` always is; anything else is
/// printed to compare.
fn number_is_printed(text: &str, n: f64) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) {
        return text != "-0";
    }
    let mut printed = String::new();
    write_number(n, &mut printed);
    printed == text
}

/// Whether the escapes in a valid JSON string body are those `JSON.stringify` writes: the
/// two-character forms, and `\u00xx` (lower-case) for the other control characters. A lone
/// surrogate's escape is printed too, but rare enough to be left to a print.
fn escapes_are_printed(body: &[u8]) -> bool {
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', &body[at..]) {
        let escape = at + found + 1;
        at = escape + 1;
        match body.get(escape) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
            Some(b'u') => {
                if !body.get(escape + 1..escape + 5).is_some_and(unit_escape_is_printed) {
                    return false;
                }
                at = escape + 5;
            }
            _ => return false,
        }
    }
    true
}

/// Whether `\u` followed by the four bytes `hex` is how `JSON.stringify` writes what it stands
/// for: only a control character without a two-character form, in lower-case hex.
fn unit_escape_is_printed(hex: &[u8]) -> bool {
    let lower = hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let unit = hex4(hex, 0).unwrap_or(u32::MAX);
    let short_form = matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D);
    lower && unit < 0x20 && !short_form
}

/// A JSON string found and checked without decoding it ([`string_extent`]).
struct Extent {
    /// Just past the closing quote.
    end: usize,
    /// The decoded string's length in WTF-8 bytes.
    wtf8_len: usize,
    /// Whether its escapes are those `JSON.stringify` writes ([`escapes_are_printed`]).
    printed: bool,
}

/// The JSON string whose opening quote is at `quote`, walked as [`unescape`] decodes it and
/// refused where it refuses it (`Err` is where the text stops being a JSON string), without
/// writing out what it decodes to.
fn string_extent(bytes: &[u8], quote: usize) -> Result<Extent, usize> {
    let (mut at, mut wtf8_len, mut printed) = (quote + 1, 0, true);
    loop {
        let run = word::escaped(bytes, at);
        wtf8_len += run - at;
        at = run;
        match bytes.get(at) {
            Some(b'"') => {
                let end = at + 1;
                return Ok(Extent { end, wtf8_len, printed });
            }
            Some(b'\\') => match bytes.get(at + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                    printed &= bytes[at + 1] != b'/';
                    wtf8_len += 1;
                    at += 2;
                }
                Some(b'u') => {
                    let (end, len) = unit_extent(bytes, at + 2, &mut printed)?;
                    wtf8_len += len;
                    at = end;
                }
                _ => return Err(at + 1),
            },
            // The end of the text, or a control character.
            _ => return Err(at),
        }
    }
}

/// The `\uXXXX` escape whose hex digits start at `at` (with the low half that follows a high
/// surrogate, when one does), as [`unescape_unit`] reads it: where it ends, and how many WTF-8
/// bytes it decodes to.
fn unit_extent(bytes: &[u8], at: usize, printed: &mut bool) -> Result<(usize, usize), usize> {
    let unit = hex4(bytes, at).ok_or(at)?;
    *printed &= unit_escape_is_printed(&bytes[at..at + 4]);
    let end = at + 4;
    if (0xD800..0xDC00).contains(&unit) && bytes.get(end..end + 2) == Some(b"\\u") {
        let low = hex4(bytes, end + 2).ok_or(end + 2)?;
        if (0xDC00..0xE000).contains(&low) {
            *printed &= unit_escape_is_printed(&bytes[end + 2..end + 6]);
            return Ok((end + 6, 4));
        }
    }
    // A lone surrogate takes three bytes in WTF-8, like any other unit from U+0800 on.
    let len = match unit {
        0..0x80 => 1,
        0x80..0x800 => 2,
        _ => 3,
    };
    Ok((end, len))
}

/// How far [`unescape`] got in a JSON string.
pub(crate) struct Unescaped {
    /// Just past the closing quote when `done`, else where decoding stopped.
    pub(crate) at: usize,
    /// Whether the whole string was decoded.
    pub(crate) done: bool,
}

/// Decodes the body of the JSON string whose first byte after the opening quote is at `at`,
/// appending it to `out` as WTF-8 (a lone surrogate sets `has_surrogate`): to the closing
/// quote, or until `out` holds `limit` bytes or more, stopping between two characters, so a
/// reader that needs only the start of a long text decodes no more of it. `Err` is where the
/// text stops being a JSON string.
pub(crate) fn unescape(
    bytes: &[u8],
    mut at: usize,
    out: &mut Vec<u8>,
    has_surrogate: &mut bool,
    limit: usize,
) -> Result<Unescaped, usize> {
    loop {
        let Some(&b) = bytes.get(at) else {
            return Err(at);
        };
        if b == b'"' {
            return Ok(Unescaped { at: at + 1, done: true });
        }
        if out.len() >= limit {
            return Ok(Unescaped { at, done: false });
        }
        match b {
            0x00..=0x1F => return Err(at),
            b'\\' => {
                let simple = match bytes.get(at + 1) {
                    Some(b'"') => b'"',
                    Some(b'\\') => b'\\',
                    Some(b'/') => b'/',
                    Some(b'b') => 0x08,
                    Some(b'f') => 0x0C,
                    Some(b'n') => b'\n',
                    Some(b'r') => b'\r',
                    Some(b't') => b'\t',
                    Some(b'u') => {
                        at = unescape_unit(bytes, at + 2, out, has_surrogate)?;
                        continue;
                    }
                    _ => return Err(at + 1),
                };
                out.push(simple);
                at += 2;
            }
            _ => {
                // The run up to the next quote, backslash or control character goes over at
                // once (a long text with line breaks escapes every few dozen bytes), cut
                // after the character that reaches `limit`.
                let rest = &bytes[at..];
                let run = word::escaped(rest, 0);
                let mut take = run.min(limit - out.len());
                while take < run && rest[take] & 0xC0 == 0x80 {
                    take += 1;
                }
                out.extend_from_slice(&rest[..take]);
                at += take;
            }
        }
    }
}

/// Decodes the `\uXXXX` escape whose hex digits start at `at` (with the low half that follows
/// a high surrogate, when one does) into `out`; returns where the escape ends.
fn unescape_unit(bytes: &[u8], at: usize, out: &mut Vec<u8>, has_surrogate: &mut bool) -> Result<usize, usize> {
    let unit = hex4(bytes, at).ok_or(at)?;
    let mut end = at + 4;
    let mut code = unit;
    if (0xD800..0xDC00).contains(&unit) && bytes.get(end..end + 2) == Some(b"\\u") {
        let low = hex4(bytes, end + 2).ok_or(end + 2)?;
        if (0xDC00..0xE000).contains(&low) {
            code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            end += 6;
        }
    }
    match char::from_u32(code) {
        Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
        None => {
            // A lone surrogate: generalized UTF-8 (WTF-8).
            *has_surrogate = true;
            out.extend_from_slice(&[
                0xE0 | (code >> 12) as u8,
                0x80 | ((code >> 6) & 0x3F) as u8,
                0x80 | (code & 0x3F) as u8,
            ]);
        }
    }
    Ok(end)
}

/// The four hex digits at `at`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let hex = bytes.get(at..at + 4)?;
    hex.iter()
        .try_fold(0u32, |n, b| Some(n * 16 + (*b as char).to_digit(16)?))
}

fn write_value(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(n) => write_number(*n, out),
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Json::Object(object) => write_object(object, out),
    }
}

/// Serializes an `f64` as JavaScript writes it (`0`, not serde_json's `0.0`).
pub fn serialize_js_number<S: serde::Serializer>(n: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&Json::Number(*n), serializer)
}

/// `JSON.stringify` of a number: ECMAScript `Number::toString`, `null` when not finite.
pub fn write_number(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0');
    } else if is_safe_integer(n) {
        out.push_str(itoa_i64(n as i64).as_str());
    } else {
        let mut buf = ryu_js::Buffer::new();
        out.push_str(buf.format_finite(n));
    }
}

fn itoa_i64(n: i64) -> String {
    n.to_string()
}

/// `JSON.stringify` of a string.
///
/// # Panics
///
/// On an elided string: its text was not kept, and the log reader, the only parse that
/// elides, parses again in full every line it may print.
pub fn write_string(s: &JsString, out: &mut String) {
    out.push('"');
    match s {
        JsString::Utf8(text) => write_escaped(text, out),
        JsString::Known(text) => write_escaped(text, out),
        JsString::Elided(len) => panic!("a string elided by the log reader ({len} bytes) was printed"),
        JsString::Wtf8(bytes) => {
            let mut rest: &[u8] = bytes;
            while !rest.is_empty() {
                match std::str::from_utf8(rest) {
                    Ok(text) => {
                        write_escaped(text, out);
                        break;
                    }
                    Err(e) => {
                        let (valid, after) = rest.split_at(e.valid_up_to());
                        write_escaped(std::str::from_utf8(valid).unwrap_or_default(), out);
                        if after.len() >= 3 {
                            let unit = (u32::from(after[0] & 0x0F) << 12)
                                | (u32::from(after[1] & 0x3F) << 6)
                                | u32::from(after[2] & 0x3F);
                            out.push_str(&format!("\\u{unit:04x}"));
                        }
                        rest = &after[after.len().min(3)..];
                    }
                }
            }
        }
    }
    out.push('"');
}

/// Where a string's plain run ends, found sixteen bytes at a time with wasm SIMD, else a word
/// at a time ([`crate::word`]).
mod word {
    use crate::word::{byte_marks, less_marks, load, lowest_marked};

    /// The first byte at or after `from` that `JSON.stringify` escapes (a quote, a backslash
    /// or a control character), `bytes.len()` if none: a vector's or a word's marks tell which
    /// byte it is, and only the last few bytes are looked at one by one. Inlined: a parse asks
    /// it of every string, most of them a few bytes long.
    #[inline]
    pub(super) fn escaped(bytes: &[u8], from: usize) -> usize {
        let mut at = from;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        loop {
            match vector::escaped_in(bytes, at) {
                Some(Some(within)) => return at + within,
                Some(None) => at += 16,
                None => break,
            }
        }
        while let Some(word) = load(bytes, at) {
            let marks = less_marks(word, 0x20) | byte_marks(word, b'"') | byte_marks(word, b'\\');
            if marks != 0 {
                return at + lowest_marked(marks);
            }
            at += 8;
        }
        let is_escaped = |&b: &u8| b < 0x20 || b == b'"' || b == b'\\';
        at + bytes[at..].iter().position(is_escaped).unwrap_or(bytes.len() - at)
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    mod vector {
        use std::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_or};

        /// Within the sixteen bytes from `at` on (`None` when there are fewer left), the place
        /// of the first one `JSON.stringify` escapes, if any.
        pub(super) fn escaped_in(bytes: &[u8], at: usize) -> Option<Option<usize>> {
            let v = crate::word::load_vector(bytes, at)?;
            let marks = v128_or(
                u8x16_lt(v, u8x16_splat(0x20)),
                v128_or(u8x16_eq(v, u8x16_splat(b'"')), u8x16_eq(v, u8x16_splat(b'\\'))),
            );
            let mask = u8x16_bitmask(marks);
            Some((mask != 0).then(|| mask.trailing_zeros() as usize))
        }
    }
}

fn write_escaped(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut last = 0;
    loop {
        let at = word::escaped(bytes, last);
        out.push_str(&text[last..at]);
        let Some(&b) = bytes.get(at) else {
            return;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            _ => out.push_str(&format!("\\u{b:04x}")),
        }
        last = at + 1;
    }
}

/// Appends `JSON.stringify(object)` to `out`.
pub fn write_object(object: &JsonObject, out: &mut String) {
    write_object_noting(object, out, |_, _| {});
}

/// [`write_object`], telling `at_value` each top-level key and where in `out` its value starts.
pub(crate) fn write_object_noting(object: &JsonObject, out: &mut String, mut at_value: impl FnMut(&JsString, usize)) {
    out.push('{');
    for (i, (k, v)) in object.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        at_value(k, out.len());
        write_value(v, out);
    }
    out.push('}');
}

/// Parses a text this module printed (it is valid JSON by construction), as deep as any value
/// a parse accepts; a text that is not one yields `null`.
pub fn parse_printed(text: &str) -> Json {
    let limits = ParseLimits {
        max_depth: MAX_JSON_DEPTH,
    };
    Json::parse_bounded(text, limits, usize::MAX).unwrap_or(Json::Null)
}

/// [`parse_printed`] of the value written at the start of `text` (printed by this module),
/// ignoring what follows it: what [`member_start`] finds is parsed without a pass to find
/// where it ends first (a hit's event is read for its text, most of it in `data`).
pub fn parse_printed_value(text: &str) -> Json {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        max_depth: MAX_JSON_DEPTH,
        max_keys: usize::MAX,
        // Known to be printed: nothing to check.
        printed: false,
        noted_keys: &[],
        noted_at: [None; NOTED_KEYS],
        vocabulary: &Vocabulary::EMPTY,
        elide: Elide::NONE,
        elided: false,
    };
    parser.value().unwrap_or(Json::Null)
}

/// The text of the value of top-level member `key` in `text`, an object this module printed
/// (no whitespace): found by skipping the other members' values without parsing them. `key`
/// is compared with each key as written, so it must be one that needs no escape.
pub fn member_text<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let start = member_at(text, key)?;
    text.get(start..skip_value(text.as_bytes(), start))
}

/// [`member_text`] without finding where the value ends: the rest of `text` from the value's
/// first byte, for looking further into it without a pass over it first (a further
/// [`member_text`] stops at the value's end by itself).
pub fn member_start<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.get(member_at(text, key)?..)
}

/// The items of the array printed at the start of `text` (by this module), each as the rest of
/// the text from its first byte, as [`member_start`] gives a member: an item is skipped only
/// when the next one is asked for, so a reader that stops early never passes over the rest.
pub fn array_items(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let first = (bytes.first() == Some(&b'[') && bytes.get(1) != Some(&b']')).then_some(1);
    let mut pending: Option<usize> = None;
    let mut next = first;
    std::iter::from_fn(move || {
        if let Some(item) = pending.take() {
            let end = skip_value(bytes, item);
            next = (bytes.get(end) == Some(&b',')).then_some(end + 1);
        }
        let item = next.take()?;
        pending = Some(item);
        text.get(item..)
    })
}

fn member_at(text: &str, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut at = 1;
    while bytes.get(at) == Some(&b'"') {
        let key_end = skip_string(bytes, at);
        let value_start = key_end + 1;
        if text.get(at + 1..key_end - 1) == Some(key) {
            return Some(value_start);
        }
        at = skip_value(bytes, value_start) + 1;
    }
    None
}

/// The index just past the string whose opening quote is at `at`: the first quote after it
/// that an even run of backslashes (an escaped backslash each) precedes. Looking for quotes
/// alone passes over the escapes between them (a tool's output escapes a line feed every few
/// dozen bytes, and quotes far less often); each backslash is looked back at once at most, as
/// a quote ends every run of them.
fn skip_string(bytes: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while let Some(found) = memchr::memchr(b'"', bytes.get(i..).unwrap_or_default()) {
        let quote = i + found;
        let backslashes = bytes[..quote].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return quote + 1;
        }
        i = quote + 1;
    }
    bytes.len()
}

/// The index just past the value that starts at `at` (of a valid, whitespace-free text).
fn skip_value(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'"') => skip_string(bytes, at),
        Some(b'{' | b'[') => {
            let (mut i, mut depth) = (at, 0usize);
            while let Some(b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = skip_string(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            let rest = bytes.get(at..).unwrap_or_default();
            at + rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))
                .unwrap_or(rest.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Json {
        Json::parse(text, ParseLimits::default()).expect("valid JSON")
    }

    #[test]
    fn a_member_is_found_past_values_that_look_like_members() {
        let text = r#"{"a":"}\"b\":{","b":[{"data":1},"]"],"data":{"x":[1,{"y":"\\"}]},"n":-1.5e+21,"z":null}"#;
        assert_eq!(member_text(text, "data"), Some(r#"{"x":[1,{"y":"\\"}]}"#));
        assert_eq!(member_text(text, "b"), Some(r#"[{"data":1},"]"]"#));
        assert_eq!(member_text(text, "n"), Some("-1.5e+21"));
        assert_eq!(member_text(text, "z"), Some("null"));
        assert_eq!(member_text(text, "y"), None, "only top-level members");
        assert_eq!(member_text("{}", "a"), None);
        assert_eq!(member_text("[1]", "a"), None);
        assert_eq!(parse_printed(member_text(text, "a").expect("a")), Json::str("}\"b\":{"));
        let data = member_start(text, "data").expect("data");
        assert!(data.ends_with(r#""z":null}"#), "the rest of the text, unmeasured");
        for key in ["a", "b", "data", "n", "z"] {
            let whole = parse_printed(member_text(text, key).expect("member"));
            assert_eq!(
                parse_printed_value(member_start(text, key).expect("member")),
                whole,
                "{key}"
            );
        }
        assert_eq!(
            member_text(data, "x"),
            Some(r#"[1,{"y":"\\"}]"#),
            "stops at the value's end"
        );
    }

    /// A printed string ends at the first quote an even run of backslashes precedes, however
    /// quotes and backslashes mix in it.
    #[test]
    fn a_member_is_found_past_strings_of_quotes_and_backslashes() {
        let pieces = ["\\", "\"", "\\\"", "\n", "a", "\\\\", "\u{1}"];
        let mut next = crate::testing::xorshift(0xB5);
        for _ in 0..5_000 {
            let string: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
            let printed = Json::str(&string).to_string();
            let text = format!(r#"{{"a":{printed},"b":[{printed}],"c":1}}"#);
            assert_eq!(member_text(&text, "a"), Some(printed.as_str()), "{text}");
            assert_eq!(member_text(&text, "b"), Some(format!("[{printed}]").as_str()), "{text}");
            assert_eq!(member_text(&text, "c"), Some("1"), "{text}");
        }
    }

    #[test]
    fn lone_surrogates_survive_a_round_trip() {
        let text = r#"{"t":"a\ud83d","u":"\ude00b","pair":"\ud83d\ude00"}"#;
        let value = parse(text);
        assert_eq!(value.to_js_string(), r#"{"t":"a\ud83d","u":"\ude00b","pair":"😀"}"#);
        let t = value.get("t").and_then(Json::as_js_string).expect("string");
        assert_eq!(t.to_lossy(), "a\u{FFFD}");
        assert_eq!(t.code_points(), 2);
        assert!(t.as_str().is_none());
    }

    #[test]
    fn utf16_units_match_javascript() {
        let value = parse(r#""a\ud83d😀é""#);
        let units = value.as_js_string().expect("string").utf16_units();
        assert_eq!(units, [0x61, 0xD83D, 0xD83D, 0xDE00, 0xE9]);
    }

    #[test]
    fn numbers_print_like_javascript() {
        for (input, expected) in [
            ("1700000000000", "1700000000000"),
            ("3.0", "3"),
            ("3e0", "3"),
            ("-0", "0"),
            ("0.1", "0.1"),
            ("1e21", "1e+21"),
            ("1.5e-7", "1.5e-7"),
            ("123456789012345680000", "123456789012345680000"),
            ("1e400", "null"),
            ("-17", "-17"),
            ("123456789012345", "123456789012345"),
            ("1234567890123456", "1234567890123456"),
            ("9007199254740993", "9007199254740992"),
        ] {
            assert_eq!(parse(input).to_js_string(), expected, "{input}");
        }
        // `JSON.parse("-0")` is negative zero, read without the float parser as other integers.
        assert!(parse("-0").as_f64().is_some_and(|n| n == 0.0 && n.is_sign_negative()));
        assert!(
            parse("[0]")
                .as_array()
                .is_some_and(|a| a[0].as_f64().is_some_and(f64::is_sign_positive))
        );
    }

    #[test]
    fn strings_escape_like_javascript() {
        let value = Json::str("q\"\\\n\u{1}\u{7f}\u{2028}é");
        assert_eq!(value.to_js_string(), "\"q\\\"\\\\\\n\\u0001\u{7f}\u{2028}é\"");
    }

    /// A vocabulary finds each of its words (and its place) and nothing else, and a parse shares
    /// exactly the unescaped strings it holds; shared strings are equal, hash and order as
    /// allocated ones.
    #[test]
    fn vocabulary_strings_are_shared_and_behave_as_allocated_ones() {
        static WORDS: Vocabulary = Vocabulary::new(&[&["type", "seq", "tool/call", "a"], &["seq", "user"]]);
        for word in ["type", "seq", "tool/call", "a", "user"] {
            assert!(WORDS.get(word).is_some_and(|known| known == word), "{word}");
        }
        for other in ["", "typ", "types", "Type", "b", "tool/cal", "tool/callx", "useR"] {
            assert_eq!(WORDS.get(other), None, "{other}");
            assert_eq!(WORDS.place(other), None, "{other}");
        }
        // Places follow the order the words were given, a repeat counted once.
        let places: Vec<_> = ["type", "seq", "tool/call", "a", "user"].map(|w| WORDS.place(w)).into();
        assert_eq!(places, [Some(0), Some(1), Some(2), Some(3), Some(4)]);
        let text = r#"{"type":"user","seq":1,"data":{"type":"a\u0062","x":["user","tool/call","users"]}}"#;
        let parsed = Json::parse_noting_printed(text, ParseLimits::default(), usize::MAX, &[], &WORDS, Elide::NONE)
            .expect("json");
        let plain = Json::parse(text, ParseLimits::default()).expect("json");
        assert_eq!(parsed.value, plain);
        assert_eq!(parsed.value.to_js_string(), text.replace(r"a\u0062", "ab"));
        let Json::Object(object) = &parsed.value else {
            panic!("object")
        };
        let kinds: Vec<bool> = object
            .iter()
            .map(|(key, _)| matches!(key, JsString::Known(_)))
            .collect();
        assert_eq!(kinds, [true, true, false]);
        assert!(matches!(
            parsed.value.get("type"),
            Some(Json::String(JsString::Known("user")))
        ));
        let strings = |v: &Json| match v.get("data").and_then(|d| d.get("x")) {
            Some(Json::Array(items)) => items
                .iter()
                .map(|i| matches!(i, Json::String(JsString::Known(_))))
                .collect::<Vec<_>>(),
            _ => panic!("array"),
        };
        assert_eq!(strings(&parsed.value), [true, true, false]);
        // An escaped spelling is decoded, not looked up.
        assert!(matches!(
            parsed.value.get("data").and_then(|d| d.get("type")),
            Some(Json::String(JsString::Utf8(_)))
        ));
        let (known, owned) = (JsString::Known("user"), JsString::from("user"));
        assert_eq!(known, owned);
        let state = std::collections::hash_map::RandomState::new();
        assert_eq!(state.hash_one(&known), state.hash_one(&owned));
        assert_eq!(
            JsString::Known("b").cmp(&JsString::from("a")),
            std::cmp::Ordering::Greater
        );
        assert_eq!(JsString::Known("a").cmp(&JsString::from("b")), std::cmp::Ordering::Less);
    }

    /// A parsed object is built once its last member is read: a key repeated before or after
    /// the object grows past the small-object scan (and inside nested containers, whose
    /// members wait above it) still keeps its first place and takes the last value.
    #[test]
    fn repeated_keys_keep_their_place_however_large_the_object_grows() {
        let many: Vec<String> = (0..INDEXED_OBJECT_KEYS + 4).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!(
            "{{\"a\":1,\"n\":{{\"b\":[1,{{\"b\":2,\"b\":3}}],\"c\":4,\"b\":5}},\"a\":6,{},\"a\":7,\"k0\":8}}",
            many.join(",")
        );
        let parsed = Json::parse_noting_printed(
            &text,
            ParseLimits::default(),
            usize::MAX,
            &[],
            &Vocabulary::EMPTY,
            Elide::NONE,
        )
        .expect("json");
        assert!(!parsed.printed, "a repeated key is not printed form");
        let object = parsed.value.as_object().expect("object").clone();
        let keys: Vec<String> = object.keys().map(|k| k.to_string()).collect();
        let mut expected = vec!["a".to_string(), "n".to_string()];
        expected.extend((0..INDEXED_OBJECT_KEYS + 4).map(|i| format!("k{i}")));
        assert_eq!(keys, expected);
        assert_eq!(object.get("a"), Some(&Json::Number(7.0)));
        assert_eq!(object.get("k0"), Some(&Json::Number(8.0)));
        assert_eq!(
            object.get("n").map(Json::to_js_string).as_deref(),
            Some(r#"{"b":5,"c":4}"#)
        );
    }

    /// Trees of every log line are held until the log is checked: a value's size is memory
    /// and copying for each of their members.
    #[test]
    fn a_value_is_at_most_four_words() {
        assert!(
            size_of::<Json>() <= 4 * size_of::<usize>(),
            "{} bytes",
            size_of::<Json>()
        );
    }

    #[test]
    fn objects_keep_javascript_property_order() {
        assert_eq!(parse(r#"{"b":1,"a":2,"b":3}"#).to_js_string(), r#"{"b":3,"a":2}"#);
        assert_eq!(
            parse(r#"{"b":1,"10":2,"2":3,"01":4}"#).to_js_string(),
            r#"{"2":3,"10":2,"b":1,"01":4}"#
        );
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "'a'",
            "\"\t\"",
            "\u{feff}{}",
            "nul",
            "\"\\x\"",
            "[] x",
        ] {
            assert!(Json::parse(bad, ParseLimits::default()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn escaped_strings_read_their_plain_runs_whole() {
        // Runs between escapes, of every length, around every kind of escape.
        let pieces = [
            "",
            "a",
            "line of text",
            "é😀",
            "\\n",
            "\\\"",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\ud800",
        ];
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..2000 {
            let mut text = String::from("\"");
            let mut expected = Vec::new();
            for _ in 0..next(9) {
                let piece = pieces[next(pieces.len())];
                text.push_str(piece);
                expected.push(piece);
            }
            text.push('"');
            // The reference: each piece parsed on its own, joined.
            let joined: Vec<u16> = expected
                .iter()
                .flat_map(|piece| match parse(&format!("\"{piece}\"")) {
                    Json::String(s) => s.utf16_units(),
                    other => panic!("{other:?}"),
                })
                .collect();
            match parse(&text) {
                Json::String(s) => assert_eq!(s.utf16_units(), joined, "{text}"),
                other => panic!("{other:?}"),
            }
        }
        // A raw control character after an escape is refused where it stands.
        let bad = "\"ab\\ncd\u{1}ef\"";
        assert_eq!(
            Json::parse(bad, ParseLimits::default()).err(),
            Some(ParseError::Syntax(7))
        );
    }

    #[test]
    fn depth_limit_is_enforced() {
        let deep = "[".repeat(20) + &"]".repeat(20);
        assert_eq!(
            Json::parse(&deep, ParseLimits { max_depth: 10 }),
            Err(ParseError::TooDeep)
        );
        assert!(Json::parse(&deep, ParseLimits { max_depth: 20 }).is_ok());
    }

    #[test]
    fn equality_ignores_key_order_and_number_spelling() {
        assert_eq!(parse(r#"{"a":1,"b":[2.0]}"#), parse(r#"{"b":[2e0],"a":1}"#));
        assert_ne!(parse(r#"{"a":1}"#), parse(r#"{"a":1,"b":null}"#));
    }

    #[test]
    fn configured_depth_is_clamped_to_the_stack_safe_maximum() {
        let deep = "[".repeat(50_000) + &"]".repeat(50_000);
        let limits = ParseLimits {
            max_depth: 1_000_000_000,
        };
        assert_eq!(Json::parse(&deep, limits), Err(ParseError::TooDeep));
        let at_limit = "[".repeat(MAX_JSON_DEPTH) + &"]".repeat(MAX_JSON_DEPTH);
        assert!(Json::parse(&at_limit, limits).is_ok());
    }

    /// Parse, print, compare, clone and drop at the deepest accepted nesting on wasm's default
    /// stack size; this build's frames are larger than an optimised wasm build's.
    #[test]
    fn the_deepest_accepted_value_fits_a_one_mebibyte_stack() {
        let walk = || {
            let depth = MAX_JSON_DEPTH;
            let text = r#"{"a":["#.repeat(depth / 2) + "1" + &"]}".repeat(depth / 2);
            let limits = ParseLimits { max_depth: usize::MAX };
            let value = Json::parse(&text, limits).expect("parses at the maximum depth");
            let printed = value.to_js_string();
            assert_eq!(printed, text);
            let copy = value.clone();
            assert!(copy == value);
            let serialized = serde_json::to_string(&value).expect("serializes");
            assert_eq!(serialized.len(), text.len());
            drop(copy);
            drop(value);
        };
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(walk)
            .expect("spawns")
            .join()
            .expect("no stack overflow");
    }

    fn wide_object(keys: usize) -> String {
        let body: Vec<String> = (0..keys).map(|i| format!("\"k{i}\":{i}")).collect();
        format!("{{{}}}", body.join(","))
    }

    #[test]
    fn a_wide_object_parses_and_compares_equal_in_any_key_order() {
        // Its cost is bounded where time can be measured fairly: the bad-input matrix runs
        // wide objects in processes of their own, with time and memory bounds.
        let text = wide_object(80_000);
        let value = parse(&text);
        let reversed = {
            let object = value.as_object().expect("object");
            let entries: Vec<(JsString, Json)> = object
                .iter()
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Json::Object(entries.into_iter().collect())
        };
        assert!(value == reversed);
        assert_eq!(value.get("k79999").and_then(Json::as_f64), Some(79_999.0));
    }

    #[test]
    fn wide_objects_keep_duplicate_and_index_key_order() {
        let mut text = wide_object(40);
        text.pop();
        text.push_str(r#","k3":"last","7":true,"k0":null}"#);
        let value = parse(&text);
        let object = value.as_object().expect("object");
        assert_eq!(object.len(), 41);
        let keys: Vec<String> = object.keys().take(3).map(|k| k.to_string()).collect();
        assert_eq!(keys, ["7", "k0", "k1"]);
        assert_eq!(object.get("k3"), Some(&Json::str("last")));
        assert_eq!(object.get("k0"), Some(&Json::Null));
        let mut object = object.clone();
        assert_eq!(object.remove("k1"), Some(Json::int(1)));
        assert_eq!(object.get("k39"), Some(&Json::int(39)));
        object.insert("k39", Json::Bool(false));
        object.insert("2", Json::Null);
        assert_eq!(object.get("k39"), Some(&Json::Bool(false)));
        let keys: Vec<String> = object.keys().take(3).map(|k| k.to_string()).collect();
        assert_eq!(keys, ["2", "7", "k0"]);
    }

    #[test]
    fn key_count_limit_is_enforced() {
        let text = wide_object(100);
        let limits = ParseLimits::default();
        assert_eq!(Json::parse_bounded(&text, limits, 99), Err(ParseError::TooManyKeys));
        assert!(Json::parse_bounded(&text, limits, 100).is_ok());
        // Repeated keys are one key.
        assert!(Json::parse_bounded(r#"{"a":1,"a":2}"#, limits, 1).is_ok());
    }

    #[test]
    fn the_word_scan_finds_the_first_escaped_byte_at_every_offset() {
        // Each special byte, alone and at every place in and across eight-byte words, and
        // bytes that only resemble one (0x20, 0x7f, 0xa2, 0xdc) never taken for one.
        for special in [0x00u8, 0x01, 0x1f, b'"', b'\\', 0x20, 0x21, 0x7f, 0xa2, 0xdc, 0xff] {
            for len in 0..20 {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    for from in 0..=len {
                        let naive = |hit: fn(u8) -> bool| (from..len).find(|&i| hit(bytes[i])).unwrap_or(len);
                        let escaped = naive(|b| b < 0x20 || b == b'"' || b == b'\\');
                        assert_eq!(word::escaped(&bytes, from), escaped, "{special:#x} {len} {at} {from}");
                    }
                }
            }
        }
    }

    #[test]
    fn strings_print_as_json_stringify_escapes_them() {
        let text = "plain \"quoted\" back\\slash\n\r\t\u{8}\u{c}\u{1}\u{1f} é 東京 long enough to span words";
        let mut out = String::new();
        write_escaped(text, &mut out);
        let expected =
            "plain \\\"quoted\\\" back\\\\slash\\n\\r\\t\\b\\f\\u0001\\u001f é 東京 long enough to span words";
        assert_eq!(out, expected);
    }

    /// Hash-indexed objects behave exactly like the plain list they replaced: a model with
    /// linear lookups and JavaScript's ordering, driven by random assignments and removals.
    #[cfg(not(target_arch = "wasm32"))]
    mod object_model {
        use super::super::*;
        use proptest::prelude::*;

        fn model_insert(model: &mut Vec<(String, i64)>, key: &str, value: i64) {
            match model.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => {
                    model.push((key.to_owned(), value));
                    model.sort_by_key(|(k, _)| match array_index_value(k.as_bytes()) {
                        Some(n) => (0, n),
                        None => (1, 0),
                    });
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn indexed_objects_match_the_linear_model(
                ops in proptest::collection::vec((0u8..40, 0u8..3, -5i64..5), 0..120)
            ) {
                let mut object = JsonObject::new();
                let mut model: Vec<(String, i64)> = Vec::new();
                for (key, op, value) in ops {
                    // Keys 0..10 are array indexes, the rest plain names.
                    let key = if key < 10 { key.to_string() } else { format!("k{key}") };
                    if op == 0 {
                        let removed = object.remove(&key).and_then(|v| v.as_safe_integer());
                        let at = model.iter().position(|(k, _)| *k == key);
                        prop_assert_eq!(removed, at.map(|at| model.remove(at).1));
                    } else {
                        object.insert(key.as_str(), Json::int(value));
                        model_insert(&mut model, &key, value);
                    }
                    let keys: Vec<String> = object.keys().map(|k| k.to_string()).collect();
                    let model_keys: Vec<String> = model.iter().map(|(k, _)| k.clone()).collect();
                    prop_assert_eq!(keys, model_keys);
                    for (k, v) in &model {
                        prop_assert_eq!(object.get(k), Some(&Json::int(*v)));
                    }
                }
                // And the parser agrees with assignment order, duplicates included.
                let text = format!("{{{}}}", object.iter().map(|(k, v)| format!("{}:{}", Json::String(k.clone()), v)).collect::<Vec<_>>().join(","));
                prop_assert!(Json::parse(&text, ParseLimits::default()).expect("parses") == Json::Object(object));
            }
        }
    }

    /// Proptest is a native dev-dependency only.
    #[cfg(not(target_arch = "wasm32"))]
    mod printed_spelling {
        use super::super::*;
        use proptest::prelude::*;

        /// Values spelled in the ways JSON allows: as `JSON.stringify` spells them and not.
        fn spelled() -> impl Strategy<Value = String> {
            let leaf = prop::sample::select(vec![
                "0",
                "-0",
                "7",
                "-12",
                "1.0",
                "1.5",
                "0.1",
                "1e3",
                "1E3",
                "1e-7",
                "123456789012345",
                "1234567890123456789",
                "true",
                "false",
                "null",
                r#""""#,
                r#""a b""#,
                r#""é—語""#,
                r#""\"""#,
                r#""\\""#,
                r#""\/""#,
                r#""\n\t\r\b\f""#,
                r#""\u000a""#,
                r#""\u0041""#,
                r#""\u001b""#,
                r#""\u001B""#,
                r#""\u007f""#,
                r#""\ud800""#,
                r#""\ud83d\ude00""#,
            ])
            .prop_map(str::to_owned);
            leaf.prop_recursive(3, 24, 4, |inner| {
                let gap = prop::sample::select(vec!["", "", "", " "]);
                let key = prop::sample::select(vec![r#""a""#, r#""b""#, r#""surfaceOp""#, r#""1""#, r#""\u0061""#]);
                prop_oneof![
                    prop::collection::vec((inner.clone(), gap.clone()), 0..4).prop_map(|items| {
                        let items: Vec<String> = items.into_iter().map(|(v, g)| format!("{g}{v}")).collect();
                        format!("[{}]", items.join(","))
                    }),
                    prop::collection::vec((key, gap, inner), 0..4).prop_map(|members| {
                        let members: Vec<String> = members.into_iter().map(|(k, g, v)| format!("{k}:{g}{v}")).collect();
                        format!("{{{}}}", members.join(","))
                    }),
                ]
            })
        }

        fn parse_noting(text: &str) -> Parsed {
            Json::parse_noting_printed(
                text,
                ParseLimits::default(),
                usize::MAX,
                &["surfaceOp", "sourceEventSeqs"],
                &Vocabulary::EMPTY,
                Elide::NONE,
            )
            .expect("valid JSON")
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1024))]

            /// A text said to be printed is the value's `JSON.stringify` form; a printed text
            /// is said to be one unless it holds an index key or a lone surrogate's escape.
            #[test]
            fn printed_is_said_exactly_of_stringified_texts(text in spelled()) {
                let parsed = parse_noting(&text);
                let stringified = parsed.value.to_js_string();
                if parsed.printed {
                    prop_assert_eq!(&stringified, &text);
                } else if stringified == text {
                    prop_assert!(text.contains(r#""1":"#) || text.contains(r"\ud800"), "missed: {}", text);
                }
            }

            /// Leaving a member's strings out changes nothing else a parse says: what it
            /// accepts, whether the text is printed, the rest of the value, and each string
            /// left out by its length.
            #[test]
            fn strings_left_out_are_checked_as_those_kept(text in spelled()) {
                let full = parse_noting(&text);
                let elided = Json::parse_noting_printed(
                    &text,
                    ParseLimits::default(),
                    usize::MAX,
                    &["surfaceOp", "sourceEventSeqs"],
                    &Vocabulary::EMPTY,
                    Elide { keys: &["a"] },
                )
                .expect("valid JSON");
                prop_assert_eq!(full.printed, elided.printed);
                prop_assert_eq!(full.noted_at, elided.noted_at);
                let (mut kept, mut left_out) = (Vec::new(), Vec::new());
                strings_of_a(&full.value, &mut kept);
                strings_of_a(&elided.value, &mut left_out);
                // (A string left out may then give way to a repeated key's value.)
                prop_assert!(elided.elided || left_out.is_empty());
                prop_assert_eq!(kept.iter().map(|s| s.wtf8_len()).collect::<Vec<_>>(), left_out.iter().map(|s| s.wtf8_len()).collect::<Vec<_>>());
                prop_assert!(left_out.iter().all(|s| matches!(s, JsString::Elided(_))));
                prop_assert_eq!(without_a(full.value), without_a(elided.value));
            }
        }

        /// The string values of members `a`, in order.
        fn strings_of_a<'v>(value: &'v Json, out: &mut Vec<&'v JsString>) {
            match value {
                Json::Array(items) => items.iter().for_each(|item| strings_of_a(item, out)),
                Json::Object(object) => {
                    for (key, value) in object.iter() {
                        match value {
                            Json::String(s) if key == "a" => out.push(s),
                            other => strings_of_a(other, out),
                        }
                    }
                }
                _ => {}
            }
        }

        /// `value` with every string value of a member `a` made `null`.
        fn without_a(value: Json) -> Json {
            match value {
                Json::Array(items) => Json::Array(items.into_iter().map(without_a).collect()),
                Json::Object(object) => Json::Object(
                    object
                        .iter()
                        .map(|(key, value)| match value {
                            Json::String(_) if key == "a" => (key.clone(), Json::Null),
                            other => (key.clone(), without_a(other.clone())),
                        })
                        .collect(),
                ),
                other => other,
            }
        }

        /// A string left out is refused exactly where one decoded is, said printed exactly when
        /// it is, and as long.
        #[test]
        fn strings_left_out_are_refused_and_printed_as_those_kept() {
            for body in [
                "ok",
                "\\u0001",
                "\u{1}",
                "\\x",
                "\\u12",
                "\\u12G4",
                "\\ud800\\u12",
                "\\ud800\\u0041",
                "\\udc00",
                "\\ud83d\\ude00",
                "\\",
                "\\u",
                "abc\\",
                "\\/",
                "\\u000a",
                "\\u001b",
                "\\u001B",
                "\\u0041",
                "\\u00e9",
                "\\u20ac",
                "\\n\\t\\r\\b\\f\\\"\\\\",
                "é—語",
                "\\ud83d",
            ] {
                for text in [format!(r#"{{"a":"{body}"}}"#), format!(r#"{{"a":"{body}"#)] {
                    let parse = |elide| {
                        Json::parse_noting_printed(
                            &text,
                            ParseLimits::default(),
                            usize::MAX,
                            &[],
                            &Vocabulary::EMPTY,
                            elide,
                        )
                        .map(|parsed| {
                            (
                                parsed.printed,
                                parsed
                                    .value
                                    .get("a")
                                    .and_then(Json::as_js_string)
                                    .map(JsString::wtf8_len),
                            )
                        })
                    };
                    let (full, elided) = (parse(Elide::NONE), parse(Elide { keys: &["a"] }));
                    assert_eq!(full.is_ok(), elided.is_ok(), "{text}");
                    assert_eq!(full.ok(), elided.ok(), "{text}");
                }
            }
        }

        #[test]
        fn the_noted_keys_are_the_top_level_ones() {
            let text =
                r#"{"data":{"surfaceOp":1,"sourceEventSeqs":2},"sourceEventSeqs":[4],"surfaceOp":{"op":"append"}}"#;
            let parsed = parse_noting(text);
            assert!(parsed.printed);
            let [op, sources] = parsed.noted_at.map(|at| &text[at.expect("noted")..]);
            assert_eq!(op, r#"{"op":"append"}}"#);
            assert_eq!(sources, r#"[4],"surfaceOp":{"op":"append"}}"#);
            let nested = parse_noting(r#"{"data":{"surfaceOp":1,"sourceEventSeqs":[]}}"#);
            assert_eq!(nested.noted_at, [None, None]);
        }
    }
}
