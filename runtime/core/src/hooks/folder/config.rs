//! Configuration: `hookrt.toml` in the agent folder (optional).
//!
//! ```toml
//! order = ["audit"]            # registered first, in this order; the rest by slug
//! [defaults]                   # applies to every hook
//! deadline_ms = 200
//! [hooks."observability/metrics"]
//! instance = "reuse"           # keep a warm instance between deliveries
//! reuse_limit = 10_000         # ...replaced by a fresh one after this many
//! fuel = 5_000_000
//! [hooks.policy]
//! metering = "epoch"           # no fuel counting; the deadline still binds
//! ```
//! Unknown keys, out-of-range values and slugs that name no hook are problems,
//! reported all at once with the fix (docs/configuration.md lists every key).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::event::scope::Scope;
use crate::hooks::folder::discovery::{self, DiscoveredHook, Discovery, SourceKind};
use crate::hooks::folder::settings::{
    HookSettings, MAX_ATTEMPTS, MAX_BACKOFF_MS, MAX_REUSE_LIMIT, RawSettings, apply,
};
use crate::hooks::folder::slug::Slug;
use crate::hooks::problem::{Problem, Problems};
use crate::sandbox::http::Entry;
use crate::sandbox::limits::{self, PYTHON_INSTANCES};
use crate::sandbox::redaction::Redactor;

/// The configuration file's name inside the agent folder.
pub const CONFIG_FILE: &str = "hookrt.toml";

/// The lock file's name inside the agent folder (`hooks/loaded/lock.rs`).
pub const LOCK_FILE: &str = "hookrt.lock";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// How hooks are loaded: `build` (sources compiled by cargo) or
    /// `prebuilt` (components only).
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    order: Vec<String>,
    #[serde(default)]
    defaults: RawSettings,
    #[serde(default)]
    hooks: BTreeMap<String, RawSettings>,
    #[serde(default)]
    redaction: RawRedaction,
    /// Primary hooks that observe every scope, without event data.
    #[serde(default)]
    aggregate: Vec<String>,
    /// What a decision of a subagent no hook folder serves gets.
    #[serde(default)]
    on_unscoped: OnUnscoped,
    /// Per-subagent `order` and `hooks` tables.
    #[serde(default)]
    subagents: BTreeMap<String, RawSubagent>,
    /// The loop governor of `turn.stopping`.
    #[serde(default)]
    governor: RawGovernor,
    /// Packs switched on, by name, with their settings.
    #[serde(default)]
    packs: BTreeMap<String, toml::Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGovernor {
    /// Most continues in a row per agent, session and scope.
    max_continues: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawSubagent {
    order: Vec<String>,
    hooks: BTreeMap<String, RawSettings>,
}

/// The `order` and per-hook tables of one scope.
#[derive(Debug, Clone, Default)]
struct ScopeConfig {
    /// Where these tables are, for messages: `[hooks.` or `[subagents."x".hooks.`.
    table: String,
    order: Vec<Slug>,
    hooks: BTreeMap<Slug, RawSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRedaction {
    /// Extra patterns: name = regex.
    #[serde(default)]
    patterns: BTreeMap<String, String>,
}

/// What a decision event (`actions.requested`, `file.edit.requested`) of a
/// subagent with no `subagents/<id>/hooks/` gets (`on_unscoped`): no hook
/// of its scope can decide it, so by default it is denied, never let
/// through unjudged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnUnscoped {
    /// Every requested call denied, a file edit failed, with the reason.
    #[default]
    Deny,
    /// Left to the agent: every call abstains, the edit is not handled.
    Abstain,
}

/// `[governor] max_continues` when `hookrt.toml` does not set it: the loop
/// governor's most continues of `turn.stopping` in a row.
pub(crate) const DEFAULT_MAX_CONTINUES: u32 = 5;

/// The largest `[governor] max_continues` accepted.
pub(crate) const MAX_CONTINUES_LIMIT: u32 = 100;

/// How an agent folder's hooks are loaded (`mode` in `hookrt.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Source hooks are compiled by cargo on the host (running their build code).
    #[default]
    Build,
    /// Components only: nothing is compiled, a source hook is a problem.
    Prebuilt,
}

