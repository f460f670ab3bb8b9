//! The deny patterns of the `read` grant: the defaults every table keeps
//! (secrets, keys, credentials, the agents' own settings) and how a pattern
//! matches a path.
//!
//! A pattern is `/`-separated names with `*` (any run of characters but
//! `/`) and `?` (one character); a trailing `/` only says a folder is meant.
//! It matches a path when it matches any run of the path's consecutive
//! components, so `.env*` refuses `.env`, `web/.env.local` and everything
//! under a folder `.env.d/`, and `.git/config` refuses it in every
//! repository of the project. Matching ignores ASCII case: on a
//! case-insensitive file system `.ENV` opens `.env`.

use std::path::{Component, Path};

/// What every `read` table refuses, whatever it adds: a table cannot take
/// one away.
pub(crate) const DEFAULT_DENY: &[&str] = &[
    // Environment files: API keys and passwords by convention.
    ".env*",
    // Private keys and certificates, by extension and by name.
    "*.pem",
    "*.key",
    "*.p8",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.crt",
    "*.cer",
    "*.der",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".ssh/",
    ".gnupg/",
    // Credentials of tools.
    ".git/config",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".aws/",
    ".docker/config.json",
    ".kube/",
    // The agents' own settings: a hook never reads what configures the agent
    // (and its hooks).
    ".claude/settings*.json",
    ".codex/",
    ".gemini/settings.json",
    ".cursor/hooks.json",
    ".github/hooks/",
];

/// Longest pattern a table may add.
pub(crate) const MAX_PATTERN_BYTES: usize = 256;
/// Most patterns a table may add.
pub(crate) const MAX_PATTERNS: usize = 256;

/// Why a pattern a table adds is not one.
pub(crate) fn check(pattern: &str) -> Result<(), String> {
    let names = segments(pattern);
    if names.is_empty() || pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "deny pattern `{pattern}` must name 1 to {MAX_PATTERN_BYTES} bytes of a path"
        ));
    }
    if pattern.starts_with('/') || pattern.contains(['\\', '\0']) {
        return Err(format!(
            "deny pattern `{pattern}` must be relative, `/`-separated"
        ));
    }
    if names
        .iter()
        .any(|n| n.is_empty() || *n == "." || *n == "..")
    {
        return Err(format!(
            "deny pattern `{pattern}` has an empty, `.` or `..` part"
        ));
    }
    Ok(())
}

/// The pattern among `patterns` that `path` (relative, normal components
/// only) matches, if any.
pub(crate) fn matching<'p>(patterns: &'p [String], path: &Path) -> Option<&'p str> {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    patterns
        .iter()
        .find(|p| matches(&segments(&p.to_ascii_lowercase()), &parts))
        .map(String::as_str)
}

fn segments(pattern: &str) -> Vec<&str> {
    let pattern = pattern.strip_suffix('/').unwrap_or(pattern);
    if pattern.is_empty() {
        return Vec::new();
    }
    pattern.split('/').collect()
}

/// Whether `names` match some run of consecutive `parts`.
fn matches(names: &[&str], parts: &[String]) -> bool {
    if names.is_empty() || names.len() > parts.len() {
        return false;
    }
    parts.windows(names.len()).any(|run| {
        names
            .iter()
            .zip(run)
            .all(|(n, p)| glob(n.as_bytes(), p.as_bytes()))
    })
}

/// `*` and `?` over bytes (a `?` matches one byte of a multi-byte character,
/// which only widens what a pattern refuses).
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(path: &str) -> Option<&'static str> {
        let all: Vec<String> = DEFAULT_DENY.iter().map(|p| (*p).to_owned()).collect();
        matching(&all, Path::new(path)).map(|p| {
            *DEFAULT_DENY
                .iter()
                .find(|d| **d == p)
                .expect("a default pattern")
        })
    }

    #[test]
    fn every_default_class_is_refused_anywhere_in_the_project_and_in_any_case() {
        for (path, pattern) in [
            (".env", ".env*"),
            ("web/.env.local", ".env*"),
            (".ENV.production", ".env*"),
            (".env.d/db", ".env*"),
            ("certs/server.pem", "*.pem"),
            ("tls/site.KEY", "*.key"),
            ("keys/id_ed25519.pub", "id_ed25519*"),
            ("home/.ssh/known_hosts", ".ssh/"),
            (".git/config", ".git/config"),
            ("vendor/lib/.git/config", ".git/config"),
            (".git-credentials", ".git-credentials"),
            (".npmrc", ".npmrc"),
            (".pypirc", ".pypirc"),
            (".netrc", ".netrc"),
            (".aws/credentials", ".aws/"),
            (".claude/settings.json", ".claude/settings*.json"),
            (".claude/settings.local.json", ".claude/settings*.json"),
            (".codex/config.toml", ".codex/"),
            (".gemini/settings.json", ".gemini/settings.json"),
            (".cursor/hooks.json", ".cursor/hooks.json"),
            (".github/hooks/hookrt.json", ".github/hooks/"),
            (".github/hooks", ".github/hooks/"),
        ] {
            assert_eq!(denied(path), Some(pattern), "{path}");
        }
        for path in [
            "src/main.rs",
            "README.md",
            ".git/HEAD",
            ".github/workflows/ci.yml",
            ".claude/commands/review.md",
            "environment.ts",
            "docs/keys.md",
        ] {
            assert_eq!(denied(path), None, "{path}");
        }
    }

    #[test]
    fn a_pattern_is_relative_and_names_something() {
        for ok in ["secrets/", "*.sqlite", "data/*.csv", "a?c"] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in ["", "/", "/etc/passwd", "a/../b", "./x", "a//b", "a\\b"] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn stars_and_question_marks_match_within_one_name() {
        assert!(glob(b"*.pem", b"a.pem"));
        assert!(glob(b"*", b""));
        assert!(glob(b"a*b*c", b"aXbYbZc"));
        assert!(!glob(b"a*b", b"a/cb".split(|c| *c == b'/').next().unwrap()));
        assert!(glob(b"?.rs", b"a.rs"));
        assert!(!glob(b"?.rs", b"ab.rs"));
        assert!(!matches(&["src", "*.rs"], &["src".into()]));
    }
}
