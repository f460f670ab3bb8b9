//! The `exec` table: which programs a hook may run, with which argument
//! templates and placeholder types, and the caps of each run. Read and
//! checked from `[hooks."<slug>".grants.exec]` when `hookrt.toml` is loaded;
//! the programs are resolved to absolute paths (and their digests) when the
//! hook is (`resolve.rs`).

use std::collections::BTreeMap;

use crate::sandbox::grant::setting;
use serde::Deserialize;

/// Default wall-clock limit of one run: a formatter on one file.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Most a table may set: a run holds a delivery's thread.
pub(crate) const MAX_TIMEOUT_MS: u64 = 120_000;
/// Default cap of each of stdout and stderr returned to the hook.
pub(crate) const DEFAULT_OUTPUT_BYTES: u64 = 64 << 10;
/// Most a table may set: what a run returns is copied into the guest.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 16 << 20;
/// Default cap of processes a run may have at once (the program and what it
/// starts), against fork bombs.
pub(crate) const DEFAULT_PROCESSES: u64 = 32;
/// Most a table may set.
pub(crate) const MAX_PROCESSES: u64 = 1_024;
/// Default runs of one hook at once.
pub(crate) const DEFAULT_CONCURRENCY: u64 = 1;
/// Most a table may set.
pub(crate) const MAX_CONCURRENCY: u64 = 16;
/// Most bytes of a `text` placeholder's value.
pub(crate) const MAX_TEXT_BYTES: usize = 1_024;

/// The `exec` table of one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// The programs it may run, by the name the hook calls them.
    pub programs: BTreeMap<String, Program>,
    /// Wall-clock limit of one run; the whole process group is killed at it.
    pub timeout_ms: u64,
    /// Cap of each of stdout and stderr; a run writing more is killed.
    pub output_bytes: u64,
    /// Most processes a run may have at once.
    pub processes: u64,
    /// Most runs of this hook at once.
    pub concurrency: u64,
    /// Host environment variables passed on (every other one is absent).
    pub env: Vec<String>,
    /// Folders the program may read besides the project and the system's
    /// (a toolchain outside `/usr`).
    pub read: Vec<String>,
    /// Folders inside the project (relative to it) the program may create,
    /// change and remove files in, e.g. `.git` for a checkpoint commit.
    /// Left out of the serialized table when empty: a lock written before
    /// the key existed pins the same table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Whether each run gets a private temporary folder (`TMPDIR`), writable
    /// and removed after the run: for tools that stage files there (vitest).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tmp: bool,
    /// Whether the program may use TCP (refused by Landlock otherwise).
    pub network: bool,
    /// Whether it may run where the operating system's sandbox is missing.
    pub unconfined: bool,
}

/// One program of the table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Program {
    /// An absolute path, or a name looked up on hookrt's `PATH` at load.
    pub path: String,
    /// The argument template: literals and placeholders, one argument each.
    pub args: Vec<Arg>,
    /// The type of each placeholder the template names.
    pub placeholders: BTreeMap<String, Placeholder>,
}

/// One argument of a template.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    /// Passed as written.
    Literal(String),
    /// Filled by the hook (`{name}` in the template).
    Placeholder(String),
}

/// What a placeholder's value may be.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placeholder {
    /// An existing file or folder inside the project (relative to it; no
    /// `..`, no symlink out), read-only to the program.
    Path,
    /// As `Path`, and the program may write that one file.
    WritablePath,
    /// One word of a fixed set.
    Word(Vec<String>),
    /// Text of at most [`MAX_TEXT_BYTES`], no control character, not
    /// starting with `-`.
    Text,
}

