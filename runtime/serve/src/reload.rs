//! Hot reload: on `SIGHUP` or `POST /v1/admin/reload` the agent folder is
//! loaded again beside the running hooks (discovered, checked, built when
//! stale, every hook linked and asked for its subscriptions) and, only when
//! all of it loaded, swapped in with [`HookService::reload`]: events taken
//! before the swap are delivered by the old hooks (deliveries in flight
//! finish on them), events after it by the new ones. A folder that does not
//! load changes nothing; the answer names each problem and its file.
//!
//! One reload runs at a time; a second waits for the first. A server that
//! follows its folder (`ServeOptions::follow_changes`, the resident
//! service) also reloads before an event when the folder's [`Fingerprint`]
//! changed, and refuses the event when the changed folder does not load.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::StatusCode;
use hookrt::journal::{TrailContext, TrailOptions};
use hookrt::{BuildOptions, Problems, ReloadError, Reloaded, Runtime, Transport};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::metrics::ServerMetrics;

/// How reloads load the agent folder.
#[derive(Debug)]
pub(crate) struct Reloader {
    agent_dir: PathBuf,
    build: BuildOptions,
    one_at_a_time: tokio::sync::Mutex<()>,
    /// What signed receipts name (the components and settings deciding),
    /// kept up to date with the hooks.
    receipts: Option<Receipts>,
    /// The folder's fingerprint as last loaded, when it is followed.
    follows: Option<Mutex<Fingerprint>>,
}

/// The entries of a followed folder its fingerprint reads at most: past
/// them a change goes unseen until a reload is asked for.
const MAX_FOLLOWED_ENTRIES: usize = 10_000;

/// What a folder (and a lock outside it) is, as far as a reload cares:
/// each entry's path, type, size, inode and modification time, hashed.
/// Any edit, a file added, removed or replaced (a rename gives a new inode)
/// changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of `dir` and of `lock`, when the lock lies outside.
    pub fn of(dir: &Path, lock: Option<&Path>) -> Fingerprint {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        let mut note = |path: &Path, meta: std::io::Result<std::fs::Metadata>| {
            hash.update(path.as_os_str().as_encoded_bytes());
            match meta {
                Ok(m) => {
                    hash.update(format!("{:?}", m.file_type()));
                    hash.update(m.len().to_le_bytes());
                    if let Ok(at) = m.modified()
                        && let Ok(since) = at.duration_since(std::time::UNIX_EPOCH)
                    {
                        hash.update(since.as_nanos().to_le_bytes());
                    }
                    #[cfg(unix)]
                    hash.update(std::os::unix::fs::MetadataExt::ino(&m).to_le_bytes());
                }
                Err(e) => hash.update(e.kind().to_string()),
            }
            hash.update([0]);
        };
        let walk = walkdir::WalkDir::new(dir)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .take(MAX_FOLLOWED_ENTRIES);
        for entry in walk {
            match entry {
                Ok(e) => note(e.path(), e.metadata().map_err(std::io::Error::from)),
                Err(e) => note(
                    e.path().unwrap_or(dir),
                    Err(std::io::Error::other(e.to_string())),
                ),
            }
        }
        if let Some(lock) = lock.filter(|l| !l.starts_with(dir)) {
            note(lock, std::fs::symlink_metadata(lock));
        }
        Fingerprint(hash.finalize().into())
    }
}

/// What signed receipts say of the hooks deciding, and how to say it again
/// after a reload.
#[derive(Debug, Clone)]
pub(crate) struct Receipts {
    /// The components, settings and key.
    pub context: Arc<std::sync::RwLock<TrailContext>>,
    /// The trail's options (its key).
    pub options: TrailOptions,
}

/// Why a reload left the running hooks in place.
#[derive(Debug)]
pub(crate) enum ReloadFailure {
    /// The agent folder did not load: every problem, with its file.
    Problems(Problems),
    /// The server is shutting down.
    ShuttingDown,
}

impl Reloader {
    /// Reloads of `agent_dir` built with `build`.
    /// `follows`: the folder's fingerprint before the running hooks were
    /// loaded, to follow its changes from.
    pub(crate) fn new(
        agent_dir: PathBuf,
        build: BuildOptions,
        receipts: Option<Receipts>,
        follows: Option<Fingerprint>,
    ) -> Reloader {
        Reloader {
            agent_dir,
            build,
            one_at_a_time: tokio::sync::Mutex::new(()),
            receipts,
            follows: follows.map(Mutex::new),
        }
    }

