//! Toolchains: the pinned tools that build script hooks (TypeScript with
//! componentize-js, Python with componentize-py), and running one build.
//!
//! A toolchain is installed by a script of the hookrt checkout
//! (`scripts/js-toolchain`, `scripts/py-toolchain`) into a folder per user:
//! its `HOOKRT_*_TOOLCHAIN` variable, else `$XDG_CACHE_HOME/hookrt/<name>` or
//! `~/.cache/hookrt/<name>`; never into an agent folder, and hookrt never
//! installs it on its own. The folder records the sha256 of the lock it was
//! installed from; a build refuses a toolchain whose record does not match
//! the SDK's lock, or a folder others could write.
//!
//! One build is one process: a build driver of the SDK (`build.mjs`,
//! `build.py`) given a JSON request on stdin, with a scrubbed environment
//! (`PATH` only, `HOME` and `TMPDIR` a fresh private folder), a fresh working
//! folder, a time limit, and its whole process group killed past it. The
//! driver never opens the agent folder: hookrt reads the hook's files and
//! hands their text over.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::hooks::cache::dir::{create_private_dir, per_user_dir};
use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::problem::Problem;

/// The file in a toolchain folder that records the sha256 of the lock it
/// was installed from.
pub(crate) const LOCK_RECORD_FILE: &str = "hookrt-toolchain.sha256";
/// How long one build may run before it is killed. A hook's top level runs
/// during the build (pre-initialisation) without a fuel limit, so an endless
/// loop there would hang `hookrt check` for ever.
pub(crate) const BUILD_TIMEOUT: Duration = Duration::from_secs(300);
/// The most bytes of a driver's stderr kept for a problem (the rest is noise).
const MAX_ERROR_BYTES: usize = 8 << 10;

/// What a build driver gets from the environment: enough to run, nothing of
/// the operator's (`NODE_OPTIONS --require`, `PYTHONPATH`, tokens).
const PASSED_ENV: &[&str] = &["PATH"];

/// One pinned toolchain.
pub(crate) struct Toolchain {
    /// Its name in messages ("JS toolchain").
    pub what: &'static str,
    /// The language its builds are named by ("TS").
    pub language: &'static str,
    /// The hooks it builds, in messages ("TypeScript").
    pub hooks: &'static str,
    /// The variable naming its folder.
    pub env: &'static str,
    /// Its folder's name under the per-user cache.
    pub folder: &'static str,
    /// The lock it installs from, under the SDK dir.
    pub lock: &'static str,
    /// What an installed folder holds (a path under it).
    pub installed: &'static str,
    /// The script that installs it (`scripts/js-toolchain`).
    pub script: &'static str,
    /// What the script needs and does, for the fix.
    pub install: &'static str,
    /// The variable that overrides [`BUILD_TIMEOUT`], in seconds.
    pub timeout_env: &'static str,
    /// What to do when the driver's interpreter does not start.
    pub start_fix: &'static str,
}

impl Toolchain {
    /// Where the toolchain is (the folder its script fills), else a folder
    /// of this user's in the temp dir (which [`Toolchain::check`] refuses
    /// when others could write it).
    pub(crate) fn dir(&self) -> PathBuf {
        per_user_dir(self.env, Some(self.folder)).unwrap_or_else(|| {
            let uid = crate::hooks::cache::dir::current_uid();
            std::env::temp_dir().join(format!("hookrt-{}-{uid}", self.folder))
        })
    }

    /// Where the toolchain is, checked: installed from this SDK's lock, in
    /// a folder only this user can write.
    pub(crate) fn ready(&self, sdk_dir: &Path) -> Result<PathBuf, Problem> {
        let dir = self.dir();
        self.check(&dir, sdk_dir)?;
        Ok(dir)
    }

    /// Checks that the toolchain at `dir` was installed from this SDK's lock.
    fn check(&self, dir: &Path, sdk_dir: &Path) -> Result<(), Problem> {
        let what = self.what;
        if let Some(why) = crate::hooks::cache::dir::unsafe_dir(dir) {
            return Err(Problem::build(
                dir,
                format!(
                    "the {what} folder {why}: whoever can write it could change the code that builds hooks"
                ),
                format!(
                    "install the toolchain into a folder of your own ({}), or set {} to one",
                    self.script, self.env
                ),
            ));
        }
        let lock = sdk_dir.join(self.lock);
        let want = std::fs::read(&lock)
            .map(|bytes| hex::encode(Sha256::digest(bytes)))
            .map_err(|e| {
                Problem::build(
                    &lock,
                    format!("cannot read the {} SDK's lock: {e}", self.language),
                    "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
                )
            })?;
        let have = std::fs::read_to_string(dir.join(LOCK_RECORD_FILE)).unwrap_or_default();
        if have.trim() == want && dir.join(self.installed).exists() {
            return Ok(());
        }
        let state = if dir.join(LOCK_RECORD_FILE).is_file() {
            format!("holds another version of the {what}")
        } else {
            format!("does not hold the {what} that builds {} hooks", self.hooks)
        };
        Err(Problem::build(
            dir,
            state,
            format!(
                "run {} {}, or set {} to where it is installed",
                self.script, self.install, self.env
            ),
        ))
    }

