//! The server's Prometheus metrics, kept with `prometheus-client` and
//! written in its text format at `GET /metrics`.
//!
//! Delivery metrics are updated by the service's observer on the dispatcher
//! thread (each hook's metrics looked up once, then counted in place, so the
//! observer stays fast); journal gauges are read from the journal when
//! scraped. The observer also writes each failure cascade on stdout as
//! `hookrt run` does: the agent server must end that turn
//! (docs/failure-cascade.md).

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, OnceLock};

use hookrt::{Durability, Envelope, Observation, Observer, Receipt};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A delivery's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DeliveryLabels {
    /// The hook id.
    pub hook: String,
    /// Its outcome (`ok`, `trap`, `deadline`, ...).
    pub outcome: String,
}

/// A hook's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct HookLabels {
    /// The hook id.
    pub hook: String,
}

/// Why an event was refused.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabels {
    /// `malformed`, `invalid`, `overloaded`, `shutting_down`, `journal`.
    pub reason: String,
}

/// How a decision or edit request ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DecisionLabels {
    /// `decide` or `edit`.
    pub endpoint: String,
    /// `resolved`, `timed_out`, `failed`.
    pub result: String,
}

/// How a reload ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabels {
    /// `ok` or `failed`.
    pub result: String,
}

/// Which cascade event hookrt raised.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    /// `turn.failed` or `session.failed`.
    pub kind: String,
}

/// How an event was held.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct EventLabels {
    /// `persisted` or `accepted`.
    pub durability: String,
    /// `true` for a re-submitted id.
    pub duplicate: String,
}

type HistogramFamily = Family<HookLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 16 buckets, each twice the one before, from 50 µs.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

fn fuel_histogram() -> Histogram {
    // 1,000 .. ~4·10⁹ fuel units.
    Histogram::new(exponential_buckets(1_000.0, 4.0, 12))
}

/// Every metric the server exports.
pub(crate) struct ServerMetrics {
    registry: Registry,
    /// Finished deliveries by hook and outcome.
    pub deliveries: Family<DeliveryLabels, Counter>,
    /// Delivery wall time, seconds.
    pub latency: HistogramFamily,
    /// Fuel a delivery used.
    pub fuel: HistogramFamily,
    /// Events taken, by durability.
    pub events: Family<EventLabels, Counter>,
    /// `events`' counters, each looked up once: by durability, then duplicate.
    events_by: [OnceLock<Counter>; 4],
    /// Events refused, by reason.
    pub refused: Family<ReasonLabels, Counter>,
    /// Decision and edit requests, by how they ended.
    pub decisions: Family<DecisionLabels, Counter>,
    /// Events handed to the service whose receipt has not come back.
    pub queue_depth: Gauge,
    /// Journal lag: deliveries committed but not yet acked.
    pub journal_pending: Gauge,
    /// Dead letters in the journal.
    pub dead_letters: Gauge,
    /// Requests refused by the rate limit.
    pub rate_limited: Counter,
    /// Hot reloads, by result.
    pub reloads: Family<ResultLabels, Counter>,
    /// Hooks loaded now.
    pub hooks: Gauge,
    /// Failure cascade events raised, by kind.
    pub cascades: Family<KindLabels, Counter>,
}

impl ServerMetrics {
    /// The metrics, registered.
    pub(crate) fn new() -> ServerMetrics {
        let mut metrics = ServerMetrics {
            registry: Registry::default(),
            deliveries: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            fuel: Family::new_with_constructor(fuel_histogram),
            events: Family::default(),
            events_by: Default::default(),
            refused: Family::default(),
            decisions: Family::default(),
            queue_depth: Gauge::default(),
            journal_pending: Gauge::default(),
            dead_letters: Gauge::default(),
            rate_limited: Counter::default(),
            reloads: Family::default(),
            hooks: Gauge::default(),
            cascades: Family::default(),
        };
        metrics.register();
        metrics
    }

    /// Registers every metric under its exported name and help text.
    fn register(&mut self) {
        let registry = &mut self.registry;
        registry.register(
            "hookrt_deliveries",
            "Finished deliveries (every attempt) by hook and outcome",
            self.deliveries.clone(),
        );
        registry.register(
            "hookrt_delivery_duration_seconds",
            "Wall time of one delivery by hook",
            self.latency.clone(),
        );
        registry.register(
            "hookrt_delivery_fuel",
            "Fuel one delivery used, by hook",
            self.fuel.clone(),
        );
        registry.register(
            "hookrt_events",
            "Events taken, by durability",
            self.events.clone(),
        );
        registry.register(
            "hookrt_refused_events",
            "Events refused, by reason",
            self.refused.clone(),
        );
        registry.register(
            "hookrt_decisions",
            "Decision and edit requests, by endpoint and how they ended",
            self.decisions.clone(),
        );
        registry.register(
            "hookrt_queue_depth",
            "Events handed to the service whose receipt has not come back",
            self.queue_depth.clone(),
        );
        registry.register(
            "hookrt_journal_pending_deliveries",
            "Journal lag: deliveries committed but not yet acked",
            self.journal_pending.clone(),
        );
        registry.register(
            "hookrt_dead_letters",
            "Deliveries that failed their last attempt, in the journal",
            self.dead_letters.clone(),
        );
        registry.register(
            "hookrt_rate_limited_requests",
            "Requests answered 429 by the per-token rate limit",
            self.rate_limited.clone(),
        );
        registry.register(
            "hookrt_hook_reloads",
            "Hot reloads of the hooks (SIGHUP, POST /v1/admin/reload), by result",
            self.reloads.clone(),
        );
        registry.register("hookrt_hooks", "Hooks loaded now", self.hooks.clone());
        registry.register(
            "hookrt_cascades",
            "Failure cascade events raised (a critical hook failed for good), by kind",
            self.cascades.clone(),
        );
    }

