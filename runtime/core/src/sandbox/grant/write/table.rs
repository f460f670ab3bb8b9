//! The `write` table: the one place a hook may write (a file appended to, or
//! a folder files are written in), relative to the project folder, and the
//! caps of what it writes. Read and checked from
//! `[hooks."<slug>".grants.write]` when `hookrt.toml` is loaded.

use std::path::{Component, Path};

use crate::sandbox::grant::setting;
use serde::Deserialize;

/// Default cap of one write.
pub(crate) const DEFAULT_WRITE_BYTES: u64 = 64 << 10;
/// Most a table may set: one write is copied out of the guest whole.
pub(crate) const MAX_WRITE_BYTES: u64 = 16 << 20;
/// Default cap of what one delivery writes in all.
pub(crate) const DEFAULT_DELIVERY_BYTES: u64 = 1 << 20;
/// Most a table may set: a hook looping on writes fills no disk.
pub(crate) const MAX_DELIVERY_BYTES: u64 = 256 << 20;
/// Default cap of a file's size after a write.
pub(crate) const DEFAULT_FILE_BYTES: u64 = 16 << 20;
/// Most a table may set: an appended log grows across deliveries.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 30;
/// Longest path, declared or given.
pub(crate) const MAX_PATH_BYTES: usize = 4_096;

/// The one place a hook may write, relative to the project folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A file appended to (`append`).
    File(String),
    /// A folder files are written in (`write-file`).
    Folder(String),
}

impl Place {
    /// The path as the table writes it.
    pub(crate) fn path(&self) -> &str {
        match self {
            Place::File(p) | Place::Folder(p) => p,
        }
    }
}

/// The `write` table of one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// Where it may write.
    pub place: Place,
    /// Most bytes of one write.
    pub max_write_bytes: u64,
    /// Most bytes one delivery writes in all.
    pub max_delivery_bytes: u64,
    /// Most bytes a file may hold after a write.
    pub max_file_bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    file: Option<String>,
    folder: Option<String>,
    max_write_bytes: Option<u64>,
    max_delivery_bytes: Option<u64>,
    max_file_bytes: Option<u64>,
}

/// Why `path` cannot name a place inside the project: absolute, `..`, empty,
/// a control character, too long.
pub(crate) fn relative_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() || path.len() > MAX_PATH_BYTES {
        return Some("must be a path of 1 to 4096 bytes");
    }
    if path.chars().any(char::is_control) {
        return Some("holds a control character");
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Some("is absolute: name it relative to the project folder");
    }
    if p.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Some("holds `..`: name a place inside the project folder");
    }
    if !p.components().any(|c| matches!(c, Component::Normal(_))) {
        return Some("names the project folder itself");
    }
    None
}

/// Reads the `write` table; the problems say what is wrong.
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Table, Vec<String>> {
    let Some(value) = value else {
        return Err(vec![
            "needs its table naming one place: `file = \"<path>\"` or `folder = \"<path>\"`, relative to the project folder".to_owned(),
        ]);
    };
    let raw: RawTable = setting::raw(value)?;
    let mut problems = Vec::new();
    let place = match (raw.file, raw.folder) {
        (Some(f), None) => Some(Place::File(f)),
        (None, Some(d)) => Some(Place::Folder(d)),
        (Some(_), Some(_)) => {
            problems.push("names both `file` and `folder`: a write grant is one place".to_owned());
            None
        }
        (None, None) => {
            problems.push("names no place: set `file` or `folder`".to_owned());
            None
        }
    };
    if let Some(p) = &place
        && let Some(why) = relative_problem(p.path())
    {
        problems.push(format!("`{}` {why}", p.path()));
    }
    let mut bounded = |key: &str, v: Option<u64>, default: u64, max: u64| {
        setting::bounded(&mut problems, key, v, default, max)
    };
    let max_write_bytes = bounded(
        "max_write_bytes",
        raw.max_write_bytes,
        DEFAULT_WRITE_BYTES,
        MAX_WRITE_BYTES,
    );
    let max_delivery_bytes = bounded(
        "max_delivery_bytes",
        raw.max_delivery_bytes,
        DEFAULT_DELIVERY_BYTES,
        MAX_DELIVERY_BYTES,
    );
    let max_file_bytes = bounded(
        "max_file_bytes",
        raw.max_file_bytes,
        DEFAULT_FILE_BYTES,
        MAX_FILE_BYTES,
    );
    match place {
        Some(place) if problems.is_empty() => Ok(Table {
            place,
            max_write_bytes,
            max_delivery_bytes,
            max_file_bytes,
        }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<Table, Vec<String>> {
        parse(Some(&toml::Value::Table(text.parse().unwrap())))
    }

    #[test]
    fn a_table_names_one_file_or_one_folder_with_its_caps() {
        let t = table("file = \".claude/bash-command-log.txt\"\n").unwrap();
        assert_eq!(t.place, Place::File(".claude/bash-command-log.txt".into()));
        assert_eq!(
            (t.max_write_bytes, t.max_delivery_bytes, t.max_file_bytes),
            (
                DEFAULT_WRITE_BYTES,
                DEFAULT_DELIVERY_BYTES,
                DEFAULT_FILE_BYTES
            )
        );
        let t = table("folder = \"backups\"\nmax_write_bytes = 10\n").unwrap();
        assert_eq!(
            (t.place, t.max_write_bytes),
            (Place::Folder("backups".into()), 10)
        );
    }

    #[test]
    fn a_table_naming_a_place_outside_the_project_or_two_places_is_refused() {
        for (text, want) in [
            (
                "file = \"/etc/passwd\"",
                "`/etc/passwd` is absolute: name it relative to the project folder",
            ),
            (
                "folder = \"../elsewhere\"",
                "`../elsewhere` holds `..`: name a place inside the project folder",
            ),
            (
                "folder = \"a/../../b\"",
                "`a/../../b` holds `..`: name a place inside the project folder",
            ),
            ("file = \".\"", "`.` names the project folder itself"),
            (
                "file = \"a\"\nfolder = \"b\"",
                "names both `file` and `folder`: a write grant is one place",
            ),
            (
                "max_write_bytes = 1",
                "names no place: set `file` or `folder`",
            ),
            (
                "file = \"a\"\nmax_file_bytes = 0",
                "max_file_bytes = 0: set it between 1 and 1073741824",
            ),
        ] {
            assert_eq!(table(text).unwrap_err(), [want], "{text}");
        }
        assert!(parse(None).unwrap_err()[0].contains("needs its table"));
    }
}
