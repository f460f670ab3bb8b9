//! Running a program the hook's `exec` table allows (world 0.4.0, the `exec`
//! grant): `exec::run("rustfmt", &[("file", path)])?`.
//!
//! The hook names one of the table's programs and fills its placeholders; the
//! host checks each value against its placeholder's type and runs the
//! program without a shell, in the project folder, under the kernel sandbox.
//! Off wasm (native unit tests of a hook) no program runs: every call is
//! refused as not allowed, so a test sees what a hook without the grant sees.

use crate::HookError;

/// What one run gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit code; `None` when the program was killed.
    pub status: Option<i32>,
    /// Whether the time limit killed it.
    pub timed_out: bool,
    /// Its stdout, at most the table's `output_bytes`.
    pub stdout: Vec<u8>,
    /// Its stderr, at most the table's `output_bytes`.
    pub stderr: Vec<u8>,
    /// Whether stdout or stderr was cut at the cap.
    pub truncated: bool,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
}

impl Output {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// Runs `program` (a name in the hook's exec table) with `args` filling its
/// template's placeholders (name, value). The error says why it did not run.
pub fn run(program: &str, args: &[(&str, &str)]) -> Result<Output, HookError> {
    backend::run(program, args).map_err(|why| HookError::new(format!("exec `{program}`: {why}")))
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::exec::{self, ExecError};

    pub(super) fn run(program: &str, args: &[(&str, &str)]) -> Result<super::Output, String> {
        let args: Vec<(String, String)> = args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        match exec::run(program, &args) {
            Ok(o) => Ok(super::Output {
                status: o.status,
                timed_out: o.timed_out,
                stdout: o.stdout,
                stderr: o.stderr,
                truncated: o.truncated,
                duration_ms: o.duration_ms,
            }),
            Err(ExecError::NotAllowed(why)) => Err(format!("not allowed: {why}")),
            Err(ExecError::BadArgument(why)) => Err(format!("bad argument: {why}")),
            Err(ExecError::Busy) => Err("busy: the table's concurrency is in use".to_owned()),
            Err(ExecError::Failed(why)) => Err(format!("failed: {why}")),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod backend {
    pub(super) fn run(_program: &str, _args: &[(&str, &str)]) -> Result<super::Output, String> {
        Err("not allowed: no program runs off wasm".to_owned())
    }
}
