//! A hook's `exec` grant made ready: its programs resolved to absolute
//! paths and digests at load, its runs counted, each run's template filled
//! and started under the rules of its table.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::confine::{self, Confinement};
use super::table::Table;
use super::{args, run};
use crate::sandbox::wit::v0_4_0::hookrt::hook::exec::{ExecError, Output};

/// Why a hook's `exec` table cannot be used on this host.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecSetupError {
    /// A program could not be found or read.
    #[error("exec program `{name}` (`{path}`): {why}")]
    Program {
        /// Its name in the table.
        name: String,
        /// Its `path` as written.
        path: String,
        /// What failed.
        why: String,
    },
    /// The kernel cannot confine it and the table does not allow that.
    #[error(
        "this kernel has no Landlock to confine exec's programs; set `unconfined = true` in the exec table to run them unconfined (audit shows it)"
    )]
    Unconfined,
}

/// One program resolved at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Its absolute, canonical path.
    pub path: PathBuf,
    /// The SHA-256 of the file, hex.
    pub sha256: String,
    /// Size and modification time at load: a run refuses a changed file.
    stamp: (u64, Option<std::time::SystemTime>),
}

/// A hook's `exec` grant, ready: its table, its programs resolved, the
/// project folder, and its runs in flight.
#[derive(Debug)]
pub(crate) struct Policy {
    pub(super) table: Table,
    pub(super) programs: BTreeMap<String, Resolved>,
    pub(super) project: PathBuf,
    running: AtomicU64,
}

impl Policy {
    /// Resolves every program of `table` for runs in `project`.
    pub(crate) fn resolve(table: &Table, project: &Path) -> Result<Policy, ExecSetupError> {
        if confine::available() == Confinement::None && !table.unconfined {
            return Err(ExecSetupError::Unconfined);
        }
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf());
        let mut programs = BTreeMap::new();
        for (name, p) in &table.programs {
            let failed = |why: String| ExecSetupError::Program {
                name: name.clone(),
                path: p.path.clone(),
                why,
            };
            let path = locate(&p.path).ok_or_else(|| failed("not found on PATH".into()))?;
            let path = path.canonicalize().map_err(|e| failed(e.to_string()))?;
            let (sha256, stamp) = digest(&path).map_err(|e| failed(e.to_string()))?;
            programs.insert(
                name.clone(),
                Resolved {
                    path,
                    sha256,
                    stamp,
                },
            );
        }
        Ok(Policy {
            table: table.clone(),
            programs,
            project,
            running: AtomicU64::new(0),
        })
    }

    /// Each program's resolved path and digest, by name (what the lock pins).
    pub(crate) fn programs(&self) -> &BTreeMap<String, Resolved> {
        &self.programs
    }

    /// Runs `name` with `values` filling its template, ending by `deadline`.
    pub(crate) fn run(
        &self,
        name: &str,
        values: &[(String, String)],
        deadline: Instant,
    ) -> Result<Output, ExecError> {
        let (Some(program), Some(resolved)) =
            (self.table.programs.get(name), self.programs.get(name))
        else {
            return Err(ExecError::NotAllowed(format!(
                "`{name}` is not a program of this hook's exec table"
            )));
        };
        let filled = args::fill(program, values, &self.project).map_err(ExecError::BadArgument)?;
        if self.running.fetch_add(1, Ordering::AcqRel) >= self.table.concurrency {
            self.running.fetch_sub(1, Ordering::AcqRel);
            return Err(ExecError::Busy);
        }
        let ran = self.start(resolved, &filled, deadline);
        self.running.fetch_sub(1, Ordering::AcqRel);
        let ran = ran.map_err(|e| ExecError::Failed(e.to_string()))?;
        Ok(Output {
            status: ran.status,
            timed_out: ran.killed == Some("time limit"),
            stdout: ran.stdout,
            stderr: ran.stderr,
            truncated: ran.truncated || ran.killed == Some("output cap"),
            duration_ms: ran.duration.as_millis() as u64,
        })
    }

    fn start(
        &self,
        resolved: &Resolved,
        filled: &args::Filled,
        deadline: Instant,
    ) -> std::io::Result<run::Ran> {
        if stamp(&resolved.path)? != resolved.stamp {
            return Err(std::io::Error::other(format!(
                "{} changed since the hook was loaded (its digest is pinned): reload",
                resolved.path.display()
            )));
        }
        let limit = Duration::from_millis(self.table.timeout_ms)
            .min(deadline.saturating_duration_since(Instant::now()));
        run::run(
            &self.table,
            &resolved.path,
            &filled.args,
            &self.project,
            &filled.writable,
            limit,
        )
    }
}

