//! The `transcript` grant: the last whole lines of the session's transcript
//! the agent named, read-only and bounded.
//!
//! The file is never the event's to choose: an agent's bridge names it
//! beside the envelope with the folder that agent keeps transcripts in for
//! this user (`event::transcript`), and a read is refused unless the path,
//! resolved (no `..`, no symlink out), lies in that folder and the file is
//! a regular file owned by the user hookrt runs as. An event read from text
//! (JSONL, the journal, JetStream) names none. Each read is a
//! `[hookrt] transcript tail` line in the delivery's record.

pub(crate) mod table;
pub(crate) mod tail;

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{HasSelf, Linker};

pub use table::Table;
pub(crate) use tail::Reader;

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::transcript::TranscriptError;

/// The `transcript` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "transcript",
    interfaces: &["hookrt:hook/transcript"],
    gives: "reads the tail of the session's transcript the agent names, only inside that agent's transcripts folder",
    default: false,
    needs_lock: false,
    table: |v| table::parse(v).map(|t| t.map_or_else(GrantTable::empty, GrantTable::of)),
    link,
    needs_project: false,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: its table (the defaults when it is
/// named without one).
#[derive(Debug)]
struct Loaded(Table);

fn resolve(table: &GrantTable, _: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    let table = table.get::<Table>().copied().unwrap_or_default();
    Ok(Some(Arc::new(Loaded(table))))
}

impl held::Held for Loaded {
    /// The transcript the event's bridge named: it reads nothing else.
    fn arm(&self, data: &mut StoreData, arming: &Arming<'_>) {
        let reader = Reader {
            table: self.0,
            file: arming.transcript.cloned(),
        };
        data.grants.put(GRANT.name, reader);
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_read_transcript", "may read", vec![self.0.audit_line()])
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::transcript::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl v0_4_0::hookrt::hook::transcript::Host for StoreData {
    fn tail(&mut self, max_bytes: u64) -> Result<Vec<u8>, TranscriptError> {
        let start = Instant::now();
        let Some(reader) = self.grants.get::<Reader>(GRANT.name) else {
            return Err(TranscriptError::Denied(
                "this hook holds no transcript grant".to_owned(),
            ));
        };
        let result = reader.tail(max_bytes);
        let mut fields = Vec::new();
        if let Some(file) = &reader.file {
            fields.push(("path".to_owned(), file.path.display().to_string()));
        }
        fields.push((
            "max_bytes".to_owned(),
            max_bytes.min(reader.table.max_bytes).to_string(),
        ));
        match &result {
            Ok((bytes, size)) => {
                fields.push(("bytes".into(), bytes.len().to_string()));
                fields.push(("file_bytes".into(), size.to_string()));
                fields.push(("outcome".into(), "read".into()));
            }
            Err(TranscriptError::None) => fields.push((
                "outcome".into(),
                "none: the event names no transcript".into(),
            )),
            Err(e) => fields.push(("outcome".into(), format!("{e:?}"))),
        }
        fields.push((
            "duration_us".into(),
            start.elapsed().as_micros().to_string(),
        ));
        self.capture.record("transcript tail".to_owned(), fields);
        result.map(|(bytes, _)| bytes)
    }
}
