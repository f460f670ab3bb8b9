//! Metrics to the host, aggregated per hook: `metrics::counter("events_total", 1, &[("kind", kind)])`.
//!
//! Needs the `metrics` grant in `hookrt.toml`; a hook that calls these functions imports
//! `hookrt:hook/metrics` and is refused at load without the grant. Labels are sent as
//! given: never put event data that may hold secrets (message content, tool inputs and
//! outputs) in a name or label.
//!
//! Off wasm (native unit tests of a hook) each call is recorded in a list per thread, so
//! each `#[test]` starts empty: read it with [`recorded`], empty it with [`clear`].

/// One metric call as recorded natively (see [`recorded`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// A [`counter`] call.
    Counter {
        /// Counter name.
        name: String,
        /// Amount added.
        delta: u64,
        /// Labels, in the order given.
        labels: Vec<(String, String)>,
    },
    /// A [`gauge`] call.
    Gauge {
        /// Gauge name.
        name: String,
        /// Value set.
        value: f64,
        /// Labels, in the order given.
        labels: Vec<(String, String)>,
    },
}

impl Metric {
    /// The metric's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Counter { name, .. } | Self::Gauge { name, .. } => name,
        }
    }

    /// The metric's labels, in the order given.
    pub fn labels(&self) -> &[(String, String)] {
        match self {
            Self::Counter { labels, .. } | Self::Gauge { labels, .. } => labels,
        }
    }
}

/// Add `delta` to the counter `name` with the given labels. A series is (hook, name,
/// sorted labels); the host cuts names, keys and values at 128 bytes and keeps at most
/// 1,000 series per hook (docs/hooks-reference.md#metrics). In a native test:
///
/// ```
/// use hookrt_sdk::metrics::{self, Metric};
///
/// metrics::counter("events_total", 1, &[("kind", "action.result")]);
/// metrics::gauge("queue_depth", 2.5, &[]);
/// let recorded = metrics::recorded();
/// assert_eq!(recorded[0], Metric::Counter {
///     name: "events_total".into(),
///     delta: 1,
///     labels: vec![("kind".into(), "action.result".into())],
/// });
/// assert_eq!(recorded[1].name(), "queue_depth");
/// metrics::clear();
/// assert!(metrics::recorded().is_empty());
/// ```
pub fn counter(name: &str, delta: u64, labels: &[(&str, &str)]) {
    backend::counter(name, delta, &owned(labels));
}

/// Set the gauge `name` with the given labels to `value`.
pub fn gauge(name: &str, value: f64, labels: &[(&str, &str)]) {
    backend::gauge(name, value, &owned(labels));
}

/// The metric calls made so far on this thread, oldest first. Natively only: inside a
/// component the calls go to the host, which aggregates them.
#[cfg(not(target_arch = "wasm32"))]
pub fn recorded() -> Vec<Metric> {
    backend::RECORDED.with(|list| list.borrow().clone())
}

/// Forget the metric calls recorded on this thread. Natively only.
#[cfg(not(target_arch = "wasm32"))]
pub fn clear() {
    backend::RECORDED.with(|list| list.borrow_mut().clear());
}

fn owned(labels: &[(&str, &str)]) -> Vec<(String, String)> {
    labels
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::metrics as host;

    pub fn counter(name: &str, delta: u64, labels: &[(String, String)]) {
        host::counter(name, delta, labels);
    }

    pub fn gauge(name: &str, value: f64, labels: &[(String, String)]) {
        host::gauge(name, value, labels);
    }
}

// The host import only exists inside a component; natively (a hook's own unit tests)
// calling it would hit wit-bindgen's `unreachable!()` stub.
#[cfg(not(target_arch = "wasm32"))]
mod backend {
    use std::cell::RefCell;

    use super::Metric;

    std::thread_local! {
        pub static RECORDED: RefCell<Vec<Metric>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn counter(name: &str, delta: u64, labels: &[(String, String)]) {
        RECORDED.with(|list| {
            list.borrow_mut().push(Metric::Counter {
                name: name.to_owned(),
                delta,
                labels: labels.to_vec(),
            })
        });
    }

    pub(super) fn gauge(name: &str, value: f64, labels: &[(String, String)]) {
        RECORDED.with(|list| {
            list.borrow_mut().push(Metric::Gauge {
                name: name.to_owned(),
                value,
                labels: labels.to_vec(),
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_recorded_natively_in_order() {
        assert!(recorded().is_empty());
        counter("events_total", 1, &[("kind", "turn.started")]);
        gauge("queue_depth", 2.5, &[]);
        let list = recorded();
        assert_eq!(
            list[0],
            Metric::Counter {
                name: "events_total".into(),
                delta: 1,
                labels: vec![("kind".into(), "turn.started".into())],
            }
        );
        assert_eq!(list[1].name(), "queue_depth");
        assert!(matches!(list[1], Metric::Gauge { value, .. } if value == 2.5));
        clear();
        assert!(recorded().is_empty());
    }
}
