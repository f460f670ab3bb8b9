//! Redaction: secrets masked in everything a hook writes, before it leaves
//! the runtime (delivery records, logs forwarded to `tracing`, `hookrt run`
//! output, dead letters).
//!
//! Built-in patterns cover API keys, bearer tokens and e-mail addresses;
//! `hookrt.toml` adds its own under `[redaction.patterns]`. A match becomes
//! `[redacted:<pattern name>]`. Event `data` never reaches these places at all:
//! hookrt does not copy it into diagnostics; this guards what hooks write.
//! The values of the hooks' `secret` grants are a class of their own
//! ([`Redactor::with_secrets`]): each, as written and as a URL carries it,
//! becomes `[redacted:secret:<name>]` wherever the runtime's redactor masks.

use std::borrow::Cow;

use std::sync::{Arc, LazyLock, OnceLock};

use regex::{Regex, RegexSet};

/// The built-in patterns: (name, regex). API keys also match glued to a word
/// (`token_sk-…`, `KEY=sk-…`: a leading word boundary let `_sk-…` through).
/// The short `sk-`/`pk-`/`rk-` prefixes must not follow a letter or digit,
/// so words such as `task-assessment-…` or `disk-usage-…` stay readable; the
/// distinctive prefixes (`AKIA`, `ghp_`, `xox…`) match anywhere. A pattern's
/// `pre` group, when it has one, is kept in front of the mask.
pub(crate) const BUILTIN: [(&str, &str); 3] = [
    (
        "api-key",
        r"(?:(?P<pre>^|[^A-Za-z0-9])(?:sk|pk|rk)-(?:live-|test-|proj-)?[A-Za-z0-9_\-]{12,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9\-]{10,})",
    ),
    // An ASCII word boundary before `bearer` (it also takes a non-ASCII
    // letter for a boundary, so it masks more, never less): the Unicode one
    // made this pattern nearly three times as slow to compile, a large share
    // of a `hookrt claude-hook` process (docs/performance.md).
    (
        "bearer-token",
        r"(?i)(?-u:\b)bearer\s+[A-Za-z0-9\-._~+/]+=*",
    ),
    (
        "email",
        r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b",
    ),
];

/// Literals one of which every match of a [`BUILTIN`] pattern contains,
/// matched ASCII-case-insensitively (a superset: `bearer` is case-blind, and
/// no non-ASCII letter folds to one of its letters): `@` (email), `bearer`,
/// and the key prefixes. Text with none of them matches no built-in pattern,
/// so the set need not be compiled for it: a process that runs one event
/// (`hookrt claude-hook`) masks a few clean log lines, and compiling the set
/// was a twelfth of it. The tests check the superset on generated text.
const BUILTIN_LITERALS: [&str; 12] = [
    "@", "bearer", "sk-", "pk-", "rk-", "akia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox",
];

/// A set of named patterns. Cloning one shares its patterns (and their
/// search caches): every fresh store takes a redactor for its metrics and
/// its HTTP policy, and copying each pattern, whose copy starts with empty
/// caches, cost more than a cheap hook's call.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Arc<[Arc<Pattern>]>,
    /// What tells that text matches no pattern, shared by the clones.
    screen: Arc<Screen>,
    /// What the patterns make of empty text (nothing, unless one matches
    /// it): most of what a delivery records is empty, and running every
    /// pattern over nothing cost more than the rest of the record.
    empty: Option<String>,
}

/// One named pattern, compiled the first time text matches the set: most
/// text matches none, and a process that runs one event (`hookrt
/// claude-hook`) would compile every pattern twice, alone and in the set,
/// to mask a few clean log lines.
#[derive(Debug)]
struct Pattern {
    name: String,
    source: String,
    regex: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn new(name: &str, source: &str) -> Arc<Pattern> {
        Arc::new(Pattern {
            name: name.to_string(),
            source: source.to_string(),
            regex: OnceLock::new(),
        })
    }

    /// The compiled pattern (`None` only for a built-in that does not
    /// compile, which the tests below rule out; a configured one was
    /// compiled when it was read).
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| Regex::new(&self.source).ok())
            .as_ref()
    }
}

