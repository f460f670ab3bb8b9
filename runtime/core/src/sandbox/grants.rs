//! The import check: which host capabilities a hook may import.
//!
//! Every import of a component is classified when it is loaded:
//! - **granted capabilities**, each gated by one grant of the registry
//!   ([`grant::ALL`]): `log` by default, the others only when `grants` names them;
//! - **designed, not provided**: world 0.4.0's `notify`
//!   ([`grant::DESIGNED`]), refused saying so;
//! - **the inert WASI baseline** a Rust hook imports just to exist: `wasi:io`,
//!   `wasi:clocks`, `wasi:random`, and `wasi:cli` with stdout/stderr captured
//!   into the output budget, stdin empty, and an environment with no variables
//!   and no arguments;
//! - **inert for Python hooks only**: `wasi:filesystem` and `wasi:sockets`,
//!   which CPython imports whatever its code does, linked with no preopened
//!   directory and every socket use denied (`host::link_wasi`); for every
//!   other hook they stay refused ([`Profile`]);
//! - **never**: anything else (`wasi:http`'s server side, unknown packages).
//!   There is no grant for them.
//!
//! A component importing something not granted is refused at load, naming
//! the import and the grant that would allow it (or that none exists).

use std::collections::BTreeSet;

use crate::sandbox::grant;
/// What every hook is granted unless `grants` says otherwise.
pub const DEFAULT_GRANTS: [&str; 1] = ["log"];

/// What one import needs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "needs", content = "detail", rename_all = "snake_case")]
pub enum Need {
    /// The shared record types of the world: nothing to grant.
    Types,
    /// A capability that must be in `grants`.
    Grant(String),
    /// Part of the inert baseline (what it gives the hook).
    Baseline(String),
    /// Never linked (why).
    Never(String),
}

/// One import as an auditor sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportAudit {
    /// The import, e.g. `hookrt:hook/state@0.2.0`.
    pub import: String,
    /// What it needs.
    #[serde(flatten)]
    pub need: Need,
    /// Whether the hook may have it.
    pub granted: bool,
}

/// Which imports a hook's kind of component may have besides its grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Profile {
    /// Rust, TypeScript and prebuilt components: the inert baseline only.
    #[default]
    Standard,
    /// A Python hook built by hookrt with componentize-py: the baseline, and
    /// `wasi:filesystem` and `wasi:sockets` linked inert.
    Python,
}

/// Classifies an import by its interface name, for a hook of `profile`.
pub(crate) fn classify(import: &str, profile: Profile) -> Need {
    let name = import.split('@').next().unwrap_or(import);
    let (package, interface) = name.split_once('/').unwrap_or((name, ""));
    if let Some(g) = grant::gating(name) {
        return Need::Grant(g.name.into());
    }
    if grant::DESIGNED.contains(&name) {
        return Need::Never(
            "world 0.4.0 declares this grant, but this hookrt does not provide it yet".into(),
        );
    }
    match (package, interface) {
        ("hookrt:hook", "types") => Need::Types,
        ("wasi:io", _) => Need::Baseline("streams for captured output".into()),
        ("wasi:clocks", _) => Need::Baseline("reading the clock".into()),
        ("wasi:random", _) => Need::Baseline("random bytes".into()),
        ("wasi:cli", "stdout" | "stderr") => {
            Need::Baseline("captured into the output budget".into())
        }
        ("wasi:cli", "stdin") => Need::Baseline("empty".into()),
        ("wasi:cli", "environment") => Need::Baseline("no variables, no arguments".into()),
        ("wasi:cli", "exit") => Need::Baseline("ends the delivery as a trap".into()),
        ("wasi:cli", i) if i.starts_with("terminal-") => Need::Baseline("never a terminal".into()),
        ("wasi:filesystem", _) if profile == Profile::Python => {
            Need::Baseline("inert: no preopened directory, every open fails".into())
        }
        ("wasi:sockets", _) if profile == Profile::Python => {
            Need::Baseline("inert: TCP, UDP and name lookup are denied".into())
        }
        ("wasi:filesystem", _) => Need::Never("hookrt grants no filesystem access".into()),
        ("wasi:sockets", _) => Need::Never("hookrt grants no sockets".into()),
        ("wasi:http", _) => Need::Never("hookrt does not serve HTTP to hooks".into()),
        _ => Need::Never("hookrt does not provide this interface".into()),
    }
}

