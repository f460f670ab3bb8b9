//! The `exec` grant: run a program the hook's table allows.
//!
//! The table (`table.rs`) is operator configuration: each program and its
//! argument template with typed placeholders. At load each program is
//! resolved to an absolute path and its SHA-256 (`Policy::resolve`), which
//! `hookrt.lock` pins; a folder whose hooks hold `exec` does not load
//! without a lock. A call fills the template (`args.rs`: no shell, ever) and
//! runs the program in the project folder under the kernel sandbox
//! (`confine.rs`) with caps (`run.rs`); each use is a `[hookrt] exec` line in
//! the delivery's record, which the journal keeps.

mod args;
pub(crate) mod confine;
pub(crate) mod policy;
mod run;
pub(crate) mod table;

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

pub(crate) use confine::Confinement;
pub(crate) use policy::Policy;
pub use table::Table;

use super::held::{self, Arming, Refusal, Resolving};
use super::{Grant, GrantTable};
use crate::sandbox::host::StoreData;
use crate::sandbox::wit::v0_4_0;
use crate::sandbox::wit::v0_4_0::hookrt::hook::exec::{ExecError, Output};

/// The `exec` grant.
pub(crate) const GRANT: Grant = Grant {
    name: "exec",
    interfaces: &["hookrt:hook/exec"],
    gives: "runs the programs of its exec table, under the kernel sandbox",
    default: false,
    needs_lock: true,
    table: |v| table::parse(v).map(GrantTable::of),
    link,
    needs_project: true,
    resolve: Some(resolve),
};

/// The grant as a loaded hook holds it: its programs resolved.
#[derive(Debug)]
struct Loaded(Arc<Policy>);

/// Resolves the table's programs for runs in the project folder, never one
/// an event names.
fn resolve(table: &GrantTable, at: &Resolving<'_>) -> Result<Option<Arc<dyn held::Held>>, Refusal> {
    let (Some(table), Some(root)) = (table.get::<Table>(), at.project) else {
        return Ok(None);
    };
    held::kept(
        Policy::resolve(table, root),
        "install the program, or fix its `path` in the exec table",
        Loaded,
    )
}

impl held::Held for Loaded {
    fn arm(&self, data: &mut StoreData, _: &Arming<'_>) {
        data.grants.put(GRANT.name, self.0.clone());
    }

    fn audit(&self) -> (&'static str, &'static str, Vec<String>) {
        ("may_run", "may run", self.0.audit_lines())
    }

    fn pins(&self) -> Vec<(String, String)> {
        self.0
            .programs()
            .iter()
            .map(|(name, p)| {
                (
                    name.clone(),
                    format!("sha256:{} {}", p.sha256, p.path.display()),
                )
            })
            .collect()
    }
}

fn link(l: &mut Linker<StoreData>) -> wasmtime::Result<()> {
    v0_4_0::hookrt::hook::exec::add_to_linker::<_, HasSelf<_>>(l, |s| s)
}

impl Policy {
    /// What `audit` says of it: one line per program (its path, template
    /// and digest), then the rules of every run.
    pub(crate) fn audit_lines(&self) -> Vec<String> {
        let t = &self.table;
        let mut lines: Vec<String> = self
            .programs
            .iter()
            .map(|(name, r)| {
                let template: Vec<String> = t.programs[name]
                    .args
                    .iter()
                    .map(|a| match a {
                        table::Arg::Literal(text) => text.clone(),
                        table::Arg::Placeholder(key) => {
                            format!(
                                "{{{key}: {}}}",
                                t.programs[name].placeholders[key].describe()
                            )
                        }
                    })
                    .collect();
                let short = &r.sha256[..16.min(r.sha256.len())];
                format!(
                    "{name}: {} {}  sha256 {short}",
                    r.path.display(),
                    template.join(" ")
                )
            })
            .collect();
        let sandbox = match (confine::available(), t.network) {
            (Confinement::None, _) => "UNCONFINED (no Landlock on this kernel; unconfined = true)",
            (Confinement::FilesOnly, _) => {
                "Landlock: reads the project and the toolchain, writes only writable-path files; TCP NOT refused (kernel before Landlock ABI 4)"
            }
            (Confinement::Full, false) => {
                "Landlock: reads the project and the toolchain, writes only writable-path files, no TCP"
            }
            (Confinement::Full, true) => {
                "Landlock: reads the project and the toolchain, writes only writable-path files; TCP allowed (network = true)"
            }
        };
        if t.tmp {
            lines.push(
                "each run has a private temporary folder (TMPDIR), removed after it".to_owned(),
            );
        }
        if !t.write.is_empty() {
            lines.push(format!(
                "each run may also make, change and remove files inside {} of the project",
                t.write.join(", ")
            ));
        }
        lines.push(format!(
            "each run: in {}, env [{}], {} ms, {} output bytes per stream, {} processes, {} at once; {sandbox}",
            self.project.display(),
            t.env.join(", "),
            t.timeout_ms,
            t.output_bytes,
            t.processes,
            t.concurrency
        ));
        lines
    }
}

impl v0_4_0::hookrt::hook::exec::Host for StoreData {
    fn run(&mut self, program: String, args: Vec<(String, String)>) -> Result<Output, ExecError> {
        let Some(policy) = self.grants.get::<Arc<Policy>>(GRANT.name).cloned() else {
            return Err(ExecError::NotAllowed(
                "this hook holds no exec grant".to_owned(),
            ));
        };
        let result = policy.run(&program, &args, self.deadline);
        self.capture
            .record(format!("exec {program}"), use_fields(&args, &result));
        result
    }
}

/// The fields of one use's `[hookrt] exec` line: what ran, with which
/// arguments, how it ended, how long, how many bytes.
fn use_fields(
    args: &[(String, String)],
    result: &Result<Output, ExecError>,
) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = args
        .iter()
        .map(|(k, v)| (format!("arg.{k}"), v.clone()))
        .collect();
    match result {
        Ok(o) => {
            let status = match (o.status, o.timed_out) {
                (Some(code), _) => code.to_string(),
                (None, true) => "killed: time limit".to_owned(),
                (None, false) => "killed".to_owned(),
            };
            fields.push(("status".into(), status));
            fields.push(("duration_ms".into(), o.duration_ms.to_string()));
            fields.push(("stdout_bytes".into(), o.stdout.len().to_string()));
            fields.push(("stderr_bytes".into(), o.stderr.len().to_string()));
        }
        Err(e) => fields.push(("refused".into(), format!("{e:?}"))),
    }
    fields
}