/// An ASCII-case-blind test for any of a few short literals: a table of
/// their first bytes, then a comparison where one may start. Nothing to
/// build: an Aho-Corasick automaton of [`BUILTIN_LITERALS`] took a tenth of
/// a millisecond, a fiftieth of a process that runs one event.
#[derive(Debug)]
struct Literals {
    literals: &'static [&'static str],
    /// Whether a byte (either case) starts one of them.
    first: [bool; 256],
}

impl Literals {
    const fn new(literals: &'static [&'static str]) -> Literals {
        let mut first = [false; 256];
        let mut i = 0;
        while i < literals.len() {
            let b = literals[i].as_bytes()[0];
            first[b.to_ascii_lowercase() as usize] = true;
            first[b.to_ascii_uppercase() as usize] = true;
            i += 1;
        }
        Literals { literals, first }
    }

    /// Whether `text` contains one of the literals, ASCII case aside.
    fn is_match(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        bytes.iter().enumerate().any(|(i, b)| {
            self.first[*b as usize]
                && self.literals.iter().any(|l| {
                    bytes
                        .get(i..i + l.len())
                        .is_some_and(|at| at.eq_ignore_ascii_case(l.as_bytes()))
                })
        })
    }
}

/// The test that text matches no pattern: most text matches none.
#[derive(Debug)]
struct Screen {
    /// [`BUILTIN_LITERALS`], when every pattern is a built-in one.
    literals: Option<&'static Literals>,
    /// The patterns' sources, for the set.
    sources: Vec<String>,
    /// Every pattern at once, compiled the first time text passes the
    /// literals (`None` if the set did not compile: then each is tried).
    set: OnceLock<Option<RegexSet>>,
}

impl Screen {
    fn new(patterns: &[Arc<Pattern>], builtin_only: bool) -> Screen {
        static BUILTIN_SCREEN: Literals = Literals::new(&BUILTIN_LITERALS);
        let literals = builtin_only.then_some(&BUILTIN_SCREEN);
        Screen {
            literals,
            sources: patterns.iter().map(|p| p.source.clone()).collect(),
            set: OnceLock::new(),
        }
    }

    /// Whether `text` may match a pattern (`false`: it matches none).
    fn may_match(&self, text: &str) -> bool {
        if self.literals.is_some_and(|l| !l.is_match(text)) {
            return false;
        }
        let set = self.set.get_or_init(|| RegexSet::new(&self.sources).ok());
        set.as_ref().is_none_or(|set| set.is_match(text))
    }
}

/// The built-in patterns, shared by every redactor of the process, each
/// compiled at most once.
static BUILTIN_PATTERNS: LazyLock<Vec<Arc<Pattern>>> =
    LazyLock::new(|| BUILTIN.iter().map(|(n, r)| Pattern::new(n, r)).collect());

/// The built-in redactor, set up once (working out `empty` runs the set);
/// every default redactor shares it.
static DEFAULT: LazyLock<Redactor> =
    LazyLock::new(|| Redactor::from_patterns(BUILTIN_PATTERNS.clone(), true));

impl Default for Redactor {
    fn default() -> Self {
        DEFAULT.clone()
    }
}

impl Redactor {
    /// The built-in patterns plus `extra` (name, regex); the error names the
    /// pattern that does not compile.
    pub(crate) fn with(extra: &[(String, String)]) -> Result<Redactor, String> {
        // Most folders add none: the built-in set, compiled once, is shared
        // (a second copy of it was most of what loading a config cost).
        if extra.is_empty() {
            return Ok(Redactor::default());
        }
        let mut patterns = BUILTIN_PATTERNS.clone();
        for (name, re) in extra {
            let compiled = Regex::new(re)
                .map_err(|e| format!("redaction pattern `{name}` is not a valid regex: {e}"))?;
            let pattern = Pattern::new(name, re);
            let _ = pattern.regex.set(Some(compiled));
            patterns.push(pattern);
        }
        Ok(Redactor::from_patterns(patterns, false))
    }

