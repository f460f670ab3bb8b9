//! Discovery: finding the hooks of an agent folder and naming each by its slug.
//!
//! `hooks/**` holds five kinds of hook source: single-file Rust hooks (`*.rs`),
//! crate hooks (a folder with a `Cargo.toml`, not descended into), TypeScript
//! or JavaScript hooks (`*.ts`, `*.js`, see `hooks/build/typescript.rs`),
//! Python hooks (`*.py`, or a package: a folder with `__init__.py`, not
//! descended into; see `hooks/build/python.rs`) and prebuilt components
//! (`*.wasm`). Everything that could make a slug ambiguous or let a
//! hook reach outside the folder is rejected with the path and the fix.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::event::scope::Scope;
use crate::hooks::folder::slug::{MAX_DEPTH, Slug, SlugError};
use crate::hooks::problem::{Problem, Problems};

/// The folder under the agent folder that holds hooks.
pub(crate) const HOOKS_DIR: &str = "hooks";
/// Channel adapters belong to the agent server; a `channels/` folder is refused.
pub(crate) const CHANNELS_DIR: &str = "channels";

/// What kind of source a hook was discovered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A single `.rs` file built with the guest SDK.
    SingleFile,
    /// A folder with its own `Cargo.toml`.
    Crate,
    /// A prebuilt `.wasm` component.
    Component,
    /// A single `.ts` or `.js` file built with the TS SDK and componentize-js.
    #[serde(rename = "typescript")]
    TypeScript,
    /// A `.py` file, or a package folder with `__init__.py`, built with the
    /// Python SDK and componentize-py.
    Python,
    /// A rule pack shipped with hookrt, switched on by `[packs.NAME]` in
    /// `hookrt.toml` (its source path is that file).
    Pack,
}

/// A hook found on disk, not yet built or loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredHook {
    /// The hook's slug.
    pub slug: Slug,
    /// What the source is.
    pub kind: SourceKind,
    /// The source file or crate folder.
    pub path: PathBuf,
    /// Whose events it receives (`Primary` for `hooks/`, `Subagent(id)` for
    /// `subagents/<id>/hooks/`; `hookrt.toml` can make a primary hook `Aggregate`).
    pub scope: Scope,
}

/// The outcome of a successful discovery.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Hooks sorted by scope, then slug.
    pub hooks: Vec<DiscoveredHook>,
    /// Files under `hooks/` that are not hooks (README.md, notes...), left
    /// alone; loading says so for each.
    pub ignored: Vec<PathBuf>,
}

/// Extensions of code hookrt cannot run, refused under `hooks/` instead of
/// skipped (other files, such as a README, are left alone and reported).
pub(crate) const FOREIGN_CODE: [&str; 14] = [
    "mts", "cts", "mjs", "cjs", "tsx", "jsx", "pyw", "go", "sh", "rb", "java", "kt", "wat", "wit",
];

/// The most hooks one agent folder may hold, every scope together. Each hook
/// is compiled and kept in memory, so a folder with 10,000 planted hook files
/// is refused at discovery instead of being built.
pub const MAX_HOOKS: usize = 1024;

/// The most entries (files and folders) discovery reads under one hooks
/// folder before it stops with a problem: a planted tree of a million files
/// costs a bounded walk, not a walk of a million.
pub const MAX_ENTRIES: usize = 100_000;

/// The folder under the agent folder that holds subagents' hooks.
pub(crate) const SUBAGENTS_DIR: &str = "subagents";

/// The agent folder a hook's source lies in: the folder above its `hooks/`.
pub(crate) fn agent_dir_of(source: &Path) -> PathBuf {
    source
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "hooks"))
        .and_then(|hooks| hooks.parent())
        .and_then(|p| {
            // `subagents/<id>/hooks`: the agent folder is above `subagents`.
            if p.parent()
                .and_then(|s| s.file_name())
                .is_some_and(|n| n == "subagents")
            {
                p.parent().and_then(Path::parent)
            } else {
                Some(p)
            }
        })
        .unwrap_or(source)
        .to_path_buf()
}

