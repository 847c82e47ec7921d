//! A log line read without a tree: its values as a flat list of nodes (a *tape*) that point
//! into the line's text, appended line after line to one list a whole log shares.
//!
//! A parsed tree costs an allocation for every object, array and string that is not a known
//! word, and a free for each when the tree goes: several a line, most of a read's work beyond
//! checking the syntax. A log's lines are nearly all written by `JSON.stringify`, and a line
//! that is its own printed text needs no tree: validation only looks members up and compares a
//! few strings and numbers, and the event keeps the line as its text. So such a line is read
//! here, and anything else (whitespace, a key repeated or spelled with an escape, a number or
//! escape spelled otherwise, a lone surrogate, an object of many keys, a syntax error, a
//! nesting past the limit) is left to the tree parser, which reads every text exactly: the
//! tape only ever answers for lines the tree would call printed.
//!
//! [`JsonRef`] reads a value of either kind with the same questions, so validation is written
//! once for both.

use super::{
    Elide, INDEXED_OBJECT_KEYS, JsString, Json, MAX_JSON_DEPTH, NOTED_KEYS, ParseLimits, escapes_are_printed,
    is_array_index, number_is_printed, same_bytes, string_extent, unescape, word,
};

/// A node of a tape: one value, with the span of its text in the log's text.
#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    /// The index just past this node's subtree (its next sibling's, if any).
    next: u32,
    /// The value's text, quotes included for a string, as offsets into the log's text.
    start: u32,
    end: u32,
    /// A number's bits, a container's count of items or members, an unescaped string's place
    /// in [`Tape::unescaped`] (offset << 32 | length), an elided string's length in WTF-8, a
    /// key's [`signature`].
    value: u64,
}

/// A key's length and first seven bytes in one word: members are looked up by comparing it,
/// and only a key longer than seven bytes is compared further (most keys of a log are not).
/// A plain loop, so that the signature of a constant key is worked out as the code compiles.
#[inline(always)]
fn signature(key: &[u8]) -> u64 {
    let mut word = 0;
    let mut at = 0;
    while at < key.len() && at < 7 {
        word |= u64::from(key[at]) << (8 * at);
        at += 1;
    }
    word | (key.len().min(255) as u64) << 56
}

/// The [`signature`] of the `len` bytes at `at` in `bytes`: one word loaded where eight bytes
/// are there (a key in a line always has its closing quote and colon after it), not a copy,
/// which a wasm build makes a call that copies a byte at a time.
#[inline]
fn signature_in(bytes: &[u8], at: usize, len: usize) -> u64 {
    let head = len.min(7);
    let word = match crate::word::load(bytes, at) {
        Some(word) => word & ((1u64 << (8 * head)) - 1),
        None => bytes[at..at + head]
            .iter()
            .rev()
            .fold(0, |word, &byte| word << 8 | u64::from(byte)),
    };
    word | (len.min(255) as u64) << 56
}

/// The text of a key node (between its quotes), in `text` starting at `base`.
fn key_bytes<'a>(key: &Node, base: u32, text: &'a str) -> &'a [u8] {
    &text.as_bytes()[(key.start - base) as usize + 1..(key.end - base) as usize - 1]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Null,
    False,
    True,
    Number,
    /// A string without escapes: its text between the quotes.
    Plain,
    /// A string with escapes, decoded into [`Tape::unescaped`].
    Unescaped,
    /// A string checked but not decoded ([`Elide`]).
    Elided,
    Array,
    /// Members as key and value nodes in turn; every key is [`Kind::Plain`].
    Object,
}

/// The nodes of a log's lines read so far.
#[derive(Default)]
pub struct Tape {
    nodes: Vec<Node>,
    /// The decoded texts of strings with escapes (other than elided ones).
    unescaped: String,
    /// The containers open while a line is read (kept between lines).
    open: Vec<Open>,
}

#[derive(Clone, Copy)]
struct Open {
    node: u32,
    count: u32,
    /// For an object, the node of the key whose value comes next.
    key: Option<u32>,
    /// For an object, a bit for each of its keys' [`signature`]s (of 64): a key whose bit is
    /// not set yet is new, and only one whose bit is set is looked for among the others.
    keys_seen: u64,
}

