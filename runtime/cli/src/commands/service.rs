//! `hookrt service run|status|stop|logs DIR`: the resident service of an
//! agent folder for this user (docs/service.md, ADR 0012). A command hook
//! (`hookrt-hook`, `hookrt hook`) starts it on demand; `run` is what it
//! starts (or a person, in the foreground): `hookrt serve` on a private Unix socket, the journal
//! and its trail in the user's state folder, exiting after an idle time.
//! Its place (socket, journal, log) is `hookrt_client::place`'s.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use hookrt::front::summary::Summary;
use hookrt::{BuildOptions, Durability, Runtime};
use hookrt_serve::{ServeOptions, Tokens};

use crate::loading::Loading;
use hookrt_client::place::{self, Place};

/// How often the service looks whether it should retire: its binary
/// replaced, its socket or its folder gone.
const RETIRE_CHECK_EVERY: Duration = Duration::from_millis(500);

/// How long the service waits for the start lock when run by hand.
const LOCK_WAIT: Duration = Duration::from_secs(10);

#[derive(clap::Subcommand)]
pub(crate) enum ServiceCommand {
    /// Run the service of DIR in the foreground (what a command hook
    /// starts in the background).
    Run(RunArgs),
    /// Say whether the service of DIR runs, where it listens and keeps its
    /// journal (exit 1 when it does not run).
    Status(PlaceArgs),
    /// Stop the service of DIR (SIGTERM: it finishes what it was given).
    Stop(PlaceArgs),
    /// Print the end of the service's log.
    Logs(LogsArgs),
}

/// A service named by its agent folder (and the global flags).
#[derive(clap::Args)]
pub(crate) struct PlaceArgs {
    /// The agent folder.
    pub dir: PathBuf,
}

/// `hookrt service logs`'s arguments.
#[derive(clap::Args)]
pub(crate) struct LogsArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// How many of the last lines.
    #[arg(long, short = 'n', default_value_t = 50)]
    pub lines: usize,
}

/// `hookrt service run`'s arguments.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// Exit once no client connected for this long.
    #[arg(long, default_value_t = 900, value_name = "SECONDS")]
    pub idle_exit: u64,
    /// The longest a route waits for hooks (a client's own deadline,
    /// `budget_ms`, is shorter).
    #[arg(long, default_value = "60000", value_name = "MS")]
    pub decide_timeout_ms: u64,
    /// Started by a client that holds the start lock (internal).
    #[arg(long, hide = true)]
    pub started: bool,
    /// Threads delivering side by side (`hookrt serve --threads`).
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
    #[command(flatten)]
    pub trail: crate::args::ServiceTrailArgs,
}

