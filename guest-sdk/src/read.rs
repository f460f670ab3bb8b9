//! Reading the project folder (world 0.4.0, the `read` grant):
//! `read::read_text("src/main.rs")?`, `read::list_dir(".")?`.
//!
//! Paths are relative to the project folder, which the host decides (never
//! an event). The host refuses what its deny patterns name (`.env*`, keys
//! and certificates, credentials, the agents' own settings, and the table's
//! own), `..`, absolute paths and symlinks leading out, and files over the
//! table's caps; `list_dir` leaves denied names out. Off wasm (native unit
//! tests of a hook) there is no project folder: every read is refused, so a
//! test sees what a hook without the grant sees.

use std::fmt;

use crate::HookError;

/// Why a read was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// A deny pattern names the path, it leaves the project, or it passes
    /// through a symlink that does (the text says which).
    Denied(String),
    /// Nothing is there.
    NotFound,
    /// The file is larger than the table's cap (its size in bytes).
    TooLarge(u64),
    /// Anything else, the delivery's read budget spent included.
    Failed(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Denied(why) => write!(f, "denied: {why}"),
            ReadError::NotFound => f.write_str("not found"),
            ReadError::TooLarge(size) => write!(f, "too large: {size} bytes"),
            ReadError::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

/// A refused read as a handler's error: `read::read_text(p)?` in a handler.
/// The host's text names the path where it matters.
impl From<ReadError> for HookError {
    fn from(e: ReadError) -> HookError {
        HookError::new(format!("read: {e}"))
    }
}

/// The whole content of the file at `path` (relative to the project folder).
///
/// ```
/// use hookrt_sdk::read::{self, ReadError};
///
/// // Natively every read is refused, as for a hook without the grant.
/// let err = read::read_file(".env").unwrap_err();
/// assert!(matches!(err, ReadError::Denied(_)));
/// assert_eq!(
///     hookrt_sdk::HookError::from(err).message(),
///     "read: denied: no project folder off wasm"
/// );
/// ```
pub fn read_file(path: &str) -> Result<Vec<u8>, ReadError> {
    backend::read_file(path)
}

/// The file at `path` as text; bytes that are not UTF-8 are a failure.
pub fn read_text(path: &str) -> Result<String, ReadError> {
    String::from_utf8(read_file(path)?)
        .map_err(|_| ReadError::Failed(format!("`{path}` is not UTF-8 text")))
}

/// The names in the folder at `path` (`.` for the project's root), sorted;
/// names a deny pattern refuses are left out.
pub fn list_dir(path: &str) -> Result<Vec<String>, ReadError> {
    backend::list_dir(path)
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use super::ReadError;
    use crate::bindings::hookrt::hook::read::{self, ReadError as Wit};

    fn from(e: Wit) -> ReadError {
        match e {
            Wit::Denied(why) => ReadError::Denied(why),
            Wit::NotFound => ReadError::NotFound,
            Wit::TooLarge(size) => ReadError::TooLarge(size),
            Wit::Failed(why) => ReadError::Failed(why),
        }
    }

    pub(super) fn read_file(path: &str) -> Result<Vec<u8>, ReadError> {
        read::read_file(path).map_err(from)
    }

    pub(super) fn list_dir(path: &str) -> Result<Vec<String>, ReadError> {
        read::list_dir(path).map_err(from)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    use super::ReadError;

    fn refused() -> ReadError {
        ReadError::Denied("no project folder off wasm".to_owned())
    }

    pub(super) fn read_file(_path: &str) -> Result<Vec<u8>, ReadError> {
        Err(refused())
    }

    pub(super) fn list_dir(_path: &str) -> Result<Vec<String>, ReadError> {
        Err(refused())
    }
}
