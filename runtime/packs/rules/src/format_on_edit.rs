//! The `format-on-edit` pack: after a tool call wrote a file, the formatter
//! the settings name for its extension runs on it (through the `exec`
//! grant: the program pinned by the lock, the file its one writable path).
//! docs/packs/format-on-edit.md.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Invalid;
use crate::tools::{self, Access};

/// The most milliseconds a run may take (the `exec` grant's own cap).
pub const MAX_TIMEOUT_MS: u64 = 120_000;

/// `[packs.format-on-edit]` in `hookrt.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// A file extension (no dot) = its formatter's command: the program
    /// (absolute, or found on `PATH` when the folder loads) and its
    /// arguments, `{file}` among them for the file.
    pub formatters: BTreeMap<String, Vec<String>>,
    /// How long one run may take, in milliseconds.
    pub timeout_ms: u64,
    /// Host variables the formatter gets (every other one is absent).
    pub env: Vec<String>,
    /// Folders it may read besides the project and the system's (a
    /// toolchain outside `/usr`, such as `~/.rustup`).
    pub read: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            formatters: BTreeMap::new(),
            timeout_ms: 15_000,
            env: vec!["PATH".into()],
            read: Vec::new(),
        }
    }
}

impl Settings {
    /// Checks every formatter: an extension of letters and digits, a
    /// program, `{file}` in its arguments and no other placeholder.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.formatters.is_empty() {
            return Err(Invalid::new(
                "formatters",
                "`formatters` names no formatter: add one, e.g. `formatters = { rs = [\"rustfmt\", \"{file}\"] }`",
            ));
        }
        for (ext, command) in &self.formatters {
            let key = format!("formatters.{ext}");
            if ext.is_empty()
                || !ext
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            {
                return Err(Invalid::new(
                    &key,
                    format!(
                        "`{key}`: an extension is lower-case letters and digits, without the dot"
                    ),
                ));
            }
            let Some((program, args)) = command.split_first().filter(|(p, _)| !p.is_empty()) else {
                return Err(Invalid::new(&key, format!("`{key}` names no program")));
            };
            if program.contains('{') {
                return Err(Invalid::new(
                    &key,
                    format!("`{key}`: the program is not a template"),
                ));
            }
            if !args.iter().any(|a| a.contains("{file}")) {
                return Err(Invalid::new(
                    &key,
                    format!("`{key}` does not pass `{{file}}`, the file to format"),
                ));
            }
            if let Some(other) = args
                .iter()
                .find(|a| a.replace("{file}", "").contains(['{', '}']))
            {
                return Err(Invalid::new(
                    &key,
                    format!("`{key}`: `{other}` holds a placeholder other than `{{file}}`"),
                ));
            }
        }
        if self.timeout_ms == 0 || self.timeout_ms > MAX_TIMEOUT_MS {
            return Err(Invalid::new(
                "timeout_ms",
                format!("`timeout_ms` is between 1 and {MAX_TIMEOUT_MS}"),
            ));
        }
        Ok(())
    }
}

/// The name of the `exec` program that formats files of `ext`.
pub fn program_of(ext: &str) -> String {
    format!("format-{ext}")
}

/// The extension a path's formatter is found by: after its last `.` in its
/// name, lower-cased; `None` for a name without one.
pub fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// The file a finished call of `tool` wrote: the path its input writes
/// (every agent's write and edit tools), else the `filePath` its output
/// names (Claude Code's).
pub fn written_file(
    tool: &str,
    input: Option<&serde_json::Value>,
    output: Option<&serde_json::Value>,
) -> Option<String> {
    let from_input = input.and_then(|i| {
        tools::file_paths(tool, i)
            .into_iter()
            .find(|(access, _)| *access == Access::Write)
            .map(|(_, p)| p)
    });
    from_input.or_else(|| {
        ["filePath", "file_path"]
            .iter()
            .find_map(|k| output.and_then(|o| o.get(k)).and_then(|p| p.as_str()))
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(formatters: serde_json::Value) -> Settings {
        serde_json::from_value(json!({ "formatters": formatters })).unwrap()
    }

    #[test]
    fn formatters_are_checked_by_key() {
        assert!(
            settings(json!({"rs": ["rustfmt", "{file}"], "ts": ["prettier", "--write", "{file}"]}))
                .check()
                .is_ok()
        );
        let key = |f: serde_json::Value| settings(f).check().unwrap_err().key;
        assert_eq!(key(json!({})), "formatters");
        assert_eq!(key(json!({".rs": ["rustfmt", "{file}"]})), "formatters..rs");
        assert_eq!(key(json!({"rs": []})), "formatters.rs");
        assert_eq!(key(json!({"rs": ["rustfmt"]})), "formatters.rs");
        assert_eq!(
            key(json!({"rs": ["rustfmt", "{file}", "{config}"]})),
            "formatters.rs"
        );
        let slow = Settings {
            timeout_ms: 500_000,
            ..settings(json!({"rs": ["rustfmt", "{file}"]}))
        };
        assert_eq!(slow.check().unwrap_err().key, "timeout_ms");
    }

    #[test]
    fn the_written_file_and_its_extension_are_found_for_every_agent() {
        let w = |tool: &str, input: serde_json::Value| written_file(tool, Some(&input), None);
        assert_eq!(
            w("Write", json!({"file_path": "/p/src/a.RS"})).as_deref(),
            Some("/p/src/a.RS")
        );
        assert_eq!(
            w("replace", json!({"file_path": "b.ts"})).as_deref(),
            Some("b.ts")
        );
        assert_eq!(w("edit", json!({"path": "c.py"})).as_deref(), Some("c.py"));
        assert_eq!(w("Read", json!({"file_path": "d.rs"})), None);
        // A deleted file, and one a patch moves away, is not formatted.
        assert_eq!(w("delete_file", json!({"target_file": "f.rs"})), None);
        let moved = "*** Begin Patch\n*** Update File: g.rs\n*** Move to: h.rs\n*** End Patch";
        assert_eq!(
            w("apply_patch", json!({"command": moved})).as_deref(),
            Some("h.rs")
        );
        assert_eq!(
            written_file("Edit", None, Some(&json!({"filePath": "/p/e.rs"}))).as_deref(),
            Some("/p/e.rs")
        );
        assert_eq!(extension("/p/src/a.RS").as_deref(), Some("rs"));
        assert_eq!(extension("/p/.bashrc"), None);
        assert_eq!(extension("/p/Makefile"), None);
    }
}