/// Finds every hook of the agent folder: `hooks/**` (primary scope) and
/// `subagents/<id>/hooks/**` (subagent `id`), or every problem that prevents it.
pub fn discover(agent_dir: &Path) -> Result<Discovery, Problems> {
    let mut problems = Vec::new();
    let root = hooks_root(agent_dir, &mut problems)?;
    let mut found: BTreeMap<(Scope, Slug), DiscoveredHook> = BTreeMap::new();
    let mut ignored = Vec::new();
    walk_scope(
        &root,
        &Scope::Primary,
        &mut found,
        &mut ignored,
        &mut problems,
    );
    for (id, hooks) in subagent_roots(agent_dir, &mut problems) {
        walk_scope(
            &hooks,
            &Scope::Subagent(id),
            &mut found,
            &mut ignored,
            &mut problems,
        );
    }
    if found.len() > MAX_HOOKS {
        problems.push(too_many_hooks_problem(agent_dir));
    }
    check_ids(&found, &mut problems);
    if problems.is_empty() {
        Ok(Discovery {
            hooks: found.into_values().collect(),
            ignored,
        })
    } else {
        Err(Problems(problems))
    }
}

/// The agent folder's `hooks/`, a real folder; without one, every problem
/// found so far.
fn hooks_root(agent_dir: &Path, problems: &mut Vec<Problem>) -> Result<PathBuf, Problems> {
    if !agent_dir.is_dir() {
        let what = if agent_dir.exists() {
            "is not a folder"
        } else {
            "does not exist"
        };
        return Err(Problems(vec![Problem::agent_folder(
            agent_dir,
            format!("the agent folder {what}"),
            "pass the folder that holds hooks/ (and hookrt.toml, if any)",
        )]));
    }
    let channels = agent_dir.join(CHANNELS_DIR);
    if channels.exists() {
        problems.push(channels_problem(&channels));
    }
    let root = agent_dir.join(HOOKS_DIR);
    if is_symlink(&root) {
        problems.push(linked_folder_problem(&root));
        return Err(Problems(std::mem::take(problems)));
    }
    if !root.is_dir() {
        problems.push(Problem::layout(
            &root,
            "no hooks folder",
            format!(
                "create `{}` and put hooks in it (e.g. hooks/audit.rs)",
                root.display()
            ),
        ));
        return Err(Problems(std::mem::take(problems)));
    }
    Ok(root)
}

/// Each subagent's id and `hooks/` folder under `subagents/`, by id; an
/// unsafe id, a linked folder or a `channels/` folder is a problem.
fn subagent_roots(agent_dir: &Path, problems: &mut Vec<Problem>) -> Vec<(String, PathBuf)> {
    let subagents = agent_dir.join(SUBAGENTS_DIR);
    if is_symlink(&subagents) {
        problems.push(linked_folder_problem(&subagents));
        return Vec::new();
    }
    if !subagents.is_dir() {
        return Vec::new();
    }
    let mut entries: Vec<_> = match fs::read_dir(&subagents) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .collect(),
        Err(e) => {
            problems.push(Problem::layout(
                &subagents,
                format!("cannot read: {e}"),
                "check permissions",
            ));
            Vec::new()
        }
    };
    entries.sort_by_key(|e| e.file_name());
    let mut roots = Vec::new();
    for entry in entries {
        let dir = entry.path();
        let id = entry.file_name().to_string_lossy().into_owned();
        let parsed = Slug::parse(&id).and_then(|s| {
            if s.as_str().contains('/') {
                Err(SlugError::TooDeep)
            } else {
                Ok(s)
            }
        });
        if let Err(e) = parsed {
            problems.push(Problem::layout(
                &dir,
                format!("unsafe subagent id `{id}`: {e}"),
                "rename the folder: lowercase letters, digits, `_` or `-`",
            ));
            continue;
        }
        if is_symlink(&dir) {
            problems.push(linked_folder_problem(&dir));
            continue;
        }
        if dir.join(CHANNELS_DIR).exists() {
            problems.push(channels_problem(&dir.join(CHANNELS_DIR)));
        }
        let hooks = dir.join(HOOKS_DIR);
        if is_symlink(&hooks) {
            problems.push(linked_folder_problem(&hooks));
        } else if hooks.is_dir() {
            roots.push((id, hooks));
        }
    }
    roots
}

