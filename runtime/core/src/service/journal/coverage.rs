//! What a proof of coverage (`hookrt audit coverage`) reads from a journal:
//! every decision and result event with its resolution, the hooks that
//! voted on each decision, and the components they ran as (from the
//! trail). The journal is opened read-only in one snapshot, with no schema
//! set-up and no lock: WAL lets it be read beside a running service.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

/// The event kinds coverage reads: the two decision events and the result.
const CALL_KINDS: &str = "('actions.requested', 'permission.requested', 'action.result')";

/// Why a journal could not be read for coverage.
#[derive(Debug, thiserror::Error)]
pub enum CoverageReadError {
    /// The path names no file.
    #[error(
        "no such file (a journal is written by `hookrt run --journal` or `hookrt serve --journal`)"
    )]
    Missing,
    /// SQLite would not open it.
    #[error("cannot open it read-only")]
    Open(#[source] rusqlite::Error),
    /// It opened, but is no database SQLite can read.
    #[error("cannot read it (is it a SQLite database?)")]
    NotSqlite(#[source] rusqlite::Error),
    /// A database without one of the journal's tables.
    #[error("not a hookrt journal (no `{0}` table)")]
    NotJournal(&'static str),
    /// Its `trail` table could not be read.
    #[error("cannot read its trail")]
    Trail(#[source] rusqlite::Error),
    /// A stored envelope or resolution is not JSON.
    #[error("event {id} (seq {seq}): its {what} is not JSON")]
    NotJson {
        /// The event's id.
        id: String,
        /// Its seq.
        seq: i64,
        /// `envelope` or `resolution`.
        what: &'static str,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// Any other query failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// Everything coverage is proven from.
#[derive(Debug)]
pub struct CoverageRecords {
    /// Whether the journal has a `trail` table (else no component is known).
    pub trail: bool,
    /// Every decision and result event, in journal order.
    pub events: Vec<CallEvent>,
}

/// One `actions.requested`, `permission.requested` or `action.result`
/// event as stored.
#[derive(Debug)]
pub struct CallEvent {
    /// Its place in the journal.
    pub seq: i64,
    /// Its id.
    pub id: String,
    /// `coordinates.agent`.
    pub agent: String,
    /// Its kind.
    pub kind: String,
    /// The envelope.
    pub envelope: Value,
    /// What it resolved to; `None` while unresolved (and for a result).
    pub resolution: Option<Value>,
    /// The deliveries that vote on a decision, in plan order (a hook
    /// subscribed by name before its `*`); `observe:` ones cast no vote.
    pub voters: Vec<Voter>,
    /// Each hook's component sha256 when it ran this event (from the trail).
    pub components: HashMap<String, String>,
}

/// One delivery that may vote on a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    /// The hook's id.
    pub hook: String,
    /// The subscription it was delivered by (`actions.requested`, `*`, ...).
    pub handler: String,
}

/// Component digests: (agent, event id) -> hook -> sha256.
type Components = HashMap<(String, String), HashMap<String, String>>;

/// Reads the records of the journal at `path` (`hookrt audit coverage`).
pub fn coverage_records(path: &Path) -> Result<CoverageRecords, CoverageReadError> {
    if !path.is_file() {
        return Err(CoverageReadError::Missing);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(CoverageReadError::Open)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // One snapshot for every query below.
    conn.execute_batch("BEGIN")
        .map_err(CoverageReadError::NotSqlite)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| {
            s.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .map_err(CoverageReadError::NotSqlite)?;
    for needed in ["events", "deliveries", "resolutions"] {
        if !tables.iter().any(|t| t == needed) {
            return Err(CoverageReadError::NotJournal(needed));
        }
    }
    let trail = tables.iter().any(|t| t == "trail");
    let mut components = if trail {
        components(&conn)?
    } else {
        HashMap::new()
    };
    let mut voters = voters(&conn)?;
    let mut events = events(&conn)?;
    conn.execute_batch("COMMIT")?;
    for e in &mut events {
        e.voters = voters.remove(&e.seq).unwrap_or_default();
        e.components = components
            .remove(&(e.agent.clone(), e.id.clone()))
            .unwrap_or_default();
    }
    Ok(CoverageRecords { trail, events })
}

/// Each decision event's voting deliveries, in plan order.
fn voters(conn: &Connection) -> Result<HashMap<i64, Vec<Voter>>, CoverageReadError> {
    let mut stmt = conn.prepare(
        "SELECT d.event_seq, d.hook, d.handler FROM deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE e.kind IN ('actions.requested', 'permission.requested')
           AND d.handler NOT LIKE 'observe:%'
         ORDER BY d.event_seq, d.position",
    )?;
    let mut out: HashMap<i64, Vec<Voter>> = HashMap::new();
    for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))? {
        let (seq, hook, handler): (i64, String, String) = row?;
        out.entry(seq).or_default().push(Voter { hook, handler });
    }
    // A hook subscribed by name and as `*` votes by name: list that first.
    for list in out.values_mut() {
        list.sort_by_key(|v| v.handler == "*");
    }
    Ok(out)
}

/// Component digests from the trail: each `deliveries` entry's hooks ran
/// with the components of the `hooks` entry before it.
fn components(conn: &Connection) -> Result<Components, CoverageReadError> {
    let mut stmt = conn
        .prepare("SELECT kind, body FROM trail WHERE kind IN ('hooks', 'deliveries') ORDER BY seq")
        .map_err(CoverageReadError::Trail)?;
    let mut out = Components::new();
    let mut current = Value::Null;
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (kind, body) = row?;
        let Ok(body) = serde_json::from_str::<Value>(&body) else {
            continue;
        };
        if kind == "hooks" {
            current = body["components"].clone();
            continue;
        }
        let (Some(event), Some(agent)) = (body["event"].as_str(), body["agent"].as_str()) else {
            continue;
        };
        let hooks = out.entry((agent.to_owned(), event.to_owned())).or_default();
        for d in body["deliveries"].as_array().into_iter().flatten() {
            if let Some(hook) = d["hook"].as_str()
                && let Some(component) = current[hook].as_str()
            {
                hooks.insert(hook.to_owned(), component.to_owned());
            }
        }
    }
    Ok(out)
}

/// Every decision and result event, in journal order, with its resolution.
fn events(conn: &Connection) -> Result<Vec<CallEvent>, CoverageReadError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT e.seq, e.id, e.agent, e.kind, e.envelope, r.resolution
         FROM events e LEFT JOIN resolutions r ON r.event_seq = e.seq
         WHERE e.kind IN {CALL_KINDS}
         ORDER BY e.seq"
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, id, agent, kind, envelope, resolution) = row?;
        let json = |what: &'static str, text: &str| {
            serde_json::from_str(text).map_err(|source| CoverageReadError::NotJson {
                id: id.clone(),
                seq,
                what,
                source,
            })
        };
        let envelope = json("envelope", &envelope)?;
        let resolution = resolution.map(|r| json("resolution", &r)).transpose()?;
        out.push(CallEvent {
            seq,
            id,
            agent,
            kind,
            envelope,
            resolution,
            voters: Vec::new(),
            components: HashMap::new(),
        });
    }
    Ok(out)
}
