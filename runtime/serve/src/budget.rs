//! The server-wide budget of memory that request bodies, and the events
//! parsed from them, may hold at once (`--max-in-flight-bytes`).
//!
//! - A request with a body takes its declared length (`Content-Length`)
//!   before a byte of it is read, or, without one, each chunk's length as it
//!   comes. A request that finds no room is refused at once with 503
//!   `server_busy` and `Retry-After`, its body never read: however many
//!   callers send at once, the bodies held stay within the budget.
//! - What a body's events cost once parsed (estimated from their text
//!   before they are parsed, `cost.rs`) is taken too: all of it for a body
//!   parsed as one event, and for `/v1/events` at most [`PARSE_WINDOW`] at a
//!   time, parsed and handed to the service item by item.
//! - What a request took is not given back when it ends: events it handed
//!   to the service may still wait there to be delivered. It is handed to
//!   the budget's ledger instead, and given back once a flush of the
//!   service that began after it (every event taken before is delivered)
//!   has ended ([`Budget::flushing`]).

use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// What the events parsed from one request may cost at once, and the most
/// one event may cost: an event whose JSON would take more once parsed
/// (estimated, `cost.rs`) is refused as `too_dense`, so no body makes the
/// server hold many times its size.
pub const PARSE_WINDOW: usize = 8 * 1024 * 1024;

/// The default budget: four bodies of the default largest size, with
/// their parse windows, at once.
pub const DEFAULT_MAX_IN_FLIGHT_BYTES: usize = 96 * 1024 * 1024;

/// Seconds a refused caller is told to wait (`Retry-After`).
const RETRY_AFTER_SECS: u64 = 1;

/// The budget is counted in KiB, so a reservation of any size fits the
/// semaphore's `u32` permits.
const UNIT: usize = 1024;

/// The budget, and what was handed back to it until the next flush.
#[derive(Debug)]
pub(crate) struct Budget {
    permits: Arc<Semaphore>,
    units: u32,
    /// Taken by requests that ended, until a flush after them ends.
    ledger: Mutex<Option<OwnedSemaphorePermit>>,
    handed: Notify,
}

/// Part of the budget a request holds; handed to the ledger when dropped
/// (given back after the next flush), since what the request gave the
/// service may still be there.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<Budget>,
    permit: Option<OwnedSemaphorePermit>,
}

fn units(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX)
}

impl Budget {
    /// A budget of `bytes`.
    pub(crate) fn new(bytes: usize) -> Budget {
        let units = units(bytes).min(Semaphore::MAX_PERMITS as u32);
        Budget {
            permits: Arc::new(Semaphore::new(units as usize)),
            units,
            ledger: Mutex::new(None),
            handed: Notify::new(),
        }
    }

    /// Bytes the budget holds in all.
    pub(crate) fn bytes(&self) -> usize {
        self.units as usize * UNIT
    }

    /// `bytes` of the budget now, or the 503 that says there is no room.
    pub(crate) fn try_charge(self: &Arc<Self>, bytes: usize) -> Result<Charge, ApiError> {
        let permit = self.try_permit(bytes)?;
        Ok(Charge {
            budget: self.clone(),
            permit,
        })
    }

    /// `bytes` of the budget (at most all of it), waiting for room behind
    /// the requests that wait already.
    pub(crate) async fn charge(self: &Arc<Self>, bytes: usize) -> Charge {
        let wanted = units(bytes).min(self.units);
        let permit = match wanted {
            0 => None,
            // Never closed: `None` holds nothing and gives nothing back.
            n => self.permits.clone().acquire_many_owned(n).await.ok(),
        };
        Charge {
            budget: self.clone(),
            permit,
        }
    }

    fn try_permit(&self, bytes: usize) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
        if bytes == 0 {
            return Ok(None);
        }
        self.permits
            .clone()
            .try_acquire_many_owned(units(bytes))
            .map(Some)
            .map_err(|_| self.busy(bytes))
    }

    /// Holds `permit` until a flush that begins after this call has ended.
    fn hand(&self, permit: OwnedSemaphorePermit) {
        let mut ledger = self.ledger.lock().unwrap_or_else(|p| p.into_inner());
        match ledger.as_mut() {
            Some(l) => l.merge(permit),
            None => *ledger = Some(permit),
        }
        drop(ledger);
        self.handed.notify_one();
    }

    /// Gives back what was handed, one `flush` after another, for ever:
    /// each flush proves every event taken before it began delivered, so
    /// what was handed before it is free once it ends.
    pub(crate) async fn flushing<F, Fut>(self: Arc<Self>, flush: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()>,
    {
        loop {
            self.handed.notified().await;
            let handed = self.ledger.lock().unwrap_or_else(|p| p.into_inner()).take();
            flush().await;
            drop(handed);
        }
    }

    /// The 503 for a request that would take `bytes` more than is free.
    fn busy(&self, bytes: usize) -> ApiError {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server holds as many request bodies as its budget allows ({} MiB in flight); this one needs {} KiB more",
                self.bytes() / (1024 * 1024),
                bytes.div_ceil(UNIT)
            ),
            format!(
                "send it again after {RETRY_AFTER_SECS} s (Retry-After), send smaller batches, or raise the server's --max-in-flight-bytes"
            ),
        )
        .with_code("server_busy");
        e.retry_after = Some(RETRY_AFTER_SECS);
        e
    }
}

impl Charge {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.permit.as_ref().map_or(0, |p| p.num_permits() * UNIT)
    }

    /// Holds `bytes` more now, or says there is no room.
    pub(crate) fn try_grow(&mut self, bytes: usize) -> Result<(), ApiError> {
        if let Some(more) = self.budget.try_permit(bytes)? {
            match self.permit.as_mut() {
                Some(mine) => mine.merge(more),
                None => self.permit = Some(more),
            }
        }
        Ok(())
    }

    /// Hands what is held to the ledger now, holding nothing after.
    pub(crate) fn hand_over(&mut self) {
        if let Some(permit) = self.permit.take() {
            self.budget.hand(permit);
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.hand_over();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_budget_a_request_is_refused_with_retry_after_until_a_flush_gives_back() {
        let budget = Arc::new(Budget::new(4 * UNIT));
        let mut first = budget.try_charge(UNIT).expect("room");
        first.try_grow(2 * UNIT).expect("room");
        assert_eq!(first.bytes(), 3 * UNIT);
        let refused = budget.try_charge(2 * UNIT).expect_err("no room");
        assert_eq!(refused.status, 503);
        assert_eq!(refused.code, "server_busy");
        assert_eq!(refused.retry_after, Some(RETRY_AFTER_SECS));
        drop(first);
        // Handed, not given back: still refused until a flush ends.
        assert!(budget.try_charge(2 * UNIT).is_err());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let flushed = Arc::new(Notify::new());
        rt.block_on(async {
            let f = flushed.clone();
            let task = tokio::spawn(budget.clone().flushing(move || {
                let f = f.clone();
                async move { f.notified().await }
            }));
            tokio::task::yield_now().await;
            assert!(
                budget.try_charge(4 * UNIT).is_err(),
                "the flush has not ended"
            );
            flushed.notify_one();
            let all = budget.charge(4 * UNIT).await;
            assert_eq!(all.bytes(), 4 * UNIT);
            task.abort();
        });
    }
}