impl Placeholder {
    /// Its type as the table writes it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Placeholder::Path => "path".to_owned(),
            Placeholder::WritablePath => "writable-path".to_owned(),
            Placeholder::Word(words) => format!("one of {}", words.join("|")),
            Placeholder::Text => "text".to_owned(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    programs: BTreeMap<String, RawProgram>,
    timeout_ms: Option<u64>,
    output_bytes: Option<u64>,
    processes: Option<u64>,
    concurrency: Option<u64>,
    #[serde(default)]
    env: Vec<String>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    tmp: bool,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    unconfined: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProgram {
    path: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    placeholders: BTreeMap<String, toml::Value>,
}

/// Reads the `exec` table; the problems say what is wrong.
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Table, Vec<String>> {
    let Some(value) = value else {
        return Err(vec![
            "needs its table naming the programs: [hooks.\"<slug>\".grants.exec.programs.<name>]"
                .to_owned(),
        ]);
    };
    let raw: RawTable = setting::raw(value)?;
    let mut problems = Vec::new();
    let mut bounded = |key: &str, v: Option<u64>, default: u64, max: u64| {
        setting::bounded(&mut problems, key, v, default, max)
    };
    let timeout_ms = bounded(
        "timeout_ms",
        raw.timeout_ms,
        DEFAULT_TIMEOUT_MS,
        MAX_TIMEOUT_MS,
    );
    let output_bytes = bounded(
        "output_bytes",
        raw.output_bytes,
        DEFAULT_OUTPUT_BYTES,
        MAX_OUTPUT_BYTES,
    );
    let processes = bounded("processes", raw.processes, DEFAULT_PROCESSES, MAX_PROCESSES);
    let concurrency = bounded(
        "concurrency",
        raw.concurrency,
        DEFAULT_CONCURRENCY,
        MAX_CONCURRENCY,
    );
    if raw.programs.is_empty() {
        problems.push("names no program: add [...grants.exec.programs.<name>]".to_owned());
    }
    problems.extend(list_problems(&raw));
    let mut programs = BTreeMap::new();
    for (name, p) in raw.programs {
        match program(&name, p) {
            Ok(p) => {
                programs.insert(name, p);
            }
            Err(mut why) => problems.append(&mut why),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Table {
        programs,
        timeout_ms,
        output_bytes,
        processes,
        concurrency,
        env: raw.env,
        read: raw.read,
        write: raw.write,
        tmp: raw.tmp,
        network: raw.network,
        unconfined: raw.unconfined,
    })
}

/// What is wrong in the table's lists: `env` names, `read` and `write` folders.
fn list_problems(raw: &RawTable) -> Vec<String> {
    let mut problems = Vec::new();
    for var in &raw.env {
        if var.is_empty() || var.contains(['=', '\0']) {
            problems.push(format!("env entry `{var}` is not a variable name"));
        }
    }
    for dir in &raw.read {
        if !std::path::Path::new(dir).is_absolute() {
            problems.push(format!("read entry `{dir}` is not an absolute path"));
        }
    }
    for dir in &raw.write {
        let escapes = std::path::Path::new(dir)
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if dir.is_empty() || escapes {
            problems.push(format!(
                "write entry `{dir}` is not a folder inside the project: name it relative to the project, without `..`"
            ));
        }
    }
    problems
}

/// One program checked: its name, template and placeholders agree.
fn program(name: &str, raw: RawProgram) -> Result<Program, Vec<String>> {
    let mut problems = Vec::new();
    let at = format!("program `{name}`");
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        problems.push(format!(
            "{at}: name it with letters, digits, `-`, `_` or `.`"
        ));
    }
    if raw.path.is_empty() || raw.path.contains('\0') {
        problems.push(format!("{at}: `path` is empty"));
    } else if !raw.path.starts_with('/') && raw.path.contains('/') {
        problems.push(format!(
            "{at}: `path` `{}` is neither absolute nor a bare name looked up on PATH",
            raw.path
        ));
    }
    let mut placeholders = BTreeMap::new();
    for (key, v) in &raw.placeholders {
        match placeholder(v) {
            Some(p) => {
                placeholders.insert(key.clone(), p);
            }
            None => problems.push(format!(
                "{at}: placeholder `{key}` is not \"path\", \"writable-path\", \"text\" or a list of words"
            )),
        }
    }
    let mut args = Vec::new();
    for a in &raw.args {
        let inner = a.strip_prefix('{').and_then(|r| r.strip_suffix('}'));
        match inner {
            Some(key) if raw.placeholders.contains_key(key) => {
                args.push(Arg::Placeholder(key.to_owned()))
            }
            Some(key) => problems.push(format!("{at}: `{{{key}}}` has no type in `placeholders`")),
            None if a.contains(['{', '}', '\0']) => problems.push(format!(
                "{at}: argument `{a}` mixes text and a placeholder: a placeholder is a whole argument"
            )),
            None => args.push(Arg::Literal(a.clone())),
        }
    }
    for key in raw.placeholders.keys() {
        if !args.contains(&Arg::Placeholder(key.clone())) {
            problems.push(format!("{at}: placeholder `{key}` is not in `args`"));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Program {
        path: raw.path,
        args,
        placeholders,
    })
}

fn placeholder(v: &toml::Value) -> Option<Placeholder> {
    match v {
        toml::Value::String(s) if s == "path" => Some(Placeholder::Path),
        toml::Value::String(s) if s == "writable-path" => Some(Placeholder::WritablePath),
        toml::Value::String(s) if s == "text" => Some(Placeholder::Text),
        toml::Value::Array(words) if !words.is_empty() => words
            .iter()
            .map(|w| w.as_str().filter(|w| !w.is_empty()).map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .map(Placeholder::Word),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<Table, Vec<String>> {
        parse(Some(&toml::Value::Table(text.parse().unwrap())))
    }

    #[test]
    fn a_table_reads_with_its_defaults_and_typed_placeholders() {
        let t = table(
            "[programs.fmt]\npath = \"rustfmt\"\nargs = [\"--edition\", \"2021\", \"{file}\"]\nplaceholders = { file = \"writable-path\" }\n",
        )
        .unwrap();
        assert_eq!(t.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert_eq!(t.processes, DEFAULT_PROCESSES);
        assert!(!t.network && !t.unconfined && t.env.is_empty() && t.write.is_empty() && !t.tmp);
        let p = &t.programs["fmt"];
        assert_eq!(
            p.args,
            [
                Arg::Literal("--edition".into()),
                Arg::Literal("2021".into()),
                Arg::Placeholder("file".into())
            ]
        );
        assert_eq!(p.placeholders["file"], Placeholder::WritablePath);
    }

    #[test]
    fn a_template_that_could_smuggle_text_or_skips_a_type_is_refused() {
        let err = table(
            "timeout_ms = 0\n[programs.sh]\npath = \"bin/sh\"\nargs = [\"-c{cmd}\", \"{x}\", \"{mode}\"]\nplaceholders = { mode = [\"a\"], unused = \"text\" }\n",
        )
        .unwrap_err();
        assert_eq!(
            err,
            [
                "timeout_ms = 0: set it between 1 and 120000",
                "program `sh`: `path` `bin/sh` is neither absolute nor a bare name looked up on PATH",
                "program `sh`: argument `-c{cmd}` mixes text and a placeholder: a placeholder is a whole argument",
                "program `sh`: `{x}` has no type in `placeholders`",
                "program `sh`: placeholder `unused` is not in `args`",
            ]
        );
        assert!(parse(None).unwrap_err()[0].contains("needs its table"));
    }

    #[test]
    fn a_write_folder_is_relative_to_the_project_and_never_leaves_it() {
        let t =
            table("write = [\".git\", \"out/cache\"]\n[programs.git]\npath = \"git\"\n").unwrap();
        assert_eq!(t.write, [".git", "out/cache"]);
        let err = table(
            "write = [\"/tmp\", \"../up\", \"a/../../b\", \"\"]\n[programs.git]\npath = \"git\"\n",
        )
        .unwrap_err();
        assert_eq!(err.len(), 4, "{err:?}");
        assert!(
            err.iter()
                .all(|e| e.ends_with("name it relative to the project, without `..`")),
            "{err:?}"
        );
    }
}
