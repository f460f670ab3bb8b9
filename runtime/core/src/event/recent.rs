//! Recent: a map that keeps at most a fixed number of entries, evicting the
//! least recently used one to make room, never all of them at once.
//!
//! Parse state kept across a stream (ordinal counters, Eve streams) grows
//! with the places a producer opens and never ends; a map cleared whole at
//! its cap lets one noisy producer reset everyone else's state. Here only the
//! entry untouched the longest goes, so the others keep counting.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// At most `cap` entries, the least recently used evicted first.
#[derive(Debug)]
pub struct Recent<K, V> {
    entries: HashMap<K, (V, u64)>,
    /// Last use (a tick) to key, oldest first.
    order: BTreeMap<u64, K>,
    tick: u64,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Recent<K, V> {
    /// An empty map keeping at most `cap` entries (at least one).
    pub fn new(cap: usize) -> Recent<K, V> {
        Recent {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            cap: cap.max(1),
        }
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry of `key`, made by `make` when there is none (evicting the
    /// least recently used entry when full); either way now the most recent.
    pub fn get_or_insert_with(&mut self, key: &K, make: impl FnOnce() -> V) -> &mut V {
        self.tick += 1;
        let tick = self.tick;
        if let Some((_, used)) = self.entries.get_mut(key) {
            self.order.remove(used);
            *used = tick;
        } else {
            if self.entries.len() >= self.cap
                && let Some((_, oldest)) = self.order.pop_first()
            {
                self.entries.remove(&oldest);
            }
            self.entries.insert(key.clone(), (make(), tick));
        }
        self.order.insert(tick, key.clone());
        &mut self.entries.get_mut(key).expect("just inserted").0
    }

    /// The entry of `key`, if any; then the most recent.
    pub fn get(&mut self, key: &K) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        let (value, used) = self.entries.get_mut(key)?;
        self.order.remove(used);
        *used = tick;
        self.order.insert(tick, key.clone());
        Some(value)
    }

    /// Removes `key`'s entry.
    pub fn remove(&mut self, key: &K) {
        if let Some((_, used)) = self.entries.remove(key) {
            self.order.remove(&used);
        }
    }

    /// Keeps only the entries `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        let order = &mut self.order;
        self.entries.retain(|k, (_, used)| {
            let kept = keep(k);
            if !kept {
                order.remove(used);
            }
            kept
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first_and_the_others_stay() {
        let mut r = Recent::new(3);
        for k in ["a", "b", "c"] {
            *r.get_or_insert_with(&k, || 0) += 1;
        }
        *r.get_or_insert_with(&"a", || 0) += 1; // a is now the most recent
        *r.get_or_insert_with(&"d", || 0) += 1; // evicts b, the oldest
        assert_eq!(r.len(), 3);
        assert_eq!(*r.get_or_insert_with(&"a", || 0), 2, "a kept its count");
        assert_eq!(*r.get_or_insert_with(&"b", || 0), 0, "b was evicted");
        r.remove(&"a");
        r.retain(|k| *k != "c");
        assert_eq!(r.len(), 2);
        assert_eq!(r.order.len(), 2);
    }
}
