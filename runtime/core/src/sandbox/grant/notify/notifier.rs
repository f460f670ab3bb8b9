//! One hook's notifier: its `notify` table resolved at load (the session bus
//! hookrt's own environment names, never one a hook or an event could), the
//! rate limit over its last minute, and which notification a new one with
//! the same title replaces.
//!
//! The rate limit's window (when each notification of the last minute was
//! let through, wall-clock milliseconds) and the ids of the last titles
//! shown are kept in the runtime's state store under a name no hook can
//! have (`hookrt:notify/<hook>`): a process per event (`hookrt hook`) keeps
//! them in the user's state database, so flooding through many short
//! processes is limited, and a title replaced, as within one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::dbus::{self, Notification};
use super::message::{BODY_BYTES, Message, TITLE_BYTES};
use super::table::Table;
use crate::sandbox::state::StateAccess;

/// The variable naming the session bus, read from hookrt's environment.
pub(crate) const BUS_VARIABLE: &str = "DBUS_SESSION_BUS_ADDRESS";
/// Titles whose last notification a hook's notifier remembers to replace:
/// a hook inventing titles cannot grow host memory past it.
const MAX_GROUPS: usize = 64;
/// The window of the rate limit, in milliseconds.
const WINDOW_MS: u64 = 60_000;
/// The state key of the window.
const WINDOW_KEY: &str = "window";
/// The state key of the last titles shown and their ids (JSON pairs, the
/// latest last).
const SHOWN_KEY: &str = "shown";

/// Why a notification was not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Over the table's `per_minute`.
    RateLimited,
    /// No notifier was reached; what was tried.
    Unavailable(String),
}

/// The `notify` grant of one hook, shared by its deliveries.
#[derive(Debug)]
pub(crate) struct Notifier {
    table: Table,
    hook: String,
    bus: Option<String>,
    /// Held while what is kept is read and written back.
    keeping: Mutex<()>,
    rate_limited: AtomicU64,
}

impl Notifier {
    /// The notifier of hook `hook` (its id) with `table`, sending on the
    /// session bus at `bus` (`None`: none is known, every call is unavailable).
    pub(crate) fn new(table: &Table, hook: &str, bus: Option<String>) -> Notifier {
        Notifier {
            table: table.clone(),
            hook: hook.to_owned(),
            bus: bus.filter(|b| !b.is_empty()),
            keeping: Mutex::new(()),
            rate_limited: AtomicU64::new(0),
        }
    }

    /// The notifier of hook `hook` with `table`, on the session bus hookrt's
    /// environment names.
    pub(crate) fn from_environment(table: &Table, hook: &str) -> Notifier {
        Notifier::new(table, hook, std::env::var(BUS_VARIABLE).ok())
    }

    /// Notifications refused as rate-limited since load.
    pub(crate) fn rate_limited(&self) -> u64 {
        self.rate_limited.load(Ordering::Relaxed)
    }

    /// Where its rate window is kept: `store`'s state under a name no hook
    /// can have.
    pub(crate) fn bind(self: &Arc<Self>, store: &Arc<crate::sandbox::state::StateStore>) -> Bound {
        Bound {
            notifier: self.clone(),
            kept: store.access(&format!("hookrt:notify/{}", self.hook)),
        }
    }
}

