//! The `secrets` pack: what looks like a credential (a cloud key, an API
//! token, a private key) in a tool call's input, in a tool's output or in a
//! prompt the user submits, found by named detectors: built-in ones (which
//! `disable` switches off) and the user's own `patterns`. Findings are the
//! detectors' names only: nothing here returns, quotes or logs a matched
//! value.
//!
//! The regex crate is built without its literal and DFA optimizations, so a
//! built-in detector first looks for its fixed text (`AKIA`, `ghp_`, …) and
//! runs its expression only on the stretch of text around each occurrence.

use std::collections::BTreeMap;

use crate::Invalid;
use regex::Regex;
use serde::{Deserialize, Serialize};

/// What the pack does when it finds a secret somewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The call (or the prompt) is refused, with the reason.
    Deny,
    /// A human is asked, with the reason.
    Ask,
    /// Nothing is refused; the model is told what was found.
    Context,
    /// Nothing is checked there.
    Off,
}

/// `[packs.secrets]` in `hookrt.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// A secret in a tool call's input: `"deny"` (the default), `"ask"`,
    /// `"context"` or `"off"`.
    pub input: Action,
    /// A secret in a tool's output, once the call ran: `"context"` (the
    /// default: the model is told not to repeat it) or `"off"`.
    pub output: Action,
    /// A secret in a prompt the user submits: `"deny"` (the default: the
    /// prompt is blocked, the user told why), `"context"` or `"off"`.
    pub prompt: Action,
    /// More detectors: a name = a regular expression, run over all the text.
    pub patterns: BTreeMap<String, String>,
    /// Built-in detectors switched off, by name.
    pub disable: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            input: Action::Deny,
            output: Action::Context,
            prompt: Action::Deny,
            patterns: BTreeMap::new(),
            disable: Vec::new(),
        }
    }
}