/// A parsed and range-checked `hookrt.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it was read from (`None`: no file, all defaults).
    pub path: Option<PathBuf>,
    /// How the folder's hooks are loaded.
    pub mode: Mode,
    defaults: RawSettings,
    scopes: BTreeMap<Scope, ScopeConfig>,
    aggregate: Vec<Slug>,
    /// What an unserved subagent's decisions get.
    pub on_unscoped: OnUnscoped,
    /// The loop governor's most continues of `turn.stopping` in a row
    /// (`[governor] max_continues`).
    pub max_continues: u32,
    redactor: Redactor,
    /// `[redaction.patterns]` as written (name, regex).
    patterns: Vec<(String, String)>,
    /// The hook table of each pack switched on, by its slug (`packs/NAME`).
    packs: BTreeMap<Slug, RawSettings>,
}

impl Config {
    /// Reads `agent_dir/hookrt.toml`; a missing file means all defaults.
    pub fn load(agent_dir: &Path) -> Result<Config, Problems> {
        let path = agent_dir.join(CONFIG_FILE);
        let text = match super::plain::read(&path) {
            Ok(Some(t)) => t,
            Ok(None) => {
                return Config::parse("", &path).map(|c| Config { path: None, ..c });
            }
            Err(e) => {
                return Err(Problems(vec![Problem::config(
                    &path,
                    e.to_string(),
                    "make hookrt.toml a plain file of the agent folder",
                )]));
            }
        };
        Config::parse(&text, &path)
    }