    /// How long one build may run: [`BUILD_TIMEOUT`] unless its variable says.
    pub(crate) fn timeout(&self) -> Duration {
        std::env::var(self.timeout_env)
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(BUILD_TIMEOUT, Duration::from_secs)
    }

    /// Runs one build of `hook`: `program args` in `work` (a fresh folder
    /// the caller removes) with `request` on stdin. Returns the host
    /// interfaces the component imports, from the driver's one-line report
    /// (`{"imports": [...], ...}`); its stderr (cut to a readable size) as
    /// the problem otherwise, with `fix`.
    pub(crate) fn run(
        &self,
        hook: &DiscoveredHook,
        program: &OsStr,
        args: &[&OsStr],
        work: &Path,
        request: &serde_json::Value,
        fix: &str,
    ) -> Result<Vec<String>, Problem> {
        let problem = |what: String, fix: &str| Problem::build(&hook.path, what, fix);
        let cwd = work.join("cwd");
        let tmp = work.join("tmp");
        for dir in [&cwd, &tmp] {
            create_private_dir(dir).map_err(|e| {
                Problem::build(
                    dir,
                    format!("cannot create: {e}"),
                    "check permissions of the cache dir",
                )
            })?;
        }
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            // A fresh folder of ours, never the agent folder: componentize-js
            // maps its working directory into Wizer's sandbox, and Python
            // puts it on the module path.
            .current_dir(&cwd)
            .env("TMPDIR", &tmp)
            .env("HOME", &tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for key in PASSED_ENV {
            if let Some(v) = std::env::var_os(key) {
                cmd.env(key, v);
            }
        }
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|e| {
            problem(
                format!("cannot start `{}`: {e}", program.to_string_lossy()),
                self.start_fix,
            )
        })?;
        let limit = self.timeout();
        let (status, stdout, stderr) = wait(child, request.to_string(), limit).map_err(|e| {
            let e = e.unwrap_or_else(|| {
                format!(
                    "the {} build ran longer than {} s and was stopped",
                    self.language,
                    limit.as_secs()
                )
            });
            problem(
                e,
                &format!(
                    "make the hook's top-level code end (it runs while the hook is built), or raise {}",
                    self.timeout_env
                ),
            )
        })?;
        if !status {
            return Err(problem(
                format!("does not build:\n{}", cut(stderr.trim())),
                fix,
            ));
        }
        let report: Report = serde_json::from_str(stdout.trim()).map_err(|e| {
            problem(
                format!(
                    "the {} build printed no report ({e}): {}",
                    self.language,
                    cut(stdout.trim())
                ),
                &format!("run {} again; the toolchain may be damaged", self.script),
            )
        })?;
        Ok(report.imports)
    }
}

/// What a build driver reports on success.
#[derive(Debug, serde::Deserialize)]
struct Report {
    /// The host interfaces the component imports (`log`, `metrics`, `state`).
    imports: Vec<String>,
}

/// `text` cut to [`MAX_ERROR_BYTES`] at a character boundary.
fn cut(text: &str) -> String {
    if text.len() <= MAX_ERROR_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_ERROR_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [...]", &text[..end])
}

/// Feeds `input`, waits at most `limit`, and returns (success, stdout,
/// stderr); `Err(None)` when it ran past the limit (the whole process group,
/// the driver and what it started, is killed), `Err(Some(why))` when it
/// could not be waited for.
fn wait(
    mut child: Child,
    input: String,
    limit: Duration,
) -> Result<(bool, String, String), Option<String>> {
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(input.as_bytes());
        }
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = r.read_to_string(&mut text);
            text
        })
    };
    let out = child.stdout.take().map(|s| drain(Box::new(s)));
    let err = child.stderr.take().map(|s| drain(Box::new(s)));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > limit => {
                // The group: the driver's children (wizer, componentize-py)
                // outlive a kill of the driver alone. (Through `kill(1)` it
                // missed them: procps-ng 4.0.2's `kill -KILL -PGID` answered
                // 0 and left the group running.)
                if let Ok(group) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: a plain system call; the driver leads its own
                    // group (`process_group(0)`), so only the build is signalled.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Some(format!("cannot wait for the build: {e}"))),
        }
    };
    let _ = writer.join();
    let text = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok((status.success(), text(out), text(err)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_error_is_cut_at_a_character_boundary() {
        let text = "é".repeat(MAX_ERROR_BYTES);
        let cut = cut(&text);
        assert!(cut.ends_with(" [...]") && cut.len() <= MAX_ERROR_BYTES + 6);
        assert_eq!(super::cut("short"), "short");
    }
}