/// A line read onto a tape.
#[derive(Clone, Copy, Debug)]
pub struct TapeLine {
    /// The node of the line's value.
    pub root: u32,
    /// Where the values of the noted top-level keys start in the line, as
    /// [`super::Parsed::noted_at`] says.
    pub noted_at: [Option<usize>; NOTED_KEYS],
}

/// What a line read onto the tape is asked to note and leave out.
#[derive(Clone, Copy)]
pub struct TapeOptions<'a> {
    /// The depth limit ([`ParseLimits`]).
    pub limits: ParseLimits,
    /// The key limit of one object.
    pub max_keys: usize,
    /// The top-level keys whose values' starts are noted.
    pub noted_keys: &'a [&'a str],
    /// The strings checked but not decoded.
    pub elide: Elide,
}

/// The fewest bytes of a log's lines a node is reserved for ahead of reading them. DSH's lines
/// hold a node (a key or a value) per 19 to 28 bytes of the bench's logs of 100k and 1M events
/// (22.5 over all of them), and per 9 over the small handmade logs DSH wrote for the tests.
const TEXT_BYTES_PER_NODE: usize = 16;

/// The most bytes of lines a tape is reserved for ahead (48 MiB of nodes): a log may declare
/// up to the per-log limit (1 GiB), and its nodes, reserved in full, would take half again
/// as much memory as its text, which wasm32 may not have to spare. Past this the tape grows
/// as the lines come; every log of the bench's 1M corpus is expected to hold less.
const RESERVED_TEXT_BYTES: usize = 32 << 20;

impl Tape {
    /// Makes room for the nodes of `bytes` of lines at once (up to [`RESERVED_TEXT_BYTES`]),
    /// if memory allows, else the tape grows as lines come: the tape holds a node per key or
    /// value, and growing it node by node copied it again at every doubling (about 2% of a
    /// load's time in wasm).
    pub(crate) fn reserve_for_text(&mut self, bytes: usize) {
        let bytes = bytes.min(RESERVED_TEXT_BYTES);
        let _ = self.nodes.try_reserve_exact(bytes / TEXT_BYTES_PER_NODE);
    }

    /// Nodes so far: a mark [`Tape::truncate`] goes back to.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Forgets the nodes from `len` on (a line read and then not kept).
    pub fn truncate(&mut self, len: usize) {
        self.nodes.truncate(len);
    }

    /// Reads `line`, which lies at `base` in the log's text, when it is exactly
    /// `JSON.stringify` of what it holds and nothing in it needs the tree parser (above);
    /// `None` leaves the tape as it was.
    pub fn read_printed(&mut self, line: &str, base: usize, options: TapeOptions<'_>) -> Option<TapeLine> {
        let mark = self.nodes.len();
        let unescaped = self.unescaped.len();
        let fits = u32::try_from(base + line.len()).is_ok() && u32::try_from(mark + line.len()).is_ok();
        let read = fits.then(|| self.read(line, base, options)).flatten();
        if read.is_none() {
            self.nodes.truncate(mark);
            self.unescaped.truncate(unescaped);
        }
        self.open.clear();
        read
    }

    fn read(&mut self, line: &str, base: usize, options: TapeOptions<'_>) -> Option<TapeLine> {
        let mut reader = Reader {
            tape: self,
            text: line,
            bytes: line.as_bytes(),
            at: 0,
            base: base as u32,
            max_depth: options.limits.max_depth.min(MAX_JSON_DEPTH),
            max_keys: options.max_keys.min(INDEXED_OBJECT_KEYS),
            noted_keys: options.noted_keys,
            noted_at: [None; NOTED_KEYS],
            elide: options.elide,
        };
        let root = reader.tape.nodes.len() as u32;
        reader.value()?;
        (reader.at == reader.bytes.len()).then_some(TapeLine {
            root,
            noted_at: reader.noted_at,
        })
    }

    /// The node of the value of member `key` (whose [`signature`] is given) of the object at
    /// `object`, whose members end at node `end`, read in `text` (which starts at `base` in
    /// the log's text).
    fn member(&self, (object, end): (u32, usize), base: u32, text: &str, signature: u64, key: &[u8]) -> Option<u32> {
        let nodes = &self.nodes;
        let mut at = object as usize + 1;
        while at + 1 < end {
            let name = &nodes[at];
            if name.value == signature && (key.len() <= 7 || same_bytes(key_bytes(name, base, text), key)) {
                return Some(at as u32 + 1);
            }
            at = nodes[at + 1].next as usize;
        }
        None
    }

