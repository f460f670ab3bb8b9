//! The agent folder as its author wrote it: slugs (`slug`), the hooks found
//! under `hooks/` (`discovery`), the settings one hook can have (`settings`)
//! and `hookrt.toml`, which sets them (`config`).

pub(crate) mod config;
pub(crate) mod discovery;
pub(crate) mod settings;
pub(crate) mod slug;
