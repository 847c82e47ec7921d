//! Packed chunk rows (`text-chunks`, `reasoning-chunks`, `tool-call-chunks`): validation and
//! lossless expansion into the `assistant/chunk` events they stand for.

use crate::json::{Json, JsonObject, JsonRef, is_safe_integer};

/// Why a row-tagged line is not a valid row (it then counts as a damaged line).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct MalformedRow;

/// The row tag of a parsed line, if it is one.
pub(super) fn row_tag(value: JsonRef<'_>) -> Option<&str> {
    value
        .get("type")
        .and_then(JsonRef::as_str)
        .filter(|tag| matches!(*tag, "text-chunks" | "reasoning-chunks" | "tool-call-chunks"))
}

/// What one parsed line stands for: one event (most lines), or a packed row's events.
pub(crate) enum StorageRecord {
    Event(Json),
    Row(Vec<Json>),
}

impl StorageRecord {
    /// The events, in order.
    pub(crate) fn events(&self) -> &[Json] {
        match self {
            StorageRecord::Event(event) => std::slice::from_ref(event),
            StorageRecord::Row(events) => events,
        }
    }
}

impl IntoIterator for StorageRecord {
    type Item = Json;
    type IntoIter = std::iter::Chain<std::option::IntoIter<Json>, std::vec::IntoIter<Json>>;

    fn into_iter(self) -> Self::IntoIter {
        let (event, row) = match self {
            StorageRecord::Event(event) => (Some(event), Vec::new()),
            StorageRecord::Row(events) => (None, events),
        };
        event.into_iter().chain(row)
    }
}

/// Decodes one parsed line: a row expands to its members, anything else is one event as is
/// (a line's one event is not put in a `Vec`: nearly every line is one).
pub(crate) fn decode_storage_record(value: Json) -> Result<StorageRecord, MalformedRow> {
    let Some(tag) = row_tag(JsonRef::Tree(&value)).map(str::to_owned) else {
        return Ok(StorageRecord::Event(value));
    };
    let Json::Object(row) = value else {
        return Ok(StorageRecord::Event(value));
    };
    expand(&tag, &row).map(StorageRecord::Row)
}

/// Out of line: most logs have no rows, and the engine then never optimises this.
#[inline(never)]
fn expand(tag: &str, row: &JsonObject) -> Result<Vec<Json>, MalformedRow> {
    if !row.has_exact_keys(&["type", "seq0", "time0", "data"]) {
        return Err(MalformedRow);
    }
    let seq0 = row
        .get("seq0")
        .and_then(Json::as_f64)
        .filter(|n| is_safe_integer(*n) && *n >= 0.0)
        .ok_or(MalformedRow)?;
    let time0 = row
        .get("time0")
        .and_then(Json::as_f64)
        .filter(|n| is_safe_integer(*n))
        .ok_or(MalformedRow)?;
    let data = row.get("data").and_then(Json::as_object).ok_or(MalformedRow)?;
    let tool = tag == "tool-call-chunks";
    let members = data
        .get(payload_key(tool, data)?)
        .and_then(Json::as_array)
        .ok_or(MalformedRow)?;
    if members.is_empty() || !members.iter().all(Json::is_string) {
        return Err(MalformedRow);
    }
    if !is_safe_integer(seq0 + (members.len() - 1) as f64) {
        return Err(MalformedRow);
    }
    let times = member_times(time0, data, members.len())?;
    let chunk = ChunkParts::of(tag, data)?;
    let events = members.iter().zip(times).enumerate();
    Ok(events
        .map(|(k, (member, time))| chunk.event(member, seq0 + k as f64, time))
        .collect())
}

/// The member of a row's data that holds its chunks' payloads, once the data is checked to
/// hold exactly the members its kind of row has.
fn payload_key(tool: bool, data: &JsonObject) -> Result<&'static str, MalformedRow> {
    if !tool {
        return match data.has_exact_keys(&["turn", "step", "index", "dt", "texts"]) {
            true => Ok("texts"),
            false => Err(MalformedRow),
        };
    }
    let with_name = data.has_exact_keys(&["turn", "step", "index", "id", "name", "dt", "args"]);
    if !with_name && !data.has_exact_keys(&["turn", "step", "index", "id", "dt", "args"]) {
        return Err(MalformedRow);
    }
    if !data.get("id").is_some_and(Json::is_string) || (with_name && !data.get("name").is_some_and(Json::is_string)) {
        return Err(MalformedRow);
    }
    Ok("args")
}

/// Each of a row's `count` members' times: the row's first time, then each after the one
/// before by the next of its gaps (`dt`, one fewer than the members), every one a safe integer.
fn member_times(time0: f64, data: &JsonObject, count: usize) -> Result<Vec<f64>, MalformedRow> {
    let gaps = data.get("dt").and_then(Json::as_array).ok_or(MalformedRow)?;
    let gaps: Vec<f64> = gaps
        .iter()
        .map(|gap| gap.as_f64().filter(|n| is_safe_integer(*n)).ok_or(MalformedRow))
        .collect::<Result<_, _>>()?;
    if gaps.len() != count - 1 {
        return Err(MalformedRow);
    }
    let mut times = Vec::with_capacity(count);
    let mut time = time0;
    times.push(time);
    for gap in gaps {
        time += gap;
        if !is_safe_integer(time) {
            return Err(MalformedRow);
        }
        times.push(time);
    }
    Ok(times)
}

