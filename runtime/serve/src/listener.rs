//! Where the server listens: a TCP address, or a Unix socket only its own
//! user may connect to (the resident service, `hookrt service`,
//! docs/service.md).
//!
//! A Unix socket is bound with mode 0600 in a folder the caller prepared
//! (0700, its own), and every connection's peer is checked by the kernel's
//! word (`SO_PEERCRED` on Linux, `getpeereid` on macOS, through tokio's
//! `peer_cred`): a peer whose uid is not the socket's owner's is closed
//! before a byte is read, so no token is needed. The socket file is removed
//! when the listener is dropped, if it is still the one bound.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::error::ServeError;

/// Where a server listens, once bound (what `on_listen` is told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// A TCP address (its port chosen when 0 was asked).
    Tcp(SocketAddr),
    /// A Unix socket's path.
    Unix(PathBuf),
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Tcp(addr) => write!(f, "http://{addr}"),
            Bound::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl Bound {
    /// The TCP address, if it is one.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            Bound::Tcp(addr) => Some(*addr),
            Bound::Unix(_) => None,
        }
    }
}

/// A bound listener.
pub(crate) enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(Unix),
}

/// A Unix socket listener and whom it serves.
#[cfg(unix)]
pub(crate) struct Unix {
    listener: tokio::net::UnixListener,
    path: PathBuf,
    /// The socket file's owner: the only peer served.
    owner: u32,
    /// The socket file's inode, to remove only our own at the end.
    inode: u64,
}

/// An accepted connection.
pub(crate) enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
}

impl Listener {
    /// Listens on `addr`.
    pub(crate) async fn tcp(addr: SocketAddr) -> Result<Listener, ServeError> {
        TcpListener::bind(addr)
            .await
            .map(Listener::Tcp)
            .map_err(|source| ServeError::Bind { addr, source })
    }

    /// Listens on a new Unix socket at `path` (nothing may be there), mode
    /// 0600, serving its owner only.
    #[cfg(unix)]
    pub(crate) fn unix(path: &Path) -> Result<Listener, ServeError> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let bind_error = |source| ServeError::BindSocket {
            path: path.to_path_buf(),
            source,
        };
        let listener = tokio::net::UnixListener::bind(path).map_err(bind_error)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(bind_error)?;
        let meta = std::fs::symlink_metadata(path).map_err(bind_error)?;
        Ok(Listener::Unix(Unix {
            listener,
            path: path.to_path_buf(),
            owner: meta.uid(),
            inode: meta.ino(),
        }))
    }

    /// Where it listens.
    pub(crate) fn bound(&self) -> io::Result<Bound> {
        match self {
            Listener::Tcp(l) => l.local_addr().map(Bound::Tcp),
            #[cfg(unix)]
            Listener::Unix(u) => Ok(Bound::Unix(u.path.clone())),
        }
    }

    /// Stops new clients from finding it: a Unix socket's file is removed
    /// (connections already made are still accepted). A TCP listener
    /// keeps its port until dropped.
    pub(crate) fn retire(&self) {
        #[cfg(unix)]
        if let Listener::Unix(u) = self {
            u.remove();
        }
    }

    /// The next connection and its peer's address (loopback for a Unix
    /// socket's). A Unix peer of another uid is closed unread, said in
    /// the log, and the next one waited for.
    pub(crate) async fn accept(&self) -> io::Result<(Stream, IpAddr)> {
        match self {
            Listener::Tcp(l) => {
                let (stream, peer) = l.accept().await?;
                Ok((Stream::Tcp(stream), peer.ip()))
            }
            #[cfg(unix)]
            Listener::Unix(u) => loop {
                let (stream, _) = u.listener.accept().await?;
                match stream.peer_cred() {
                    Ok(cred) if cred.uid() == u.owner => {
                        return Ok((Stream::Unix(stream), IpAddr::V4(Ipv4Addr::LOCALHOST)));
                    }
                    Ok(cred) => tracing::warn!(
                        target: "hookrt",
                        socket = %u.path.display(),
                        "refused a connection from uid {} (the socket serves uid {} only)",
                        cred.uid(),
                        u.owner
                    ),
                    Err(e) => tracing::warn!(
                        target: "hookrt",
                        socket = %u.path.display(),
                        "refused a connection whose peer cannot be told: {e}"
                    ),
                }
            },
        }
    }
}

#[cfg(unix)]
impl Unix {
    /// Removes the socket file, if it is still the one bound: a successor
    /// may have bound its own at the path since.
    fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(unix)]
impl Drop for Unix {
    fn drop(&mut self) {
        self.remove();
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            #[cfg(unix)]
            Stream::Unix(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
