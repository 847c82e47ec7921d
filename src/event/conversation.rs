//! Which events are messages of the conversation a reference snapshot shows, and what
//! retention needs to know of each before reading its text: its role, whether it is a
//! compaction checkpoint, and its text's length. Found once, while a read or an append has
//! the parsed event at hand.

use crate::json::{JsString, Json, JsonRef};

/// What a reference snapshot needs of a message event before its text: found while the
/// parsed object is at hand, so retention reads only the texts it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConversationMessage {
    /// Who said it.
    pub role: Role,
    /// Whether it is a compaction checkpoint (never dropped by retention).
    pub checkpoint: bool,
    /// UTF-8 bytes of its `text` blocks joined with `"\n"` (never zero).
    pub text_bytes: usize,
}

/// Who said a message of the conversation a snapshot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A direct user prompt or a compaction checkpoint.
    User,
    /// A model reply.
    Assistant,
}

impl Role {
    /// `"user"` or `"assistant"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// The message `event` is in a snapshot's conversation, with its content blocks: direct user
/// prompts (`source.kind == "user"`), compaction checkpoints and every assistant message, when
/// their joined text is not empty; `None` for anything else.
pub fn conversation_message(event: &Json) -> Option<(ConversationMessage, &[Json])> {
    let kind = event.get("type").and_then(Json::as_str);
    let (message, content) = conversation_facts(JsonRef::Tree(event), kind)?;
    let blocks = match content {
        Some(JsonRef::Tree(Json::Array(blocks))) => blocks.as_slice(),
        _ => &[],
    };
    Some((message, blocks))
}

/// [`conversation_message`] of an event read from a tree or a tape whose `type` is `kind`, with
/// its content (when present).
pub(crate) fn conversation_facts<'a>(
    event: JsonRef<'a>,
    kind: Option<&str>,
) -> Option<(ConversationMessage, Option<JsonRef<'a>>)> {
    // The data is looked up in the arms: most events are neither message.
    let (role, checkpoint, content) = match kind? {
        "user/message" => {
            let data = event.get("data");
            let source = data.and_then(|d| d.get("source"));
            let checkpoint = source.is_some_and(is_checkpoint_source);
            let direct = source.and_then(|s| s.get("kind")).and_then(JsonRef::as_str) == Some("user");
            if !checkpoint && !direct {
                return None;
            }
            (Role::User, checkpoint, data.and_then(|d| d.get("content")))
        }
        "assistant/message" => (
            Role::Assistant,
            false,
            event
                .get("data")
                .and_then(|d| d.get("message"))
                .and_then(|m| m.get("content")),
        ),
        // `tool/result`, and (defensively) anything a surface never holds.
        _ => return None,
    };
    // `Buffer.byteLength`: a lone surrogate takes 3 bytes in WTF-8, like the U+FFFD it becomes;
    // the texts are joined with "\n".
    let mut text_bytes: Option<usize> = None;
    for block in content.and_then(JsonRef::items)? {
        if block.get("type").and_then(JsonRef::as_str) != Some("text") {
            continue;
        }
        if let Some(len) = block.get("text").and_then(JsonRef::string_len) {
            text_bytes = Some(text_bytes.map_or(len, |before| before + 1 + len));
        }
    }
    let text_bytes = text_bytes.filter(|&bytes| bytes > 0)?;
    let message = ConversationMessage {
        role,
        checkpoint,
        text_bytes,
    };
    Some((message, content))
}

/// Whether a `user/message` source is a compaction checkpoint: `kind == "plugin"` and
/// `plugin == "compact"`, nothing else examined.
pub fn is_compact_checkpoint_source(source: &Json) -> bool {
    is_checkpoint_source(JsonRef::Tree(source))
}

fn is_checkpoint_source(source: JsonRef<'_>) -> bool {
    source.get("kind").and_then(JsonRef::as_str) == Some("plugin")
        && source.get("plugin").and_then(JsonRef::as_str) == Some("compact")
}

/// The strings `text` of the `text` blocks; other blocks are ignored.
pub fn text_blocks(blocks: &[Json]) -> impl Iterator<Item = &JsString> {
    blocks
        .iter()
        .filter(|block| block.get("type").and_then(Json::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Json::as_js_string))
}
