//! Migrations of journals an older hookrt wrote, run once in the open's
//! setup transaction (foreign keys off).

use rusqlite::{Transaction, params};

use crate::event::envelope::Envelope;

/// Schema 1 to 2: event ids unique per agent (`UNIQUE (agent, id)`), each
/// event with its digest. Schema 1 made ids unique across every agent, so
/// one agent's id answered for another's. The events table is rebuilt (a
/// column's `UNIQUE` cannot be dropped in place); each stored envelope is
/// read back for its agent and digest. One that cannot be read keeps its
/// row with no digest (a re-submission of its id is then refused) and the
/// agent `""`. A no-op on a journal that has the `agent` column.
pub(super) fn scoped_ids(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let has_agent: i64 = tx.query_row(
        "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'agent'",
        [],
        |r| r.get(0),
    )?;
    if has_agent > 0 {
        return Ok(());
    }
    tx.execute_batch(
        "CREATE TABLE events_v2 (
            seq         INTEGER PRIMARY KEY,
            id          TEXT NOT NULL,
            agent       TEXT NOT NULL,
            digest      BLOB,
            kind        TEXT NOT NULL,
            origin      TEXT NOT NULL,
            envelope    TEXT NOT NULL,
            received_ms INTEGER NOT NULL,
            UNIQUE (agent, id)
        );",
    )?;
    {
        let mut rows =
            tx.prepare("SELECT seq, id, kind, origin, envelope, received_ms FROM events")?;
        let mut add = tx.prepare(
            "INSERT INTO events_v2(seq, id, agent, digest, kind, origin, envelope, received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        let mut found = rows.query([])?;
        while let Some(r) = found.next()? {
            let (seq, id, kind, origin, text, received): (
                i64,
                String,
                String,
                String,
                String,
                i64,
            ) = (
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            );
            let read = Envelope::from_json(&text).ok();
            let agent = read.as_ref().map_or("", |e| e.coordinates.agent.as_str());
            let digest = read.as_ref().map(|e| e.digest().to_vec());
            add.execute(params![
                seq, id, agent, digest, kind, origin, text, received
            ])?;
        }
    }
    tx.execute_batch(
        "DROP TABLE events;
         ALTER TABLE events_v2 RENAME TO events;
         CREATE INDEX IF NOT EXISTS events_received ON events(received_ms);",
    )
}