/// `path` as written: absolute, or the first match on hookrt's `PATH`.
fn locate(path: &str) -> Option<PathBuf> {
    if path.starts_with('/') {
        return Some(PathBuf::from(path));
    }
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(path))
        .find(|p| p.is_file())
}

type Stamp = (u64, Option<std::time::SystemTime>);

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let m = std::fs::metadata(path)?;
    Ok((m.len(), m.modified().ok()))
}

fn digest(path: &Path) -> std::io::Result<(String, Stamp)> {
    let before = stamp(path)?;
    let mut file = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok((hex::encode(h.finalize()), before))
}

// The `exec` grant against hostile programs and values: each test names the
// claim it proves in docs/sandbox.md. Programs are the system's (`/bin/sh`,
// `/usr/bin/env`, `/usr/bin/head`) under tables an operator could write;
// what a table allows a program to do, the kernel sandbox and the caps
// bound. Tests that need Landlock say so and are skipped without it.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use super::super::confine::{self, Confinement};
    use super::super::table::{Arg, Placeholder, Program, Table};
    use super::Policy;
    use crate::sandbox::wit::v0_4_0::hookrt::hook::exec::{ExecError, Output};

    fn sh(script: &str, placeholders: &[(&str, Placeholder)]) -> Program {
        let mut args = vec![
            Arg::Literal("-c".into()),
            Arg::Literal(script.into()),
            Arg::Literal("sh".into()),
        ];
        args.extend(
            placeholders
                .iter()
                .map(|(k, _)| Arg::Placeholder((*k).into())),
        );
        Program {
            path: "/bin/sh".into(),
            args,
            placeholders: placeholders
                .iter()
                .map(|(k, p)| ((*k).to_owned(), p.clone()))
                .collect(),
        }
    }

    fn table(programs: Vec<(&str, Program)>) -> Table {
        Table {
            programs: programs
                .into_iter()
                .map(|(n, p)| (n.to_owned(), p))
                .collect(),
            timeout_ms: 5_000,
            output_bytes: 4_096,
            processes: 16,
            concurrency: 1,
            env: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            tmp: false,
            network: false,
            unconfined: false,
        }
    }

    struct Project {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    fn project() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn  main( ){}\n").unwrap();
        let root = dir.path().canonicalize().unwrap();
        Project { _dir: dir, root }
    }

    fn run(t: &Table, p: &Path, name: &str, values: &[(&str, &str)]) -> Result<Output, ExecError> {
        let policy = Policy::resolve(t, p).unwrap();
        let values: Vec<(String, String)> = values
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        policy.run(name, &values, Instant::now() + Duration::from_secs(30))
    }

    fn landlock() -> bool {
        let ok = confine::available() == Confinement::Full;
        if !ok {
            eprintln!("skipped: this kernel has no Landlock ABI 4");
        }
        ok
    }

    #[test]
    fn a_program_not_in_the_table_does_not_run() {
        let p = project();
        let t = table(vec![("ok", sh("exit 0", &[]))]);
        let err = run(&t, &p.root, "rm", &[]).unwrap_err();
        assert!(
            matches!(&err, ExecError::NotAllowed(m) if m == "`rm` is not a program of this hook's exec table"),
            "{err:?}"
        );
    }

    #[test]
    fn shell_syntax_in_a_text_value_reaches_the_program_as_one_plain_argument() {
        let p = project();
        let t = table(vec![(
            "echo",
            sh("printf '%s|' \"$@\"", &[("note", Placeholder::Text)]),
        )]);
        let o = run(
            &t,
            &p.root,
            "echo",
            &[("note", "x; touch pwned $(touch pwned2) `id`")],
        )
        .unwrap();
        assert_eq!(o.status, Some(0));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "x; touch pwned $(touch pwned2) `id`|"
        );
        assert!(!p.root.join("pwned").exists() && !p.root.join("pwned2").exists());
        for bad in ["-rf", "a\nb"] {
            let err = run(&t, &p.root, "echo", &[("note", bad)]).unwrap_err();
            assert!(matches!(err, ExecError::BadArgument(_)), "{bad:?}: {err:?}");
        }
    }

    #[test]
    fn only_the_named_environment_variables_reach_the_program() {
        let p = project();
        let mut t = table(vec![(
            "env",
            Program {
                path: "/usr/bin/env".into(),
                args: Vec::new(),
                placeholders: BTreeMap::new(),
            },
        )]);
        let o = run(&t, &p.root, "env", &[]).unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), "", "no variable at all");
        t.env = vec!["PATH".into(), "HOOKRT_NO_SUCH_VARIABLE".into()];
        let o = run(&t, &p.root, "env", &[]).unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.starts_with("PATH="), "{out}");
    }

    #[test]
    fn it_runs_in_the_project_and_writes_only_the_writable_path_it_was_given() {
        if !landlock() {
            return;
        }
        let p = project();
        let outside = tempfile::tempdir().unwrap();
        let escape = outside.path().join("escaped");
        let script = format!(
            "pwd; echo formatted > \"$1\"; echo x > {}; echo y > other.rs; true",
            escape.display()
        );
        let t = table(vec![(
            "fmt",
            sh(&script, &[("file", Placeholder::WritablePath)]),
        )]);
        let o = run(&t, &p.root, "fmt", &[("file", "a.rs")]).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            p.root.display().to_string()
        );
        assert_eq!(
            std::fs::read_to_string(p.root.join("a.rs")).unwrap(),
            "formatted\n"
        );
        assert!(
            !escape.exists(),
            "Landlock refused the write outside the project"
        );
        assert!(
            !p.root.join("other.rs").exists(),
            "and inside it, to a file not named writable"
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.matches("Permission denied").count(), 2, "{stderr}");
    }

    #[test]
    fn a_write_folder_takes_new_files_beneath_it_and_nothing_beside_it() {
        if !landlock() {
            return;
        }
        let p = project();
        std::fs::create_dir(p.root.join(".git")).unwrap();
        let script = "mkdir .git/objects && echo o > .git/objects/x && mv .git/objects/x .git/y; echo z > z.rs";
        let mut t = table(vec![("commit", sh(script, &[]))]);
        t.write = vec![".git".into()];
        let git = t.clone();
        let o = run(&t, &p.root, "commit", &[]).unwrap();
        assert_eq!(
            std::fs::read_to_string(p.root.join(".git/y")).unwrap(),
            "o\n"
        );
        assert!(!p.root.join("z.rs").exists(), "only inside .git");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(stderr.matches("Permission denied").count(), 1, "{stderr}");
        // `tmp = true`: a private TMPDIR, writable, gone after the run.
        let mut t = table(vec![(
            "t",
            sh("echo t > \"$TMPDIR/t\" && echo \"$TMPDIR\"", &[]),
        )]);
        t.tmp = true;
        let o = run(&t, &p.root, "t", &[]).unwrap();
        assert_eq!(o.status, Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let tmp = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        assert!(
            tmp.contains("hookrt-exec-") && !Path::new(&tmp).exists(),
            "{tmp}"
        );
        // A write folder that is a symlink out of the project refuses the run.
        let outside = tempfile::tempdir().unwrap();
        std::fs::remove_dir_all(p.root.join(".git")).unwrap();
        std::os::unix::fs::symlink(outside.path(), p.root.join(".git")).unwrap();
        let err = run(&git, &p.root, "commit", &[]).unwrap_err();
        assert!(
            matches!(&err, ExecError::Failed(m) if m.contains("write folder `.git` is not a folder inside the project")),
            "{err:?}"
        );
    }

    #[test]
    fn a_tcp_connection_is_refused_unless_the_table_allows_network() {
        if !landlock() {
            return;
        }
        let p = project();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
        let mut t = table(vec![(
            "net",
            Program {
                path: "/usr/bin/bash".into(),
                args: vec![Arg::Literal("-c".into()), Arg::Literal(script)],
                placeholders: BTreeMap::new(),
            },
        )]);
        let o = run(&t, &p.root, "net", &[]).unwrap();
        assert_ne!(o.status, Some(0));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("Permission denied"),
            "{o:?}"
        );
        t.network = true;
        let o = run(&t, &p.root, "net", &[]).unwrap();
        assert_eq!(
            (o.status, String::from_utf8_lossy(&o.stdout).trim()),
            (Some(0), "connected")
        );
    }

    #[test]
    fn an_endless_program_is_killed_with_its_whole_process_group_at_the_time_limit() {
        let p = project();
        let mut t = table(vec![("sleep", sh("sleep 60 & sleep 60; echo never", &[]))]);
        t.timeout_ms = 300;
        let start = Instant::now();
        let o = run(&t, &p.root, "sleep", &[]).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert_eq!((o.status, o.timed_out), (None, true));
        assert!(o.stdout.is_empty());
    }

    #[test]
    fn a_fork_bomb_is_killed_at_the_process_cap() {
        // A fork loop, not the exponential `b() { b | b & }`: as root (no
        // RLIMIT_NPROC) the cap is a 5 ms watch, which an exponential bomb can
        // outrun by thousands of processes on a shared test host.
        let p = project();
        let mut t = table(vec![("bomb", sh("while :; do sleep 30 & done", &[]))]);
        t.processes = 8;
        let start = Instant::now();
        let o = run(&t, &p.root, "bomb", &[]).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(
            (o.status, o.timed_out),
            (None, false),
            "killed at the cap, not the clock"
        );
    }

    #[test]
    fn a_hundred_megabytes_of_output_are_cut_at_the_cap_and_the_program_killed() {
        let p = project();
        let t = table(vec![(
            "flood",
            Program {
                path: "/usr/bin/head".into(),
                args: vec![
                    Arg::Literal("-c".into()),
                    Arg::Literal("100000000".into()),
                    Arg::Literal("/dev/zero".into()),
                ],
                placeholders: BTreeMap::new(),
            },
        )]);
        let o = run(&t, &p.root, "flood", &[]).unwrap();
        assert_eq!(o.stdout.len(), 4_096);
        assert!(o.truncated);
        assert_eq!(o.status, None, "killed once over the cap");
    }

    #[test]
    fn runs_past_the_concurrency_cap_are_refused_as_busy() {
        let p = project();
        let t = table(vec![("slow", sh("sleep 1", &[]))]);
        let policy = std::sync::Arc::new(Policy::resolve(&t, &p.root).unwrap());
        let deadline = Instant::now() + Duration::from_secs(30);
        let first = {
            let policy = policy.clone();
            std::thread::spawn(move || policy.run("slow", &[], deadline))
        };
        std::thread::sleep(Duration::from_millis(200));
        assert!(matches!(
            policy.run("slow", &[], deadline),
            Err(ExecError::Busy)
        ));
        assert_eq!(first.join().unwrap().unwrap().status, Some(0));
    }

    #[test]
    fn a_program_changed_after_load_is_refused() {
        let p = project();
        let bin = tempfile::tempdir().unwrap();
        let prog = bin.path().join("tool");
        std::fs::copy("/bin/true", &prog).unwrap();
        let t = table(vec![(
            "tool",
            Program {
                path: prog.display().to_string(),
                args: Vec::new(),
                placeholders: BTreeMap::new(),
            },
        )]);
        let policy = Policy::resolve(&t, &p.root).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        assert_eq!(policy.run("tool", &[], deadline).unwrap().status, Some(0));
        std::fs::write(&prog, "#!/bin/sh\necho swapped\n").unwrap();
        let err = policy.run("tool", &[], deadline).unwrap_err();
        assert!(
            matches!(&err, ExecError::Failed(m) if m.contains("changed since the hook was loaded")),
            "{err:?}"
        );
    }

    /// Runs of the cost comparison (docs/performance.md): each process runs
    /// the same formatter this many times, through the grant or spawned
    /// directly.
    const COST_RUNS: usize = 20;

    fn cost_setup() -> (Project, Table) {
        let p = project();
        let mut t = table(vec![(
            "fmt",
            Program {
                path: "/usr/bin/head".into(),
                args: vec![
                    Arg::Literal("-c".into()),
                    Arg::Literal("64".into()),
                    Arg::Placeholder("file".into()),
                ],
                placeholders: BTreeMap::from([("file".into(), Placeholder::Path)]),
            },
        )]);
        t.env = vec!["PATH".into()];
        (p, t)
    }

    #[test]
    #[ignore = "a cost measurement, run paired against exec_cost_direct_spawn"]
    fn exec_cost_through_the_grant() {
        let (p, t) = cost_setup();
        let policy = Policy::resolve(&t, &p.root).unwrap();
        let values = [("file".to_owned(), "a.rs".to_owned())];
        for _ in 0..COST_RUNS {
            let o = policy.run("fmt", &values, Instant::now() + Duration::from_secs(30));
            assert_eq!(o.unwrap().status, Some(0));
        }
    }

    #[test]
    #[ignore = "a cost measurement, run paired against exec_cost_through_the_grant"]
    fn exec_cost_direct_spawn() {
        let (p, _) = cost_setup();
        for _ in 0..COST_RUNS {
            let o = std::process::Command::new("/usr/bin/head")
                .args(["-c", "64", "a.rs"])
                .current_dir(&p.root)
                .output()
                .unwrap();
            assert!(o.status.success());
        }
    }
}
