//! Host waits bounded by the delivery's deadline: `wasi:io/poll` and the
//! blocking `wasi:io/streams` methods, linked in place of wasmtime-wasi's own.
//!
//! Why: epoch interruption only fires while guest code runs. A hook that
//! sleeps (`std::thread::sleep` is `subscribe-duration` + `block`) or waits on
//! an HTTP response sits inside one of these host calls, where no epoch check
//! happens, and held its delivery thread (and shutdown) for as long as it
//! liked. Every wait here runs under what is left of the delivery's deadline
//! and watches the runtime's cancel flag; when either fires the call traps,
//! recording why, so the outcome is `timeout` (or the delivery is cancelled)
//! and the thread is free at once.
//!
//! The non-blocking methods delegate to wasmtime-wasi's implementations on the
//! resource table unchanged.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::sync::io::poll::{self, Pollable};
use wasmtime_wasi::p2::bindings::sync::io::streams::{self, InputStream, OutputStream};
use wasmtime_wasi::p2::{DynPollable, StreamError, StreamResult};
use wasmtime_wasi::runtime::in_tokio;
use wasmtime_wasi_io::bindings::wasi::io::poll as async_poll;
use wasmtime_wasi_io::bindings::wasi::io::streams::{
    HostInputStream as AsyncInput, HostOutputStream as AsyncOutput,
};

/// How often a waiting host call looks at the cancel flag: bounds how long
/// shutdown waits for a hook that sleeps.
pub(crate) const CANCEL_CHECK: Duration = Duration::from_millis(5);

/// A store's resource table with what bounds its waits.
pub(crate) struct Bounded<'a> {
    /// The store's resources.
    pub table: &'a mut ResourceTable,
    /// When the running delivery must end.
    pub deadline: Instant,
    /// The runtime's shutdown flag.
    pub cancel: &'a AtomicBool,
    /// Set when a wait was cut by the deadline.
    pub timed_out: &'a mut bool,
    /// Set when a wait was cut by shutdown.
    pub cancelled: &'a mut bool,
}

/// The [`Bounded`] view, for `add_to_linker`.
pub(crate) struct HasBounded;

impl wasmtime::component::HasData for HasBounded {
    type Data<'a> = Bounded<'a>;
}

/// Why a wait ended early.
enum Cut {
    Deadline,
    Cancel,
}

/// Runs `f` to completion unless the deadline passes or `cancel` is set first.
fn wait<F: Future>(deadline: Instant, cancel: &AtomicBool, f: F) -> Result<F::Output, Cut> {
    if cancel.load(Ordering::Relaxed) {
        return Err(Cut::Cancel);
    }
    let until = tokio::time::Instant::from_std(deadline);
    let out = in_tokio(async {
        let cancelled = async {
            while !cancel.load(Ordering::Relaxed) {
                tokio::time::sleep(CANCEL_CHECK).await;
            }
        };
        tokio::select! {
            biased;
            out = f => Ok(out),
            () = tokio::time::sleep_until(until) => Err(Cut::Deadline),
            () = cancelled => Err(Cut::Cancel),
        }
    })?;
    // A wait that finished just as the deadline passed still ends the delivery:
    // the hook must not get to act on it.
    if Instant::now() >= deadline {
        return Err(Cut::Deadline);
    }
    Ok(out)
}

impl Bounded<'_> {
    /// Records why a wait was cut and returns the trap that ends the call.
    fn cut(&mut self, why: Cut) -> wasmtime::Error {
        match why {
            Cut::Deadline => {
                *self.timed_out = true;
                wasmtime::format_err!("deadline passed while the hook waited in a host call")
            }
            Cut::Cancel => {
                *self.cancelled = true;
                wasmtime::format_err!("the runtime is shutting down")
            }
        }
    }

    /// The result of a bounded wait; a cut becomes a trap.
    fn done<T>(&mut self, waited: Result<wasmtime::Result<T>, Cut>) -> wasmtime::Result<T> {
        waited.unwrap_or_else(|why| Err(self.cut(why)))
    }

    /// The result of a bounded blocking stream call; a cut becomes a trap.
    fn done_stream<T>(&mut self, waited: Result<StreamResult<T>, Cut>) -> StreamResult<T> {
        waited.unwrap_or_else(|why| Err(StreamError::Trap(self.cut(why))))
    }
}

impl poll::Host for Bounded<'_> {
    fn poll(&mut self, pollables: Vec<Resource<DynPollable>>) -> wasmtime::Result<Vec<u32>> {
        let waited = wait(
            self.deadline,
            self.cancel,
            async_poll::Host::poll(&mut *self.table, pollables),
        );
        self.done(waited)
    }
}

