//! The agent folder's own files (`hookrt.toml`, `hookrt.lock`, expectation
//! files) read and written as plain files: never through a symbolic link,
//! and parse errors that name a line and column without quoting its text.
//!
//! A `hookrt.toml` that is a link to `/etc/shadow` would otherwise be read,
//! and its first line quoted in the TOML error into CI logs and the 422
//! body of a reload; a `hookrt.lock` or an expectation file that is a link
//! would be written through to wherever it points.

use std::io::{Read, Write};
use std::path::Path;

/// Reads `path`, a plain file; `Ok(None)` when there is none. A link, a
/// folder or a device is refused with what it is (the file is opened with
/// `O_NOFOLLOW`, and checked on the opened descriptor).
pub fn read(path: &Path) -> Result<Option<String>, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc_nofollow());
    }
    let mut file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if is_link(path) => {
            return Err("is a symbolic link; hookrt reads it only as a plain file".to_owned());
        }
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a plain file".to_owned());
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(Some(text))
}

/// Writes `bytes` to `path` as a new plain file: written beside it, then
/// renamed over it, so a link at `path` is replaced, never written through.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// A TOML error as `line L, column C: message`, without the excerpt of the
/// text that `toml`'s own message quotes.
pub(crate) fn toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim_end();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_owned(),
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// `O_NOFOLLOW`.
#[cfg(unix)]
fn libc_nofollow() -> i32 {
    libc::O_NOFOLLOW
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_refused_and_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("secret");
        std::fs::write(&target, "top = \"secret\"\n").unwrap();
        let link = dir.path().join("hookrt.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = read(&link).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(read(&dir.path().join("none")).unwrap(), None);
        replace(&link, b"new").unwrap();
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "top = \"secret\"\n"
        );
        assert_eq!(read(&link).unwrap().as_deref(), Some("new"));
    }

    #[test]
    fn a_toml_error_names_line_and_column_without_the_text() {
        let text = "[defaults]\nfuel = \"SECRET-VALUE-TEXT\" oops\n";
        let e = toml::from_str::<toml::Value>(text).unwrap_err();
        let m = toml_error(&e, text);
        assert!(m.starts_with("line 2, column"), "{m}");
        assert!(!m.contains("SECRET-VALUE-TEXT") && !m.contains('|'), "{m}");
    }
}
