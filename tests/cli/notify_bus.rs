//! A real D-Bus for the `notify` tests: a private `dbus-daemon --session`
//! (Debian's `dbus-daemon`, which `scripts/dbus` installs) per test, and on
//! it, when asked, a stand-in of the desktop notification service: zbus in
//! this process owns `org.freedesktop.Notifications` and records each
//! `Notify` it receives, answering with an id (the one it replaces, when it
//! replaces one) or, stalled, never.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use zbus::zvariant::{OwnedValue, Value};

/// One `Notify` as the stand-in received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Received {
    pub(crate) app_name: String,
    pub(crate) replaces_id: u32,
    pub(crate) summary: String,
    pub(crate) body: String,
    /// The `urgency` hint's byte.
    pub(crate) urgency: Option<u8>,
    /// The `x-hookrt-hook` hint.
    pub(crate) hook: Option<String>,
    /// The id it answered with (0 when stalled).
    pub(crate) id: u32,
}

/// A private session bus, and the stand-in on it when there is one.
pub(crate) struct Bus {
    daemon: Child,
    /// What `DBUS_SESSION_BUS_ADDRESS` says to reach it.
    pub(crate) address: String,
    received: Arc<Mutex<Vec<Received>>>,
    // Held for the stand-in's life: its connection and the runtime it runs on.
    _service: Option<(tokio::runtime::Runtime, zbus::Connection)>,
}

struct StandIn {
    received: Arc<Mutex<Vec<Received>>>,
    stall: bool,
    next_id: AtomicU32,
}

fn hint_u8(hints: &HashMap<String, OwnedValue>, key: &str) -> Option<u8> {
    match hints.get(key).map(|v| &**v) {
        Some(Value::U8(u)) => Some(*u),
        _ => None,
    }
}

fn hint_str(hints: &HashMap<String, OwnedValue>, key: &str) -> Option<String> {
    match hints.get(key).map(|v| &**v) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl StandIn {
    #[allow(
        clippy::too_many_arguments,
        reason = "the specification's Notify has eight arguments"
    )]
    async fn notify(
        &self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let id = match (self.stall, replaces_id) {
            (true, _) => 0,
            (false, 0) => self.next_id.fetch_add(1, Ordering::SeqCst),
            (false, replaced) => replaced,
        };
        self.received.lock().unwrap().push(Received {
            app_name,
            replaces_id,
            summary,
            body,
            urgency: hint_u8(&hints, "urgency"),
            hook: hint_str(&hints, "x-hookrt-hook"),
            id,
        });
        if self.stall {
            std::future::pending::<()>().await;
        }
        id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned(), "body-markup".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "stand-in".into(),
            "hookrt tests".into(),
            "0".into(),
            "1.2".into(),
        )
    }
}

impl Bus {
    /// A private session bus with nobody on it.
    pub(crate) fn empty() -> Bus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start dbus-daemon ({e}): scripts/dbus installs it (Debian's dbus-daemon)")
            });
        let mut line = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout piped"))
            .read_line(&mut line)
            .expect("dbus-daemon prints its address");
        let address = line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        Bus {
            daemon,
            address,
            received: Arc::default(),
            _service: None,
        }
    }

    /// A private session bus with the stand-in notification service on it,
    /// answering (or, `stall`, never answering) each `Notify`.
    pub(crate) fn with_notifier(stall: bool) -> Bus {
        let mut bus = Bus::empty();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let stand_in = StandIn {
            received: bus.received.clone(),
            stall,
            next_id: AtomicU32::new(1),
        };
        let connection = runtime
            .block_on(async {
                zbus::connection::Builder::address(bus.address.as_str())?
                    .name("org.freedesktop.Notifications")?
                    .serve_at("/org/freedesktop/Notifications", stand_in)?
                    .build()
                    .await
            })
            .expect("the stand-in owns org.freedesktop.Notifications");
        bus._service = Some((runtime, connection));
        bus
    }

    /// What the stand-in received so far.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
