//! Checking the auditor's trail ([`verify`], [`verify_segment`]): every
//! entry's hash and link, every pruned range's boundary, every checkpoint's
//! signature, and that the journal's tables hold what the trail recorded.
//!
//! Given the key an auditor trusts ([`Expect::key`]), the trail must also be
//! signed where it matters: at least one checkpoint, consecutive checkpoints
//! no further apart than the `every` the earlier one signed, every `pruned`
//! entry signed by the checkpoint right after it, and the head signed (an
//! unsigned tail is named, and refused unless [`Expect::allow_unsigned_tail`]).
//! An anchor taken earlier ([`Expect::head`], from `hookrt journal head`)
//! catches a trail cut back to an older checkpoint, which no signature can.

use std::path::Path;

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use rusqlite::Connection;
use serde_json::Value;

use super::records::{
    check_event_seq, every_event_recorded, first_event_after, records_hold, trail_from_event,
};
use super::trail::{GENESIS, entry_hash, signed_head};
pub use super::verdict::Row;
use super::verdict::{Anchor, Break, Expect, Pruned, Verified};

/// Every entry of the trail of `conn`, in order.
pub(crate) fn rows(conn: &Connection) -> Result<Vec<Row>, Break> {
    rows_from(conn, i64::MIN)
}

/// The entries of the trail of `conn` from position `from` on, in order.
fn rows_from(conn: &Connection, from: i64) -> Result<Vec<Row>, Break> {
    let has: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'trail'",
        [],
        |r| r.get(0),
    )?;
    if has == 0 {
        return Err(Break::NoTrail);
    }
    let rows = conn
        .prepare(
            "SELECT seq, kind, event_seq, body, prev, hash FROM trail WHERE seq >= ?1 ORDER BY seq",
        )?
        .query_map([from], |r| {
            Ok(Row {
                seq: r.get(0)?,
                kind: r.get(1)?,
                event_seq: r.get(2)?,
                body: r.get(3)?,
                prev: hex::encode(r.get::<_, Vec<u8>>(4)?),
                hash: hex::encode(r.get::<_, Vec<u8>>(5)?),
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The entries of `path`'s trail from the first one at or after `since_ms`
/// (every entry without it), for `hookrt journal export`: a segment of the
/// chain [`verify_segment`] checks on its own.
pub fn export(path: &Path, since_ms: Option<i64>) -> Result<Vec<Row>, Break> {
    let conn = open_read_only(path)?;
    let all = rows(&conn)?;
    let Some(since) = since_ms else {
        return Ok(all);
    };
    let start = all.iter().position(|r| {
        serde_json::from_str::<Value>(&r.body)
            .ok()
            .and_then(|b| b["at_ms"].as_i64())
            .is_some_and(|at| at >= since)
    });
    Ok(start.map_or_else(Vec::new, |i| all[i..].to_vec()))
}

/// The head of `path`'s trail as an anchor to keep outside the journal.
pub fn head(path: &Path) -> Result<Anchor, Break> {
    let conn = open_read_only(path)?;
    let all = rows(&conn)?;
    let last = all.last().ok_or(Break::Unsigned { entries: 0 })?;
    Ok(Anchor {
        seq: last.seq,
        hash: last.hash.clone(),
    })
}

pub(crate) fn open_read_only(path: &Path) -> Result<Connection, Break> {
    Ok(Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?)
}

/// Where a run of entries starts: the chain's beginning, after a pruned
/// range, or (an export) wherever its first entry says.
enum Start<'a> {
    Journal(&'a [Pruned]),
    Segment,
}

/// A checkpoint's signature, by the key it names: `Some(every)` when it
/// holds (`every` as it signed it; `None` for a first-format checkpoint,
/// which signed none).
fn signed_checkpoint(body: &Value, head: i64, named: &str) -> Option<Option<u64>> {
    let key = VerifyingKey::from_bytes(&hex::decode(named).ok()?.try_into().ok()?).ok()?;
    let signature = Signature::from_slice(&hex::decode(body["signature"].as_str()?).ok()?).ok()?;
    let hash = hex::decode(body["hash"].as_str()?).ok()?;
    let every = match body["v"].as_u64() {
        None => None,
        Some(2) => Some(body["every"].as_u64()?),
        Some(_) => return None,
    };
    key.verify(&signed_head(head, &hash, every), &signature)
        .ok()?;
    Some(every)
}

/// The links: each entry follows the one before it (or the chain's
/// beginning, or a pruned range's boundary).
fn check_link(r: &Row, expected: Option<(i64, &str)>, start: &Start<'_>) -> Result<(), Break> {
    match (expected, start) {
        (None, Start::Segment) => {}
        (None, Start::Journal(_)) if r.seq == 1 => {
            if r.prev != hex::encode(GENESIS) {
                return Err(Break::Reordered { seq: 1, after: 0 });
            }
        }
        (None, Start::Journal(pruned)) => {
            // The chain starts after a pruned range: its boundary.
            let Some((from, to, boundary)) = pruned
                .iter()
                .rev()
                .filter_map(|p| p.range.as_ref())
                .find(|(_, to, _)| *to == r.seq - 1)
            else {
                return Err(Break::Deleted {
                    from: 1,
                    to: r.seq - 1,
                });
            };
            if r.prev != *boundary {
                return Err(Break::Boundary {
                    seq: r.seq,
                    from: *from,
                    to: *to,
                });
            }
        }
        (Some((last, last_hash)), _) => {
            if r.seq != last + 1 {
                return Err(Break::Deleted {
                    from: last + 1,
                    to: r.seq - 1,
                });
            }
            if r.prev != last_hash {
                return Err(Break::Reordered {
                    seq: r.seq,
                    after: last,
                });
            }
        }
    }
    Ok(())
}

/// Checks `rows` as one run of the chain: each entry's hash, each link,
/// each checkpoint's signature, and (with a key) that it is signed where
/// it matters.
fn check(rows: &[Row], expect: &Expect<'_>, start: Start<'_>) -> Result<Verified, Break> {
    let mut found = Verified {
        entries: 0,
        first: 0,
        last: 0,
        head: hex::encode(GENESIS),
        checkpoints: 0,
        keys: Vec::new(),
        pruned: Vec::new(),
        events: 0,
        unsigned_tail: None,
        key_checked: expect.key.is_some(),
        anchored: None,
        first_format: 0,
    };
    check_hashes(rows)?;
    let strict = expect.key.is_some();
    // The last checkpoint: its position and the `every` it signed.
    let mut last_checkpoint: Option<(i64, Option<u64>)> = None;
    // A `pruned` entry waiting for the checkpoint that signs it.
    let mut unsigned_prune: Option<i64> = None;
    let mut expected: Option<(i64, &str)> = None;
    for r in rows {
        let body: Value = serde_json::from_str(&r.body).map_err(|e| Break::Unreadable {
            seq: r.seq,
            why: e.to_string(),
        })?;
        check_link(r, expected, &start)?;
        check_event_seq(r, &body)?;
        if let Some(seq) = unsigned_prune.take()
            && strict
            && r.kind != "checkpoint"
        {
            return Err(Break::UnsignedPrune { seq });
        }
        if r.kind == "checkpoint" {
            let every = check_checkpoint(r, &body, expect.key)?;
            if strict
                && let Some((after, Some(promised))) = last_checkpoint
                && r.seq - after - 1 > promised as i64
            {
                return Err(Break::Sparse {
                    seq: r.seq,
                    after,
                    gap: r.seq - after - 1,
                    every: promised,
                });
            }
            last_checkpoint = Some((r.seq, every));
            found.checkpoints += 1;
            let named = body["key"].as_str().unwrap_or("").to_owned();
            if !found.keys.contains(&named) {
                found.keys.push(named);
            }
        }
        if r.kind == "pruned" {
            unsigned_prune = Some(r.seq);
        }
        if found.entries == 0 {
            found.first = r.seq;
        }
        found.entries += 1;
        found.last = r.seq;
        found.head = r.hash.clone();
        expected = Some((r.seq, &r.hash));
    }
    let tail_from = last_checkpoint.map_or(found.first, |(seq, _)| seq + 1);
    if found.entries > 0 && tail_from <= found.last {
        found.unsigned_tail = Some((tail_from, found.last));
    }
    if strict {
        check_signed_to_the_end(&found, last_checkpoint, unsigned_prune, expect)?;
    }
    if let Some(anchor) = expect.head {
        found.anchored = Some(check_anchor(rows, anchor, &start)?);
    }
    Ok(found)
}

/// Each entry's own hash, and its `prev` in the hash's one spelling (an
/// export's first entry links to nothing else, so `AB…` for `ab…` would pass
/// unseen: found by the `trail` fuzz target).
fn check_hashes(rows: &[Row]) -> Result<(), Break> {
    for r in rows {
        let prev = hex::decode(&r.prev)
            .ok()
            .filter(|p| p.len() == 32 && hex::encode(p) == r.prev);
        let Some(prev) = prev else {
            return Err(Break::Edited { seq: r.seq });
        };
        if hex::encode(entry_hash(&prev, &r.kind, &r.body)) != r.hash {
            return Err(Break::Edited { seq: r.seq });
        }
    }
    Ok(())
}

/// With a key: no `pruned` entry left unsigned, at least one checkpoint, and
/// an unsigned tail only where allowed and no longer than the last
/// checkpoint promised.
fn check_signed_to_the_end(
    found: &Verified,
    last_checkpoint: Option<(i64, Option<u64>)>,
    unsigned_prune: Option<i64>,
    expect: &Expect<'_>,
) -> Result<(), Break> {
    if let Some(seq) = unsigned_prune {
        return Err(Break::UnsignedPrune { seq });
    }
    if found.checkpoints == 0 {
        return Err(Break::Unsigned {
            entries: found.entries,
        });
    }
    if let Some((from, to)) = found.unsigned_tail {
        let promised = last_checkpoint.and_then(|(_, every)| every);
        let too_long = promised.is_some_and(|every| to - from + 1 > every as i64);
        let why = match promised {
            Some(every) if too_long => format!(
                ", and there are more of them than the {every} the last checkpoint signed would come before the next: entries were added after it or checkpoints removed"
            ),
            _ => " (give --allow-unsigned-tail to accept a tail left by a running or crashed service)".to_owned(),
        };
        if too_long || !expect.allow_unsigned_tail {
            return Err(Break::UnsignedTail { from, to, why });
        }
    }
    Ok(())
}

/// A checkpoint's head, key and signature; the `every` it signed.
fn check_checkpoint(
    r: &Row,
    body: &Value,
    key: Option<&VerifyingKey>,
) -> Result<Option<u64>, Break> {
    let head = body["head"].as_i64().unwrap_or(-1);
    let named = body["key"].as_str().unwrap_or("").to_owned();
    // The head it signs is the entry just before it.
    if head != r.seq - 1 || body["hash"].as_str() != Some(r.prev.as_str()) {
        return Err(Break::CheckpointHead { seq: r.seq, head });
    }
    if let Some(want) = key {
        let want = hex::encode(want.as_bytes());
        if want != named {
            return Err(Break::WrongKey {
                seq: r.seq,
                found: named,
                want,
            });
        }
    }
    signed_checkpoint(body, head, &named).ok_or(Break::Signature {
        seq: r.seq,
        key: named,
    })
}

/// Where the chain holds `anchor`: its entry, with the same hash.
fn check_anchor(rows: &[Row], anchor: &Anchor, start: &Start<'_>) -> Result<i64, Break> {
    let broken = |why: String| Break::Anchor {
        anchor: anchor.to_string(),
        why,
    };
    if let Some(r) = rows.iter().find(|r| r.seq == anchor.seq) {
        return if r.hash == anchor.hash {
            Ok(r.seq)
        } else {
            Err(broken(format!(
                "entry {} has hash {}: the chain was rewritten from there",
                r.seq, r.hash
            )))
        };
    }
    let last = rows.last().map_or(0, |r| r.seq);
    if anchor.seq > last {
        return Err(broken(format!(
            "the trail ends at entry {last}, before it: entries after {last} were cut"
        )));
    }
    // Before the first entry held: a pruned range's boundary, or gone.
    if let Start::Journal(pruned) = start
        && let Some((_, to, boundary)) = pruned
            .iter()
            .filter_map(|p| p.range.as_ref())
            .find(|(_, to, _)| *to == anchor.seq)
    {
        return if *boundary == anchor.hash {
            Ok(*to)
        } else {
            Err(broken(format!(
                "entry {to} ends a pruned range whose boundary hash is {boundary}"
            )))
        };
    }
    Err(broken(format!(
        "entry {} is no longer in the trail (it starts at entry {}): the anchor cannot be checked; take a newer one",
        anchor.seq,
        rows.first().map_or(0, |r| r.seq)
    )))
}

/// Checks an exported run of entries (`hookrt journal export`) on its own:
/// each entry's hash, each link from its first entry on, each checkpoint's
/// signature, held to `expect`.
pub fn verify_segment(rows: &[Row], expect: &Expect<'_>) -> Result<Verified, Break> {
    check(rows, expect, Start::Segment)
}

/// Checks the trail of the journal at `path` (opened read-only), held to
/// `expect`: every entry's hash, every link, every pruned range's boundary,
/// every checkpoint's signature, that every event of the journal has its
/// entry, and that every row an entry records is there as recorded (or
/// named by a `pruned` entry). The first entry that does not fit is the
/// error.
pub fn verify(path: &Path, expect: &Expect<'_>) -> Result<Verified, Break> {
    let conn = open_read_only(path)?;
    let rows = rows(&conn)?;
    // The pruned ranges, as the (chained, so checked) `pruned` entries say.
    let pruned = Pruned::all(rows.iter().filter(|r| r.kind == "pruned").map(|r| &r.body));
    let mut found = check(&rows, expect, Start::Journal(&pruned))?;
    found.pruned = pruned
        .iter()
        .filter_map(|p| p.range.as_ref().map(|(f, t, _)| (*f, *t)))
        .collect();
    let from = trail_from_event(&conn, &rows)?;
    found.events = every_event_recorded(&conn, &rows, found.last, from)?;
    found.first_format = records_hold(&conn, &rows, &pruned)?;
    Ok(found)
}

/// Checks the entries after the last checkpoint of `conn`'s trail (every
/// entry when it has none), as [`verify`] would: their hashes and links,
/// the rows they record, and that every event after the last one recorded
/// before them has its entry. A process runs this before it signs a tail
/// another process left (`Journal::sign_found_tail`, `Journal::prune`), so
/// a tail edited while no hookrt ran is never signed as found.
pub(crate) fn check_found_tail(conn: &Connection) -> Result<(), Break> {
    let from: Option<i64> = conn.query_row(
        "SELECT max(seq) FROM trail WHERE kind = 'checkpoint'",
        [],
        |r| r.get(0),
    )?;
    let tail = rows_from(conn, from.unwrap_or(i64::MIN))?;
    let bodies: Vec<String> = conn
        .prepare("SELECT body FROM trail WHERE kind = 'pruned' ORDER BY seq")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let pruned = Pruned::all(bodies.iter());
    let start = match from {
        Some(_) => Start::Segment,
        None => Start::Journal(&pruned),
    };
    let found = check(&tail, &Expect::default(), start)?;
    records_hold(conn, &tail, &pruned)?;
    let from_event = first_event_after(conn, &tail, found.first)?;
    every_event_recorded(conn, &tail, found.last, from_event)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::SigningKey;
    use serde_json::json;

    use super::*;
    use crate::service::journal::trail::checkpoint_body;

    /// A chain of `kinds` from genesis, each `c<N>` a checkpoint promising
    /// the next within N entries (`v1` a first-format one), signed by `key`.
    fn chain(key: &SigningKey, kinds: &[&str]) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        let mut prev = GENESIS.to_vec();
        for (i, kind) in kinds.iter().enumerate() {
            let seq = i as i64 + 1;
            let (kind, body) = match kind.strip_prefix('c') {
                Some(every) => (
                    "checkpoint",
                    checkpoint_body(key, every.parse().unwrap(), seq - 1, &prev),
                ),
                None if *kind == "v1" => {
                    let signature =
                        ed25519_dalek::Signer::sign(key, &signed_head(seq - 1, &prev, None));
                    (
                        "checkpoint",
                        json!({
                            "head": seq - 1,
                            "hash": hex::encode(&prev),
                            "key": hex::encode(key.verifying_key().as_bytes()),
                            "signature": hex::encode(signature.to_bytes()),
                        }),
                    )
                }
                None => (*kind, json!({"n": seq})),
            };
            let text = body.to_string();
            let hash = entry_hash(&prev, kind, &text);
            rows.push(Row {
                seq,
                kind: kind.to_owned(),
                event_seq: None,
                body: text,
                prev: hex::encode(&prev),
                hash: hex::encode(hash),
            });
            prev = hash.to_vec();
        }
        rows
    }

    fn strict(key: &VerifyingKey) -> Expect<'_> {
        Expect {
            key: Some(key),
            ..Expect::default()
        }
    }

    #[test]
    fn checkpoints_further_apart_than_promised_are_refused() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let public = key.verifying_key();
        let ok = chain(&key, &["hooks", "event", "c2", "event", "event", "c2"]);
        assert!(verify_segment(&ok, &strict(&public)).is_ok());
        let sparse = chain(
            &key,
            &["hooks", "event", "c2", "event", "event", "event", "c2"],
        );
        assert_eq!(
            verify_segment(&sparse, &strict(&public)),
            Err(Break::Sparse {
                seq: 7,
                after: 3,
                gap: 3,
                every: 2
            })
        );
        // Without a key only the chain is checked.
        assert!(verify_segment(&sparse, &Expect::default()).is_ok());
    }

    #[test]
    fn a_first_format_checkpoint_holds_and_promised_nothing() {
        let key = SigningKey::from_bytes(&[9; 32]);
        let public = key.verifying_key();
        let rows = chain(
            &key,
            &["hooks", "event", "v1", "event", "event", "event", "c2"],
        );
        let found = verify_segment(&rows, &strict(&public)).unwrap();
        assert_eq!(found.checkpoints, 2);
        assert_eq!(found.unsigned_tail, None);
        // A first-format body claiming the second format's promise fails.
        let mut forged = rows.clone();
        let mut body: Value = serde_json::from_str(&forged[2].body).unwrap();
        body["v"] = json!(2);
        body["every"] = json!(1000);
        forged[2].body = body.to_string();
        forged[2].hash = hex::encode(entry_hash(
            &hex::decode(&forged[2].prev).unwrap(),
            "checkpoint",
            &forged[2].body,
        ));
        assert!(matches!(
            verify_segment(&forged[..3], &strict(&public)),
            Err(Break::Signature { seq: 3, .. })
        ));
    }

    #[test]
    fn a_signed_head_a_tail_and_a_pruned_entry_without_its_checkpoint() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let public = key.verifying_key();
        let tail = chain(&key, &["hooks", "c5", "event", "event"]);
        assert!(matches!(
            verify_segment(&tail, &strict(&public)),
            Err(Break::UnsignedTail { from: 3, to: 4, .. })
        ));
        let allowed = Expect {
            allow_unsigned_tail: true,
            ..strict(&public)
        };
        assert_eq!(
            verify_segment(&tail, &allowed).unwrap().unsigned_tail,
            Some((3, 4))
        );
        let pruned = chain(&key, &["hooks", "c5", "pruned", "event", "c5"]);
        assert_eq!(
            verify_segment(&pruned, &allowed),
            Err(Break::UnsignedPrune { seq: 3 })
        );
        let signed = chain(&key, &["hooks", "c5", "pruned", "c5", "event"]);
        assert!(verify_segment(&signed, &allowed).is_ok());
        assert_eq!(
            verify_segment(&chain(&key, &["hooks", "event"]), &strict(&public)),
            Err(Break::Unsigned { entries: 2 })
        );
    }

    #[test]
    fn an_entrys_prev_has_one_spelling() {
        let key = SigningKey::from_bytes(&[5; 32]);
        let public = key.verifying_key();
        let rows = chain(&key, &["hooks", "event", "c5"]);
        let mut run = rows[1..].to_vec();
        assert!(verify_segment(&run, &strict(&public)).is_ok());
        run[0].prev = run[0].prev.to_ascii_uppercase();
        assert_eq!(
            verify_segment(&run, &strict(&public)),
            Err(Break::Edited { seq: 2 })
        );
    }

    #[test]
    fn anchors_read_as_seq_and_hash() {
        let a: Anchor = format!("12:{}", "AB".repeat(32)).parse().unwrap();
        assert_eq!((a.seq, a.hash.as_str()), (12, "ab".repeat(32).as_str()));
        for bad in [
            "12",
            "x:00",
            "0:",
            &format!("0:{}", "00".repeat(32)),
            &format!("3:{}", "0".repeat(63)),
        ] {
            assert!(bad.parse::<Anchor>().is_err(), "{bad}");
        }
    }
}
