//! The registry: loaded hooks in registration order, and which handlers an
//! event reaches.
//!
//! Registration order is deterministic: the slugs listed in `hookrt.toml`'s
//! `order` first, in that order, then every other hook by slug. For one event,
//! every event-specific handler runs in registration order, then every `*`
//! handler in registration order.

use crate::hook::LoadedHook;
use crate::slug::Slug;
use crate::vocabulary::WILDCARD;

/// Loaded hooks in registration order.
pub struct Registry {
    hooks: Vec<LoadedHook>,
}

/// One planned delivery: which hook, which handler key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned<'a> {
    /// Index of the hook in registration order.
    pub index: usize,
    /// The handler key: the event kind or `*`.
    pub handler: &'a str,
}

impl Registry {
    /// Orders `hooks` by `order` first, then by slug.
    pub fn new(mut hooks: Vec<LoadedHook>, order: &[Slug]) -> Registry {
        hooks.sort_by(|a, b| registration_key(&a.slug, order).cmp(&registration_key(&b.slug, order)));
        Registry { hooks }
    }

    /// The hooks in registration order.
    pub fn hooks(&self) -> &[LoadedHook] {
        &self.hooks
    }

    /// The deliveries one event of `kind` gets, in the order they run.
    pub fn plan<'k>(&self, kind: &'k str) -> Vec<Planned<'k>> {
        plan(self.hooks.iter().map(|h| h.subscriptions.as_slice()), kind)
    }

    /// A plan maker that owns what it needs (slugs and subscriptions), for
    /// another thread than the one running the hooks.
    pub fn planner(&self) -> Planner {
        Planner { hooks: self.hooks.iter().map(|h| (h.slug.to_string(), h.subscriptions.clone())).collect() }
    }
}

/// Plans deliveries from slugs and subscriptions alone.
#[derive(Debug, Clone)]
pub struct Planner {
    hooks: Vec<(String, Vec<String>)>,
}

impl Planner {
    /// `(slug, handler)` of each delivery of an event of `kind`, in order.
    pub fn plan(&self, kind: &str) -> Vec<(String, String)> {
        plan(self.hooks.iter().map(|(_, s)| s.as_slice()), kind)
            .into_iter()
            .map(|p| (self.hooks[p.index].0.clone(), p.handler.to_owned()))
            .collect()
    }
}

/// Specific handlers in registration order, then `*` handlers in registration order.
fn plan<'s, 'k>(subscriptions: impl Iterator<Item = &'s [String]> + Clone, kind: &'k str) -> Vec<Planned<'k>> {
    let has = |subs: &[String], key: &str| subs.iter().any(|s| s == key);
    let specific = subscriptions.clone().enumerate().filter(|(_, s)| has(s, kind)).map(|(index, _)| Planned { index, handler: kind });
    let wildcard = subscriptions.enumerate().filter(|(_, s)| has(s, WILDCARD)).map(|(index, _)| Planned { index, handler: WILDCARD });
    specific.chain(wildcard).collect()
}

/// Sort key: configured position first (if any), then the slug.
fn registration_key<'a>(slug: &'a Slug, order: &[Slug]) -> (usize, &'a Slug) {
    (order.iter().position(|s| s == slug).unwrap_or(order.len()), slug)
}

/// The registration order of `slugs` under `order` (for audit and tests).
pub fn registration_order(mut slugs: Vec<Slug>, order: &[Slug]) -> Vec<Slug> {
    slugs.sort_by(|a, b| registration_key(a, order).cmp(&registration_key(b, order)));
    slugs
}