/// The built-in detectors in the order findings are reported: name, the
/// fixed texts one of which every match holds, and the expression.
///
/// | name | what it matches |
/// |---|---|
/// | aws-access-key | an AWS access key id: `AKIA` or `ASIA` and 16 upper-case letters or digits, a word of its own |
/// | github-token | a GitHub token: `ghp_`, `gho_`, `ghu_`, `ghs_` or `ghr_` and 36 or more letters or digits; `github_pat_` and 22 or more |
/// | gitlab-token | a GitLab personal access token: `glpat-` and 20 or more |
/// | slack-token | a Slack token: `xoxa-`, `xoxb-`, `xoxp-`, `xoxr-` or `xoxs-` and 10 or more |
/// | slack-webhook | a Slack incoming webhook: `https://hooks.slack.com/services/` and its path |
/// | stripe-key | a live Stripe secret or restricted key: `sk_live_` or `rk_live_` and 20 or more |
/// | anthropic-key | an Anthropic API key: `sk-ant-` and 20 or more |
/// | openai-key | an OpenAI API key: `sk-` (`sk-proj-`, `sk-svcacct-`, `sk-admin-`) and 20 or more mixing upper case, lower case and digits; not `sk-ant-` |
/// | google-api-key | a Google API key: `AIza` and 35 |
/// | npm-token | an npm access token: `npm_` and 36 letters or digits, a word of its own |
/// | pypi-token | a PyPI upload token: `pypi-AgEIcHlwaS5vcmc` and 50 or more |
/// | private-key | a PEM or PGP private key's header: `-----BEGIN … PRIVATE KEY-----` (`… BLOCK-----` for PGP) |
/// | jwt | a JSON Web Token: three base64url parts, the first two opening a JSON object (`eyJ`) |
#[rustfmt::skip]
const DETECTORS: [(&str, &[&str], &str); 13] = [
    ("aws-access-key", &["AKIA", "ASIA"], r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("github-token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab-token", &["glpat-"], r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("slack-token", &["xox"], r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("slack-webhook", &["hooks.slack.com/services/"],
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"),
    ("stripe-key", &["_live_"], r"\b(sk|rk)_live_[A-Za-z0-9]{20,}"),
    ("anthropic-key", &["sk-ant-"], r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai-key", &["sk-"], r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("google-api-key", &["AIza"], r"\bAIza[0-9A-Za-z_-]{35}"),
    ("npm-token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi-token", &["pypi-AgEIcHlwaS5vcmc"], r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    ("private-key", &["-----BEGIN "], r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"),
    ("jwt", &["eyJ"], r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
];

/// The built-in detectors' names, in the order findings are reported.
pub fn built_in_names() -> Vec<&'static str> {
    DETECTORS.iter().map(|d| d.0).collect()
}

/// The most text one call of [`Scanner::find`] or [`Scanner::find_in_json`]
/// reads (1 MiB); what lies beyond it is not scanned.
pub const SCAN_LIMIT: usize = 1 << 20;

/// The settings with their detectors compiled.
#[derive(Debug, Clone)]
pub struct Scanner {
    settings: Settings,
    /// The detectors switched on, built-ins (with their fixed texts) first.
    detectors: Vec<(String, &'static [&'static str], Regex)>,
}

impl Scanner {
    /// Checks the settings and compiles the detectors, or says which key is
    /// wrong and why.
    pub fn new(settings: Settings) -> Result<Scanner, Invalid> {
        if matches!(settings.output, Action::Deny | Action::Ask) {
            return Err(Invalid::new(
                "output",
                "`output` cannot be \"deny\" or \"ask\": the call already ran; \
                 use \"context\" or \"off\"",
            ));
        }
        if settings.prompt == Action::Ask {
            return Err(Invalid::new(
                "prompt",
                "`prompt` cannot be \"ask\": the user wrote it; \
                 use \"deny\", \"context\" or \"off\"",
            ));
        }
        let names = built_in_names();
        let mut disabled = settings.disable.iter().enumerate();
        if let Some((i, name)) = disabled.find(|(_, d)| !names.contains(&d.as_str())) {
            return Err(Invalid::new(
                format!("disable[{i}]"),
                format!(
                    "`disable[{i}]`: `{name}` is not a built-in detector; they are: {}",
                    names.join(", ")
                ),
            ));
        }
        let mut detectors: Vec<_> = DETECTORS
            .iter()
            .filter(|(name, _, _)| !settings.disable.iter().any(|d| d == name))
            .map(|&(name, fixed, re)| (name.into(), fixed, Regex::new(re).expect("built in")))
            .collect();
        for (name, pattern) in &settings.patterns {
            let key = format!("patterns.{name}");
            if names.contains(&name.as_str()) {
                return Err(Invalid::new(
                    &key,
                    format!("`{key}`: a built-in detector has that name"),
                ));
            }
            let re = Regex::new(pattern).map_err(|e| {
                Invalid::new(&key, format!("`{key}` is not a regular expression: {e}"))
            })?;
            if re.is_match("") {
                return Err(Invalid::new(
                    &key,
                    format!("`{key}` matches the empty text"),
                ));
            }
            detectors.push((name.clone(), &[][..], re));
        }
        Ok(Scanner {
            settings,
            detectors,
        })
    }

    /// The settings the scanner was made from.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The names of the detectors matching `text` (its first [`SCAN_LIMIT`]
    /// bytes), each once: built-ins in table order, then the settings'
    /// patterns by name. Never the matched text.
    pub fn find(&self, text: &str) -> Vec<String> {
        let mut hits = vec![false; self.detectors.len()];
        self.scan(cut(text, SCAN_LIMIT), &mut hits);
        self.names(&hits)
    }

    /// Like [`Scanner::find`] over every string in `value` (object keys and
    /// values, at any depth), reading at most [`SCAN_LIMIT`] bytes in all.
    pub fn find_in_json(&self, value: &serde_json::Value) -> Vec<String> {
        use serde_json::Value;
        let mut hits = vec![false; self.detectors.len()];
        let mut budget = SCAN_LIMIT;
        let mut read = |s: &str, budget: &mut usize| {
            let s = cut(s, *budget);
            *budget -= s.len();
            self.scan(s, &mut hits);
        };
        let mut stack = vec![value];
        while let Some(v) = stack.pop().filter(|_| budget > 0) {
            match v {
                Value::String(s) => read(s, &mut budget),
                Value::Array(items) => stack.extend(items.iter().rev()),
                Value::Object(map) => {
                    map.keys().for_each(|k| read(k, &mut budget));
                    stack.extend(map.values().rev());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        self.names(&hits)
    }

    /// `text` (its first [`SCAN_LIMIT`] bytes) with every match of every
    /// detector replaced by `[redacted:NAME]`: for short texts written
    /// where others read them (the audit log), not for scanning.
    pub fn mask(&self, text: &str) -> String {
        let mut out = cut(text, SCAN_LIMIT).to_owned();
        for (name, _, re) in &self.detectors {
            let marker = format!("[redacted:{name}]");
            out = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let m = c.get(0).map_or("", |m| m.as_str());
                    if name == "openai-key" && !openai(m) {
                        m.to_owned()
                    } else {
                        marker.clone()
                    }
                })
                .into_owned();
        }
        out
    }

    /// Marks in `hits` the detectors that match `text`.
    fn scan(&self, text: &str, hits: &mut [bool]) {
        for ((name, fixed, re), hit) in self.detectors.iter().zip(hits.iter_mut()) {
            let matches = |t: &str| match name.as_str() {
                "openai-key" => re.find_iter(t).any(|m| openai(m.as_str())),
                _ => re.is_match(t),
            };
            *hit = *hit
                || if fixed.is_empty() {
                    matches(text)
                } else {
                    fixed.iter().any(|f| near(text, f, matches))
                };
        }
    }

    fn names(&self, hits: &[bool]) -> Vec<String> {
        let on = self.detectors.iter().zip(hits).filter(|(_, hit)| **hit);
        on.map(|((name, _, _), _)| name.clone()).collect()
    }
}

/// Whether `matches` holds for a stretch of `text` around an occurrence of
/// `fixed`: from the start of the word before it to the end of the word
/// 4 KiB on, so that `\b` reads there as in the whole text. A stretch read
/// covers the occurrences up to 256 bytes (more than any detector's shortest
/// match) before its end, so no byte is read more than about twice.
fn near(text: &str, fixed: &str, matches: impl Fn(&str) -> bool) -> bool {
    let word = |b: u8| b >= 0x80 || b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    let mut covered = 0;
    for (at, _) in text.match_indices(fixed) {
        if at < covered {
            continue;
        }
        let mut start = at.saturating_sub(16);
        while start > 0 && word(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = (at + 4096).min(text.len());
        while end < text.len() && word(bytes[end]) {
            end += 1;
        }
        if matches(&text[start..end]) {
            return true;
        }
        covered = if end == text.len() { end } else { end - 256 };
    }
    false
}

/// A match of the openai-key expression that is one: not an Anthropic key,
/// and random-looking (upper case, lower case and digits after `sk-`).
fn openai(m: &str) -> bool {
    let rest = m[3..].bytes();
    !m.starts_with("sk-ant-")
        && rest.clone().any(|b| b.is_ascii_digit())
        && rest.clone().any(|b| b.is_ascii_uppercase())
        && rest.clone().any(|b| b.is_ascii_lowercase())
}

/// `text`'s first `limit` bytes at most, cut on a character's boundary.
fn cut(text: &str, limit: usize) -> &str {
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// "a github-token", "an aws-access-key and a jwt": the kinds in words.
fn what(kinds: &[String]) -> String {
    let each: Vec<String> = kinds
        .iter()
        .map(|k| match k.as_bytes().first().map(u8::to_ascii_lowercase) {
            Some(b'a' | b'e' | b'i' | b'o' | b'u') => format!("an {k}"),
            _ => format!("a {k}"),
        })
        .collect();
    match each.as_slice() {
        [] => "a secret".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Why a tool call whose input holds a secret is refused (or asked about),
/// naming the tool and the kinds found, never the value.
pub fn input_reason(tool: &str, kinds: &[String]) -> String {
    format!(
        "secrets: the `{tool}` call's input holds what looks like {}; a secret written into \
         a call stays in the transcript and goes wherever the call sends it. fix: use an \
         environment variable or the host's secret grant, never the value itself",
        what(kinds)
    )
}

/// What the model is told when a tool's output holds a secret, naming the
/// tool and the kinds found, never the value.
pub fn output_context(tool: &str, kinds: &[String]) -> String {
    format!(
        "secrets: the output of `{tool}` holds what looks like {}. Do not repeat, store or \
         send it (not in a reply, a file, a commit or another tool call); tell the user it \
         was exposed and that they should rotate it",
        what(kinds)
    )
}

/// What the user is told when their prompt is blocked for holding a secret,
/// naming the kinds found, never the value. The prompt never reaches the model.
pub fn prompt_reason(kinds: &[String]) -> String {
    format!(
        "secrets: the prompt was blocked because it holds what looks like {}; it was not \
         sent to the model. Remove it (and rotate it if it is real), then send the prompt again",
        what(kinds)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `n` random-looking letters and digits, as real tokens are.
    fn rand(n: usize) -> String {
        "x7Kp2Qm9Zr4Lw8Tn3Vb6Hc1Jd5Fg0Ys"
            .chars()
            .cycle()
            .take(n)
            .collect()
    }

    fn found(text: &str) -> Vec<String> {
        Scanner::new(Settings::default()).unwrap().find(text)
    }

    fn aws() -> String {
        format!("{}{}", "AKIA", "IOSFODNN7EXAMPLE")
    }

    /// A fake secret of each built-in kind, built from pieces.
    #[rustfmt::skip]
    fn fakes() -> Vec<(String, &'static str)> {
        let pem = |kind: &str| format!("{}{kind} PRIVATE KEY-----\nMIIE", "-----BEGIN ");
        vec![
            (aws(), "aws-access-key"),
            (format!("{}{}", "ASIA", "Y34FZKBOKMUTVV7A"), "aws-access-key"),
            (format!("{}{}", "ghp_", rand(36)), "github-token"),
            (format!("{}{}", "ghs_", rand(40)), "github-token"),
            (format!("{}{}_{}", "github_pat_", rand(22), rand(59)), "github-token"),
            (format!("{}{}", "glpat-", rand(20)), "gitlab-token"),
            (format!("{}-1234567890-{}", "xoxb", rand(24)), "slack-token"),
            (format!("https://{}/T0000/B0000/{}", "hooks.slack.com/services", rand(24)), "slack-webhook"),
            (format!("{}{}", "sk_live_", rand(24)), "stripe-key"),
            (format!("{}{}", "rk_live_", rand(99)), "stripe-key"),
            (format!("{}{}AA", "sk-ant-api03-", rand(93)), "anthropic-key"),
            (format!("{}{}{}{}", "sk-", rand(20), "T3BlbkFJ", rand(20)), "openai-key"),
            (format!("{}{}{}{}", "sk-proj-", rand(74), "T3BlbkFJ", rand(74)), "openai-key"),
            (format!("{}{}", "AIza", rand(35)), "google-api-key"),
            (format!("{}{}", "npm_", rand(36)), "npm-token"),
            (format!("{}{}", "pypi-AgEIcHlwaS5vcmc", rand(60)), "pypi-token"),
            (pem("RSA"), "private-key"),
            (pem("OPENSSH"), "private-key"),
            (pem("ENCRYPTED"), "private-key"),
            (format!("{}PRIVATE KEY-----", "-----BEGIN "), "private-key"),
            (format!("{}PGP PRIVATE KEY BLOCK-----", "-----BEGIN "), "private-key"),
            (format!("{}.{}.{}", "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", rand(43)), "jwt"),
        ]
    }

    #[test]
    fn each_built_in_detector_finds_its_fake_secret_and_only_it() {
        let far = "é word. ".repeat(2000);
        for (secret, kind) in fakes() {
            for text in [
                secret.clone(),
                format!("export KEY=\"{secret}\" # set"),
                format!("{far}x={secret}\n{far}"),
            ] {
                assert_eq!(found(&text), [kind], "{kind} in {secret}");
            }
        }
    }

    #[test]
    #[rustfmt::skip]
    fn near_misses_pass() {
        for text in [
            format!("{}{}", "AKIA", "IOSFODNN7EXAMP"),
            format!("{}{}", "AKIA", "IOSFODNN7EXAMPLEX"),
            format!("x{}", aws()),
            format!("{}{}", "akia", "iosfodnn7example"),
            "the desk-antechamber-of-the-old-house is quiet".into(),
            "sk-this-is-a-long-kebab-case-identifier-name".into(),
            format!("{}{}", "-----BEGIN ", "PUBLIC KEY-----\nMIIB"),
            format!("{}{}", "-----BEGIN ", "RSA PUBLIC KEY-----"),
            format!("{}{}", "-----BEGIN ", "CERTIFICATE-----"),
            "Please refactor the parser and add tests for the key rotation docs.".into(),
            "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)".into(),
            "id 123e4567-e89b-12d3-a456-426614174000".into(),
            format!("{}{}", "ghp_", rand(20)),
            format!("{}{}", "sk_test_", rand(24)),
            format!("{}{}", "npm_", rand(35)),
            format!("{}{}", "AIza", rand(20)),
            format!("{}.{}", "eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
            "xoxb-short https://hooks.slack.com/services/".into(),
            String::new(),
        ] {
            assert!(found(&text).is_empty(), "{text}: {:?}", found(&text));
        }
    }

    #[test]
    fn findings_come_once_each_in_table_order() {
        let ant = format!("{}{}", "sk-ant-api03-", rand(40));
        let oai = format!("{}{}", "sk-proj-", rand(48));
        let text = format!("{oai} {} {ant} {} {oai}", aws(), aws());
        assert_eq!(
            found(&text),
            ["aws-access-key", "anthropic-key", "openai-key"]
        );
        // Many occurrences of a detector's fixed text, none a secret, then one.
        let text = format!("{} {}", "sk- AKIA eyJ. ".repeat(50_000), aws());
        assert_eq!(found(&text), ["aws-access-key"]);
        // A secret anywhere after an occurrence of its fixed text, across
        // the end of the stretch read around that occurrence.
        let jwt = fakes().pop().unwrap().0;
        for k in (3900..4200).step_by(7) {
            assert_eq!(
                found(&format!("eyJ.{}{jwt}", " ".repeat(k))),
                ["jwt"],
                "{k}"
            );
        }
    }

    #[test]
    fn find_in_json_reads_every_string_key_and_value_at_any_depth() {
        let s = Scanner::new(Settings::default()).unwrap();
        let npm = format!("{}{}", "npm_", rand(36));
        let input = json!({
            "command": "ls",
            "env": [{ "deep": [1, true, null, { "x": format!("token={npm}") }] }],
            format!("{}{}", "glpat-", rand(24)): "a key that is a secret",
        });
        assert_eq!(s.find_in_json(&input), ["gitlab-token", "npm-token"]);
        assert!(
            s.find_in_json(&json!({"command": "cargo test", "n": 3}))
                .is_empty()
        );
        assert_eq!(s.find_in_json(&json!(npm)), ["npm-token"]);
    }

    #[test]
    fn scanning_stops_after_the_limit() {
        let s = Scanner::new(Settings::default()).unwrap();
        let filler = "a ".repeat(SCAN_LIMIT / 2);
        assert!(s.find_in_json(&json!([filler, aws()])).is_empty());
        assert_eq!(s.find_in_json(&json!([aws(), filler])), ["aws-access-key"]);
        assert!(s.find(&format!("{filler}{}", aws())).is_empty());
        // A cut inside a character does not panic.
        assert!(s.find(&"é".repeat(SCAN_LIMIT)).is_empty());
        assert!(
            s.find_in_json(&json!(["x", "é".repeat(SCAN_LIMIT)]))
                .is_empty()
        );
    }

    /// A scanner made from settings written as JSON (the host reads TOML).
    fn scanner(settings: &str) -> Result<Scanner, String> {
        Scanner::new(serde_json::from_str(settings).map_err(|e| e.to_string())?)
            .map_err(|e| e.message)
    }

    #[test]
    fn disable_and_patterns_apply() {
        let s = r#"{"disable": ["jwt", "aws-access-key"],
                    "patterns": {"itk": "\\bitk_[a-f0-9]{32}\\b", "acme": "ACME-[0-9]{8}"}}"#;
        let s = scanner(s).unwrap();
        let jwt = fakes().pop().unwrap().0;
        assert!(s.find(&format!("{} {jwt}", aws())).is_empty());
        let itk = format!("itk_{}", "0123456789abcdef".repeat(2));
        let text = format!("{itk} ACME-12345678 {}{}", "ghp_", rand(36));
        assert_eq!(s.find(&text), ["github-token", "acme", "itk"]);
        assert_eq!(s.settings().disable.len(), 2);
    }

    #[test]
    fn wrong_settings_are_refused_naming_the_key() {
        let refused = |t: &str| scanner(t).unwrap_err();
        let e = refused(r#"{"patterns": {"mine": "("}}"#);
        assert!(
            e.contains("`patterns.mine` is not a regular expression"),
            "{e}"
        );
        assert!(refused(r#"{"patterns": {"any": "x*"}}"#).contains("`patterns.any` matches"));
        assert!(refused(r#"{"patterns": {"jwt": "x"}}"#).contains("`patterns.jwt`"));
        let e = refused(r#"{"disable": ["jwt", "aws-key"]}"#);
        assert!(e.contains("`disable[1]`: `aws-key`"), "{e}");
        assert!(built_in_names().iter().all(|n| e.contains(n)), "{e}");
        assert!(refused(r#"{"output": "deny"}"#).contains("`output`"));
        assert!(refused(r#"{"output": "ask"}"#).contains("`output`"));
        assert!(refused(r#"{"prompt": "ask"}"#).contains("`prompt`"));
        assert!(refused(r#"{"answer": "deny"}"#).contains("answer"));
        assert!(refused(r#"{"input": "block"}"#).contains("block"));
        for ok in [
            r#"{"input": "ask", "output": "off", "prompt": "context"}"#,
            r#"{"input": "context", "output": "context", "prompt": "off"}"#,
            r#"{"input": "off", "prompt": "deny", "disable": [], "patterns": {}}"#,
        ] {
            assert!(scanner(ok).is_ok(), "{ok}");
        }
        let d = scanner("{}").unwrap();
        assert_eq!(d.settings(), &Settings::default());
        let want = (Action::Deny, Action::Context, Action::Deny);
        assert_eq!(
            (d.settings().input, d.settings().output, d.settings().prompt),
            want
        );
    }

    #[test]
    fn messages_name_the_tool_and_kinds_and_never_the_secret() {
        let s = Scanner::new(Settings::default()).unwrap();
        for (secret, kind) in fakes() {
            let kinds = s.find(&secret);
            let input = input_reason("Bash", &kinds);
            let output = output_context("Read", &kinds);
            let prompt = prompt_reason(&kinds);
            for m in [&input, &output, &prompt] {
                assert!(m.contains(kind) && !m.contains(&secret), "{m}");
            }
            assert!(input.contains("the `Bash` call's input") && input.contains("fix:"));
            assert!(output.contains("`Read`") && output.contains("rotate"));
            assert!(prompt.contains("not sent to the model") && prompt.contains("Remove"));
        }
        let k = |v: &[&str]| what(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(k(&[]), "a secret");
        assert_eq!(k(&["aws-access-key", "jwt"]), "an aws-access-key and a jwt");
        assert_eq!(
            k(&["jwt", "npm-token", "openai-key"]),
            "a jwt, a npm-token and an openai-key"
        );
    }
}
