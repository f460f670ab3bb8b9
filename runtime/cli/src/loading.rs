//! Loading an agent folder as the global flags ask (cache, prebuilt, lock),
//! with a progress bar while cargo compiles: what every command that runs
//! hooks starts with.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use hookrt::BuildOptions;
use hookrt::hooks::BuildEvent;
use hookrt::{Problems, Runtime};
use indicatif::{ProgressBar, ProgressStyle};

/// How the command line asks for an agent folder to be loaded.
#[derive(Clone)]
pub(crate) struct Loading {
    pub cache_dir: Option<PathBuf>,
    pub prebuilt: bool,
    pub enforce_lock: bool,
    pub lock: hookrt::hooks::LockPolicy,
    pub project: Option<PathBuf>,
    /// Never build: a stale hook is a problem naming `hookrt build DIR`
    /// (the resident service, which a client waits for).
    pub cached_only: bool,
}

impl Loading {
    /// What a resident service loading this way is keyed by.
    pub(crate) fn identity(&self) -> hookrt_client::place::Identity {
        hookrt_client::place::Identity {
            project: self.project.clone(),
            lock: self.lock.file.clone(),
            require_lock: self.lock.required,
            prebuilt: self.prebuilt,
            cache_dir: self.cache_dir.clone(),
        }
    }

    /// The same, with `hookrt.lock` not enforced (lock and audit read drift).
    pub(crate) fn without_lock(self) -> Loading {
        Loading {
            enforce_lock: false,
            ..self
        }
    }

    /// The build options the global flags ask for.
    pub(crate) fn options(self, dir: &Path) -> BuildOptions {
        let mut opts = BuildOptions::for_agent(dir);
        if let Some(c) = self.cache_dir {
            opts.cache_dir = c;
        }
        opts.prebuilt = self.prebuilt;
        opts.enforce_lock = self.enforce_lock;
        opts.lock = self.lock;
        opts.project = self.project;
        opts.cached_only = self.cached_only;
        opts
    }

    /// Loads `dir` and runs `then` on its hooks, or reports why they did not load.
    pub(crate) fn loaded(
        self,
        dir: &Path,
        then: impl FnOnce(Runtime) -> Result<ExitCode>,
    ) -> Result<ExitCode> {
        match self.load(dir) {
            Ok(rt) => then(rt),
            Err(p) => Ok(report(&p)),
        }
    }

    /// Loads `dir`'s working copy for its author (`hookrt check`, `hookrt
    /// test`): a drift from the lock is one line on stderr, not a refusal,
    /// so an edit can be tested before it is reviewed and locked (loads for
    /// agents, `serve`, `run` and the service refuse it). The lock is read
    /// first: an unreadable one, or none where `--require-lock` asks for
    /// it, is still refused. `then` gets the warning for a folder without a
    /// lock, to print or not.
    pub(crate) fn loaded_for_author(
        self,
        dir: &Path,
        then: impl FnOnce(Runtime, Option<String>) -> Result<ExitCode>,
    ) -> Result<ExitCode> {
        let policy = self.lock.clone();
        let lock = match hookrt::read_lock(dir, &policy) {
            Ok(lock) => lock,
            Err(p) => return Ok(report(&p)),
        };
        self.without_lock().loaded(dir, |rt| {
            let unpinned = rt.unpinned_operator_grants(lock.as_ref(), &policy);
            if !unpinned.0.is_empty() {
                return Ok(report(&unpinned));
            }
            let warning = rt.working_copy_warning(lock.as_ref(), &policy);
            if lock.is_some()
                && let Some(w) = &warning
            {
                eprintln!("warning: {w}");
            }
            let unlocked = if lock.is_none() { warning } else { None };
            then(rt, unlocked)
        })
    }

    /// Loads the agent folder with a progress bar while cargo compiles.
    pub(crate) fn load(self, dir: &Path) -> Result<Runtime, Problems> {
        let opts = self.options(dir);
        let started = Instant::now();
        let bar = ProgressBar::hidden();
        let mut stale = 0;
        let rt = Runtime::load_blocking(dir, &opts, &mut |event| match event {
            BuildEvent::Planned { stale: s, cached } => {
                stale = s;
                tracing::debug!(stale = s, cached, "build plan");
                if s > 0 {
                    show(&bar, s);
                }
            }
            BuildEvent::CrateCompiled(name) | BuildEvent::Componentized(name) => {
                bar.inc(1);
                bar.set_message(name);
            }
        });
        bar.finish_and_clear();
        let rt = rt?;
        let cranelift = rt.hooks().iter().filter(|h| h.compiled).count();
        tracing::debug!(stale, "planned builds");
        tracing::info!(
            "{} hook(s) ready in {} ms: {}{cranelift} compiled by Cranelift, {} loaded from cache; {} allocator",
            rt.hooks().len(),
            started.elapsed().as_millis(),
            built_by(rt.hooks()),
            rt.hooks().len() - cranelift,
            rt.allocator().name()
        );
        Ok(rt)
    }
}

/// Who built the hooks built in this load, as the ready line says it
/// (`2 built by cargo, 1 by componentize-py, `; `0 built, ` when none was).
fn built_by(hooks: &[hookrt::hooks::LoadedHook]) -> String {
    use hookrt::hooks::SourceKind;
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for hook in hooks.iter().filter(|h| h.cargo_built) {
        let builder = match hook.kind {
            SourceKind::SingleFile | SourceKind::Crate => "cargo",
            SourceKind::TypeScript => "componentize-js",
            SourceKind::Python => "componentize-py",
            SourceKind::Component | SourceKind::Pack => continue,
        };
        match counts.iter_mut().find(|(b, _)| *b == builder) {
            Some((_, n)) => *n += 1,
            None => counts.push((builder, 1)),
        }
    }
    if counts.is_empty() {
        return "0 built, ".to_owned();
    }
    let mut text = String::new();
    for (i, (builder, n)) in counts.iter().enumerate() {
        let verb = if i == 0 { "built by" } else { "by" };
        text.push_str(&format!("{n} {verb} {builder}, "));
    }
    text
}

/// Draws `bar` on stderr for `stale` hooks to build.
fn show(bar: &ProgressBar, stale: usize) {
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} building {msg} ({pos} crates compiled, {elapsed})")
            .expect("static template"),
    );
    bar.set_message(format!("{stale} hook(s)"));
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
}

/// The folder's problems on stderr; exit 1.
pub(crate) fn report(problems: &Problems) -> ExitCode {
    eprint!("{problems}");
    ExitCode::FAILURE
}