/// Audits every import against `grants`; the error lists each refused import
/// with what would allow it.
pub(crate) fn check(
    imports: &[String],
    grants: &BTreeSet<String>,
    table: &str,
    profile: Profile,
) -> Result<Vec<ImportAudit>, String> {
    let audits: Vec<ImportAudit> = imports
        .iter()
        .map(|import| {
            let need = classify(import, profile);
            let granted = match &need {
                Need::Types | Need::Baseline(_) => true,
                Need::Grant(cap) => grants.contains(cap),
                Need::Never(_) => false,
            };
            ImportAudit {
                import: import.clone(),
                need,
                granted,
            }
        })
        .collect();
    let refused: Vec<String> = audits
        .iter()
        .filter(|a| !a.granted)
        .map(|a| match &a.need {
            Need::Grant(cap) => {
                let mut with: Vec<&str> = grants.iter().map(String::as_str).collect();
                with.push(cap);
                with.sort();
                format!("imports `{}`, which is not granted: add `grants = {with:?}` to [{table}] in hookrt.toml", a.import)
            }
            Need::Never(why) => format!("imports `{}`: {why}; remove the code that uses it", a.import),
            Need::Types | Need::Baseline(_) => String::new(),
        })
        .collect();
    if refused.is_empty() {
        Ok(audits)
    } else {
        Err(refused.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ungranted_import_names_the_grant_that_would_allow_it() {
        let grants: BTreeSet<String> = ["log".to_string()].into();
        let err = check(
            &[
                "hookrt:hook/state@0.2.0".into(),
                "wasi:io/streams@0.2.6".into(),
            ],
            &grants,
            "hooks.\"counter\"",
            Profile::Standard,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "imports `hookrt:hook/state@0.2.0`, which is not granted: add `grants = [\"log\", \"state\"]` to [hooks.\"counter\"] in hookrt.toml"
        );
        let err = check(
            &["wasi:filesystem/preopens@0.2.6".into()],
            &grants,
            "x",
            Profile::Standard,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "imports `wasi:filesystem/preopens@0.2.6`: hookrt grants no filesystem access; remove the code that uses it"
        );
    }

    #[test]
    fn each_refused_interface_says_why_and_a_terminal_is_the_only_other_cli_import() {
        let why = |import: &str| match classify(import, Profile::Standard) {
            Need::Never(why) => why,
            other => panic!("{import} is not refused: {other:?}"),
        };
        assert_eq!(why("wasi:sockets/tcp@0.2.9"), "hookrt grants no sockets");
        assert_eq!(
            why("wasi:filesystem/types@0.2.9"),
            "hookrt grants no filesystem access"
        );
        assert_eq!(
            why("wasi:http/incoming-handler@0.2.9"),
            "hookrt does not serve HTTP to hooks"
        );
        assert_eq!(
            why("wasi:keyvalue/store@0.2.0"),
            "hookrt does not provide this interface"
        );
        // `wasi:cli` is linked for the interfaces named, terminals among them
        // (as none); any other is refused like an unknown interface.
        assert!(matches!(
            classify("wasi:cli/terminal-stdout@0.2.9", Profile::Standard),
            Need::Baseline(_)
        ));
        assert_eq!(
            why("wasi:cli/run@0.2.9"),
            "hookrt does not provide this interface"
        );
    }

    #[test]
    fn only_a_python_hook_may_import_the_inert_filesystem_and_sockets() {
        let grants: BTreeSet<String> = ["log".to_string()].into();
        let imports: Vec<String> = [
            "wasi:filesystem/types@0.2.9",
            "wasi:filesystem/preopens@0.2.9",
            "wasi:sockets/tcp-create-socket@0.2.9",
            "wasi:sockets/ip-name-lookup@0.2.9",
        ]
        .map(String::from)
        .to_vec();
        let audits = check(&imports, &grants, "x", Profile::Python).unwrap();
        assert!(
            audits
                .iter()
                .all(|a| a.granted && matches!(a.need, Need::Baseline(_)))
        );
        let err = check(&imports, &grants, "x", Profile::Standard).unwrap_err();
        assert_eq!(
            err.matches("remove the code that uses it").count(),
            4,
            "{err}"
        );
        // Nothing else widens: HTTP still needs its grant, a server never.
        let err = check(
            &[
                "wasi:http/outgoing-handler@0.2.9".into(),
                "wasi:http/incoming-handler@0.2.9".into(),
            ],
            &grants,
            "x",
            Profile::Python,
        )
        .unwrap_err();
        assert!(
            err.contains("which is not granted") && err.contains("does not serve HTTP"),
            "{err}"
        );
    }
}