impl poll::HostPollable for Bounded<'_> {
    fn ready(&mut self, pollable: Resource<Pollable>) -> wasmtime::Result<bool> {
        let waited = wait(
            self.deadline,
            self.cancel,
            async_poll::HostPollable::ready(&mut *self.table, pollable),
        );
        self.done(waited)
    }

    fn block(&mut self, pollable: Resource<Pollable>) -> wasmtime::Result<()> {
        let waited = wait(
            self.deadline,
            self.cancel,
            async_poll::HostPollable::block(&mut *self.table, pollable),
        );
        self.done(waited)
    }

    fn drop(&mut self, pollable: Resource<Pollable>) -> wasmtime::Result<()> {
        poll::HostPollable::drop(self.table, pollable)
    }
}

impl streams::Host for Bounded<'_> {
    fn convert_stream_error(&mut self, err: StreamError) -> wasmtime::Result<streams::StreamError> {
        streams::Host::convert_stream_error(self.table, err)
    }
}

impl streams::HostInputStream for Bounded<'_> {
    fn drop(&mut self, stream: Resource<InputStream>) -> wasmtime::Result<()> {
        streams::HostInputStream::drop(self.table, stream)
    }

    fn read(&mut self, stream: Resource<InputStream>, len: u64) -> StreamResult<Vec<u8>> {
        streams::HostInputStream::read(self.table, stream, len)
    }

    fn blocking_read(&mut self, stream: Resource<InputStream>, len: u64) -> StreamResult<Vec<u8>> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncInput::blocking_read(&mut *self.table, stream, len),
        );
        self.done_stream(waited)
    }

    fn skip(&mut self, stream: Resource<InputStream>, len: u64) -> StreamResult<u64> {
        streams::HostInputStream::skip(self.table, stream, len)
    }

    fn blocking_skip(&mut self, stream: Resource<InputStream>, len: u64) -> StreamResult<u64> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncInput::blocking_skip(&mut *self.table, stream, len),
        );
        self.done_stream(waited)
    }

    fn subscribe(&mut self, stream: Resource<InputStream>) -> wasmtime::Result<Resource<Pollable>> {
        streams::HostInputStream::subscribe(self.table, stream)
    }
}

impl streams::HostOutputStream for Bounded<'_> {
    fn drop(&mut self, stream: Resource<OutputStream>) -> wasmtime::Result<()> {
        streams::HostOutputStream::drop(self.table, stream)
    }

    fn check_write(&mut self, stream: Resource<OutputStream>) -> StreamResult<u64> {
        streams::HostOutputStream::check_write(self.table, stream)
    }

    fn write(&mut self, stream: Resource<OutputStream>, bytes: Vec<u8>) -> StreamResult<()> {
        streams::HostOutputStream::write(self.table, stream, bytes)
    }

    fn blocking_write_and_flush(
        &mut self,
        stream: Resource<OutputStream>,
        bytes: Vec<u8>,
    ) -> StreamResult<()> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncOutput::blocking_write_and_flush(&mut *self.table, stream, bytes),
        );
        self.done_stream(waited)
    }

    fn blocking_write_zeroes_and_flush(
        &mut self,
        stream: Resource<OutputStream>,
        len: u64,
    ) -> StreamResult<()> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncOutput::blocking_write_zeroes_and_flush(&mut *self.table, stream, len),
        );
        self.done_stream(waited)
    }

    fn subscribe(
        &mut self,
        stream: Resource<OutputStream>,
    ) -> wasmtime::Result<Resource<Pollable>> {
        streams::HostOutputStream::subscribe(self.table, stream)
    }

    fn write_zeroes(&mut self, stream: Resource<OutputStream>, len: u64) -> StreamResult<()> {
        streams::HostOutputStream::write_zeroes(self.table, stream, len)
    }

    fn flush(&mut self, stream: Resource<OutputStream>) -> StreamResult<()> {
        streams::HostOutputStream::flush(self.table, stream)
    }

    fn blocking_flush(&mut self, stream: Resource<OutputStream>) -> StreamResult<()> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncOutput::blocking_flush(&mut *self.table, Resource::new_borrow(stream.rep())),
        );
        self.done_stream(waited)
    }

    fn splice(
        &mut self,
        dst: Resource<OutputStream>,
        src: Resource<InputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        streams::HostOutputStream::splice(self.table, dst, src, len)
    }

    fn blocking_splice(
        &mut self,
        dst: Resource<OutputStream>,
        src: Resource<InputStream>,
        len: u64,
    ) -> StreamResult<u64> {
        let waited = wait(
            self.deadline,
            self.cancel,
            AsyncOutput::blocking_splice(&mut *self.table, dst, src, len),
        );
        self.done_stream(waited)
    }
}