impl ServiceCommand {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        match self {
            ServiceCommand::Run(args) => args.execute(loading),
            ServiceCommand::Status(args) => {
                status(&Place::of(&args.dir, &loading.identity()).map_err(anyhow::Error::msg)?)
            }
            ServiceCommand::Stop(args) => {
                stop(&Place::of(&args.dir, &loading.identity()).map_err(anyhow::Error::msg)?)
            }
            ServiceCommand::Logs(args) => {
                let place =
                    Place::of(&args.dir, &loading.identity()).map_err(anyhow::Error::msg)?;
                println!("{}", place::tail(&place.log, args.lines));
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

impl RunArgs {
    fn execute(self, loading: Loading) -> Result<ExitCode> {
        let place = Place::of(&self.dir, &loading.identity()).map_err(anyhow::Error::msg)?;
        place.prepare().map_err(anyhow::Error::msg)?;
        // By hand: the start lock, as a client takes it, so no client
        // starts a second service meanwhile.
        let lock = if self.started {
            None
        } else {
            let lock = place
                .start_lock(Instant::now() + LOCK_WAIT)
                .map_err(anyhow::Error::msg)?;
            if place.connect().map_err(anyhow::Error::msg)?.is_some() {
                bail!(
                    "the service of {} runs already (socket {}): `hookrt service stop {}` first",
                    place.dir.display(),
                    place.socket.display(),
                    self.dir.display()
                );
            }
            place.remove_stale().map_err(anyhow::Error::msg)?;
            Some(lock)
        };
        // Never built here: a client waits for the service within its
        // deadline (a stale hook is a problem naming `hookrt build DIR`).
        let loading = Loading {
            cached_only: true,
            ..loading
        };
        let build = loading.clone().options(&place.dir);
        // Taken before the load: a change during it is followed at the
        // first event.
        let fingerprint = hookrt_serve::Fingerprint::of(&place.dir, build.lock.file.as_deref());
        loading.loaded(&place.dir, |rt| {
            self.serve(rt, &place, (build, fingerprint), lock)
        })
    }

    /// Serves `rt`; the start lock, when held here, is let go once the
    /// socket listens.
    fn serve(
        &self,
        rt: Runtime,
        place: &Place,
        (build, fingerprint): (BuildOptions, hookrt_serve::Fingerprint),
        lock: Option<std::fs::File>,
    ) -> Result<ExitCode> {
        let mut options = ServeOptions::new(([127, 0, 0, 1], 0).into(), Tokens::default());
        options.socket = Some(place.socket.clone());
        options.idle_exit = Some(Duration::from_secs(self.idle_exit.max(1)));
        options.journal = Some(place.journal.clone());
        options.build = Some(build);
        options.follow_changes = Some(fingerprint);
        options.decide_timeout = Duration::from_millis(self.decide_timeout_ms);
        options.threads = usize::from(self.threads);
        options.trail = self.trail.options()?;
        let hooks = rt.hooks().len();
        if let Some(w) = rt.unlocked_warning() {
            tracing::warn!("{w}");
        }
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let pid = &place.pid;
        let listening = std::sync::Arc::new(std::sync::OnceLock::new());
        let stats = tokio.block_on(hookrt_serve::serve(
            rt,
            options,
            until_retired(place.clone(), listening.clone()),
            |bound| {
                if let Some(socket) = file_identity(&place.socket) {
                    let _ = listening.set(socket);
                }
                // The pid `hookrt service stop` signals; written once the
                // socket is there.
                if let Err(e) = std::fs::write(pid, std::process::id().to_string()) {
                    tracing::warn!(target: "hookrt", "cannot write {}: {e}", pid.display());
                }
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "listening on {bound} ({hooks} hook(s)), journal {}",
                    place.journal.display()
                );
                let _ = out.flush();
                drop(lock);
            },
        ));
        if std::fs::read_to_string(pid).is_ok_and(|p| p.trim() == std::process::id().to_string()) {
            let _ = std::fs::remove_file(pid);
        }
        Summary::of_stats(&stats?, Durability::Persisted).write(&mut std::io::stdout().lock())?;
        Ok(ExitCode::SUCCESS)
    }
}

/// A file's device and inode: which file is at a path.
fn file_identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Resolves at ctrl-c or SIGTERM, or once the service should retire: the
/// binary it runs replaced at its path (an upgrade: the next event starts
/// the new binary's), its socket removed or replaced (no client reaches it
/// any more: its run folder was cleaned, or another service took the
/// place), or its agent folder gone. `listening` is the socket's identity,
/// set once it listens.
async fn until_retired(place: Place, listening: std::sync::Arc<std::sync::OnceLock<(u64, u64)>>) {
    // `current_exe` is the binary's own path (links resolved).
    let exe = std::env::current_exe().ok();
    let exe_identity = exe.as_deref().and_then(file_identity);
    let retire = async {
        loop {
            tokio::time::sleep(RETIRE_CHECK_EVERY).await;
            if let (Some(exe), Some(was)) = (exe.as_deref(), exe_identity)
                && file_identity(exe) != Some(was)
            {
                tracing::info!(target: "hookrt", "{} was replaced: stopping, so the next event starts the new one", exe.display());
                return;
            }
            if let Some(socket) = listening.get()
                && file_identity(&place.socket) != Some(*socket)
            {
                tracing::info!(target: "hookrt", "the socket {} was removed or replaced: stopping (no client reaches this service)", place.socket.display());
                return;
            }
            if !place.dir.is_dir() {
                tracing::info!(target: "hookrt", "the agent folder {} is gone: stopping", place.dir.display());
                return;
            }
        }
    };
    tokio::select! {
        () = hookrt_serve::shutdown_signal() => {}
        () = retire => {}
    }
}

/// The running service's pid, if its socket answers.
fn running(place: &Place) -> Result<Option<i32>> {
    place.prepare().map_err(anyhow::Error::msg)?;
    if place.connect().map_err(anyhow::Error::msg)?.is_none() {
        return Ok(None);
    }
    let pid = std::fs::read_to_string(&place.pid)
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
        .filter(|p| *p > 0);
    Ok(Some(pid.unwrap_or(0)))
}

fn status(place: &Place) -> Result<ExitCode> {
    let running = running(place)?;
    let mut out = std::io::stdout().lock();
    match running {
        Some(pid) => writeln!(out, "running (pid {pid}) for {}", place.dir.display())?,
        None => writeln!(out, "not running for {}", place.dir.display())?,
    }
    writeln!(out, "socket   {}", place.socket.display())?;
    writeln!(out, "journal  {}", place.journal.display())?;
    writeln!(out, "log      {}", place.log.display())?;
    Ok(if running.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn stop(place: &Place) -> Result<ExitCode> {
    let Some(pid) = running(place)? else {
        println!("not running for {}", place.dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    if pid == 0 {
        bail!(
            "the service of {} answers on {} but left no pid in {}",
            place.dir.display(),
            place.socket.display(),
            place.pid.display()
        );
    }
    // SAFETY: a signal to a pid the service wrote in this user's private folder.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        bail!("cannot stop pid {pid}: {}", std::io::Error::last_os_error());
    }
    // It drains what it was given (the drain timeout, 30 s), then exits.
    let deadline = Instant::now() + Duration::from_secs(35);
    while alive(pid) {
        if Instant::now() >= deadline {
            bail!("pid {pid} is still there 35 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("stopped (pid {pid}) for {}", place.dir.display());
    Ok(ExitCode::SUCCESS)
}

/// Whether `pid` runs: there, and no zombie (an orphaned service waits for
/// a pid 1 that may never reap it, in a container).
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the pid is there.
    let there = unsafe { libc::kill(pid, 0) } == 0;
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // The state follows the command's closing parenthesis.
            let (_, rest) = s.rsplit_once(')')?;
            rest.split_whitespace().next().map(|state| state == "Z")
        })
        .unwrap_or(false);
    there && !zombie
}
