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
        let specific = self.hooks.iter().enumerate().filter(|(_, h)| h.subscribes_to(kind)).map(|(index, _)| Planned { index, handler: kind });
        let wildcard =
            self.hooks.iter().enumerate().filter(|(_, h)| h.subscribes_to(WILDCARD)).map(|(index, _)| Planned { index, handler: WILDCARD });
        specific.chain(wildcard).collect()
    }
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