/// Walks one scope's hooks folder.
fn walk_scope(
    root: &Path,
    scope: &Scope,
    found: &mut BTreeMap<(Scope, Slug), DiscoveredHook>,
    ignored: &mut Vec<PathBuf>,
    problems: &mut Vec<Problem>,
) {
    let canonical_root = match root.canonicalize() {
        Ok(p) => p,
        Err(e) => {
            problems.push(Problem::layout(
                root,
                format!("cannot resolve folder: {e}"),
                "check permissions",
            ));
            return;
        }
    };
    let mut walk = WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    let mut entries = 0usize;
    while let Some(entry) = walk.next() {
        entries += 1;
        if entries > MAX_ENTRIES {
            problems.push(Problem::layout(root,
                format!("holds more than {MAX_ENTRIES} files and folders; discovery stopped there"),
                "keep only hooks under hooks/ (build outputs, dependencies and data belong elsewhere)",
            ));
            return;
        }
        if found.len() > MAX_HOOKS {
            return; // discover() reports it once
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push(unreadable(root, &e));
                continue;
            }
        };
        let path = entry.path().to_path_buf();
        let mut is_dir = entry.file_type().is_dir();
        if entry.file_type().is_symlink() {
            if !linked_file(&path, &canonical_root, problems) {
                continue;
            }
            is_dir = false;
        }
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let Some(rel_str) = rel.to_str().map(|s| s.replace('\\', "/")) else {
            problems.push(not_utf8(&path));
            if is_dir {
                walk.skip_current_dir();
            }
            continue;
        };
        let name = entry.file_name().to_string_lossy();

        if is_dir {
            match folder(&path, &name, &rel_str, entry.depth(), problems) {
                Folder::Enter => {}
                Folder::Skip => walk.skip_current_dir(),
                Folder::Hook(kind) => {
                    walk.skip_current_dir();
                    add(found, problems, scope, &rel_str, kind, path);
                }
            }
            continue;
        }
        let Some(kind) = kind_of(&path, problems, ignored) else {
            continue;
        };
        if !entry.file_type().is_file() && !entry.file_type().is_symlink() {
            // A FIFO would block the build's read until something writes to it.
            problems.push(Problem::layout(
                &path,
                "is a FIFO, socket or device, not a regular file",
                "replace it with the hook's source file or component",
            ));
            continue;
        }
        let stem = rel_str.rsplit_once('.').map_or(&*rel_str, |(s, _)| s);
        add(found, problems, scope, stem, kind, path);
    }
}

/// A path whose name is not UTF-8.
fn not_utf8(path: &Path) -> Problem {
    Problem::layout(
        path,
        "path is not valid UTF-8",
        "rename it using lowercase ASCII letters, digits, `_` or `-`",
    )
}

/// An entry the walk could not read.
fn unreadable(root: &Path, e: &walkdir::Error) -> Problem {
    let path = e
        .path()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    Problem::layout(path, format!("cannot read: {e}"), "check permissions")
}

