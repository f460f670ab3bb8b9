//! Metrics: counters and gauges hooks report through the `metrics` import
//! (granted with `grants = ["metrics"]`), aggregated per hook by the host.
//!
//! Names and labels are capped, and so is the number of series per hook, so a
//! hook cannot exhaust host memory by inventing label values.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Most distinct series (name plus labels) one hook may create.
pub const MAX_SERIES_PER_HOOK: usize = 1_000;
/// Longest metric name, label key or label value kept.
pub const MAX_NAME_BYTES: usize = 128;

/// One series: hook, metric name and sorted labels.
pub type Series = (String, String, Vec<(String, String)>);

/// Every hook's metrics.
#[derive(Default)]
pub struct Metrics {
    series: Mutex<BTreeMap<Series, f64>>,
}

/// A hook's view: what it reports is recorded under its slug.
#[derive(Clone)]
pub struct MetricsAccess {
    store: Arc<Metrics>,
    slug: String,
}

impl Metrics {
    /// An empty set.
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    /// The view of hook `slug`.
    pub fn access(self: &Arc<Self>, slug: &str) -> MetricsAccess {
        MetricsAccess {
            store: self.clone(),
            slug: slug.to_owned(),
        }
    }

    /// Every series and its value.
    pub fn snapshot(&self) -> Vec<(Series, f64)> {
        self.series
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }
}

fn cap(s: &str) -> String {
    let mut end = s.len().min(MAX_NAME_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

impl MetricsAccess {
    fn update(&self, name: &str, labels: Vec<(String, String)>, f: impl FnOnce(&mut f64)) {
        let mut labels: Vec<(String, String)> = labels
            .into_iter()
            .map(|(k, v)| (cap(&k), cap(&v)))
            .collect();
        labels.sort();
        let key = (self.slug.clone(), cap(name), labels);
        let mut series = self.store.series.lock().unwrap_or_else(|e| e.into_inner());
        if !series.contains_key(&key)
            && series.keys().filter(|(h, _, _)| *h == self.slug).count() >= MAX_SERIES_PER_HOOK
        {
            tracing::warn!(hook = %self.slug, "metric series limit reached; `{name}` dropped");
            return;
        }
        f(series.entry(key).or_insert(0.0));
    }

    /// Adds `delta` to a counter.
    pub fn counter(&self, name: &str, delta: u64, labels: Vec<(String, String)>) {
        self.update(name, labels, |v| *v += delta as f64);
    }

    /// Sets a gauge.
    pub fn gauge(&self, name: &str, value: f64, labels: Vec<(String, String)>) {
        self.update(name, labels, |v| *v = value);
    }
}