/// What every chunk event of a row shares: its kind, turn, step and index, and a tool
/// call's id and name.
struct ChunkParts<'a> {
    chunk_type: &'static str,
    turn: Json,
    step: Json,
    index: Json,
    /// A tool call's row's data (its id and name), `None` for text and reasoning rows.
    call: Option<&'a JsonObject>,
}

impl<'a> ChunkParts<'a> {
    fn of(tag: &str, data: &'a JsonObject) -> Result<ChunkParts<'a>, MalformedRow> {
        let number = |key| {
            data.get(key)
                .filter(|v| matches!(v, Json::Number(_)))
                .cloned()
                .ok_or(MalformedRow)
        };
        let (chunk_type, call) = match tag {
            "text-chunks" => ("text-delta", None),
            "reasoning-chunks" => ("reasoning-delta", None),
            _ => ("tool-call-delta", Some(data)),
        };
        Ok(ChunkParts {
            chunk_type,
            turn: number("turn")?,
            step: number("step")?,
            index: number("index")?,
            call,
        })
    }

    /// The `assistant/chunk` event a row's `member` stands for.
    fn event(&self, member: &Json, seq: f64, time: f64) -> Json {
        let mut chunk = JsonObject::new();
        chunk.insert("type", Json::str(self.chunk_type));
        chunk.insert("index", self.index.clone());
        match self.call {
            Some(call) => {
                chunk.insert("id", call.get("id").cloned().unwrap_or(Json::Null));
                if let Some(name) = call.get("name") {
                    chunk.insert("name", name.clone());
                }
                chunk.insert("argumentsDelta", member.clone());
            }
            None => chunk.insert("text", member.clone()),
        }
        let mut data = JsonObject::new();
        data.insert("turn", self.turn.clone());
        data.insert("step", self.step.clone());
        data.insert("chunk", Json::Object(chunk));
        let mut event = JsonObject::new();
        event.insert("type", Json::str("assistant/chunk"));
        event.insert("seq", Json::Number(seq));
        event.insert("time", Json::Number(time));
        event.insert("data", Json::Object(data));
        Json::Object(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ParseLimits;

    fn decode(line: &str) -> Result<Vec<Json>, MalformedRow> {
        let record = decode_storage_record(Json::parse(line, ParseLimits::default()).expect("json"))?;
        Ok(record.into_iter().collect())
    }

    #[test]
    fn text_row_expands_like_the_spec_example() {
        let events = decode(r#"{"type":"text-chunks","seq0":5,"time0":1700000000300,"data":{"turn":1,"step":1,"index":0,"dt":[12,0],"texts":["Hel","lo, ","world"]}}"#).expect("row");
        let lines: Vec<String> = events.iter().map(Json::to_js_string).collect();
        assert_eq!(
            lines,
            [
                r#"{"type":"assistant/chunk","seq":5,"time":1700000000300,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"Hel"}}}"#,
                r#"{"type":"assistant/chunk","seq":6,"time":1700000000312,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"lo, "}}}"#,
                r#"{"type":"assistant/chunk","seq":7,"time":1700000000312,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"world"}}}"#,
            ]
        );
    }

    #[test]
    fn tool_call_row_keeps_the_shared_name() {
        let events = decode(r#"{"type":"tool-call-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":2,"index":1,"id":"c1","name":"bash","dt":[1],"args":["{\"a","\":1}"]}}"#).expect("row");
        assert_eq!(
            events[1].to_js_string(),
            r#"{"type":"assistant/chunk","seq":1,"time":2,"data":{"turn":1,"step":2,"chunk":{"type":"tool-call-delta","index":1,"id":"c1","name":"bash","argumentsDelta":"\":1}"}}}"#
        );
    }

    #[test]
    fn malformed_rows_are_refused() {
        for bad in [
            r#"{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}}"#,
            r#"{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a"]}}"#,
            r#"{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":[1]}}"#,
            r#"{"type":"text-chunks","seq0":-1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}"#,
            r#"{"type":"text-chunks","seq0":0,"time0":1.5,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}"#,
            r#"{"type":"text-chunks","seq0":0,"time0":1,"extra":1,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}"#,
            r#"{"type":"text-chunks","seq0":0,"time0":9007199254740991,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}"#,
            r#"{"type":"tool-call-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"id":7,"dt":[],"args":["a"]}}"#,
        ] {
            assert_eq!(decode(bad), Err(MalformedRow), "{bad}");
        }
    }

    #[test]
    fn other_values_pass_through() {
        assert_eq!(decode("42").expect("value").len(), 1);
        assert_eq!(decode(r#"{"type":"turn/start","seq":0}"#).expect("event").len(), 1);
    }
}
