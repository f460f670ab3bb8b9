//! Argument groups every front end shares (`#[command(flatten)]`, as Spin's
//! trigger arguments): one declaration, one help text, one default.

/// Where the JetStream events live: `hookrt serve --nats`, `hookrt worker`
/// and `hookrt publish` must agree on all three.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct StreamArgs {
    /// The JetStream stream (created for `<prefix>.>` if missing).
    #[arg(long, default_value = hookrt_worker::DEFAULT_STREAM, requires = "nats")]
    pub stream: String,
    /// The subject prefix: events are on `<prefix>.<agent>.<session>.<partition>`.
    #[arg(long, default_value = hookrt_worker::DEFAULT_PREFIX, requires = "nats")]
    pub prefix: String,
    /// Partitions sessions are hashed into (the same for every worker and publisher).
    #[arg(long, default_value_t = hookrt_worker::DEFAULT_PARTITIONS, requires = "nats")]
    pub partitions: u32,
    /// Servers of a JetStream cluster that keep each stream and bucket this
    /// creates (3 on a three-node cluster survives the loss of one).
    #[arg(long, default_value_t = 1, requires = "nats", value_parser = clap::value_parser!(u8).range(1..=5))]
    pub replicas: u8,
}

/// How many threads deliver in this process (`hookrt run`, `hookrt serve`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub(crate) struct ThreadsArgs {
    /// Threads delivering side by side (each hook still sees its events one
    /// at a time, in order); 1: everything in plan order on one thread.
    /// `--workers` is its old name.
    #[arg(long, alias = crate::commands::aliases::WORKERS, default_value = "1", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
}

impl ThreadsArgs {
    /// The count, for [`hookrt::ServiceOptions::threads`].
    pub(crate) fn count(self) -> usize {
        usize::from(self.threads)
    }
}

/// The auditor's trail in the journal (`hookrt run --journal`, `hookrt
/// serve --journal`; docs/journal.md#the-auditors-trail).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct TrailArgs {
    /// Sign the trail's head with this Ed25519 key (`hookrt keygen`) every
    /// `--checkpoint-every` entries and when the service stops. Keep it
    /// outside the agent folder and the journal's folder.
    #[arg(long, value_name = "FILE", requires = "journal")]
    pub signing_key: Option<std::path::PathBuf>,
    /// Trail entries between two signed checkpoints.
    #[arg(long, default_value_t = hookrt::journal::DEFAULT_CHECKPOINT_EVERY, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
    /// Keep no trail (no hash chain) in the journal.
    #[arg(long, conflicts_with = "signing_key")]
    pub no_trail: bool,
}

/// The trail of the resident service's journal (`hookrt service run`),
/// which always has a journal: [`TrailArgs`] without its `requires`.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct ServiceTrailArgs {
    /// Sign the trail's head with this Ed25519 key (`hookrt keygen`) every
    /// `--checkpoint-every` entries and when the service stops.
    #[arg(long, value_name = "FILE")]
    pub signing_key: Option<std::path::PathBuf>,
    /// Trail entries between two signed checkpoints.
    #[arg(long, default_value_t = hookrt::journal::DEFAULT_CHECKPOINT_EVERY, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
    /// Keep no trail (no hash chain) in the journal.
    #[arg(long, conflicts_with = "signing_key")]
    pub no_trail: bool,
}

impl ServiceTrailArgs {
    /// The options, the key read from its file.
    pub(crate) fn options(&self) -> anyhow::Result<hookrt::journal::TrailOptions> {
        TrailArgs {
            signing_key: self.signing_key.clone(),
            checkpoint_every: self.checkpoint_every,
            no_trail: self.no_trail,
        }
        .options()
    }
}

impl TrailArgs {
    /// The options, the key read from its file.
    pub(crate) fn options(&self) -> anyhow::Result<hookrt::journal::TrailOptions> {
        let signing_key = match &self.signing_key {
            Some(path) => Some(
                hookrt::journal::read_signing_key(path)
                    .map_err(anyhow::Error::msg)?
                    .to_bytes(),
            ),
            None => None,
        };
        Ok(hookrt::journal::TrailOptions {
            on: !self.no_trail,
            signing_key,
            checkpoint_every: self.checkpoint_every,
        })
    }
}