    /// Parses configuration text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, Problems> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            Problems(vec![Problem::config(
                path,
                format!(
                    "invalid configuration: {}",
                    super::plain::toml_error(&e, text)
                ),
                "fix the key or value shown; docs/configuration.md lists every key",
            )])
        })?;
        let mut problems = Vec::new();
        check_ranges(path, "[defaults]", &raw.defaults, &mut problems);
        check_defaults_name_no_hook(path, &raw.defaults, &mut problems);
        let mut scopes = BTreeMap::new();
        scopes.insert(
            Scope::Primary,
            parse_scope(path, "hooks", raw.order, raw.hooks, &mut problems),
        );
        for (id, sub) in raw.subagents {
            let table = format!("subagents.\"{id}\".hooks");
            scopes.insert(
                Scope::Subagent(id),
                parse_scope(path, &table, sub.order, sub.hooks, &mut problems),
            );
        }
        let aggregate = aggregate_slugs(path, &raw.aggregate, &mut problems);
        let packs = super::packs::expand(path, raw.packs, &mut problems);
        check_pack_tables(path, &packs, &scopes, &mut problems);
        let extra: Vec<(String, String)> = raw.redaction.patterns.into_iter().collect();
        let patterns = extra.clone();
        let redactor = Redactor::with(&extra).unwrap_or_else(|e| {
            problems.push(Problem::config(
                path,
                format!("[redaction.patterns]: {e}"),
                "fix the regex (Rust `regex` syntax)",
            ));
            Redactor::default()
        });
        if raw
            .governor
            .max_continues
            .is_some_and(|n| n > MAX_CONTINUES_LIMIT)
        {
            problems.push(Problem::config(
                path,
                format!(
                    "[governor] max_continues is above {MAX_CONTINUES_LIMIT}: a hook could keep a turn going that long"
                ),
                format!("set max_continues between 0 (never continue) and {MAX_CONTINUES_LIMIT}"),
            ));
        }
        Problems(problems).into_result()?;
        Ok(Config {
            path: Some(path.to_path_buf()),
            mode: raw.mode,
            defaults: raw.defaults,
            scopes,
            aggregate,
            on_unscoped: raw.on_unscoped,
            max_continues: raw.governor.max_continues.unwrap_or(DEFAULT_MAX_CONTINUES),
            redactor,
            patterns,
            packs,
        })
    }

    /// The agent folder's hooks: its own ([`discovery::discover`]) and those
    /// of the packs it switches on. A folder of packs needs no `hooks/`
    /// folder (`hookrt init` writes none): without one it has no own hooks.
    pub(crate) fn discover(&self, agent_dir: &Path) -> Result<Discovery, Problems> {
        let packs_only = !self.packs.is_empty()
            && agent_dir.is_dir()
            && !agent_dir.join(discovery::HOOKS_DIR).exists();
        if packs_only {
            return self.with_packs(Discovery::default());
        }
        self.with_packs(discovery::discover(agent_dir)?)
    }

    /// `discovery` with the hooks of the packs switched on (`packs/NAME`),
    /// in slug order; a hook of the folder's own in `hooks/packs/` is refused.
    fn with_packs(&self, mut discovery: Discovery) -> Result<Discovery, Problems> {
        let reserved = discovery.hooks.iter().filter_map(super::packs::reserved);
        Problems(reserved.collect()).into_result()?;
        let path = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(CONFIG_FILE));
        discovery
            .hooks
            .extend(super::packs::hooks(&path, self.packs.keys()));
        discovery
            .hooks
            .sort_by(|a, b| (&a.scope, &a.slug).cmp(&(&b.scope, &b.slug)));
        Ok(discovery)
    }

    /// Problems from slugs the configuration names that discovery did not find.
    pub(crate) fn check_against(&self, discovery: &Discovery) -> Vec<Problem> {
        let path = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(CONFIG_FILE));
        let mut problems = Vec::new();
        for (scope, sc) in &self.scopes {
            let known: Vec<&str> = discovery
                .hooks
                .iter()
                .filter(|h| &h.scope == scope)
                .map(|h| h.slug.as_str())
                .collect();
            let unknown = |what: String, slug: &Slug| {
                let hint = known
                    .iter()
                    .map(|k| (strsim::levenshtein(k, slug.as_str()), *k))
                    .filter(|(d, _)| *d <= 3)
                    .min_by_key(|(d, _)| *d)
                    .map(|(_, k)| format!(" (did you mean `{k}`?)"))
                    .unwrap_or_default();
                Problem::config(
                    &path,
                    format!("{what} names `{slug}`, but no hook has that slug{hint}"),
                    "fix the slug or remove the entry",
                )
            };
            let order_name = if *scope == Scope::Primary {
                "`order`".to_owned()
            } else {
                format!("`{}` order", sc.table.trim_end_matches(".hooks"))
            };
            problems.extend(
                sc.order
                    .iter()
                    .filter(|s| !known.contains(&s.as_str()))
                    .map(|s| unknown(order_name.clone(), s)),
            );
            problems.extend(
                sc.hooks
                    .keys()
                    .filter(|s| !known.contains(&s.as_str()))
                    .map(|s| unknown(format!("[{}.\"{s}\"]", sc.table), s)),
            );
            if *scope == Scope::Primary {
                problems.extend(
                    self.aggregate
                        .iter()
                        .filter(|s| !known.contains(&s.as_str()))
                        .map(|s| unknown("`aggregate`".into(), s)),
                );
            }
        }
        problems
    }

    /// Whether the primary hook `slug` is an aggregate observer.
    pub(crate) fn is_aggregate(&self, slug: &Slug) -> bool {
        self.aggregate.contains(slug)
    }

    /// The redaction patterns in force (built-in plus `[redaction.patterns]`).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Everything `hookrt.toml` makes a hook run with, as one JSON text: its
    /// settings (limits, grants, `http_allow`, `config`, `on_failure`,
    /// retries, `critical`, instance policy), whether it is an aggregate
    /// observer, the folder's mode and its redaction patterns. What
    /// `hookrt.lock` pins (`hooks/loaded/lock.rs`).
    pub(crate) fn effective(&self, hook: &DiscoveredHook) -> String {
        let (scope, slug) = (&hook.scope, &hook.slug);
        let aggregate =
            *scope == Scope::Primary && self.is_aggregate(slug) || *scope == Scope::Aggregate;
        serde_json::json!({
            "settings": self.settings_for(hook),
            "aggregate": aggregate,
            "mode": self.mode,
            "on_unscoped": self.on_unscoped,
            "redaction_patterns": self.patterns,
        })
        .to_string()
    }

    /// The configured order of a scope: these slugs register first, in this order.
    pub(crate) fn order(&self, scope: &Scope) -> &[Slug] {
        let scope = if *scope == Scope::Aggregate {
            &Scope::Primary
        } else {
            scope
        };
        self.scopes.get(scope).map_or(&[], |s| s.order.as_slice())
    }

    /// The settings in force for a hook: its table over `[defaults]` over
    /// built-in defaults (a Python hook's `instances` default is
    /// [`PYTHON_INSTANCES`]: room for its interpreter's 14 and more). Aggregate
    /// observers are primary hooks.
    pub fn settings_for(&self, hook: &DiscoveredHook) -> HookSettings {
        let (scope, slug) = (&hook.scope, &hook.slug);
        let scope = if *scope == Scope::Aggregate {
            &Scope::Primary
        } else {
            scope
        };
        let mut s = HookSettings::default();
        if hook.kind == SourceKind::Python {
            s.limits.instances = PYTHON_INSTANCES;
        }
        apply(&mut s, &self.defaults);
        if let Some(pack) = self
            .packs
            .get(slug)
            .filter(|_| hook.kind == SourceKind::Pack)
        {
            apply(&mut s, pack);
        }
        if let Some(own) = self.scopes.get(scope).and_then(|sc| sc.hooks.get(slug)) {
            apply(&mut s, own);
        }
        s
    }
}