/// The last titles shown and their ids, as kept in `window`.
fn shown(window: &StateAccess) -> Vec<(String, u32)> {
    window
        .get(SHOWN_KEY)
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// A hook's notifier as one store holds it, with the state its rate window
/// is kept in.
#[derive(Clone)]
pub(crate) struct Bound {
    pub(crate) notifier: Arc<Notifier>,
    kept: StateAccess,
}

impl Bound {
    /// Shows `message` unless the rate limit refuses it, within the table's
    /// `timeout_ms` and never past `deadline`: the server's id for it
    /// (`None`: a `replay`, which counts it against the limit, shows nothing).
    pub(crate) fn send(
        &self,
        message: &Message,
        deadline: Instant,
        replay: bool,
    ) -> Result<Option<u32>, Refused> {
        self.notifier.send(message, deadline, replay, &self.kept)
    }
}

impl Notifier {
    fn send(
        &self,
        message: &Message,
        deadline: Instant,
        replay: bool,
        window: &StateAccess,
    ) -> Result<Option<u32>, Refused> {
        let now = Instant::now();
        if !self.admit(window) {
            self.rate_limited.fetch_add(1, Ordering::Relaxed);
            return Err(Refused::RateLimited);
        }
        if replay {
            return Ok(None);
        }
        let Some(bus) = &self.bus else {
            return Err(Refused::Unavailable(format!(
                "no notifier: {BUS_VARIABLE} is not set in hookrt's environment (tried the D-Bus \
                 session bus; the macOS and Windows notifiers are designed, not built)"
            )));
        };
        let within = deadline
            .saturating_duration_since(now)
            .min(Duration::from_millis(self.table.timeout_ms));
        if within.is_zero() {
            return Err(Refused::Unavailable(
                "the delivery's deadline has passed: nothing was sent".to_owned(),
            ));
        }
        let replaces = shown(window)
            .iter()
            .find(|(title, _)| *title == message.title)
            .map_or(0, |(_, id)| *id);
        let n = Notification {
            message: message.clone(),
            hook: self.hook.clone(),
            replaces,
        };
        let id = dbus::send(bus, n, within).map_err(Refused::Unavailable)?;
        let _one_at_a_time = self.keeping.lock().unwrap_or_else(|e| e.into_inner());
        let mut titles = shown(window);
        titles.retain(|(title, _)| *title != message.title);
        titles.push((message.title.clone(), id));
        let drop = titles.len().saturating_sub(MAX_GROUPS);
        titles.drain(..drop);
        // Unkept, the next notification of the title shows beside this one.
        let _ = serde_json::to_vec(&titles).map(|bytes| window.set(SHOWN_KEY, &bytes));
        Ok(Some(id))
    }

    /// Whether one more notification fits the last minute of `window`,
    /// counting it if so. A window that cannot be written back refuses: a
    /// limit that cannot be kept is not lifted.
    fn admit(&self, window: &StateAccess) -> bool {
        let _one_at_a_time = self.keeping.lock().unwrap_or_else(|e| e.into_inner());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // Times past `now` (a clock set back) count until it passes them again.
        let mut kept: Vec<u64> = window
            .get(WINDOW_KEY)
            .unwrap_or_default()
            .chunks_exact(8)
            .filter_map(|b| b.try_into().ok().map(u64::from_le_bytes))
            .filter(|t| now.saturating_sub(*t) < WINDOW_MS && *t <= now + WINDOW_MS)
            .collect();
        if kept.len() >= self.table.per_minute as usize {
            return false;
        }
        kept.push(now);
        let bytes: Vec<u8> = kept.iter().flat_map(|t| t.to_le_bytes()).collect();
        window.set(WINDOW_KEY, &bytes).is_ok()
    }

    /// What `audit` says of it: where notifications go, and their bounds.
    pub(crate) fn audit_lines(&self) -> Vec<String> {
        let to = match &self.bus {
            Some(bus) => format!("{} on the D-Bus session bus {bus}", dbus::SERVICE),
            None => format!("nowhere: {BUS_VARIABLE} is not set, every call is unavailable"),
        };
        vec![
            format!(
                "shows notifications via {to}, as app `{}` with hint {}={}",
                dbus::APP_NAME,
                dbus::HOOK_HINT,
                self.hook
            ),
            format!(
                "at most {} a minute, {} ms each; title {TITLE_BYTES} bytes, body {BODY_BYTES} bytes, \
                 control characters dropped, body markup escaped",
                self.table.per_minute, self.table.timeout_ms
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::grant::notify::message::Urgency;
    use crate::sandbox::state::StateStore;

    #[test]
    fn a_notifier_without_a_bus_is_unavailable_and_its_flood_is_rate_limited() {
        let table = Table {
            per_minute: 2,
            timeout_ms: 100,
        };
        let store = StateStore::in_memory();
        let n = Arc::new(Notifier::new(&table, "notify_me", None)).bind(&store);
        let m = Message::new("t", "b", Urgency::Normal);
        let deadline = Instant::now() + Duration::from_secs(5);
        for _ in 0..2 {
            match n.send(&m, deadline, false) {
                Err(Refused::Unavailable(why)) => {
                    assert!(why.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "{why}")
                }
                other => panic!("{other:?}"),
            }
        }
        for _ in 0..3 {
            assert_eq!(n.send(&m, deadline, false), Err(Refused::RateLimited));
        }
        assert_eq!(n.notifier.rate_limited(), 3);
        // Another process's notifier of the same hook on the same state
        // store (`hookrt hook`, once per event) finds the window full.
        let next = Arc::new(Notifier::new(&table, "notify_me", None)).bind(&store);
        assert_eq!(next.send(&m, deadline, false), Err(Refused::RateLimited));
        // A replay shows nothing, and counts against the limit all the same.
        let replayed =
            Arc::new(Notifier::new(&table, "notify_me", None)).bind(&StateStore::in_memory());
        assert_eq!(replayed.send(&m, deadline, true), Ok(None));
        assert_eq!(replayed.send(&m, deadline, true), Ok(None));
        assert_eq!(replayed.send(&m, deadline, true), Err(Refused::RateLimited));
    }
}