    /// The counter of the events taken as `receipt` says (looked up the
    /// first time only: an event's labels were two strings a request).
    pub(crate) fn event(&self, receipt: &Receipt) -> &Counter {
        let persisted = receipt.durability == Durability::Persisted;
        let slot = 2 * usize::from(persisted) + usize::from(receipt.duplicate);
        self.events_by[slot].get_or_init(|| {
            self.events
                .get_or_create(&EventLabels {
                    durability: receipt.durability.as_str().to_owned(),
                    duplicate: receipt.duplicate.to_string(),
                })
                .clone()
        })
    }

    /// Counts a reload.
    pub(crate) fn reload(&self, result: &str) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }

    /// Counts a refused event.
    pub(crate) fn refuse(&self, reason: &str) {
        self.refused
            .get_or_create(&ReasonLabels {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// Counts a decision or edit request.
    pub(crate) fn decision(&self, endpoint: &str, result: &str) {
        self.decisions
            .get_or_create(&DecisionLabels {
                endpoint: endpoint.to_owned(),
                result: result.to_owned(),
            })
            .inc();
    }

    /// The Prometheus text format of every metric.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(target: "hookrt", "cannot encode metrics: {e}");
        }
        out
    }
}

impl Default for ServerMetrics {
    fn default() -> Self {
        ServerMetrics::new()
    }
}

/// The service observer that keeps the delivery metrics and, with
/// `print_deliveries`, writes each delivery's line on stdout.
pub(crate) fn observer(metrics: Arc<ServerMetrics>, print_deliveries: bool) -> Observer {
    // Each hook's metrics, looked up in their families once (a clone shares
    // the metric): a delivery then builds no labels and takes no family lock.
    let mut hooks: HashMap<String, HookMetrics> = HashMap::new();
    Box::new(move |observation: Observation<'_>| {
        if let Observation::Cascaded(e) = observation {
            metrics
                .cascades
                .get_or_create(&KindLabels {
                    kind: e.kind.clone(),
                })
                .inc();
            cascade_line(e);
        }
        if let Observation::Delivery(d) = observation {
            if print_deliveries {
                let mut out = std::io::stdout().lock();
                if hookrt::front::line::write_delivery(&mut out, d, None, false).is_ok() {
                    let _ = writeln!(out);
                }
                let _ = out.flush();
            }
            if !hooks.contains_key(d.hook.as_str()) {
                hooks.insert(d.hook.clone(), HookMetrics::of(&metrics, &d.hook));
            }
            let hook = hooks.get_mut(d.hook.as_str()).expect("inserted above");
            hook.outcome(&metrics, &d.hook, d.outcome.as_str()).inc();
            hook.latency.observe(d.duration_us as f64 / 1e6);
            hook.fuel.observe(d.fuel_used as f64);
        }
    })
}

/// One hook's delivery metrics, shared with their families.
struct HookMetrics {
    latency: Histogram,
    fuel: Histogram,
    /// Deliveries by outcome, as they came.
    outcomes: Vec<(&'static str, Counter)>,
}

impl HookMetrics {
    fn of(metrics: &ServerMetrics, hook: &str) -> HookMetrics {
        let labels = HookLabels {
            hook: hook.to_owned(),
        };
        HookMetrics {
            latency: metrics.latency.get_or_create(&labels).clone(),
            fuel: metrics.fuel.get_or_create(&labels).clone(),
            outcomes: Vec::new(),
        }
    }

    /// The deliveries counter of `outcome`.
    fn outcome(&mut self, metrics: &ServerMetrics, hook: &str, outcome: &'static str) -> &Counter {
        let at = match self.outcomes.iter().position(|(o, _)| *o == outcome) {
            Some(at) => at,
            None => {
                let counter = metrics
                    .deliveries
                    .get_or_create(&DeliveryLabels {
                        hook: hook.to_owned(),
                        outcome: outcome.to_owned(),
                    })
                    .clone();
                self.outcomes.push((outcome, counter));
                self.outcomes.len() - 1
            }
        };
        &self.outcomes[at].1
    }
}

/// Writes a cascade on stdout in `hookrt run`'s form, and logs it.
fn cascade_line(e: &Envelope) {
    let line = hookrt::delivery::cascade_line(e);
    tracing::warn!(target: "hookrt", event_id = %e.id, kind = %e.kind, session = %e.coordinates.session,
        "failure cascade: the agent server should end this turn (or session)");
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