/// Whether a symlink met in the walk is taken: a link to a file inside the
/// hooks folder is; a broken link, one that leaves the folder and a linked
/// folder are problems.
fn linked_file(path: &Path, canonical_root: &Path, problems: &mut Vec<Problem>) -> bool {
    match fs::canonicalize(path) {
        Err(e) => {
            problems.push(Problem::layout(
                path,
                format!("broken symlink: {e}"),
                "remove the link or fix its target",
            ));
            false
        }
        Ok(target) if !target.starts_with(canonical_root) => {
            problems.push(Problem::layout(
                path,
                format!(
                    "symlink leaves the hooks folder (points to {})",
                    target.display()
                ),
                "copy the hook into hooks/ instead of linking to it",
            ));
            false
        }
        Ok(target) if target.is_dir() => {
            problems.push(Problem::layout(
                path,
                "symlinked folders are not followed",
                "move the folder into hooks/ or link the individual hook files",
            ));
            false
        }
        Ok(_) => true,
    }
}

/// What the walk does with a folder.
enum Folder {
    /// Goes into it.
    Enter,
    /// Leaves it out (a problem said why).
    Skip,
    /// A crate hook or a Python package: added whole, not gone into.
    Hook(SourceKind),
}

/// Not into `channels/`, a crate hook or a Python package (built from its
/// folder, whose links are checked here), a hidden folder, or one nested
/// deeper than a slug may be.
fn folder(path: &Path, name: &str, rel: &str, depth: usize, problems: &mut Vec<Problem>) -> Folder {
    if name == CHANNELS_DIR {
        problems.push(channels_problem(path));
    } else if path.join("Cargo.toml").is_file() {
        check_crate_links(path, problems);
        return Folder::Hook(SourceKind::Crate);
    } else if path.join("__init__.py").is_file() {
        check_crate_links(path, problems);
        return Folder::Hook(SourceKind::Python);
    } else if name.starts_with('.') {
        problems.push(unsafe_slug_problem(path, rel, "hidden folder"));
    } else if depth > MAX_DEPTH {
        // Every file inside would nest deeper than a slug may: say so
        // once instead of walking a planted deep tree.
        problems.push(Problem::layout(path,
            format!("folder nests deeper than {MAX_DEPTH} folders: no hook can be inside it, so it was not read"),
            format!("keep hooks at most {MAX_DEPTH} folders deep under hooks/"),
        ));
    } else {
        return Folder::Enter;
    }
    Folder::Skip
}

/// The kind of hook a file is, by its extension; `None` for a file that is
/// no hook: a problem when it is code hookrt does not run, else ignored.
fn kind_of(
    path: &Path,
    problems: &mut Vec<Problem>,
    ignored: &mut Vec<PathBuf>,
) -> Option<SourceKind> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("rs") => Some(SourceKind::SingleFile),
        Some("wasm") => Some(SourceKind::Component),
        Some("ts" | "js") => Some(SourceKind::TypeScript),
        Some("py") => Some(SourceKind::Python),
        Some(ext) if FOREIGN_CODE.contains(&ext) => {
            // Someone meant this to run (an Eve `audit.ts`, a script):
            // silently skipping it would drop a hook without a word.
            problems.push(Problem::layout(path,
                format!("`.{ext}` is not a kind of hook hookrt runs: hooks are WebAssembly components"),
                "write the hook in Rust (a .rs file or a crate with hookrt-sdk), TypeScript (one .ts or .js file: rename .mts/.cts/.mjs/.cjs; no JSX) or Python (one .py file, or a folder with __init__.py), or build it into a component for the define-hook world and put the .wasm here; move other files out of hooks/",
            ));
            None
        }
        _ => {
            ignored.push(path.to_path_buf());
            None
        }
    }
}

fn add(
    found: &mut BTreeMap<(Scope, Slug), DiscoveredHook>,
    problems: &mut Vec<Problem>,
    scope: &Scope,
    slug_text: &str,
    kind: SourceKind,
    path: PathBuf,
) {
    let slug = match Slug::parse(slug_text) {
        Ok(s) => s,
        Err(e) => {
            problems.push(unsafe_slug_problem(&path, slug_text, &e.to_string()));
            return;
        }
    };
    let key = (scope.clone(), slug.clone());
    if let Some(first) = found.get(&key) {
        problems.push(Problem::layout(
            &path,
            format!(
                "duplicate slug `{slug}`: {} has the same slug",
                first.path.display()
            ),
            "keep only one of them (a hook's slug is its path under hooks/ without the extension)",
        ));
        return;
    }
    found.insert(
        key,
        DiscoveredHook {
            slug,
            kind,
            path,
            scope: scope.clone(),
        },
    );
}