    /// The value at node `at` of the tape, whose offsets into the log's text are
    /// `base` more than into `text` (the whole text, or one line of it).
    pub fn get<'a>(&'a self, text: &'a str, base: usize, at: u32) -> JsonRef<'a> {
        JsonRef::Tape(TapeRef {
            tape: self,
            text,
            base: base as u32,
            at,
        })
    }
}

/// Reads one line onto the tape; every `None` is a line the tree parser must read.
struct Reader<'t, 'a> {
    tape: &'t mut Tape,
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    base: u32,
    max_depth: usize,
    max_keys: usize,
    noted_keys: &'a [&'a str],
    noted_at: [Option<usize>; NOTED_KEYS],
    elide: Elide,
}

impl Reader<'_, '_> {
    fn value(&mut self) -> Option<()> {
        loop {
            match self.bytes.get(self.at)? {
                open @ (b'{' | b'[') => {
                    if self.tape.open.len() + 1 > self.max_depth {
                        return None;
                    }
                    let object = *open == b'{';
                    let node = self.push(if object { Kind::Object } else { Kind::Array }, self.at, 0);
                    self.at += 1;
                    let empty = self.bytes.get(self.at) == Some(if object { &b'}' } else { &b']' });
                    if empty {
                        self.at += 1;
                        self.close(node, 0);
                    } else {
                        self.tape.open.push(Open {
                            node,
                            count: 0,
                            key: None,
                            keys_seen: 0,
                        });
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                }
                b'"' => self.string()?,
                b't' => self.literal(b"true", Kind::True)?,
                b'f' => self.literal(b"false", Kind::False)?,
                b'n' => self.literal(b"null", Kind::Null)?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // The value is done: go on in its container, closing each one it completes.
            loop {
                let Some(top) = self.tape.open.last_mut() else {
                    return Some(());
                };
                top.count += 1;
                let top = *top;
                let next = *self.bytes.get(self.at)?;
                self.at += 1;
                match (next, top.key.is_some()) {
                    (b',', true) => {
                        self.key()?;
                        break;
                    }
                    (b',', false) => break,
                    (b'}', true) | (b']', false) => {
                        self.tape.open.pop();
                        self.close(top.node, top.count);
                    }
                    _ => return None,
                }
            }
        }
    }

    #[inline]
    fn push(&mut self, kind: Kind, start: usize, value: u64) -> u32 {
        let at = self.tape.nodes.len() as u32;
        self.tape.nodes.push(Node {
            kind,
            next: at + 1,
            start: self.base + start as u32,
            end: self.base + self.at as u32,
            value,
        });
        at
    }

    /// Ends the container at `node`, whose subtree is the nodes after it.
    #[inline]
    fn close(&mut self, node: u32, count: u32) {
        let next = self.tape.nodes.len() as u32;
        let end = self.base + self.at as u32;
        let node = &mut self.tape.nodes[node as usize];
        node.next = next;
        node.end = end;
        node.value = u64::from(count);
    }

    /// `"key":` of the innermost open object: a plain key, new to the object, not an array
    /// index (those would be printed first), within the key limit.
    fn key(&mut self) -> Option<()> {
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let body = self.at + 1;
        let end = word::escaped(self.bytes, body);
        if self.bytes.get(end) != Some(&b'"') || self.bytes.get(end + 1) != Some(&b':') {
            return None;
        }
        let key = &self.bytes[body..end];
        let signature = signature_in(self.bytes, body, key.len());
        let top = *self.tape.open.last()?;
        let bit = 1u64 << (signature.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58);
        // The object's members so far are all the nodes after it.
        let members = (top.node, self.tape.nodes.len());
        let repeated = top.keys_seen & bit != 0
            && self
                .tape
                .member(members, self.base, self.text, signature, key)
                .is_some();
        if repeated || is_array_index(key) || top.count as usize >= self.max_keys {
            return None;
        }
        let start = self.at;
        self.at = end + 1;
        let node = self.push(Kind::Plain, start, signature);
        self.at += 1;
        if self.tape.open.len() == 1 {
            self.note(key);
        }
        let top = self.tape.open.last_mut()?;
        top.key = Some(node);
        top.keys_seen |= bit;
        Some(())
    }

    fn note(&mut self, key: &[u8]) {
        if let Some(noted) = self
            .noted_keys
            .iter()
            .position(|noted| same_bytes(noted.as_bytes(), key))
        {
            self.noted_at[noted] = Some(self.at);
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<()> {
        let start = self.at;
        self.bytes[start..].starts_with(word).then_some(())?;
        self.at += word.len();
        self.push(kind, start, 0);
        Some(())
    }

    fn string(&mut self) -> Option<()> {
        let start = self.at;
        if self.elides_next() {
            let extent = string_extent(self.bytes, start).ok()?;
            if !extent.printed {
                return None;
            }
            self.at = extent.end;
            self.push(Kind::Elided, start, extent.wtf8_len as u64);
            return Some(());
        }
        let body = start + 1;
        let run = word::escaped(self.bytes, body);
        if self.bytes.get(run) == Some(&b'"') {
            self.at = run + 1;
            self.push(Kind::Plain, start, 0);
            return Some(());
        }
        let mut decoded = Vec::new();
        let mut has_surrogate = false;
        let end = unescape(self.bytes, body, &mut decoded, &mut has_surrogate, usize::MAX).ok()?;
        if has_surrogate || !escapes_are_printed(&self.bytes[run..end.at - 1]) {
            return None;
        }
        let decoded = String::from_utf8(decoded).ok()?;
        let place = (self.tape.unescaped.len() as u64) << 32 | decoded.len() as u64;
        self.tape.unescaped.push_str(&decoded);
        self.at = end.at;
        self.push(Kind::Unescaped, start, place);
        Some(())
    }

    /// Whether the string that comes next is a member's value the options elide.
    fn elides_next(&self) -> bool {
        let Some(Open { key: Some(key), .. }) = self.tape.open.last() else {
            return false;
        };
        let key = &self.tape.nodes[*key as usize];
        let key = &self.bytes[(key.start - self.base) as usize + 1..(key.end - self.base) as usize - 1];
        self.elide.keys.iter().any(|elided| same_bytes(elided.as_bytes(), key))
    }

    /// A number spelled as `JSON.stringify` spells it.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        let negative = self.bytes[start] == b'-';
        let mut at = start + usize::from(negative);
        let digits = |at: &mut usize| {
            let from = *at;
            while self.bytes.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at - from
        };
        let integer = at;
        if digits(&mut at) == 0 || (self.bytes[integer] == b'0' && at - integer > 1) {
            return None;
        }
        let whole = at;
        if self.bytes.get(at) == Some(&b'.') {
            at += 1;
            if digits(&mut at) == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(at) {
                at += 1;
            }
            if digits(&mut at) == 0 {
                return None;
            }
        }
        let text = &self.text[start..at];
        let n = if at == whole && whole - integer <= 15 {
            let n = self.bytes[integer..whole]
                .iter()
                .fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64;
            if negative {
                if n == 0.0 {
                    return None;
                }
                -n
            } else {
                n
            }
        } else {
            let n = text.parse::<f64>().ok()?;
            if !number_is_printed(text, n) {
                return None;
            }
            n
        };
        self.at = at;
        self.push(Kind::Number, start, n.to_bits());
        Some(())
    }
}

/// A value of a tape, in the log's text it points into.
#[derive(Clone, Copy)]
pub struct TapeRef<'a> {
    tape: &'a Tape,
    text: &'a str,
    /// Where `text` starts in the log's text.
    base: u32,
    at: u32,
}

impl<'a> TapeRef<'a> {
    #[inline]
    fn node(self) -> &'a Node {
        &self.tape.nodes[self.at as usize]
    }

    #[inline]
    fn at(self, at: u32) -> TapeRef<'a> {
        TapeRef { at, ..self }
    }

