//! Writing the one place the hook's `write` table names (world 0.4.0, the
//! `write` grant): `write::append(line.as_bytes())?` for a declared file,
//! `write::file("backup.jsonl", &bytes)?` inside a declared folder.
//!
//! The place is relative to the project folder and fixed by the operator's
//! table (pinned by `hookrt.lock`); the host refuses a path out of it (`..`,
//! absolute, a symlink or hard link out) and writes past its caps. Off wasm
//! (native unit tests of a hook) nothing is written: every call is refused,
//! so a test sees what a hook without the grant sees.

use crate::HookError;

/// Appends `bytes` to the file the table declares.
pub fn append(bytes: &[u8]) -> Result<(), HookError> {
    backend::append(bytes).map_err(|why| HookError::new(format!("write append: {why}")))
}

/// Writes `bytes` as the whole file `path`, relative to the folder the table
/// declares.
pub fn file(path: &str, bytes: &[u8]) -> Result<(), HookError> {
    backend::file(path, bytes).map_err(|why| HookError::new(format!("write `{path}`: {why}")))
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::write::{self, WriteError};

    fn said(e: WriteError) -> String {
        match e {
            WriteError::Denied(why) => format!("denied: {why}"),
            WriteError::TooLarge(cap) => format!("too large: over the {cap}-byte cap"),
            WriteError::Failed(why) => format!("failed: {why}"),
        }
    }

    pub(super) fn append(bytes: &[u8]) -> Result<(), String> {
        write::append(bytes).map_err(said)
    }

    pub(super) fn file(path: &str, bytes: &[u8]) -> Result<(), String> {
        write::write_file(path, bytes).map_err(said)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    pub(super) fn append(_bytes: &[u8]) -> Result<(), String> {
        Err("denied: nothing is written off wasm".to_owned())
    }

    pub(super) fn file(_path: &str, _bytes: &[u8]) -> Result<(), String> {
        Err("denied: nothing is written off wasm".to_owned())
    }
}
