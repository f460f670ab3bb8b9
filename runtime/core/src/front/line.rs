//! The delivery line: the one JSON line every front end prints per
//! delivery (`hookrt run` on stdout, `hookrt serve --print-deliveries`,
//! `hookrt worker --print-deliveries`), so the same delivery reads the same
//! whichever way it came in.
//!
//! Its fields, in this order (sorted, as `serde_json::Value` prints them):
//! `attempt`, `duration_us`, `error` (failures only), `event_id`,
//! `fuel_used`, `handler`, `hook`, `kind`, `outcome`, `output_truncated`
//! (only when true). A fleet worker adds where it ran ([`Placement`]:
//! `partition`, `worker`, `at_us`) after them; `--logs` adds the hook's
//! `logs` and `console`.

use std::io::Write;

use crate::delivery::record::Delivery;
use crate::sandbox::outcome::Outcome;

/// Where a fleet worker ran a delivery.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// The JetStream partition the event came from.
    pub partition: u32,
    /// The worker's id.
    pub worker: String,
    /// When it ended, in microseconds since the Unix epoch.
    pub at_us: u64,
}

/// One delivery's line, borrowing its record.
#[derive(serde::Serialize)]
struct DeliveryLine<'a> {
    attempt: u32,
    duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    event_id: &'a str,
    fuel_used: u64,
    handler: &'a str,
    hook: &'a str,
    kind: &'a str,
    outcome: Outcome,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    output_truncated: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    placement: Option<&'a Placement>,
}

/// Writes the delivery line of `d` (without its newline): where a fleet
/// worker ran it, with `placement`; with `logs`, the hook's log lines and
/// console output too.
pub fn write_delivery(
    out: &mut dyn Write,
    d: &Delivery,
    placement: Option<&Placement>,
    logs: bool,
) -> serde_json::Result<()> {
    let line = DeliveryLine {
        attempt: d.attempt,
        duration_us: d.duration_us,
        error: d.error.as_deref(),
        event_id: &d.event_id,
        fuel_used: d.fuel_used,
        handler: &d.handler,
        hook: &d.hook,
        kind: &d.kind,
        outcome: d.outcome,
        output_truncated: d.output_truncated,
        placement,
    };
    if !logs {
        return serde_json::to_writer(out, &line);
    }
    let mut v = serde_json::to_value(&line)?;
    v["logs"] = serde_json::to_value(&d.logs)?;
    v["console"] = serde_json::Value::String(d.console.clone());
    serde_json::to_writer(out, &v)
}
