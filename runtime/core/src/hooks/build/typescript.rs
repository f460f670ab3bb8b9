//! TypeScript hooks: building a `hooks/NAME.ts` or `.js` file into a component
//! for the `define-hook` world with the pinned JS toolchain.
//!
//! The toolchain (componentize-js, esbuild, typescript at the versions of
//! `guest-sdk/ts/package-lock.json`) is installed by `scripts/js-toolchain`
//! into `$HOOKRT_JS_TOOLCHAIN`, else `$XDG_CACHE_HOME/hookrt/js-toolchain` or
//! `~/.cache/hookrt/js-toolchain`, per user whatever `--cache-dir` says:
//! never into an agent folder, and hookrt never installs it on its own.
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

use std::path::{Path, PathBuf};

use crate::hooks::build::digest::newest_wit;
use crate::hooks::build::toolchain::Toolchain;
use crate::hooks::folder::discovery::DiscoveredHook;
use crate::hooks::problem::Problem;

/// The JS toolchain (`scripts/js-toolchain`).
pub(crate) const JS: Toolchain = Toolchain {
    what: "JS toolchain",
    language: "TS",
    hooks: "TypeScript",
    env: "HOOKRT_JS_TOOLCHAIN",
    folder: "js-toolchain",
    lock: "ts/package-lock.json",
    installed: "node_modules",
    script: "scripts/js-toolchain",
    install: "from the hookrt checkout (Node.js 20+ and npm; it installs the pinned \
              componentize-js, esbuild and typescript there)",
    timeout_env: "HOOKRT_JS_BUILD_TIMEOUT_S",
    start_fix: "install Node.js 20 or later (or set HOOKRT_NODE to its binary)",
};

/// The TS SDK folder (`guest-sdk/ts`) of an SDK dir.
pub(crate) fn ts_sdk_dir(sdk_dir: &Path) -> PathBuf {
    sdk_dir.join("ts")
}

/// Builds one TS/JS hook; returns the component, written into `work` (a fresh
/// folder the caller removes).
pub(crate) fn build(
    hook: &DiscoveredHook,
    sdk_dir: &Path,
    work: &Path,
) -> Result<PathBuf, Problem> {
    let toolchain = JS.ready(sdk_dir)?;
    let problem = |what: String, fix: &str| Problem::build(&hook.path, what, fix);
    let source = crate::hooks::folder::plain::read_regular_text(&hook.path).map_err(|e| {
        problem(
            format!("cannot read as UTF-8 text: {e}"),
            "save the hook as UTF-8",
        )
    })?;
    let out = work.join("component.wasm");
    let ts = ts_sdk_dir(sdk_dir);
    let lang = match hook.path.extension().and_then(|e| e.to_str()) {
        Some("js") => "js",
        _ => "ts",
    };
    let request = serde_json::json!({
        "toolchain": toolchain,
        "sdk": ts,
        "wit": newest_wit(sdk_dir),
        "path": hook.path.display().to_string(),
        "lang": lang,
        "source": source,
        "out": out,
    });
    let node = std::env::var_os("HOOKRT_NODE").unwrap_or_else(|| "node".into());
    let driver = ts.join("build.mjs");
    let imports = JS.run(
        hook,
        &node,
        &[driver.as_os_str()],
        work,
        &request,
        "fix the errors above (`hookrt new AGENT/hooks/NAME --lang ts` writes a working hook to start from)",
    )?;
    tracing::debug!(slug = %hook.slug, imports = ?imports, "componentize-js built a TS hook");
    Ok(out)
}
