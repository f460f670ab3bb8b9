//! Argument groups every front end shares (`#[command(flatten)]`, as Spin's
//! trigger arguments): one declaration, one help text, one default.

/// Where the JetStream events live: `hookrt serve --nats`, `hookrt worker`
/// and `hookrt publish` must agree on all three.
#[derive(clap::Args, Clone, Debug)]
pub struct StreamArgs {
    /// The JetStream stream (created for `<prefix>.>` if missing).
    #[arg(long, default_value = hookrt_worker::DEFAULT_STREAM, requires = "nats")]
    pub stream: String,
    /// The subject prefix: events are on `<prefix>.<agent>.<session>.<partition>`.
    #[arg(long, default_value = hookrt_worker::DEFAULT_PREFIX, requires = "nats")]
    pub prefix: String,
    /// Partitions sessions are hashed into (the same for every worker and publisher).
    #[arg(long, default_value_t = hookrt_worker::DEFAULT_PARTITIONS, requires = "nats")]
    pub partitions: u32,
}

/// How many threads deliver in this process (`hookrt run`, `hookrt serve`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct ThreadsArgs {
    /// Threads delivering side by side (each hook still sees its events one
    /// at a time, in order); 1: everything in plan order on one thread.
    /// `--workers` is its old name.
    #[arg(long, alias = "workers", default_value = "1", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: u16,
}

impl ThreadsArgs {
    /// The count, for [`hookrt::ServiceOptions::threads`].
    pub fn count(self) -> usize {
        usize::from(self.threads)
    }
}