/// Two hooks of different scopes can spell the same id (a primary
/// `hooks/subagents/researcher/policy.rs` and the subagent's own
/// `subagents/researcher/hooks/policy.rs`); lookups by id would take the first,
/// so the second would silently shadow or be shadowed. Refused, both named.
fn check_ids(found: &BTreeMap<(Scope, Slug), DiscoveredHook>, problems: &mut Vec<Problem>) {
    let mut ids: BTreeMap<String, &DiscoveredHook> = BTreeMap::new();
    for hook in found.values() {
        let id = hook.scope.hook_id(hook.slug.as_str());
        if let Some(first) = ids.get(&id) {
            problems.push(Problem::layout(&hook.path,
                format!(
                    "hook id `{id}` is also the id of {}: lookups by id could not tell them apart",
                    first.path.display()
                ),
                "rename or move one of them (a primary hook must not live under hooks/subagents/<id>/ \
                 when that subagent has a hook of the same name)",
            ));
        } else {
            ids.insert(id, hook);
        }
    }
}

/// cargo follows symlinks inside a crate hook's folder, so a link to a host
/// file (`src/secret.rs -> ~/.ssh/id_ed25519`) would be compiled into the
/// component. Links that stay inside the crate folder are fine.
fn check_crate_links(dir: &Path, problems: &mut Vec<Problem>) {
    let Ok(root) = dir.canonicalize() else {
        return; // walk_scope already reported an unreadable folder
    };
    let walk = WalkDir::new(dir)
        .min_depth(1)
        .follow_links(false)
        .into_iter()
        // `target/` is cargo's output, never an input (hookrt builds elsewhere).
        .filter_entry(|e| !(e.depth() == 1 && e.file_name() == "target"));
    for entry in walk.filter_map(Result::ok) {
        if !entry.path_is_symlink() {
            continue;
        }
        let inside = fs::canonicalize(entry.path()).is_ok_and(|t| t.starts_with(&root));
        if !inside {
            problems.push(Problem::layout(
                entry.path(),
                "symlink leaves the crate hook's folder (or is broken)",
                "copy the file into the crate instead of linking to it",
            ));
        }
    }
}

fn too_many_hooks_problem(path: &Path) -> Problem {
    Problem::layout(
        path,
        format!("more than {MAX_HOOKS} hooks; discovery stopped there and nothing was built"),
        format!(
            "an agent folder may hold at most {MAX_HOOKS} hooks: remove the ones it does not need"
        ),
    )
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// A linked `hooks/` or `subagents/<id>` folder would pull hooks (and, for
/// crate hooks, build code) from anywhere on the host.
fn linked_folder_problem(path: &Path) -> Problem {
    Problem::layout(
        path,
        "is a symlink: hook folders must be real folders inside the agent folder",
        "replace the link with a folder holding copies of the hooks",
    )
}

fn unsafe_slug_problem(path: &Path, slug: &str, why: &str) -> Problem {
    Problem::layout(
        path,
        // Escaped: a name may hold a newline or an invisible character.
        format!("unsafe slug `{}`: {why}", slug.escape_debug()),
        "rename it: each path segment under hooks/ uses only lowercase letters, digits, `_` or `-`, \
         does not start with `.`, and is at most 64 characters",
    )
}

fn channels_problem(path: &Path) -> Problem {
    Problem::layout(
        path,
        "a `channels/` folder is not supported: channel adapters belong to the agent server, not to hooks",
        "move channel adapters to the agent server and remove this folder; hooks observe events and \
         get a transport descriptor, never a channel",
    )
}
