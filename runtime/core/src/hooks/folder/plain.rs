//! The files hookrt reads from an agent folder, opened one way: as regular
//! files only, and the folder's own files (`hookrt.toml`, `hookrt.lock`,
//! expectation files) never through a symbolic link; parse errors name a
//! line and column without quoting its text.
//!
//! A `hookrt.toml` that is a link to `/etc/shadow` would otherwise be read,
//! and its first line quoted in the TOML error into CI logs and the 422
//! body of a reload; a `hookrt.lock` or an expectation file that is a link
//! would be written through to wherever it points. A FIFO planted as
//! `hookrt.toml` or as a hook would block the reader until something writes
//! to it (`check`, `serve` and every command hook hung on one): every file is
//! opened with `O_NONBLOCK` and refused unless the opened descriptor is a
//! regular file ([`open_regular`]).

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::Path;

/// Opens `path` for reading as a regular file: with `O_NONBLOCK`, so a FIFO
/// or a device answers at once instead of blocking the open, then checked
/// on the opened descriptor (no swap between a check and the open). With
/// `follow` false a link is refused too (`O_NOFOLLOW`); hook sources may be
/// links inside the hooks folder (discovery checked where they lead).
/// `O_NONBLOCK` changes nothing for a regular file's reads.
pub(crate) fn open_regular(path: &Path, follow: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if !follow && e.kind() != std::io::ErrorKind::NotFound && is_link(path) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a symbolic link; hookrt reads it only as a plain file",
            ));
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "is {}, not a regular file; hookrt reads only regular files from an agent folder: replace it with the file",
                what(&meta)
            ),
        ));
    }
    Ok(file)
}

/// The bytes of `path`, a regular file ([`open_regular`], links followed):
/// how every hook source and component is read. The caller names the path.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path, true)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub(crate) fn read_regular_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

/// What a file that is not a regular one is, in words.
fn what(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else if meta.file_type().is_symlink() {
        "a symbolic link"
    } else {
        "not a plain file"
    }
}

/// Reads `path`, a plain file; `Ok(None)` when there is none. A link, a
/// folder, a FIFO or a device is refused with what it is
/// ([`open_regular`] without following links).
pub fn read(path: &Path) -> Result<Option<String>, PlainFileError> {
    let mut file = match open_regular(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            return Err(PlainFileError::NotPlain(e));
        }
        Err(e) => return Err(PlainFileError::Read(e)),
    };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(PlainFileError::Read)?;
    Ok(Some(text))
}

/// Why [`read`] gave no text.
#[derive(Debug, thiserror::Error)]
pub enum PlainFileError {
    /// It is a link, a folder, a FIFO or a device: the error says which.
    #[error("{0}")]
    NotPlain(std::io::Error),
    /// Reading it failed.
    #[error("cannot read: {0}")]
    Read(std::io::Error),
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
        let e = read(&link).unwrap_err().to_string();
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
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("hookrt.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer ever opens it: a blocking open would wait forever.
        let e = read(&fifo).unwrap_err().to_string();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let e = read_regular(&fifo).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
        let e = read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
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