    /// The value's JSON text.
    fn source(self) -> &'a str {
        let node = self.node();
        &self.text[(node.start - self.base) as usize..(node.end - self.base) as usize]
    }

    /// The items of an array, or the keys and values of an object in turn.
    fn children(self) -> Children<'a> {
        let node = self.node();
        let container = matches!(node.kind, Kind::Array | Kind::Object);
        let at = self.at + 1;
        let end = if container { node.next } else { at };
        Children { value: self, at, end }
    }

    #[inline]
    fn str(self) -> Option<&'a str> {
        let node = self.node();
        match node.kind {
            Kind::Plain => Some(&self.text[(node.start - self.base) as usize + 1..(node.end - self.base) as usize - 1]),
            Kind::Unescaped => {
                let (from, len) = ((node.value >> 32) as usize, node.value as u32 as usize);
                Some(&self.tape.unescaped[from..from + len])
            }
            _ => None,
        }
    }
}

/// The values of a container on a tape, one after another (the items of an array, or the keys
/// and values of an object in turn).
#[derive(Clone)]
pub struct Children<'a> {
    value: TapeRef<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for Children<'a> {
    type Item = TapeRef<'a>;

    fn next(&mut self) -> Option<TapeRef<'a>> {
        (self.at < self.end).then(|| {
            let child = self.value.at(self.at);
            self.at = child.node().next;
            child
        })
    }
}

