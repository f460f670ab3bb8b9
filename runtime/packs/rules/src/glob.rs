//! Globs as `.gitignore` writes them, matched against paths as the packs
//! see them: relative to the project's root, or absolute (`~/` for the
//! home) for paths outside it. A glob without a `/` matches a name at any
//! depth, one with a `/` is anchored at the root, `**` spans folders, and
//! a glob matching a folder matches everything under it.

use regex::Regex;

/// One compiled glob.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    /// The glob as written.
    pub(crate) text: String,
    outside: bool,
    re: Regex,
}

impl Glob {
    /// Whether it matches `path` (relative to the root, or absolute when
    /// `outside`) or one of the folders above it.
    pub(crate) fn matches(&self, path: &str, outside: bool) -> bool {
        let folders = path.match_indices('/').map(|(i, _)| &path[..i]);
        self.outside == outside
            && folders
                .chain([path])
                .any(|p| !p.is_empty() && self.re.is_match(p))
    }
}

/// Compiles one glob to an expression over a path, anchored at both ends.
pub(crate) fn compile(glob: &str) -> Result<Glob, String> {
    let esc = |c: &char| regex::escape(c.encode_utf8(&mut [0; 4]));
    let home = "^(?:~|/home/[^/]+|/Users/[^/]+|/root)/";
    let (outside, prefix, body) = match (glob.strip_prefix("~/"), glob.strip_prefix('/')) {
        (Some(rest), _) => (true, home, rest),
        (_, Some(rest)) => (true, "^/", rest),
        _ => {
            let g = glob.strip_prefix("./").unwrap_or(glob);
            let anchored = g.trim_end_matches('/').contains('/');
            (false, if anchored { "^" } else { "^(?:.*/)?" }, g)
        }
    };
    let mut re = prefix.to_owned();
    let chars: Vec<char> = body.trim_end_matches('/').chars().collect();
    if chars.is_empty() {
        return Err("it names no file".into());
    }
    let mut i = 0;
    while let Some(c) = chars.get(i) {
        let segment_start = i == 0 || chars[i - 1] == '/';
        i += 1;
        match c {
            '*' if chars.get(i) == Some(&'*') => {
                i += 1;
                if segment_start && chars.get(i) == Some(&'/') {
                    re.push_str("(?:.*/)?");
                    i += 1;
                } else if segment_start && i == chars.len() && re.ends_with('/') {
                    // `dir/**`: the folder itself and everything below it.
                    re.pop();
                    re.push_str("(?:/.*)?");
                } else {
                    re.push_str(".*");
                }
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '[' => {
                let len = chars[i..].iter().position(|c| *c == ']');
                let class = &chars[i..i + len.ok_or("a `[` is not closed")?];
                i += class.len() + 1;
                let (open, class) = match class.split_first() {
                    Some(('!' | '^', rest)) => ("[^/", rest),
                    _ => ("[", class),
                };
                re.push_str(open);
                for c in class {
                    re.push_str(&if *c == '-' { "-".into() } else { esc(c) });
                }
                re.push(']');
            }
            '\\' => {
                re.push_str(&esc(chars.get(i).ok_or("it ends with a `\\`")?));
                i += 1;
            }
            c => re.push_str(&esc(c)),
        }
    }
    re.push('$');
    let re = Regex::new(&re).map_err(|e| e.to_string())?;
    Ok(Glob {
        text: glob.to_owned(),
        outside,
        re,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_gitignore() {
        let m = |glob: &str, path: &str| compile(glob).unwrap().matches(path, false);
        assert!(m("*.pem", "a/b/c.pem") && !m("*.pem", "c.pem.txt"));
        assert!(m("id_rsa*", "id_rsa.pub") && !m("id_rsa*", "my_id_rsa"));
        assert!(m("**/build", "x/y/build/out") && m("**/build", "build"));
        assert!(m("a/**/z", "a/z") && m("a/**/z", "a/b/c/z") && !m("a/**/z", "b/a/z"));
        assert!(m("log?.txt", "log1.txt") && !m("log?.txt", "log/.txt"));
        assert!(m("[ab].key", "b.key") && !m("[!ab].key", "a.key") && m("[!ab].key", "c.key"));
        assert!(m("v[0-9]", "v7") && m("\\*.md", "*.md") && !m("\\*.md", "x.md"));
        assert!(m("./src/gen/", "src/gen/x.rs") && !m("src/gen/", "a/src/gen/x.rs"));
        assert!(!compile("~/.ssh/**").unwrap().matches(".ssh/x", false));
        assert!(compile("~/**").unwrap().matches("/Users/me", true));
    }
}
