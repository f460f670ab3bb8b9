//! The agent folder as its author wrote it: slugs (`slug`), the hooks found
//! under `hooks/` (`discovery`), its own files read as plain files (`plain`),
//! the settings one hook can have (`settings`), `hookrt.toml`, which sets
//! them (`config`), and the packs it switches on (`packs`).

pub(crate) mod config;
pub(crate) mod discovery;
pub(crate) mod packs;
pub(crate) mod plain;
pub(crate) mod settings;
pub(crate) mod slug;