/// The items of an array ([`JsonRef::items`]).
pub enum Items<'a> {
    /// A tree's.
    Tree(std::slice::Iter<'a, Json>),
    /// A tape's.
    Tape(Children<'a>),
}

impl<'a> Iterator for Items<'a> {
    type Item = JsonRef<'a>;

    fn next(&mut self) -> Option<JsonRef<'a>> {
        match self {
            Items::Tree(items) => items.next().map(JsonRef::Tree),
            Items::Tape(children) => children.next().map(JsonRef::Tape),
        }
    }
}

/// The keys (as WTF-8) and values of an object ([`JsonRef::members`]).
pub enum Members<'a> {
    /// A tree's.
    Tree(std::slice::Iter<'a, (JsString, Json)>),
    /// A tape's: keys and values in turn.
    Tape(Children<'a>),
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a [u8], JsonRef<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::Tree(members) => members.next().map(|(key, value)| (key.as_wtf8(), JsonRef::Tree(value))),
            Members::Tape(children) => {
                let key = children.next()?.str()?;
                Some((key.as_bytes(), JsonRef::Tape(children.next()?)))
            }
        }
    }
}

/// A JSON value read either from a tree or from a tape, asked the same questions.
#[derive(Clone, Copy)]
pub enum JsonRef<'a> {
    /// A value of a parsed tree.
    Tree(&'a Json),
    /// A value of a tape.
    Tape(TapeRef<'a>),
}

impl<'a> From<&'a Json> for JsonRef<'a> {
    fn from(value: &'a Json) -> Self {
        JsonRef::Tree(value)
    }
}

