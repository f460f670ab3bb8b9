//! The agent's hook configuration file, read and written where the user
//! keeps it without widening it or being led elsewhere:
//! - every folder under the base (the project, the home folder) is opened
//!   with `O_NOFOLLOW` from the one above it (`openat`), so a link planted as
//!   `.claude` cannot send the write into the link's target, and a link is
//!   refused, naming it, before anything is created or written;
//! - the file is opened with `O_NOFOLLOW | O_NONBLOCK` and must be a regular
//!   file (a FIFO would block the read forever);
//! - the new text is written to a temp file in the same folder whose owner
//!   and mode are the old file's (0600 for a new one) before any byte is
//!   written, synced, renamed over the old one, and the folder synced: a
//!   0600 file holding an API key stays 0600.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// A new settings file's mode: it may come to hold tokens and keys.
const NEW_FILE_MODE: u32 = 0o600;

/// A file at `rel` under `base`, whose every component under `base` must be
/// a real folder (links above `base` are the user's business).
pub(super) struct SettingsFile {
    base: PathBuf,
    /// Normal components only, the last one the file's name.
    rel: Vec<CString>,
    rel_path: PathBuf,
}

/// The file as it was found.
pub(super) struct Found {
    /// Its text; `None` when there is no file.
    pub text: Option<String>,
    /// Its mode, owner and group.
    kept: Option<(u32, u32, u32)>,
    /// Its folder, opened, when that exists.
    dir: Option<OwnedFd>,
}

impl SettingsFile {
    /// `rel` (relative, made of names only) under `base`.
    pub(super) fn under(base: &Path, rel: &Path) -> Result<SettingsFile> {
        let mut names = Vec::new();
        for c in rel.components() {
            let Component::Normal(name) = c else {
                bail!(
                    "{}: only folder names may lead to the settings file under {}",
                    rel.display(),
                    base.display()
                );
            };
            names.push(cstring(name)?);
        }
        if names.is_empty() {
            bail!("no settings file named under {}", base.display());
        }
        Ok(SettingsFile {
            base: base.to_path_buf(),
            rel: names,
            rel_path: rel.to_path_buf(),
        })
    }

    /// The file named by `--settings FILE`: a relative one under the
    /// working folder (each component checked), an absolute one in its
    /// folder as given.
    pub(super) fn named(file: &Path, cwd: &Path) -> Result<SettingsFile> {
        let plain = file.components().all(|c| matches!(c, Component::Normal(_)));
        if file.is_relative() && plain {
            return SettingsFile::under(cwd, file);
        }
        let file = cwd.join(file);
        match (file.parent(), file.file_name()) {
            (Some(dir), Some(name)) => SettingsFile::under(dir, Path::new(name)),
            _ => bail!("--settings {} names no file", file.display()),
        }
    }

    /// The file `name` inside this one, taken as a folder (an agent that
    /// reads a file per event).
    pub(super) fn child(&self, name: &str) -> Result<SettingsFile> {
        SettingsFile::under(&self.base, &self.rel_path.join(name))
    }

