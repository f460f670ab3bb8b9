//! The summary: the one line a front end prints when it ends
//! (`{"summary": {...}}`), the same fields from `hookrt run`, `hookrt serve`
//! and `hookrt worker`, each counted where that front end can count it.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde::Serialize;

use crate::event::envelope::Durability;
use crate::sandbox::outcome::Outcome;
use crate::service::report::Stats;

/// What a front end did, for its last line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Events taken (not counting duplicates).
    pub events: u64,
    /// Re-submissions answered with the original receipt.
    pub duplicates: u64,
    /// Deliveries finished (every attempt counts).
    pub deliveries: u64,
    /// Deliveries run again (after a restart, as a retry, on a redelivery).
    pub repeats: u64,
    /// Deliveries by outcome, every outcome listed (0 included).
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Final failures of optional hooks (recorded only).
    pub optional_failures: u64,
    /// Final failures of critical hooks.
    pub critical_failures: u64,
    /// `turn.failed` / `session.failed` events the cascade raised.
    pub cascades: u64,
    /// Deliveries left unfinished at shutdown (delivered again on the next start).
    pub left_unacked: u64,
    /// Input lines that were no envelope.
    pub malformed_lines: u64,
    /// Envelopes the service refused (overloaded, shutting down, the journal).
    pub refused: u64,
    /// What the receipts said (`accepted` or `persisted`).
    pub durability: &'static str,
    /// What that durability means here.
    pub note: &'static str,
    /// What only this front end counts (a fleet worker's id, acks, naks,
    /// dead letters), flattened beside the shared fields.
    #[serde(flatten)]
    pub more: serde_json::Map<String, serde_json::Value>,
}

impl Summary {
    /// A service's summary: its `stats`, its receipts' `durability`.
    pub fn of_stats(stats: &Stats, durability: Durability) -> Summary {
        Summary {
            events: stats.events,
            duplicates: stats.duplicates,
            deliveries: stats.deliveries,
            repeats: stats.repeats,
            outcomes: outcomes(&stats.outcomes),
            optional_failures: stats.optional_failures,
            critical_failures: stats.critical_failures,
            cascades: stats.cascades,
            left_unacked: stats.left_unacked,
            durability: durability.as_str(),
            note: note(durability),
            ..Summary::default()
        }
    }

    /// Writes `{"summary": {...}}` and a newline.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let line = serde_json::json!({ "summary": self });
        writeln!(out, "{line}")
    }
}

/// Every outcome with its count, zero included.
pub(crate) fn outcomes(counted: &HashMap<Outcome, u64>) -> BTreeMap<&'static str, u64> {
    Outcome::ALL
        .iter()
        .map(|o| (o.as_str(), counted.get(o).copied().unwrap_or(0)))
        .collect()
}

/// What a receipt's durability means for the events of a run.
pub(crate) fn note(durability: Durability) -> &'static str {
    match durability {
        Durability::Persisted => "every event was committed to the journal before any hook saw it",
        Durability::Accepted => {
            "events were held in memory only, so hooks saw durability `accepted`, never `persisted`"
        }
    }
}
