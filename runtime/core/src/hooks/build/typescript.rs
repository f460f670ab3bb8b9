//! TypeScript hooks: building a `hooks/NAME.ts` or `.js` file into a component
//! for the `define-hook` world with the pinned JS toolchain.
//!
//! The toolchain (componentize-js, esbuild, typescript at the versions of
//! `guest-sdk/ts/package-lock.json`) is installed by `scripts/js-toolchain`
//! into `$HOOKRT_JS_TOOLCHAIN`, else `$XDG_CACHE_HOME/hookrt/js-toolchain` or
//! `~/.cache/hookrt/js-toolchain`: never into an agent folder, and hookrt
//! never installs it on its own. It is per user, not per cache dir: a
//! `--cache-dir` of its own (a test's, a service's) uses the same tools.
//!
//! Trust boundary: the agent folder is untrusted, so nothing in it runs on
//! the host. hookrt reads the hook file itself and hands its text to
//! `guest-sdk/ts/build.mjs` on stdin; node runs with a scrubbed environment,
//! in a fresh folder of the cache dir, and never opens the agent folder: no
//! `node_modules`, `package.json`, `tsconfig.json`, npm script or plugin of
//! it is read or run. The build resolves one import, `"hookrt"` (the SDK),
//! and refuses every other with the file, line and import. The hook's own
//! code runs only inside WebAssembly: at build time in componentize-js's
//! Wizer pre-initialisation (its top level, inside Wizer's Wasmtime, which
//! sees only componentize-js's own temp folder), and at delivery time in the
//! sandbox like any hook.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::hooks::cache::dir::{create_private_dir, per_user_dir};
use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::problem::Problem;

/// The file in the toolchain folder that records the sha256 of the lock it
/// was installed from.
pub const LOCK_RECORD_FILE: &str = "hookrt-toolchain.sha256";
/// The world file the TS SDK is built against, under the SDK dir.
pub const WIT_FILE: &str = "wit/v0.3.0/hook.wit";
/// How long one TS build may run before it is killed. A hook's top level runs
/// during the build (Wizer pre-initialisation) without a fuel limit, so an
/// endless loop there would hang `hookrt check` for ever. Override with
/// `HOOKRT_JS_BUILD_TIMEOUT_S`.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(300);
/// The most bytes of node's stderr kept for a problem (the rest is noise).
const MAX_ERROR_BYTES: usize = 8 << 10;

/// What node gets from the environment: enough to run, nothing of the
/// operator's (`NODE_OPTIONS --require`, tokens, npm settings).
const PASSED_ENV: &[&str] = &["PATH"];

/// The TS SDK folder (`guest-sdk/ts`) of an SDK dir.
pub fn ts_sdk_dir(sdk_dir: &Path) -> PathBuf {
    sdk_dir.join("ts")
}

/// Where the JS toolchain is (the folder `scripts/js-toolchain` fills):
/// `$HOOKRT_JS_TOOLCHAIN`, else `$XDG_CACHE_HOME/hookrt/js-toolchain`, else
/// `$HOME/.cache/hookrt/js-toolchain`, else a folder of this user's in the
/// temp dir (which a build refuses when others could write it: see
/// [`check_toolchain`]).
pub fn toolchain_dir() -> PathBuf {
    per_user_dir("HOOKRT_JS_TOOLCHAIN", Some("js-toolchain")).unwrap_or_else(|| {
        let uid = crate::hooks::cache::dir::current_uid();
        std::env::temp_dir().join(format!("hookrt-js-toolchain-{uid}"))
    })
}

/// The sha256 of the toolchain lock: what a matching install records.
fn lock_digest(sdk_dir: &Path) -> std::io::Result<String> {
    let lock = std::fs::read(ts_sdk_dir(sdk_dir).join("package-lock.json"))?;
    Ok(hex::encode(Sha256::digest(lock)))
}