    /// This redactor, and every secret value of `secrets` (name, value)
    /// masked as `[redacted:secret:<name>]`, as written and percent-encoded
    /// ([`percent_encoded`], the form a query or path carries): the values
    /// come first, so no other pattern cuts one in two.
    pub(crate) fn with_secrets(&self, secrets: &[(String, String)]) -> Redactor {
        if secrets.is_empty() {
            return self.clone();
        }
        let mut patterns: Vec<Arc<Pattern>> = secrets
            .iter()
            .map(|(name, value)| {
                let mut forms = vec![regex::escape(value)];
                let encoded = percent_encoded(value);
                if encoded != *value {
                    forms.push(regex::escape(&encoded));
                }
                Pattern::new(&format!("secret:{name}"), &forms.join("|"))
            })
            .collect();
        patterns.extend(self.patterns.iter().cloned());
        Redactor::from_patterns(patterns, false)
    }

    fn from_patterns(patterns: Vec<Arc<Pattern>>, builtin_only: bool) -> Redactor {
        let mut r = Redactor {
            screen: Arc::new(Screen::new(&patterns, builtin_only)),
            patterns: patterns.into(),
            empty: None,
        };
        r.empty = r.apply("").map(Cow::into_owned);
        r
    }

    /// `text` with every match masked.
    pub(crate) fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if text.is_empty() {
            return match &self.empty {
                None => Cow::Borrowed(text),
                Some(masked) => Cow::Owned(masked.clone()),
            };
        }
        self.apply(text).unwrap_or(Cow::Borrowed(text))
    }

    /// `text` with every match masked; `None` when nothing matched.
    fn apply<'t>(&self, text: &'t str) -> Option<Cow<'t, str>> {
        if !self.screen.may_match(text) {
            return None;
        }
        let mut out = Cow::Borrowed(text);
        for (name, re) in self
            .patterns
            .iter()
            .filter_map(|p| Some((&p.name, p.regex()?)))
        {
            if re.is_match(&out) {
                out = Cow::Owned(
                    re.replace_all(&out, format!("${{pre}}[redacted:{name}]").as_str())
                        .into_owned(),
                );
            }
        }
        match out {
            Cow::Borrowed(_) => None,
            owned => Some(owned),
        }
    }
}