    /// Removes the file `found` read, if there was one; the folder is
    /// synced.
    pub(super) fn remove(&self, found: Found) -> Result<()> {
        let (Some(dir), Some(_)) = (found.dir, found.text) else {
            return Ok(());
        };
        // SAFETY: the name is NUL-terminated and `dir` is open.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), self.name().as_ptr(), 0) } != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot remove {}", self.path().display()));
        }
        File::from(dir)
            .sync_all()
            .with_context(|| format!("cannot sync the folder of {}", self.path().display()))
    }

    /// The file's whole path, for messages.
    pub(super) fn path(&self) -> PathBuf {
        self.base.join(&self.rel_path)
    }

    /// Reads the file (`text: None` when it or a folder on its way does not
    /// exist); a link on the way, or a file that is not regular, is refused.
    pub(super) fn read(&self) -> Result<Found> {
        let none = |dir| Found {
            text: None,
            kept: None,
            dir,
        };
        let Some(dir) = self.folder(false)? else {
            return Ok(none(None));
        };
        let name = self.name();
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        let fd = match openat(&dir, name, flags, 0) {
            Ok(fd) => fd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(none(Some(dir))),
            Err(e) => return Err(self.refusal(&dir, self.rel.len(), e)),
        };
        let mut file = File::from(fd);
        let meta = file
            .metadata()
            .with_context(|| format!("cannot read {}", self.path().display()))?;
        if !meta.is_file() {
            bail!(
                "{} is {}, not a regular file: hookrt install reads and writes only a regular file there; move it away",
                self.path().display(),
                what(&meta.file_type())
            );
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .with_context(|| format!("cannot read {} as UTF-8 text", self.path().display()))?;
        Ok(Found {
            text: Some(text),
            kept: Some((meta.mode() & 0o7777, meta.uid(), meta.gid())),
            dir: Some(dir),
        })
    }

    /// Replaces the file `found` read with `bytes`: a temp file beside it,
    /// with the old file's owner and mode (0600 when new) set before any
    /// byte is written, synced, then renamed over it.
    pub(super) fn write(&self, found: Found, bytes: &[u8]) -> Result<()> {
        let dir = match found.dir {
            Some(dir) => dir,
            None => self.folder(true)?.context("the folder was just made")?,
        };
        let name = self.name();
        let temp = cstring(OsStr::new(&format!(
            ".{}.{}.hookrt-tmp",
            name.to_string_lossy(),
            std::process::id()
        )))?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let fd = openat(&dir, &temp, flags, NEW_FILE_MODE).with_context(|| {
            format!("cannot create a temp file beside {}", self.path().display())
        })?;
        let written = self.fill(File::from(fd), found.kept, bytes).and_then(|()| {
            // SAFETY: both names are NUL-terminated and `dir` is open.
            let renamed = unsafe {
                libc::renameat(
                    dir.as_raw_fd(),
                    temp.as_ptr(),
                    dir.as_raw_fd(),
                    name.as_ptr(),
                )
            };
            if renamed != 0 {
                return Err(std::io::Error::last_os_error())
                    .with_context(|| format!("cannot replace {}", self.path().display()));
            }
            File::from(dir.try_clone()?)
                .sync_all()
                .with_context(|| format!("cannot sync the folder of {}", self.path().display()))
        });
        if written.is_err() {
            // SAFETY: as above; a temp file left behind is only removed.
            unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
        }
        written
    }

    /// Gives the new file its owner and mode, then its bytes.
    fn fill(&self, mut file: File, kept: Option<(u32, u32, u32)>, bytes: &[u8]) -> Result<()> {
        let path = self.path();
        let mode = match kept {
            Some((mode, uid, gid)) => {
                let meta = file.metadata()?;
                if (meta.uid(), meta.gid()) != (uid, gid) {
                    std::os::unix::fs::fchown(&file, Some(uid), Some(gid)).with_context(|| {
                        format!(
                            "{} belongs to {uid}:{gid}, and this hookrt (running as {}:{}) cannot give the new file that owner; nothing was written: run install as its owner",
                            path.display(),
                            meta.uid(),
                            meta.gid()
                        )
                    })?;
                }
                mode
            }
            None => NEW_FILE_MODE,
        };
        // After the owner: fchown may clear set-id bits.
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("cannot set the mode of the new {}", path.display()))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", path.display()))
    }

    fn name(&self) -> &CString {
        self.rel
            .last()
            .expect("SettingsFile::under keeps at least one name")
    }

    /// The file's folder, opened one component at a time without following
    /// a link; `None` when one does not exist and `create` is false.
    fn folder(&self, create: bool) -> Result<Option<OwnedFd>> {
        if create {
            std::fs::create_dir_all(&self.base)
                .with_context(|| format!("cannot create {}", self.base.display()))?;
        }
        // The base may be reached through links (the user's business), but
        // must be a folder: O_DIRECTORY, and O_NONBLOCK lest a FIFO block.
        let base = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&self.base)
        {
            Ok(f) => OwnedFd::from(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot open {}", self.base.display()));
            }
        };
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let mut dir = base;
        for (depth, name) in self.rel[..self.rel.len() - 1].iter().enumerate() {
            let mut opened = openat(&dir, name, flags, 0);
            if create && matches!(&opened, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
                // SAFETY: `name` is NUL-terminated and `dir` is open.
                if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::AlreadyExists {
                        return Err(e).with_context(|| {
                            format!("cannot create {}", self.at(depth).display())
                        });
                    }
                }
                opened = openat(&dir, name, flags, 0);
            }
            dir = match opened {
                Ok(fd) => fd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(self.refusal(&dir, depth + 1, e)),
            };
        }
        Ok(Some(dir))
    }

    /// The path of the first `depth` components.
    fn at(&self, depth: usize) -> PathBuf {
        self.rel_path
            .components()
            .take(depth)
            .fold(self.base.clone(), |p, c| p.join(c))
    }

    /// Why the component at `depth` (1-based) in `parent` could not be
    /// opened: a link (named, with where it leads), something that is not a
    /// folder, or the system's error.
    fn refusal(&self, parent: &OwnedFd, depth: usize, e: std::io::Error) -> anyhow::Error {
        let path = self.at(depth);
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        let name = &self.rel[depth - 1];
        // SAFETY: `name` is NUL-terminated, `stat` is written on success.
        let is_link = unsafe {
            libc::fstatat(
                parent.as_raw_fd(),
                name.as_ptr(),
                stat.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
                && stat.assume_init().st_mode & libc::S_IFMT == libc::S_IFLNK
        };
        if !is_link {
            let what = if depth < self.rel.len() {
                "cannot open the folder"
            } else {
                "cannot open"
            };
            return anyhow::anyhow!("{what} {}: {e}", path.display());
        }
        let leads = std::fs::read_link(&path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        let real = std::fs::canonicalize(&path).ok().map(|real| {
            self.rel_path
                .components()
                .skip(depth)
                .fold(real, |p, c| p.join(c))
        });
        let instead = match real {
            Some(real) => format!(
                ", or name the file you mean with --settings {}",
                real.display()
            ),
            None => String::new(),
        };
        anyhow::anyhow!(
            "{} is a symbolic link{leads}: hookrt install does not follow links under {}, so that a planted link cannot send the agent's settings elsewhere; nothing was written. Replace the link with a real folder or file{instead}",
            path.display(),
            self.base.display()
        )
    }
}

fn cstring(name: &OsStr) -> Result<CString> {
    CString::new(name.as_bytes()).with_context(|| format!("{name:?} holds a NUL byte"))
}

/// `openat(dir, name, flags, mode)`.
fn openat(dir: &OwnedFd, name: &CString, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and `dir` is open; a returned
    // descriptor is new and owned here.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What a file that is not a regular one is, in words.
fn what(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}