fn parse_scope(
    path: &Path,
    table: &str,
    order_in: Vec<String>,
    hooks_in: BTreeMap<String, RawSettings>,
    problems: &mut Vec<Problem>,
) -> ScopeConfig {
    let mut order = Vec::new();
    for s in &order_in {
        match Slug::parse(s) {
            Ok(slug) if order.contains(&slug) => problems.push(Problem::config(
                path,
                format!("`order` lists `{s}` twice"),
                "list each slug once",
            )),
            Ok(slug) => order.push(slug),
            Err(e) => problems.push(Problem::config(
                path,
                format!("`order` has invalid slug `{s}`: {e}"),
                "use a hook's slug",
            )),
        }
    }
    let mut hooks = BTreeMap::new();
    for (s, settings) in hooks_in {
        match Slug::parse(&s) {
            Ok(slug) => {
                check_ranges(path, &format!("[{table}.\"{s}\"]"), &settings, problems);
                hooks.insert(slug, settings);
            }
            Err(e) => problems.push(Problem::config(
                path,
                format!("[{table}.\"{s}\"] is not a valid slug: {e}"),
                "use a hook's slug",
            )),
        }
    }
    ScopeConfig {
        table: table.to_owned(),
        order,
        hooks,
    }
}

/// `[hooks."packs/NAME"]` tunes a pack's hook, but its `config` and grants
/// are the pack's: they come from `[packs.NAME]`.
fn check_pack_tables(
    path: &Path,
    packs: &BTreeMap<Slug, RawSettings>,
    scopes: &BTreeMap<Scope, ScopeConfig>,
    problems: &mut Vec<Problem>,
) {
    let own = scopes
        .get(&Scope::Primary)
        .into_iter()
        .flat_map(|s| &s.hooks);
    for (slug, raw) in own.filter(|(slug, _)| packs.contains_key(*slug)) {
        let set = [
            ("config", raw.config.is_some()),
            ("grants", raw.grants.is_some()),
            ("http_allow", raw.http_allow.is_some()),
        ];
        for (key, _) in set.into_iter().filter(|(_, set)| *set) {
            let name = slug.as_str().trim_start_matches("packs/");
            problems.push(Problem::config(
                path,
                format!(
                    "[hooks.\"{slug}\"] sets `{key}`, which the pack derives from its settings"
                ),
                format!("set the pack's settings under [packs.{name}] (docs/packs/{name}.md)"),
            ));
        }
    }
}

