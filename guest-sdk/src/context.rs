//! Context for the model: text a handler adds to what the agent's model sees next
//! (world 0.3.0's `reply.context`).
//!
//! ```no_run
//! use hookrt_sdk::prelude::*;
//!
//! fn submitted(data: &PromptSubmitted) {
//!     if data.prompt.contains("deploy") {
//!         context::add("Deploys go through `make release`; never push to main directly.");
//!     }
//! }
//! ```
//!
//! [`add`] appends to a buffer of the delivery being handled; after the handler
//! returns, the SDK's `handle` takes the buffer and sends it with the answer (pieces
//! joined by a newline). When the handler returns an error the buffer is dropped: a
//! failed delivery adds nothing. It works the same from `define_hook!` handlers and
//! [`Hook`](crate::Hook) methods, and on every event class.
//!
//! The runtime keeps every hook's context in registration order, attributed to its hook,
//! at most 10,000 bytes per event from all hooks together (a piece that does not fit
//! whole is dropped and recorded so), and each agent bridge forwards it where its agent
//! takes it (Claude Code: `additionalContext`). It is gathered on tool approvals,
//! permission requests, gates and the observe kinds agents take context on
//! (`session.started`, `action.result`, ...); elsewhere it is ignored. Every handler's
//! context is delivered, whatever its subscription (the kind, `observe:<kind>`,
//! `rewrite:<kind>` or `*`); aggregate observers add none (theirs is dropped with a
//! warning naming the hook). The text reaches the model: never put secrets in it.

use std::cell::RefCell;

std::thread_local! {
    static PIECES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Adds `text` to the model's context for the event being handled. Called several
/// times, the pieces are joined by a newline in the order added; empty text adds nothing.
pub fn add(text: impl Into<String>) {
    let text = text.into();
    if !text.is_empty() {
        PIECES.with(|pieces| pieces.borrow_mut().push(text));
    }
}

/// Takes what handlers added since the last take: the pieces joined by a newline, or
/// `None` when nothing was added. The SDK's `handle` calls it after every handler; in a
/// native test of a hook, call it after the handler to see what it added.
pub fn take() -> Option<String> {
    let pieces = PIECES.with(|pieces| std::mem::take(&mut *pieces.borrow_mut()));
    if pieces.is_empty() {
        None
    } else {
        Some(pieces.join("\n"))
    }
}

/// Drops whatever was added and not taken (a failed handler's context).
pub(crate) fn discard() {
    PIECES.with(|pieces| pieces.borrow_mut().clear());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_with_newlines_and_a_take_empties_the_buffer() {
        discard();
        assert_eq!(take(), None);
        add("first");
        add(String::new());
        add(String::from("second"));
        assert_eq!(take().as_deref(), Some("first\nsecond"));
        assert_eq!(take(), None);
    }
}