/// `text` percent-encoded: every byte but the unreserved ones of RFC 3986
/// as `%XX` (how a secret is written into a query or a path).
pub(crate) fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if unreserved(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URL's unreserved characters (RFC 3986): what needs no encoding.
pub(crate) fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_value_is_masked_as_its_class_as_written_and_percent_encoded() {
        let r = Redactor::default().with_secrets(&[("ntfy".into(), "tk_a+b/c=0123456789".into())]);
        assert_eq!(
            r.mask(
                "sent tk_a+b/c=0123456789 and ?t=tk_a%2Bb%2Fc%3D0123456789, mail ops@example.com"
            ),
            "sent [redacted:secret:ntfy] and ?t=[redacted:secret:ntfy], mail [redacted:email]"
        );
        // A value a built-in pattern also matches is masked whole, as the secret.
        let r = Redactor::default()
            .with_secrets(&[("openai".into(), "sk-live-4f9a8b7c6d5e4f3a2b1c".into())]);
        assert_eq!(
            r.mask("key=sk-live-4f9a8b7c6d5e4f3a2b1c"),
            "key=[redacted:secret:openai]"
        );
        assert_eq!(r.mask("nothing here"), "nothing here");
    }

    #[test]
    fn empty_text_is_masked_as_the_patterns_say_without_running_them() {
        assert_eq!(Redactor::default().mask(""), Cow::Borrowed(""));
        let greedy = Redactor::with(&[("all".into(), "x*".into())]).unwrap();
        assert_eq!(greedy.mask(""), "[redacted:all]");
        assert_eq!(greedy.mask("y"), "[redacted:all]y[redacted:all]");
    }

    #[test]
    fn every_builtin_pattern_compiles_alone_and_in_the_set() {
        for (name, re) in BUILTIN {
            assert!(Regex::new(re).is_ok(), "built-in pattern `{name}`");
        }
        let r = Redactor::default();
        assert!(r.screen.may_match("sk-live-4f9a8b7c6d5e4f3a2b1c"));
        assert!(matches!(r.screen.set.get(), Some(Some(_))));
    }

    #[test]
    fn the_literals_are_found_anywhere_in_either_case_and_only_whole() {
        let l = Literals::new(&BUILTIN_LITERALS);
        for text in [
            "@",
            "x@",
            "BeArEr",
            "..sk-",
            "AKIA",
            "ghs_",
            "é xox",
            "pre GHP_x",
        ] {
            assert!(l.is_match(text), "{text:?}");
        }
        for text in [
            "",
            "sk",
            "beare",
            "gh_",
            "ak ia",
            "xo",
            "skx-",
            "plain text, no key",
        ] {
            assert!(!l.is_match(text), "{text:?}");
        }
    }

    #[test]
    fn text_without_a_builtin_literal_matches_no_builtin_pattern() {
        let screen = Screen::new(&BUILTIN_PATTERNS, true);
        let set = RegexSet::new(BUILTIN.iter().map(|(_, re)| re)).unwrap();
        let passes = |text: &str| {
            screen
                .literals
                .expect("built-in patterns are screened by literals")
                .is_match(text)
        };
        // Every kind of match, in any case the patterns take.
        for text in [
            "Bearer abc.def",
            "BEARER x",
            "x bEaReR\tq=",
            "ops@example.com",
            "a@b.co",
            "sk-live-4f9a8b7c6d5e4f3a2b1c",
            "token_pk-test-abcdefghijklmnop",
            "rk-0123456789ab",
            "AKIAABCDEFGHIJKLMNOP",
            "x9ghp_abcdefghijklmnopqrstuvwxyz",
            "gho_abcdefghijklmnopqrstu ghu_abcdefghijklmnopqrstu ghs_abcdefghijklmnopqrstu ghr_abcdefghijklmnopqrstu",
            "xoxb-0123456789 xoxa-0123456789 xoxp-0123456789 xoxr-0123456789",
        ] {
            assert!(set.is_match(text), "{text:?} is a match");
            assert!(passes(text), "{text:?} passes the screen");
        }
        // Generated text over the patterns' own characters: whatever the
        // set matches passes the literals.
        let alphabet: Vec<char> = "skpr-AKIAghpousr_xoxab@.eBEARbearer Zz09é\t=+/~K\u{212a}\u{17f}"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut matched = 0;
        for _ in 0..200_000 {
            let len = 8 + (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            if set.is_match(&text) {
                matched += 1;
                assert!(
                    passes(&text),
                    "{text:?} matches a pattern but not the screen"
                );
            }
        }
        assert!(
            matched > 1_000,
            "the generated text matched {matched} times"
        );
    }

    #[test]
    fn builtin_patterns_mask_keys_tokens_and_emails() {
        let r = Redactor::with(&[]).unwrap();
        assert_eq!(r.patterns.len(), 3);
        assert_eq!(
            r.mask("key sk-live-4f9a8b7c6d5e4f3a2b1c, Authorization: Bearer abc.def-ghi, mail ops@example.com, AKIAABCDEFGHIJKLMNOP"),
            "key [redacted:api-key], Authorization: [redacted:bearer-token], mail [redacted:email], [redacted:api-key]"
        );
        assert_eq!(r.mask("nothing secret here"), "nothing secret here");
    }

    #[test]
    fn api_keys_glued_to_a_word_are_masked() {
        let r = Redactor::default();
        assert_eq!(
            r.mask("token_sk-live-4f9a8b7c6d5e4f3a2b1c x9ghp_abcdefghijklmnopqrstuvwxyz"),
            "token_[redacted:api-key] x9[redacted:api-key]"
        );
        assert_eq!(
            r.mask("task-assessment-document-v2 on disk-usage-report-2026"),
            "task-assessment-document-v2 on disk-usage-report-2026",
            "words that merely contain sk- stay readable"
        );
        assert_eq!(r.mask("sk-live-4f9a8b7c6d5e4f3a2b1c"), "[redacted:api-key]");
    }

    #[test]
    fn configured_patterns_add_to_the_builtins_and_bad_ones_are_named() {
        let r = Redactor::with(&[("ticket".into(), r"INT-[0-9]{6}".into())]).unwrap();
        assert_eq!(r.mask("see INT-123456"), "see [redacted:ticket]");
        assert!(
            Redactor::with(&[("bad".into(), "(".into())])
                .unwrap_err()
                .starts_with("redaction pattern `bad` is not a valid regex")
        );
    }
}
