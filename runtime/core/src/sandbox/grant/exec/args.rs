//! Filling an argument template: each value the hook gives is checked
//! against its placeholder's type before it becomes one argument. No value
//! is ever split, joined or read by a shell: `;`, `$(…)` or a quote is a
//! character like any other, and what could change a program's meaning (a
//! leading `-`, a path out of the project, a control character) is refused.

use std::path::{Component, Path, PathBuf};

use super::table::{Arg, MAX_TEXT_BYTES, Placeholder, Program};

/// Most bytes of a path placeholder's value.
const MAX_PATH_BYTES: usize = 4_096;

/// A template filled: the arguments, and the files the program may write.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Filled {
    /// One argument per template entry, in order.
    pub(crate) args: Vec<String>,
    /// The `writable-path` values, resolved.
    pub(crate) writable: Vec<PathBuf>,
}

/// Fills `program`'s template from `values` (placeholder, value) for a run
/// in `project` (canonical); the error says which value broke which rule.
pub(crate) fn fill(
    program: &Program,
    values: &[(String, String)],
    project: &Path,
) -> Result<Filled, String> {
    for (key, _) in values {
        if !program.placeholders.contains_key(key) {
            return Err(format!("the template has no placeholder `{key}`"));
        }
    }
    let mut filled = Filled {
        args: Vec::with_capacity(program.args.len()),
        writable: Vec::new(),
    };
    for arg in &program.args {
        let key = match arg {
            Arg::Literal(text) => {
                filled.args.push(text.clone());
                continue;
            }
            Arg::Placeholder(key) => key,
        };
        let value = values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| format!("placeholder `{key}` has no value"))?;
        let why = |rule: String| format!("placeholder `{key}`: {rule}");
        match &program.placeholders[key] {
            Placeholder::Path => filled.args.push(inside(value, project).map_err(why)?),
            Placeholder::WritablePath => {
                let path = inside(value, project).map_err(why)?;
                filled.writable.push(PathBuf::from(&path));
                filled.args.push(path);
            }
            Placeholder::Word(words) => {
                if !words.iter().any(|w| w == value) {
                    return Err(why(format!("`{value}` is not one of {words:?}")));
                }
                filled.args.push(value.to_owned());
            }
            Placeholder::Text => {
                text(value).map_err(why)?;
                filled.args.push(value.to_owned());
            }
        }
    }
    Ok(filled)
}

/// Bounded text: no control character (no newline), not an option.
fn text(value: &str) -> Result<(), String> {
    if value.len() > MAX_TEXT_BYTES {
        return Err(format!("longer than {MAX_TEXT_BYTES} bytes"));
    }
    if value.starts_with('-') {
        return Err("starts with `-`, which a program reads as an option".to_owned());
    }
    if value.chars().any(char::is_control) {
        return Err("holds a control character (a newline, a NUL, an escape)".to_owned());
    }
    Ok(())
}

/// `value` as the canonical path of an existing file or folder inside
/// `project`: relative (or absolute inside it), no `..`, not an option, and
/// not leaving the project through a symlink.
fn inside(value: &str, project: &Path) -> Result<String, String> {
    if value.is_empty() || value.len() > MAX_PATH_BYTES {
        return Err(format!("a path of 1 to {MAX_PATH_BYTES} bytes"));
    }
    if value.starts_with('-') {
        return Err("starts with `-`, which a program reads as an option".to_owned());
    }
    if value.chars().any(char::is_control) {
        return Err("holds a control character (a newline, a NUL, an escape)".to_owned());
    }
    // An absolute path is taken only inside the project (agents name the
    // edited file absolutely); `join` keeps it as it is.
    let rel = Path::new(value);
    if rel.is_absolute() && !rel.starts_with(project) {
        return Err("is absolute and outside the project".to_owned());
    }
    if rel.components().any(|c| c == Component::ParentDir) {
        return Err("holds `..`: name a path inside the project".to_owned());
    }
    let real = project
        .join(rel)
        .canonicalize()
        .map_err(|_| format!("`{value}` does not exist in the project"))?;
    if !real.starts_with(project) {
        return Err(format!("`{value}` leads out of the project (a symlink)"));
    }
    real.into_os_string()
        .into_string()
        .map_err(|_| "is not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn program() -> Program {
        Program {
            path: "/bin/echo".into(),
            args: vec![
                Arg::Literal("--".into()),
                Arg::Placeholder("file".into()),
                Arg::Placeholder("mode".into()),
                Arg::Placeholder("note".into()),
            ],
            placeholders: BTreeMap::from([
                ("file".into(), Placeholder::WritablePath),
                ("mode".into(), Placeholder::Word(vec!["check".into()])),
                ("note".into(), Placeholder::Text),
            ]),
        }
    }

    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "x").unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    fn values(file: &str, mode: &str, note: &str) -> Vec<(String, String)> {
        vec![
            ("file".into(), file.into()),
            ("mode".into(), mode.into()),
            ("note".into(), note.into()),
        ]
    }

    #[test]
    fn shell_syntax_in_a_value_is_one_plain_argument() {
        let (_dir, root) = project();
        let filled = fill(
            &program(),
            &values("a.rs", "check", "x; rm -rf / $(id) `id`"),
            &root,
        )
        .unwrap();
        let file = root.join("a.rs").to_string_lossy().into_owned();
        assert_eq!(
            filled.args,
            ["--", &file, "check", "x; rm -rf / $(id) `id`"]
        );
        assert_eq!(filled.writable, [root.join("a.rs")]);
        let absolute = root.join("a.rs").to_string_lossy().into_owned();
        let filled = fill(&program(), &values(&absolute, "check", "n"), &root).unwrap();
        assert_eq!(
            filled.args[1], file,
            "an absolute path inside the project is taken"
        );
    }

    #[test]
    fn each_hostile_value_is_refused_naming_its_rule() {
        let (_dir, root) = project();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        let cases = [
            (
                values("a.rs", "check", "-rf"),
                "placeholder `note`: starts with `-`",
            ),
            (
                values("a.rs", "check", "a\nb"),
                "placeholder `note`: holds a control character",
            ),
            (
                values("-a.rs", "check", "n"),
                "placeholder `file`: starts with `-`",
            ),
            (
                values("../a.rs", "check", "n"),
                "placeholder `file`: holds `..`",
            ),
            (
                values("/etc/passwd", "check", "n"),
                "placeholder `file`: is absolute and outside the project",
            ),
            (
                values("out/passwd", "check", "n"),
                "placeholder `file`: `out/passwd` leads out of the project",
            ),
            (
                values("$(touch x)", "check", "n"),
                "placeholder `file`: `$(touch x)` does not exist",
            ),
            (
                values("a.rs", "write", "n"),
                "placeholder `mode`: `write` is not one of",
            ),
            (
                values("a.rs", "check", &"x".repeat(MAX_TEXT_BYTES + 1)),
                "placeholder `note`: longer than",
            ),
        ];
        for (vals, want) in cases {
            let err = fill(&program(), &vals, &root).unwrap_err();
            assert!(err.starts_with(want), "{vals:?}: {err}");
        }
        let mut extra = values("a.rs", "check", "n");
        extra.push(("cmd".into(), "id".into()));
        assert_eq!(
            fill(&program(), &extra, &root).unwrap_err(),
            "the template has no placeholder `cmd`"
        );
        assert_eq!(
            fill(&program(), &extra[..2], &root).unwrap_err(),
            "placeholder `note` has no value"
        );
    }
}
