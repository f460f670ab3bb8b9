//! A command hook's input: stdin read to its end within a bound and a
//! deadline, with no thread (the supervisor reads before it forks), and any
//! descriptor read the same way (the supervisor's pipe from its child).

use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// The largest input read: tool inputs can carry whole files.
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Reads at most `max` bytes of stdin, giving up at `deadline`: the
/// process has no thread before the fork, so no watchdog reads for it.
pub fn read_input(max: u64, deadline: Instant) -> io::Result<String> {
    String::from_utf8(read_within(0, max, deadline)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Reads `fd` to its end, at most `max` bytes, giving up at `deadline`
/// (`TimedOut`).
pub fn read_within(fd: RawFd, max: u64, deadline: Instant) -> io::Result<Vec<u8>> {
    let mut input = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    while (input.len() as u64) < max {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd, for the length given.
        match unsafe { libc::poll(&raw mut poll, 1, ms) } {
            0 => return Err(io::Error::from(io::ErrorKind::TimedOut)),
            n if n < 0 => match io::Error::last_os_error() {
                e if e.kind() == io::ErrorKind::Interrupted => continue,
                e => return Err(e),
            },
            _ => {}
        }
        let want = usize::try_from(max - input.len() as u64)
            .unwrap_or(usize::MAX)
            .min(chunk.len());
        // SAFETY: `chunk` holds at least `want` writable bytes.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), want) };
        match usize::try_from(n) {
            Ok(0) => break,
            Ok(n) => input.extend_from_slice(&chunk[..n]),
            Err(_) => match io::Error::last_os_error() {
                e if e.kind() == io::ErrorKind::Interrupted => {}
                // No stdin at all reads as an empty one (as std's does).
                e if e.raw_os_error() == Some(libc::EBADF) => break,
                e => return Err(e),
            },
        }
    }
    Ok(input)
}
