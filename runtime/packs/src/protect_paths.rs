//! `protect-paths`: globs the agent may not read, write or delete, in
//! every agent's file and shell tools (docs/packs/protect-paths.md).

use hookrt_pack_rules::protect_paths::{Checker, Settings};

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "protect-paths",
    summary: "Refuses reads, writes and deletes of the paths its globs name (by default .env files, keys and credentials, and writes into .git), in file tools and shell commands",
    required: "",
    example: r#"# read = [".env", ".env.*", "*.pem", "*.key", "~/.ssh/**", "~/.aws/**"]  # may not be read (nor written)
# write = [".git/**", "deploy/**"]  # may not be written, edited, moved onto or deleted
# delete = ["migrations/**"]       # may not be deleted
# allow = [".env.example"]         # let through whatever the lists say
# answer = "deny"                  # or "ask"
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    Checker::new(typed)?;
    Ok(hook_table(PACK.name, PACK.summary, config))
}
