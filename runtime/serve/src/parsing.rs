//! A `/v1/events` body's events parsed one at a time, within a window of
//! the server's budget (`budget.rs`), so a body's events are never all
//! parsed at once and what the service holds of them stays charged.

use std::sync::Arc;

use hookrt::PendingReceipt;

use crate::budget::{Budget, Charge, PARSE_WINDOW};
use crate::cost;
use crate::error::ApiError;
use crate::metrics::ServerMetrics;
use crate::tally::Tally;

/// A `/v1/events` body's events parsed one at a time, within a window of
/// the budget: what the events parsed and not yet known delivered may cost
/// at once (at most [`PARSE_WINDOW`]). When the next event does not fit,
/// the receipts of those in the window are waited for, the window is handed
/// to the budget's ledger (given back once they are delivered), and a new
/// one is taken, waiting for room.
pub(crate) struct Parsing<'a> {
    budget: &'a Arc<Budget>,
    metrics: &'a ServerMetrics,
    window: Charge,
    used: usize,
    /// What the rest of the body is estimated to cost.
    left: usize,
}

impl<'a> Parsing<'a> {
    /// The first window for `body`: what it all costs parsed, up to
    /// [`PARSE_WINDOW`], taken now (503 `server_busy` when there is no room).
    pub(crate) fn start(
        budget: &'a Arc<Budget>,
        metrics: &'a ServerMetrics,
        body: &[u8],
    ) -> Result<Parsing<'a>, ApiError> {
        let left = cost::parsed(body);
        let window = budget.try_charge(left.min(PARSE_WINDOW))?;
        Ok(Parsing {
            budget,
            metrics,
            window,
            used: 0,
            left,
        })
    }

    /// Room in the window for `text` parsed, waiting for the window's
    /// receipts and a new window when it is full; `Err(cost)` when the
    /// event alone would cost more than a window.
    pub(crate) async fn room_for(
        &mut self,
        text: &str,
        tally: &mut Tally,
        pending: &mut Vec<(usize, PendingReceipt)>,
    ) -> Result<(), usize> {
        let cost = cost::parsed(text.as_bytes());
        if cost > PARSE_WINDOW {
            return Err(cost);
        }
        self.left = self.left.saturating_sub(cost);
        if self.used + cost > self.window.bytes() {
            tally.settle(pending, self.metrics).await;
            // Handed before the new one is waited for: a request waiting
            // for room never holds room another waits for.
            self.window.hand_over();
            self.window = self
                .budget
                .charge(cost.max(self.left.min(PARSE_WINDOW)))
                .await;
            self.used = 0;
        }
        self.used += cost;
        Ok(())
    }
}
