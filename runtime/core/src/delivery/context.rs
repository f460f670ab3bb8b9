//! The context hooks give the model on one event: kept in registration
//! order while it fits [`MAX_CONTEXT_BYTES`] whole, else recorded as dropped.

use crate::delivery::decision::{ContextPiece, MAX_CONTEXT_BYTES};

/// The context pieces given so far, in registration order, within the bound.
#[derive(Debug, Default)]
pub(crate) struct ContextBudget {
    pieces: Vec<ContextPiece>,
    used: usize,
}

impl ContextBudget {
    /// Takes `hook`'s `text`: kept when it fits whole, else recorded as dropped.
    pub(crate) fn add(&mut self, hook: &str, text: String) {
        if text.is_empty() {
            return;
        }
        let dropped = self.used + text.len() > MAX_CONTEXT_BYTES;
        if !dropped {
            self.used += text.len();
        }
        self.pieces.push(ContextPiece {
            hook: hook.to_owned(),
            text,
            dropped,
        });
    }

    pub(crate) fn finish(self) -> Vec<ContextPiece> {
        self.pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_registration_order_and_drops_what_does_not_fit_whole() {
        let mut budget = ContextBudget::default();
        budget.add("a", "x".repeat(6_000));
        budget.add("b", "y".repeat(5_000));
        budget.add("c", "z".repeat(4_000));
        budget.add("d", String::new());
        let pieces: Vec<(String, usize, bool)> = budget
            .finish()
            .into_iter()
            .map(|p| (p.hook, p.text.len(), p.dropped))
            .collect();
        assert_eq!(
            pieces,
            [
                ("a".to_owned(), 6_000, false),
                ("b".to_owned(), 5_000, true),
                ("c".to_owned(), 4_000, false),
            ]
        );
    }
}