    /// When the folder is followed and changed since its last load: loads
    /// it again and swaps it into `service` before the event goes on; a
    /// changed folder that does not load refuses the event (503), and the
    /// next event tries again. The fingerprint is taken before the load,
    /// so a change during it is seen by the next event.
    pub(crate) async fn follow(
        &self,
        service: &hookrt::HookService,
        metrics: &ServerMetrics,
    ) -> Result<(), ApiError> {
        let Some(seen) = &self.follows else {
            return Ok(());
        };
        let now = Fingerprint::of(&self.agent_dir, self.build.lock.file.as_deref());
        if *seen.lock().unwrap_or_else(PoisonError::into_inner) == now {
            return Ok(());
        }
        tracing::info!(target: "hookrt", "the agent folder changed: loading it again before the event");
        match self.reload(service, metrics).await {
            Ok(_) => {
                *seen.lock().unwrap_or_else(PoisonError::into_inner) = now;
                Ok(())
            }
            Err(failure) => Err(failure.refusal(&self.agent_dir)),
        }
    }

    /// Loads the agent folder again and swaps it into `service`; counts the
    /// result in `metrics`.
    pub(crate) async fn reload(
        &self,
        service: &hookrt::HookService,
        metrics: &ServerMetrics,
    ) -> Result<Reloaded, ReloadFailure> {
        let _one = self.one_at_a_time.lock().await;
        let result = async {
            let mut runtime = Runtime::load(self.agent_dir.clone(), self.build.clone())
                .await
                .map_err(ReloadFailure::Problems)?;
            runtime.set_transport(Transport {
                kind: "http".into(),
                detail: None,
            });
            let fresh = self
                .receipts
                .as_ref()
                .map(|r| hookrt::journal::trail_context(&runtime, &r.options));
            let reloaded = service.reload(runtime).await.map_err(|e| match e {
                ReloadError::ShuttingDown => ReloadFailure::ShuttingDown,
            })?;
            if let (Some(r), Some(fresh)) = (&self.receipts, fresh)
                && let Ok(mut context) = r.context.write()
            {
                *context = fresh;
            }
            Ok(reloaded)
        }
        .await;
        match &result {
            Ok(r) => {
                metrics.reload("ok");
                metrics.hooks.set(r.hooks.len() as i64);
                tracing::info!(target: "hookrt", hooks = ?r.hooks, previous = ?r.previous, "hooks reloaded");
            }
            Err(ReloadFailure::Problems(p)) => {
                metrics.reload("failed");
                tracing::error!(target: "hookrt", "reload refused, the running hooks stay: {p}");
            }
            Err(ReloadFailure::ShuttingDown) => metrics.reload("failed"),
        }
        result
    }

    /// The agent folder reloads read.
    pub(crate) fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }
}

impl ReloadFailure {
    /// The answer to `POST /v1/admin/reload`: 422 naming each problem (its
    /// file relative to the agent folder), or 503.
    pub(crate) fn to_api_error(&self, agent_dir: &Path) -> ApiError {
        match self {
            ReloadFailure::ShuttingDown => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "hookrt is shutting down: the hooks were not reloaded",
                "reload the restarted server, which loads the agent folder as it is now",
            )
            .with_code("shutting_down"),
            ReloadFailure::Problems(problems) => {
                let named: Vec<String> = problems
                    .0
                    .iter()
                    .map(|p| format!("{}: {}", relative(&p.path, agent_dir), p.message))
                    .collect();
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "the agent folder did not load, so the running hooks stay: {}",
                        named.join("; ")
                    ),
                    "fix each problem listed (`problems`: file, stage, what and how), then reload again; `hookrt check DIR` shows the same",
                )
                .with_code("reload_failed")
            }
        }
    }

    /// The refusal of an event whose followed folder changed and did not
    /// load: no hook of the old folder decides it.
    fn refusal(&self, agent_dir: &Path) -> ApiError {
        let ReloadFailure::Problems(problems) = self else {
            return self.to_api_error(agent_dir);
        };
        let named: Vec<String> = problems
            .0
            .iter()
            .map(|p| format!("{}: {}", relative(&p.path, agent_dir), p.message))
            .collect();
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the agent folder {} changed and does not load, so no hook decides this event: {}",
                agent_dir.display(),
                named.join("; ")
            ),
            "fix each problem (`hookrt check DIR` lists them): the next event loads the folder again",
        )
        .with_code("folder_changed")
    }

    /// The problems as JSON (`file`, `kind`, `message`, `fix`).
    pub(crate) fn problems(&self, agent_dir: &Path) -> Value {
        match self {
            ReloadFailure::ShuttingDown => json!([]),
            ReloadFailure::Problems(problems) => problems
                .0
                .iter()
                .map(|p| {
                    json!({
                        "file": relative(&p.path, agent_dir),
                        "kind": p.kind,
                        "message": p.message,
                        "fix": p.fix,
                    })
                })
                .collect(),
        }
    }
}

/// `path` relative to the agent folder when it is inside it.
fn relative(path: &Path, agent_dir: &Path) -> String {
    path.strip_prefix(agent_dir)
        .unwrap_or(path)
        .display()
        .to_string()
}
