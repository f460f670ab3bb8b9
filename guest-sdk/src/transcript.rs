//! Reading the session's transcript (world 0.4.0, the `transcript` grant):
//! `transcript::tail(64 << 10)?` gives its last whole lines.
//!
//! The host reads only the file the agent's bridge named for this event, and
//! only inside the folder where that agent keeps transcripts; an event from
//! elsewhere (JSONL, a replay) names none, and `tail` says so with `Ok(None)`.
//! Off wasm (native unit tests of a hook) no event names a transcript: every
//! call is `Ok(None)`.

use crate::HookError;

/// The last whole lines of the transcript, at most `max_bytes` (and the
/// grant's cap); `Ok(None)` when the event names no transcript.
pub fn tail(max_bytes: u64) -> Result<Option<Vec<u8>>, HookError> {
    backend::tail(max_bytes).map_err(|why| HookError::new(format!("transcript: {why}")))
}

/// The last whole lines of a JSONL transcript (Claude Code's, Codex's), each
/// parsed; lines that are not JSON are left out.
pub fn tail_json(max_bytes: u64) -> Result<Option<Vec<serde_json::Value>>, HookError> {
    Ok(tail(max_bytes)?.map(|bytes| {
        bytes
            .split(|&b| b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .collect()
    }))
}

/// The text of the last assistant message among Claude Code transcript
/// `lines` (its `text` parts joined by newlines), if any has text.
pub fn last_assistant_text(lines: &[serde_json::Value]) -> Option<String> {
    let message = lines
        .iter()
        .rev()
        .find(|l| l["message"]["role"] == "assistant")?;
    let texts: Vec<&str> = message["message"]["content"]
        .as_array()?
        .iter()
        .filter(|part| part["type"] == "text")
        .filter_map(|part| part["text"].as_str())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::transcript::{self, TranscriptError};

    pub(super) fn tail(max_bytes: u64) -> Result<Option<Vec<u8>>, String> {
        match transcript::tail(max_bytes) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(TranscriptError::None) => Ok(None),
            Err(TranscriptError::Denied(why)) => Err(format!("denied: {why}")),
            Err(TranscriptError::Failed(why)) => Err(format!("failed: {why}")),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    pub(super) fn tail(_max_bytes: u64) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_assistant_message_is_its_text_parts_joined() {
        let lines: Vec<serde_json::Value> = [
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"first"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":"go on"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"},{"type":"tool_use","name":"Bash"},{"type":"text","text":"<promise>DONE</promise>"}]}}"#,
            r#"{"type":"summary"}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        assert_eq!(
            last_assistant_text(&lines).as_deref(),
            Some("done\n<promise>DONE</promise>")
        );
        assert_eq!(last_assistant_text(&lines[1..2]), None);
        assert_eq!(tail(10).unwrap(), None, "off wasm no event names one");
    }
}
