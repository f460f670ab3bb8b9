//! Reading a secret's value where its table says: an environment variable
//! of hookrt's process, or a file that must be the user's own and readable
//! by no one else (mode 0600 or stricter). A source that is not set up (the
//! variable unset, the file absent) leaves the secret unavailable, and a
//! `send` says where hookrt looked; a file anyone else may read or write,
//! or one that cannot be read, refuses the hook at load, naming the file
//! and the fix. No message ever holds the value.

use std::io::Read;
use std::path::PathBuf;

use super::table::Source;

/// Most bytes of a value: a token, not a document.
pub(crate) const MAX_VALUE_BYTES: u64 = 16 << 10;
/// Fewest bytes of a value: a shorter one could not be masked without
/// masking ordinary text too.
pub(crate) const MIN_VALUE_BYTES: usize = 8;

/// A secret's value, never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Value(pub(crate) String);

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Value([secret])")
    }
}

/// Why a secret's source refuses the hook at load.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SourceError {
    /// The file may be read or written by someone else than the user.
    #[error("secret `{name}`: {path} {why}; run `{fix}`")]
    Exposed {
        /// The secret's name.
        name: String,
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
        /// The command that makes it safe.
        fix: String,
    },
    /// The file or the value cannot be used.
    #[error("secret `{name}`: {where_} {why}")]
    Unusable {
        /// The secret's name.
        name: String,
        /// Where it was read (`file …`, `env …`).
        where_: String,
        /// What is wrong.
        why: String,
    },
}

/// The value of secret `name` from `source`: `Ok(Err(why))` when it is not
/// set up here (the secret is unavailable), `Err` when its setup is unsafe
/// or broken.
pub(crate) fn read(name: &str, source: &Source) -> Result<Result<Value, String>, SourceError> {
    let raw = match source {
        Source::Env(var) => match std::env::var(var) {
            Ok(v) => v,
            Err(std::env::VarError::NotPresent) => {
                return Ok(Err(format!(
                    "environment variable {var} is not set in hookrt's process"
                )));
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(unusable(name, source, "is not UTF-8 text".into()));
            }
        },
        Source::File(path) => match read_file(name, path)? {
            Ok(text) => text,
            Err(absent) => return Ok(Err(absent)),
        },
    };
    // A file's last line ends with a newline; the value does not.
    let value = raw.trim_end_matches(['\n', '\r']);
    if value.len() < MIN_VALUE_BYTES {
        return Err(unusable(
            name,
            source,
            format!(
                "holds {} bytes: a secret has at least {MIN_VALUE_BYTES} (a shorter one cannot be masked reliably)",
                value.len()
            ),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(unusable(
            name,
            source,
            "holds a control character (a line break inside it?)".into(),
        ));
    }
    Ok(Ok(Value(value.to_owned())))
}

fn unusable(name: &str, source: &Source, why: String) -> SourceError {
    SourceError::Unusable {
        name: name.to_owned(),
        where_: source.describe(),
        why,
    }
}

/// The text of the file at `path` (`~/` under `HOME`), checked: a regular
/// file of the user's, mode 0600 or stricter, at most [`MAX_VALUE_BYTES`].
fn read_file(name: &str, path: &str) -> Result<Result<String, String>, SourceError> {
    let source = Source::File(path.to_owned());
    let full = match path.strip_prefix("~/") {
        Some(rest) => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(rest),
            None => return Ok(Err(format!("file {path}: HOME is not set"))),
        },
        None => PathBuf::from(path),
    };
    let shown = full.display().to_string();
    let mut file = match std::fs::File::open(&full) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err(format!("file {shown} does not exist")));
        }
        Err(e) => return Err(unusable(name, &source, format!("cannot be read: {e}"))),
    };
    // What was opened is checked (a link is followed to the file it names).
    let meta = file
        .metadata()
        .map_err(|e| unusable(name, &source, format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(unusable(name, &source, "is not a regular file".into()));
    }
    exposed(name, &shown, &meta)?;
    if meta.len() > MAX_VALUE_BYTES {
        return Err(unusable(
            name,
            &source,
            format!("is over {MAX_VALUE_BYTES} bytes"),
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| unusable(name, &source, format!("cannot be read as text: {e}")))?;
    Ok(Ok(text))
}

/// Refuses a file someone else owns, or that its group or others may use.
#[cfg(unix)]
fn exposed(name: &str, shown: &str, meta: &std::fs::Metadata) -> Result<(), SourceError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let wrong = |why: String, fix: String| SourceError::Exposed {
        name: name.to_owned(),
        path: shown.to_owned(),
        why,
        fix,
    };
    if meta.uid() != me {
        return Err(wrong(
            format!("is owned by user {}, not by hookrt's user {me}", meta.uid()),
            format!("chown {me} {shown}"),
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(wrong(
            format!("has mode {mode:04o}: its group or others may read or change it"),
            format!("chmod 600 {shown}"),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn exposed(_name: &str, _shown: &str, _meta: &std::fs::Metadata) -> Result<(), SourceError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn file_with(mode: u32, text: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, path.display().to_string())
    }

    #[test]
    fn a_0600_file_gives_its_value_without_the_last_newline() {
        let (_d, path) = file_with(0o600, "tk_0123456789abcdef\n");
        let v = read("ntfy", &Source::File(path)).unwrap().unwrap();
        assert_eq!(v.0, "tk_0123456789abcdef");
        assert_eq!(format!("{v:?}"), "Value([secret])");
    }

    #[test]
    fn a_file_its_group_or_others_may_read_is_refused_naming_it_and_the_fix() {
        for mode in [0o644, 0o640, 0o606] {
            let (_d, path) = file_with(mode, "tk_0123456789abcdef\n");
            let err = read("ntfy", &Source::File(path.clone())).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "secret `ntfy`: {path} has mode {mode:04o}: its group or others may read or change it; run `chmod 600 {path}`"
                )
            );
            assert!(!err.to_string().contains("tk_0123"));
        }
    }

    #[test]
    fn an_unset_variable_or_an_absent_file_leaves_the_secret_unavailable() {
        let why = read("x", &Source::Env("HOOKRT_TEST_NO_SUCH_SECRET".into()))
            .unwrap()
            .unwrap_err();
        assert_eq!(
            why,
            "environment variable HOOKRT_TEST_NO_SUCH_SECRET is not set in hookrt's process"
        );
        let why = read("x", &Source::File("/nonexistent/hookrt/token".into()))
            .unwrap()
            .unwrap_err();
        assert_eq!(why, "file /nonexistent/hookrt/token does not exist");
    }

    #[test]
    fn a_short_value_or_one_with_a_line_break_is_refused_without_quoting_it() {
        let (_d, path) = file_with(0o600, "short\n");
        let err = read("s", &Source::File(path)).unwrap_err().to_string();
        assert!(
            err.contains("holds 5 bytes") && !err.contains("short\n"),
            "{err}"
        );
        let (_d, path) = file_with(0o600, "tk_0123456789\nabcdef\n");
        let err = read("s", &Source::File(path)).unwrap_err().to_string();
        assert!(
            err.contains("control character") && !err.contains("tk_0123"),
            "{err}"
        );
    }
}
