//! Metrics: counters and gauges hooks report through the `metrics` import
//! (granted with `grants = ["metrics"]`), aggregated per hook by the host.
//!
//! Names and labels are capped, and so is the number of series per hook and of
//! labels per series, so a hook cannot exhaust host memory by inventing label
//! values or by sending one series with a million labels. A dropped update
//! leaves its marker: the hook's own `hookrt_metrics_dropped` counter, with
//! `reason` naming the cap (it counts toward no cap). Names and labels are the
//! hook's text and are masked by the redactor before they are stored.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::sandbox::redaction::Redactor;

/// Most distinct series (name plus labels) one hook may create.
pub(crate) const MAX_SERIES_PER_HOOK: usize = 1_000;
/// Longest metric name, label key or label value kept.
pub(crate) const MAX_NAME_BYTES: usize = 128;
/// Most labels one series may have; an update with more is dropped (each
/// label is a key and value the host stores for the life of the runtime).
pub(crate) const MAX_LABELS_PER_SERIES: usize = 16;
/// The marker series counting a hook's dropped metric updates, by `reason`
/// (`series_limit` or `labels_limit`).
pub(crate) const DROPPED_SERIES: &str = "hookrt_metrics_dropped";

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
    redactor: Redactor,
}

impl Metrics {
    /// An empty set.
    pub(crate) fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    /// The view of hook `slug`, masking its names and labels with `redactor`.
    pub fn access(self: &Arc<Self>, slug: &str, redactor: &Redactor) -> MetricsAccess {
        MetricsAccess {
            store: self.clone(),
            slug: slug.to_owned(),
            redactor: redactor.clone(),
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
    /// The hook's text, masked then capped.
    fn clean(&self, s: &str) -> String {
        cap(&self.redactor.mask(s))
    }

    fn update(&self, name: &str, labels: Vec<(String, String)>, f: impl FnOnce(&mut f64)) {
        if labels.len() > MAX_LABELS_PER_SERIES {
            // Counted in the hook's marker series; the host's log is not a
            // hook's to flood (debug only).
            tracing::debug!(hook = %self.slug, "metric has more than {MAX_LABELS_PER_SERIES} labels; `{}` dropped", self.clean(name));
            return self.dropped("labels_limit");
        }
        let mut labels: Vec<(String, String)> = labels
            .into_iter()
            .map(|(k, v)| (self.clean(&k), self.clean(&v)))
            .collect();
        labels.sort();
        // `hookrt_` names are the runtime's (its marker series is not counted).
        let mut name = self.clean(name);
        if name.starts_with("hookrt_") {
            name.insert_str(0, "hook_");
        }
        let key = (self.slug.clone(), name, labels);
        let mut series = self.store.series.lock().unwrap_or_else(|e| e.into_inner());
        if !series.contains_key(&key)
            && series
                .keys()
                .filter(|(h, n, _)| *h == self.slug && n != DROPPED_SERIES)
                .count()
                >= MAX_SERIES_PER_HOOK
        {
            drop(series);
            tracing::debug!(hook = %self.slug, "metric series limit reached; `{}` dropped", key.1);
            return self.dropped("series_limit");
        }
        f(series.entry(key).or_insert(0.0));
    }

    /// Counts a dropped update in the hook's marker series.
    fn dropped(&self, reason: &str) {
        let key = (
            self.slug.clone(),
            DROPPED_SERIES.to_owned(),
            vec![("reason".to_owned(), reason.to_owned())],
        );
        let mut series = self.store.series.lock().unwrap_or_else(|e| e.into_inner());
        *series.entry(key).or_insert(0.0) += 1.0;
    }

    /// Adds `delta` to a counter.
    pub(crate) fn counter(&self, name: &str, delta: u64, labels: Vec<(String, String)>) {
        self.update(name, labels, |v| *v += delta as f64);
    }

    /// Sets a gauge.
    pub(crate) fn gauge(&self, name: &str, value: f64, labels: Vec<(String, String)>) {
        self.update(name, labels, |v| *v = value);
    }
}
