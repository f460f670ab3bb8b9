//! The `notify` grant: a desktop notification (title, body, urgency).
//!
//! The table (`table.rs`) sets the rate limit and the delivery bound; the
//! hook's notifier (`notifier.rs`) is made at load, on the session bus named
//! by hookrt's own environment. A call's text is made safe to show
//! (`message.rs`: bounded, control characters dropped, markup escaped) and
//! sent to `org.freedesktop.Notifications` (`dbus.rs`). Each use is a
//! `[hookrt] notify` line in the delivery's record (urgency, title, body
//! size, outcome, duration), which the journal keeps. Not lock-pinned: it
//! runs nothing and sends nothing off the machine (docs/sandbox.md).

mod dbus;
pub(crate) mod message;
pub(crate) mod notifier;
pub(crate) mod table;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use notifier::Notifier;
pub use table::Table;

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::notify::{NotifyError, Urgency as WitUrgency};
use message::{Message, Urgency};
use notifier::Refused;

/// The hook's counter of notifications refused as rate-limited.
pub(crate) const RATE_LIMITED_SERIES: &str = "hookrt_notify_rate_limited";

/// The `notify` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "notify",
    interfaces: &["hookrt:hook/notify"],
    gives: "shows desktop notifications through the session's notifier, rate-limited",
    default: false,
    needs_lock: false,
    table: |v| table::parse(v).map(GrantTable::of),
    link,
    needs_project: false,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: its notifier.
#[derive(Debug)]
struct Loaded(Arc<Notifier>);

/// The notifier on the session bus hookrt's own environment names (never
/// one an event or the hook could).
fn resolve(table: &GrantTable, at: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    Ok(table.get::<Table>().map(|table| {
        Arc::new(Loaded(Arc::new(Notifier::from_environment(
            table, at.hook_id,
        )))) as Arc<dyn held::Held>
    }))
}

impl held::Held for Loaded {
    /// Bound to where its rate window is kept.
    fn arm(&self, data: &mut StoreData, arming: &Arming<'_>) {
        data.grants.put(GRANT.name, self.0.bind(arming.state));
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_notify", "may notify", self.0.audit_lines())
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::notify::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl From<WitUrgency> for Urgency {
    fn from(u: WitUrgency) -> Self {
        match u {
            WitUrgency::Low => Urgency::Low,
            WitUrgency::Normal => Urgency::Normal,
            WitUrgency::Critical => Urgency::Critical,
        }
    }
}

impl v0_4_0::hookrt::hook::notify::Host for StoreData {
    fn send(
        &mut self,
        title: String,
        body: String,
        urgency: WitUrgency,
    ) -> Result<(), NotifyError> {
        let Some(grant) = self.grants.get::<notifier::Bound>(GRANT.name).cloned() else {
            return Err(NotifyError::Unavailable(
                "this hook holds no notify grant".to_owned(),
            ));
        };
        let message = Message::new(&title, &body, urgency.into());
        let start = Instant::now();
        let result = grant.send(&message, self.deadline, self.replay);
        if result == Err(Refused::RateLimited) {
            self.metrics.counter(RATE_LIMITED_SERIES, 1, Vec::new());
        }
        let fields = use_fields(&message, &result, start, &grant.notifier);
        self.capture.record("notify".to_owned(), fields);
        match result {
            Ok(_) => Ok(()),
            Err(Refused::RateLimited) => Err(NotifyError::RateLimited),
            Err(Refused::Unavailable(why)) => Err(NotifyError::Unavailable(why)),
        }
    }
}

/// The fields of one use's `[hookrt] notify` line: what was shown (the
/// title as sent, the body's size), how it ended and how long it took.
fn use_fields(
    message: &Message,
    result: &Result<Option<u32>, Refused>,
    start: Instant,
    notifier: &Notifier,
) -> Vec<(String, String)> {
    let outcome = match result {
        Ok(None) => "not shown: a replay records it only".to_owned(),
        Ok(Some(id)) => format!("shown (id {id})"),
        Err(Refused::RateLimited) => format!(
            "rate-limited ({} refused since load)",
            notifier.rate_limited()
        ),
        Err(Refused::Unavailable(why)) => format!("unavailable: {why}"),
    };
    vec![
        ("urgency".to_owned(), message.urgency.word().to_owned()),
        ("title".to_owned(), message.title.clone()),
        ("body_bytes".to_owned(), message.body.len().to_string()),
        ("outcome".to_owned(), outcome),
        // A replay's record is compared with the last: no clock in it.
        (
            "duration_ms".to_owned(),
            match result {
                Ok(None) => "0".to_owned(),
                _ => start.elapsed().as_millis().to_string(),
            },
        ),
    ]
}
