//! Paths as a tool call names them, resolved against the project without
//! touching a file system (the packs run in a sandbox that has none): `.`
//! and `..` folded, `~` and `$HOME` taken as the user's home, which is
//! outside every project.

/// Where a path points, as far as the text tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside the project, at this path relative to its root ("" is the root).
    Inside(String),
    /// Outside the project, at this absolute path (`~/…` for the home).
    Outside(String),
    /// Only known when the command runs (a variable, a substitution, a
    /// relative path after a `cd` that cannot be followed).
    Unknown,
}

/// Resolves `path` as written in a command run in `cwd` (an absolute
/// folder, or `None` when unknown) of a project at `root` (absolute, or
/// `None` when the agent did not say).
pub fn place(path: &str, cwd: Option<&str>, root: Option<&str>) -> Place {
    let absolute =
        if path == "~" || path.starts_with("~/") || path == "$HOME" || path.starts_with("$HOME/") {
            let rest = path.trim_start_matches('~').trim_start_matches("$HOME");
            return Place::Outside(format!("~{}", normalize(rest)));
        } else if path.starts_with('/') {
            normalize(path)
        } else {
            match cwd {
                Some(cwd) => normalize(&format!("{cwd}/{path}")),
                None => return Place::Unknown,
            }
        };
    if absolute.starts_with('~') {
        return Place::Outside(absolute);
    }
    match root.map(normalize) {
        Some(root) if absolute == root => Place::Inside(String::new()),
        Some(root) => match absolute.strip_prefix(&format!("{}/", root.trim_end_matches('/'))) {
            Some(rest) => Place::Inside(rest.to_owned()),
            None => Place::Outside(absolute),
        },
        None => Place::Outside(absolute),
    }
}

/// `path` with `.`, `..` and repeated slashes folded (never above `/`); a
/// relative path keeps the `..` that lead out of it.
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The folder a `cd ARG` in `cwd` leads to, `~` for the home, `None` when
/// it cannot be told.
pub fn cd(arg: Option<&str>, cwd: Option<&str>) -> Option<String> {
    match arg {
        None | Some("~") | Some("$HOME") => Some("~".into()),
        Some("-") => None,
        Some(a) if a.starts_with("~/") => Some(format!("~/{}", normalize(&a[2..]))),
        Some(a) if a.starts_with('/') => Some(normalize(a)),
        Some(a) => cwd.map(|c| normalize(&format!("{c}/{a}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_inside_outside_and_unknown() {
        let (cwd, root) = (Some("/p/sub"), Some("/p"));
        assert_eq!(place("x/../y", cwd, root), Place::Inside("sub/y".into()));
        assert_eq!(place("../..", cwd, root), Place::Outside("/".into()));
        assert_eq!(place("/p", cwd, root), Place::Inside(String::new()));
        assert_eq!(place("/pq", cwd, root), Place::Outside("/pq".into()));
        assert_eq!(place("~/.ssh", cwd, root), Place::Outside("~/.ssh".into()));
        assert_eq!(place("x", None, root), Place::Unknown);
        assert_eq!(place("/etc", cwd, None), Place::Outside("/etc".into()));
        assert_eq!(cd(Some("../q"), Some("/p/sub")), Some("/p/q".into()));
        assert_eq!(cd(None, Some("/p")), Some("~".into()));
    }
}