impl<'a> JsonRef<'a> {
    /// The member `key` of an object (`None` for anything else). Inlined: its keys are
    /// constants, whose signatures are then worked out as the code is compiled.
    #[inline(always)]
    pub fn get(self, key: &str) -> Option<JsonRef<'a>> {
        self.member(key.as_bytes(), signature(key.as_bytes()))
    }

    /// [`JsonRef::get`] out of line, for the paths few events take (errors, rare event types,
    /// legacy shapes, closers): every `get` is inlined where it is asked, and inlined on every
    /// rare path it would only make the wasm larger.
    #[inline(never)]
    pub fn lookup(self, key: &str) -> Option<JsonRef<'a>> {
        self.get(key)
    }

    /// [`JsonRef::get`] of the key whose signature is given.
    #[inline]
    fn member(self, key: &[u8], signature: u64) -> Option<JsonRef<'a>> {
        match self {
            JsonRef::Tree(value) => value.as_object()?.get_js(key).map(JsonRef::Tree),
            JsonRef::Tape(value) => {
                if value.node().kind != Kind::Object {
                    return None;
                }
                let members = (value.at, value.node().next as usize);
                let at = value.tape.member(members, value.base, value.text, signature, key)?;
                Some(JsonRef::Tape(value.at(at)))
            }
        }
    }

    /// The string, when this is one without lone surrogates (an elided one reads as `None`).
    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            JsonRef::Tree(value) => value.as_str(),
            JsonRef::Tape(value) => value.str(),
        }
    }

    /// Whether this is a string.
    pub fn is_string(self) -> bool {
        match self {
            JsonRef::Tree(value) => value.is_string(),
            JsonRef::Tape(value) => matches!(value.node().kind, Kind::Plain | Kind::Unescaped | Kind::Elided),
        }
    }

    /// Whether this is a string of at least one character.
    pub fn is_non_empty_string(self) -> bool {
        self.string_len().is_some_and(|len| len > 0)
    }

    /// The length in WTF-8 bytes of a string, elided or not.
    pub fn string_len(self) -> Option<usize> {
        match self {
            JsonRef::Tree(value) => value.as_js_string().map(JsString::wtf8_len),
            JsonRef::Tape(value) => match value.node().kind {
                Kind::Elided => Some(value.node().value as usize),
                _ => value.str().map(str::len),
            },
        }
    }

    /// The number, if this is one.
    pub fn as_f64(self) -> Option<f64> {
        match self {
            JsonRef::Tree(value) => value.as_f64(),
            JsonRef::Tape(value) => (value.node().kind == Kind::Number).then(|| f64::from_bits(value.node().value)),
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(self) -> Option<bool> {
        match self {
            JsonRef::Tree(Json::Bool(b)) => Some(*b),
            JsonRef::Tree(_) => None,
            JsonRef::Tape(value) => match value.node().kind {
                Kind::True => Some(true),
                Kind::False => Some(false),
                _ => None,
            },
        }
    }

    /// Whether this is `null`.
    pub fn is_null(self) -> bool {
        match self {
            JsonRef::Tree(value) => matches!(value, Json::Null),
            JsonRef::Tape(value) => value.node().kind == Kind::Null,
        }
    }

    /// A string's WTF-8 bytes (`None` for anything else, and for an elided string).
    pub fn string_bytes(self) -> Option<&'a [u8]> {
        match self {
            JsonRef::Tree(value) => value.as_js_string().map(JsString::as_wtf8),
            JsonRef::Tape(value) => value.str().map(str::as_bytes),
        }
    }

    /// Whether this is an array.
    pub fn is_array(self) -> bool {
        match self {
            JsonRef::Tree(value) => matches!(value, Json::Array(_)),
            JsonRef::Tape(value) => value.node().kind == Kind::Array,
        }
    }

    /// Whether this is an object.
    pub fn is_object(self) -> bool {
        match self {
            JsonRef::Tree(value) => matches!(value, Json::Object(_)),
            JsonRef::Tape(value) => value.node().kind == Kind::Object,
        }
    }

    /// The items of an array (`None` for anything else).
    pub fn items(self) -> Option<Items<'a>> {
        match self {
            JsonRef::Tree(Json::Array(items)) => Some(Items::Tree(items.iter())),
            JsonRef::Tape(value) if value.node().kind == Kind::Array => Some(Items::Tape(value.children())),
            _ => None,
        }
    }

    /// How many items an array holds, or members an object (`None` for anything else).
    pub fn len(self) -> Option<usize> {
        match self {
            JsonRef::Tree(Json::Array(items)) => Some(items.len()),
            JsonRef::Tree(Json::Object(object)) => Some(object.len()),
            JsonRef::Tree(_) => None,
            JsonRef::Tape(value) => {
                matches!(value.node().kind, Kind::Array | Kind::Object).then_some(value.node().value as usize)
            }
        }
    }

    /// The keys (as WTF-8) and values of an object, in order (`None` for anything else).
    pub fn members(self) -> Option<Members<'a>> {
        match self {
            JsonRef::Tree(Json::Object(object)) => Some(Members::Tree(object.entries().iter())),
            JsonRef::Tape(value) if value.node().kind == Kind::Object => Some(Members::Tape(value.children())),
            _ => None,
        }
    }

    /// Whether an object has the member `key`.
    pub fn contains_key(self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The value as a tree of its own (a tape's value read again from its text, in full).
    pub fn to_json(self) -> Json {
        match self {
            JsonRef::Tree(value) => value.clone(),
            JsonRef::Tape(value) => {
                Json::parse(value.source(), ParseLimits::default()).expect("a tape holds JSON it has checked")
            }
        }
    }

    /// `JSON.stringify(value)`: a tape's value is its text.
    pub fn to_js_string(self) -> String {
        match self {
            JsonRef::Tree(value) => value.to_js_string(),
            JsonRef::Tape(value) => value.source().to_owned(),
        }
    }

    /// The address of the value, which tells apart two objects or arrays as JavaScript's
    /// identity does.
    pub fn address(self) -> usize {
        match self {
            JsonRef::Tree(value) => std::ptr::from_ref(value) as usize,
            JsonRef::Tape(value) => std::ptr::from_ref(value.node()) as usize,
        }
    }
}

/// Values compare by JSON meaning, whichever kind holds them.
impl PartialEq for JsonRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (*self, *other) {
            (JsonRef::Tree(a), JsonRef::Tree(b)) => a == b,
            (a, b) if a.is_string() && b.is_string() => match (a.as_str(), b.as_str()) {
                (Some(a), Some(b)) => a == b,
                _ => a.to_json() == b.to_json(),
            },
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => a.to_json() == b.to_json(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTED: [&str; 2] = ["surfaceOp", "sourceEventSeqs"];

    fn options(elide: Elide) -> TapeOptions<'static> {
        TapeOptions {
            limits: ParseLimits { max_depth: 8 },
            max_keys: 1_000,
            noted_keys: &NOTED,
            elide,
        }
    }

    /// `tape` answers every question as `tree` does.
    fn same(tape: JsonRef<'_>, tree: &Json) {
        let tree_ref = JsonRef::Tree(tree);
        assert_eq!(tape.as_str(), tree_ref.as_str(), "{}", tree.to_js_string());
        assert_eq!(tape.as_f64(), tree_ref.as_f64());
        assert_eq!(tape.as_bool(), tree_ref.as_bool());
        assert_eq!(tape.is_null(), tree_ref.is_null());
        assert_eq!(tape.is_string(), tree_ref.is_string());
        assert_eq!(tape.string_len(), tree_ref.string_len());
        assert_eq!(tape.is_array(), tree_ref.is_array());
        assert_eq!(tape.is_object(), tree_ref.is_object());
        assert_eq!(tape.len(), tree_ref.len());
        assert!(tape == tree_ref);
        assert_eq!(tape.to_json(), *tree);
        assert_eq!(tape.to_js_string(), tree.to_js_string());
        if let (Some(items), Some(expected)) = (tape.items(), tree.as_array()) {
            let items: Vec<JsonRef<'_>> = items.collect();
            assert_eq!(items.len(), expected.len());
            items
                .into_iter()
                .zip(expected)
                .for_each(|(item, expected)| same(item, expected));
        }
        if let (Some(members), Some(expected)) = (tape.members(), tree.as_object()) {
            let members: Vec<(&[u8], JsonRef<'_>)> = members.collect();
            assert_eq!(members.len(), expected.len());
            for ((key, value), (expected_key, expected_value)) in members.into_iter().zip(expected.iter()) {
                assert_eq!(key, expected_key.as_wtf8());
                same(value, expected_value);
                let key = std::str::from_utf8(key).expect("a plain key");
                same(tape.get(key).expect("found by its key"), expected_value);
                same(tape.lookup(key).expect("found by its key"), expected_value);
            }
            assert!(tape.get("absent").is_none() && tape.get("surfaceOq").is_none());
        }
    }

    fn parsed(line: &str, elide: Elide) -> Option<super::super::Parsed> {
        Json::parse_noting_printed(
            line,
            ParseLimits { max_depth: 8 },
            1_000,
            &NOTED,
            &super::super::Vocabulary::EMPTY,
            elide,
        )
        .ok()
    }

    /// Lines `JSON.stringify` prints are read onto the tape, answer as their trees do and note
    /// what the tree parser notes; the tape's neighbours (before and after) are left alone.
    #[test]
    fn a_printed_line_reads_as_its_tree() {
        let lines = [
            r#"{"type":"user/message","seq":3,"time":17,"data":{"id":"m","content":[{"type":"text","text":"a \"b\"\n\u0001 é 😀"}],"n":[-1.5e-7,1e+21,0.1,-3,1234567890123456]},"surfaceOp":{"op":"append"},"sourceEventSeqs":[1,2]}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[{},[],"",0,true,false,null,{"a":{"b":{"c":[1]}}}]"#,
            r#""just a string""#,
            r#"{"surfaceOp":"append","x":{"surfaceOp":1}}"#,
            r#"{"surfaceOpera":1,"surfaceOp":2,"a":"\\","b":"\t\r\b\f"}"#,
        ];
        let mut tape = Tape::default();
        tape.read_printed("[1]", 0, options(Elide::NONE)).expect("a first line");
        for (n, line) in lines.iter().enumerate() {
            let base = 100 * (n + 1);
            let expected = parsed(line, Elide::NONE).expect("valid JSON");
            assert!(expected.printed, "{line}");
            let read = tape.read_printed(line, base, options(Elide::NONE)).expect(line);
            assert_eq!(read.noted_at, expected.noted_at, "{line}");
            same(tape.get(line, base, read.root), &expected.value);
        }
        same(tape.get("[1]", 0, 0), &Json::Array(vec![Json::int(1)]));
    }

    /// An elided string is kept by its length, and reads as the tree's elided string does.
    #[test]
    fn an_elided_string_keeps_its_length() {
        let line = r#"{"text":"a\nb é","arguments":"{}","other":"x\ny"}"#;
        let elide = Elide {
            keys: &["text", "arguments"],
        };
        let mut tape = Tape::default();
        let root = tape.read_printed(line, 0, options(elide)).expect("printed").root;
        let value = tape.get(line, 0, root);
        let tree = parsed(line, elide).expect("valid").value;
        for key in ["text", "arguments", "other"] {
            let (taped, expected) = (
                value.get(key).expect("present"),
                JsonRef::Tree(tree.get(key).expect("present")),
            );
            assert_eq!(taped.string_len(), expected.string_len(), "{key}");
            assert_eq!(taped.as_str(), expected.as_str(), "{key}");
            assert!(taped.is_non_empty_string());
        }
        assert_eq!(value.get("text").and_then(JsonRef::string_len), Some("a\nb é".len()));
        assert_eq!(
            value.to_json(),
            Json::parse(line, ParseLimits::default()).expect("valid")
        );
    }

    /// Whatever the tape does not read is left to the tree parser: text not printed, keys
    /// repeated, spelled with escapes or array indices, lone surrogates, many keys, nesting
    /// past the limit, anything not JSON. The tape is as it was after each.
    #[test]
    fn anything_else_is_left_to_the_tree_parser() {
        let many_keys = format!(
            "{{{}}}",
            (0..17).map(|k| format!("\"k{k}\":{k}")).collect::<Vec<_>>().join(",")
        );
        let lines = [
            r#"{"a":1, "b":2}"#,
            r#" {"a":1}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"aaaaaaaaa1":1,"aaaaaaaaa1":2}"#,
            r#"{"1":1}"#,
            r#"{"a\"b":1}"#,
            r#"{"a":-0}"#,
            r#"{"a":1.0}"#,
            r#"{"a":1E5}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"text":"\ud800\u0041"}"#,
            r#"[[[[[[[[[1]]]]]]]]]"#,
            r#"{"a":01}"#,
            r#"{"a":1}x"#,
            r#"{"a":tru}"#,
            r#"{"a":"unterminated}"#,
            "",
            many_keys.as_str(),
        ];
        let mut tape = Tape::default();
        let first = tape
            .read_printed("[7]", 0, options(Elide { keys: &["text"] }))
            .expect("a first line");
        for line in lines {
            let before = (tape.len(), tape.unescaped.len());
            assert!(
                tape.read_printed(line, 3, options(Elide { keys: &["text"] })).is_none(),
                "{line}"
            );
            assert_eq!((tape.len(), tape.unescaped.len()), before, "{line}");
        }
        same(tape.get("[7]", 0, first.root), &Json::Array(vec![Json::int(7)]));
        let sixteen = format!(
            "{{{}}}",
            (0..16).map(|k| format!("\"k{k}\":{k}")).collect::<Vec<_>>().join(",")
        );
        assert!(tape.read_printed(&sixteen, 3, options(Elide::NONE)).is_some());
    }

    #[test]
    fn a_signature_is_the_same_loaded_or_built() {
        let line = br#"{"type":"a","surfaceOp":1,"x":2}"#;
        for (at, len) in [(2, 4), (14, 9), (29, 1), (30, 2), (2, 0)] {
            let key = &line[at..at + len];
            assert_eq!(
                signature_in(line, at, len),
                signature(key),
                "{:?}",
                std::str::from_utf8(key)
            );
        }
        assert_ne!(signature(b"type"), signature(b"typf"));
        assert_ne!(signature(b"type"), signature(b"types"));
    }

    /// A log that declares a gigabyte of lines reserves nodes for no more than the bound.
    #[test]
    fn a_tape_is_reserved_for_a_bounded_text() {
        let mut tape = Tape::default();
        tape.reserve_for_text(1 << 20);
        assert!(tape.nodes.capacity() >= (1 << 20) / TEXT_BYTES_PER_NODE);
        let mut tape = Tape::default();
        tape.reserve_for_text(1 << 30);
        assert_eq!(tape.nodes.capacity(), RESERVED_TEXT_BYTES / TEXT_BYTES_PER_NODE);
    }
}