/// Checks that the toolchain at `dir` was installed from this SDK's lock.
fn check_toolchain(dir: &Path, sdk_dir: &Path) -> Result<(), Problem> {
    if let Some(why) = crate::hooks::cache::dir::unsafe_dir(dir) {
        return Err(Problem::build(
            dir,
            format!(
                "the JS toolchain folder {why}: whoever can write it could change the code that builds hooks"
            ),
            "install the toolchain into a folder of your own (scripts/js-toolchain), or set HOOKRT_JS_TOOLCHAIN to one",
        ));
    }
    let want = lock_digest(sdk_dir).map_err(|e| {
        Problem::build(
            ts_sdk_dir(sdk_dir),
            format!("cannot read the TS SDK's package-lock.json: {e}"),
            "set HOOKRT_SDK_DIR to the guest-sdk folder of your hookrt checkout",
        )
    })?;
    let have = std::fs::read_to_string(dir.join(LOCK_RECORD_FILE)).unwrap_or_default();
    if have.trim() == want && dir.join("node_modules").is_dir() {
        return Ok(());
    }
    let what = if dir.join(LOCK_RECORD_FILE).is_file() {
        "holds another version of the JS toolchain"
    } else {
        "does not hold the JS toolchain that builds TypeScript hooks"
    };
    Err(Problem::build(
        dir,
        what,
        "run scripts/js-toolchain from the hookrt checkout (Node.js 20+ and npm; it installs the pinned \
         componentize-js, esbuild and typescript there), or set HOOKRT_JS_TOOLCHAIN to where it is installed",
    ))
}

/// What `build.mjs` reports on success.
#[derive(Debug, serde::Deserialize)]
struct Report {
    /// The host interfaces the component imports (`log`, `metrics`, `state`).
    imports: Vec<String>,
}

/// Builds one TS/JS hook; returns the component, written into `work` (a fresh
/// folder the caller removes).
pub(crate) fn build(
    hook: &DiscoveredHook,
    sdk_dir: &Path,
    work: &Path,
) -> Result<PathBuf, Problem> {
    let toolchain = toolchain_dir();
    check_toolchain(&toolchain, sdk_dir)?;
    let problem = |what: String, fix: &str| Problem::build(&hook.path, what, fix);
    let source = std::fs::read_to_string(&hook.path).map_err(|e| {
        problem(
            format!("cannot read as UTF-8 text: {e}"),
            "save the hook as UTF-8",
        )
    })?;
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
    let out = work.join("component.wasm");
    let ts = ts_sdk_dir(sdk_dir);
    let lang = match hook.path.extension().and_then(|e| e.to_str()) {
        Some("js") => "js",
        _ => "ts",
    };
    let request = serde_json::json!({
        "toolchain": toolchain,
        "sdk": ts,
        "wit": sdk_dir.join(WIT_FILE),
        "path": hook.path.display().to_string(),
        "lang": lang,
        "source": source,
        "out": out,
    });
    let node = std::env::var_os("HOOKRT_NODE").unwrap_or_else(|| "node".into());
    let mut cmd = Command::new(&node);
    cmd.arg(ts.join("build.mjs"))
        .env_clear()
        // componentize-js maps its working directory into Wizer's sandbox when
        // the source lies under it: an empty folder of ours, never the agent folder.
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
            format!("cannot start `{}`: {e}", node.to_string_lossy()),
            "install Node.js 20 or later (or set HOOKRT_NODE to its binary)",
        )
    })?;
    let (status, stdout, stderr) = run(child, request.to_string(), timeout())
        .map_err(|e| problem(e, "make the hook's top-level code end (it runs while the hook is built), or raise HOOKRT_JS_BUILD_TIMEOUT_S"))?;
    if !status {
        let mut text = stderr.trim().to_owned();
        if text.len() > MAX_ERROR_BYTES {
            let mut cut = MAX_ERROR_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str(" [...]");
        }
        return Err(problem(
            format!("does not build:\n{text}"),
            "fix the errors above (`hookrt new AGENT/hooks/NAME --lang ts` writes a working hook to start from)",
        ));
    }
    let report: Report = serde_json::from_str(stdout.trim()).map_err(|e| {
        problem(
            format!("the TS build printed no report ({e}): {}", stdout.trim()),
            "run scripts/js-toolchain again; the toolchain may be damaged",
        )
    })?;
    tracing::debug!(slug = %hook.slug, imports = ?report.imports, "componentize-js built a TS hook");
    Ok(out)
}

fn timeout() -> Duration {
    std::env::var("HOOKRT_JS_BUILD_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(BUILD_TIMEOUT, Duration::from_secs)
}

/// Feeds `input`, waits at most `limit`, and returns (success, stdout, stderr).
/// On timeout the whole process group (node and the Wizer it started) is killed.
fn run(mut child: Child, input: String, limit: Duration) -> Result<(bool, String, String), String> {
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
                // The group: node's children (wizer) outlive a kill of node
                // alone. (Through `kill(1)` it missed them: procps-ng 4.0.2's
                // `kill -KILL -PGID` answered 0 and left the group running.)
                if let Ok(group) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: a plain system call; node leads its own group
                    // (`process_group(0)` above), so only the build is signalled.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the TS build ran longer than {} s and was stopped",
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for node: {e}")),
        }
    };
    let _ = writer.join();
    let text = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok((status.success(), text(out), text(err)))
}