/// `[defaults]` names no hook: `name`, `description` and `config` belong to one.
fn check_defaults_name_no_hook(path: &Path, defaults: &RawSettings, problems: &mut Vec<Problem>) {
    let set = [
        ("name", defaults.name.is_some()),
        ("description", defaults.description.is_some()),
        ("config", defaults.config.is_some()),
    ];
    for (key, _) in set.into_iter().filter(|(_, set)| *set) {
        problems.push(Problem::config(
            path,
            format!("[defaults] sets `{key}`, which belongs to one hook"),
            format!("move `{key}` to a [hooks.\"<slug>\"] table"),
        ));
    }
}

/// The slugs `aggregate` names; an invalid one is a problem.
fn aggregate_slugs(path: &Path, names: &[String], problems: &mut Vec<Problem>) -> Vec<Slug> {
    let mut aggregate = Vec::new();
    for a in names {
        match Slug::parse(a) {
            Ok(slug) => aggregate.push(slug),
            Err(e) => problems.push(Problem::config(
                path,
                format!("`aggregate` has invalid slug `{a}`: {e}"),
                "name a primary hook's slug",
            )),
        }
    }
    aggregate
}

fn check_ranges(path: &Path, table: &str, raw: &RawSettings, problems: &mut Vec<Problem>) {
    for wrong in raw.grants.iter().flat_map(|g| g.read(table).1) {
        problems.push(Problem::config(path, wrong.message, wrong.fix));
    }
    let grants_http = raw
        .grants
        .as_ref()
        .is_some_and(|g| g.names().contains("http"));
    match (&raw.http_allow, grants_http) {
        (None, true) => problems.push(Problem::config(
            path,
            format!("{table} grants `http` but has no `http_allow` list"),
            "name the hosts it may call, e.g. http_allow = [\"api.example.com\"]",
        )),
        (Some(_), false) => problems.push(Problem::config(
            path,
            format!("{table} has `http_allow` without the `http` grant"),
            "add \"http\" to `grants`, or remove `http_allow`",
        )),
        _ => {}
    }
    for host in raw.http_allow.iter().flatten() {
        if let Err(why) = Entry::parse(host) {
            problems.push(Problem::config(path, format!("{table} http_allow entry `{host}` {why}"), "write entries like `https://api.example.com`, `api.example.com` (https on 443) or `http://127.0.0.1:8080` (one scheme and port each; no path or wildcard)"));
        }
    }
    let checks: [(&str, Option<u64>, u64); 12] = [
        ("fuel", raw.fuel, limits::MAX_FUEL),
        (
            "deadline_ms",
            raw.deadline_ms,
            limits::MAX_DEADLINE.as_millis() as u64,
        ),
        ("memory_mib", raw.memory_mib, limits::MAX_MEMORY_BYTES >> 20),
        ("table_elements", raw.table_elements, 10_000_000),
        ("instances", raw.instances, 1_000),
        ("tables", raw.tables, 1_000),
        ("memories", raw.memories, 100),
        ("output_bytes", raw.output_bytes, limits::MAX_OUTPUT_BYTES),
        (
            "log_bytes_per_minute",
            raw.log_bytes_per_minute,
            limits::MAX_OUTPUT_BYTES * 60,
        ),
        ("max_attempts", raw.max_attempts, MAX_ATTEMPTS),
        ("backoff_ms", raw.backoff_ms, MAX_BACKOFF_MS),
        ("reuse_limit", raw.reuse_limit, MAX_REUSE_LIMIT),
    ];
    for (key, value, max) in checks {
        match value {
            Some(0) => problems.push(Problem::config(
                path,
                format!("{table} {key} = 0"),
                format!("set {key} between 1 and {max}"),
            )),
            Some(v) if v > max => problems.push(Problem::config(
                path,
                format!("{table} {key} = {v} is above the maximum {max}"),
                format!("set {key} between 1 and {max}; limits cannot be switched off"),
            )),
            _ => {}
        }
    }
}
