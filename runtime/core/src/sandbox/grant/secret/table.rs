//! The `secret` table: each secret a hook may send, where its value comes
//! from (an environment variable of hookrt's process, or a file), the
//! origins it may go to and where in a request it goes (one header, one
//! query parameter, or a path part). Read and checked from
//! `[hooks."<slug>".grants.secret.secrets.<name>]`. The value itself is
//! never here: the lock pins this table, never a value.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::sandbox::grant::setting;
use crate::sandbox::http::Entry;
use crate::sandbox::redaction::unreserved;

/// What the path template writes where the value goes.
pub(crate) const PATH_SLOT: &str = "{secret}";

/// The `secret` table of one hook.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Table {
    /// Its secrets, by the name the hook sends them by.
    pub secrets: BTreeMap<String, Binding>,
}

/// One secret: its source, its origins and where it goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Binding {
    /// Where hookrt reads the value.
    pub source: Source,
    /// The origins (`https://host[:port]`, `http://host:port`) a request
    /// carrying it may go to, each one scheme, host and port exactly.
    pub origins: Vec<String>,
    /// Where in the request hookrt puts it.
    pub put: Put,
}

/// Where a secret's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An environment variable of hookrt's own process.
    Env(String),
    /// A file (absolute, or `~/…` under `HOME`) that must be the user's own,
    /// mode 0600 or stricter.
    File(String),
}

/// Where in the request the value goes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Put {
    /// One header, its value `prefix` then the secret (`Bearer `).
    Header {
        /// The header's name.
        name: String,
        /// Written before the value.
        prefix: String,
    },
    /// One query parameter of this name, percent-encoded.
    Query(String),
    /// A path template holding [`PATH_SLOT`] once, put in front of the
    /// request's own path (`/bot{secret}`), the value percent-encoded.
    Path(String),
}

impl Source {
    /// Where it is read, as `audit` says it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::Env(var) => format!("env {var}"),
            Source::File(path) => format!("file {path}"),
        }
    }
}

impl Put {
    /// Where it goes, as `audit` says it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Put::Header { name, prefix } if prefix.is_empty() => format!("header {name}"),
            Put::Header { name, prefix } => format!("header {name}: {prefix}<secret>"),
            Put::Query(param) => format!("query ?{param}=<secret>"),
            Put::Path(template) => format!("path {}", template.replace(PATH_SLOT, "<secret>")),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    secrets: BTreeMap<String, RawBinding>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBinding {
    env: Option<String>,
    file: Option<String>,
    #[serde(default)]
    origins: Vec<String>,
    header: Option<String>,
    prefix: Option<String>,
    query: Option<String>,
    path: Option<String>,
}

/// Headers hookrt writes itself, or that frame the message: a table may not
/// put a secret in them, nor a hook set them.
pub(crate) const RESERVED_HEADERS: [&str; 7] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
];

/// Reads the `secret` table; the problems say what is wrong.
pub(crate) fn parse(value: Option<&toml::Value>) -> Result<Table, Vec<String>> {
    let Some(value) = value else {
        return Err(vec![
            "needs its table naming the secrets: [hooks.\"<slug>\".grants.secret.secrets.<name>]"
                .to_owned(),
        ]);
    };
    let raw: RawTable = setting::raw(value)?;
    let mut problems = Vec::new();
    if raw.secrets.is_empty() {
        problems.push("names no secret: add [...grants.secret.secrets.<name>]".to_owned());
    }
    let mut secrets = BTreeMap::new();
    for (name, b) in raw.secrets {
        match binding(&name, b) {
            Ok(b) => {
                secrets.insert(name, b);
            }
            Err(mut why) => problems.append(&mut why),
        }
    }
    if problems.is_empty() {
        Ok(Table { secrets })
    } else {
        Err(problems)
    }
}

/// One secret checked: one source, origins that parse, one place.
fn binding(name: &str, raw: RawBinding) -> Result<Binding, Vec<String>> {
    let at = format!("secret `{name}`");
    let mut problems = Vec::new();
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_".contains(&b))
    {
        problems.push(format!(
            "{at}: name it with at most 64 lower-case letters, digits, `-` or `_`"
        ));
    }
    let source = match (raw.env, raw.file) {
        (Some(var), None) if is_variable(&var) => Some(Source::Env(var)),
        (Some(var), None) => {
            problems.push(format!("{at}: env `{var}` is not a variable name"));
            None
        }
        (None, Some(file)) if file.starts_with('/') || file.starts_with("~/") => {
            Some(Source::File(file))
        }
        (None, Some(file)) => {
            problems.push(format!(
                "{at}: file `{file}` is neither absolute nor under `~/`"
            ));
            None
        }
        _ => {
            problems.push(format!(
                "{at}: name exactly one source, `env = \"VAR\"` or `file = \"/path\"`"
            ));
            None
        }
    };
    if raw.origins.is_empty() {
        problems.push(format!(
            "{at}: bind it to its origins: `origins = [\"https://api.example.com\"]`"
        ));
    }
    for origin in &raw.origins {
        if let Err(why) = Entry::parse(origin) {
            problems.push(format!("{at}: origin `{origin}` {why}"));
        }
    }
    let put = place(&at, raw.header, raw.prefix, raw.query, raw.path);
    match (source, put) {
        (Some(source), Ok(put)) if problems.is_empty() => Ok(Binding {
            source,
            origins: raw.origins,
            put,
        }),
        (_, put) => {
            if let Err(why) = put {
                problems.push(why);
            }
            Err(problems)
        }
    }
}

/// Where the value goes: exactly one of `header` (with an optional
/// `prefix`), `query` and `path`.
fn place(
    at: &str,
    header: Option<String>,
    prefix: Option<String>,
    query: Option<String>,
    path: Option<String>,
) -> Result<Put, String> {
    match (header, query, path) {
        (Some(name), None, None) => {
            let lower = name.to_ascii_lowercase();
            if http::HeaderName::from_bytes(name.as_bytes()).is_err()
                || RESERVED_HEADERS.contains(&lower.as_str())
            {
                return Err(format!("{at}: header `{name}` cannot carry a secret"));
            }
            let prefix = prefix.unwrap_or_default();
            if http::HeaderValue::from_str(&prefix).is_err() {
                return Err(format!("{at}: prefix `{prefix}` is not header text"));
            }
            Ok(Put::Header { name, prefix })
        }
        (None, Some(param), None) if prefix.is_none() => {
            if param.is_empty() || !param.bytes().all(unreserved) {
                return Err(format!(
                    "{at}: query `{param}` must be letters, digits, `-`, `_`, `.` or `~`"
                ));
            }
            Ok(Put::Query(param))
        }
        (None, None, Some(template)) if prefix.is_none() => {
            let fixed = template.replace(PATH_SLOT, "");
            if !template.starts_with('/')
                || template.matches(PATH_SLOT).count() != 1
                || !fixed.bytes().all(|b| unreserved(b) || b == b'/')
            {
                return Err(format!(
                    "{at}: path `{template}` must start with `/` and hold `{PATH_SLOT}` once, with no query, `%` or `..` part"
                ));
            }
            if fixed.split('/').any(|seg| seg == "..") {
                return Err(format!("{at}: path `{template}` holds a `..` segment"));
            }
            Ok(Put::Path(template))
        }
        _ => Err(format!(
            "{at}: put it in exactly one place: `header` (with an optional `prefix`), `query` or `path`"
        )),
    }
}

fn is_variable(var: &str) -> bool {
    !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Table, Vec<String>> {
        parse(Some(&toml::from_str::<toml::Value>(text).unwrap()))
    }

    #[test]
    fn each_place_reads_from_its_key() {
        let t = read(
            r#"
            [secrets.ntfy]
            env = "NTFY_TOKEN"
            origins = ["https://ntfy.sh"]
            header = "Authorization"
            prefix = "Bearer "
            [secrets.pushover]
            file = "~/.config/pushover/token"
            origins = ["https://api.pushover.net"]
            query = "token"
            [secrets.telegram]
            env = "TELEGRAM_TOKEN"
            origins = ["https://api.telegram.org"]
            path = "/bot{secret}"
            "#,
        )
        .unwrap();
        assert_eq!(
            t.secrets["ntfy"].put.describe(),
            "header Authorization: Bearer <secret>"
        );
        assert_eq!(t.secrets["pushover"].put, Put::Query("token".into()));
        assert_eq!(
            t.secrets["pushover"].source,
            Source::File("~/.config/pushover/token".into())
        );
        assert_eq!(t.secrets["telegram"].put.describe(), "path /bot<secret>");
    }

    #[test]
    fn a_table_without_one_source_origins_or_one_place_is_refused_saying_why() {
        let wrong = read(
            r#"
            [secrets.a]
            env = "A"
            file = "/f"
            origins = ["https://a.example"]
            header = "X-Key"
            [secrets.b]
            env = "B"
            origins = []
            query = "k"
            [secrets.c]
            env = "C"
            origins = ["https://c.example/path", "*.c.example"]
            header = "X-Key"
            query = "k"
            [secrets.d]
            env = "D"
            origins = ["https://d.example"]
            header = "Host"
            [secrets.e]
            file = "relative/token"
            origins = ["https://e.example"]
            path = "/x/{secret}/{secret}"
            "#,
        )
        .unwrap_err();
        let all = wrong.join("\n");
        for said in [
            "secret `a`: name exactly one source",
            "secret `b`: bind it to its origins",
            "secret `c`: origin `https://c.example/path` must not name a path or query",
            "secret `c`: origin `*.c.example`",
            "secret `c`: put it in exactly one place",
            "secret `d`: header `Host` cannot carry a secret",
            "secret `e`: file `relative/token` is neither absolute nor under `~/`",
            "secret `e`: path `/x/{secret}/{secret}` must start with `/` and hold `{secret}` once",
        ] {
            assert!(all.contains(said), "{said}\n{all}");
        }
        assert!(read("[secrets]").unwrap_err()[0].starts_with("names no secret"));
        assert!(parse(None).is_err());
    }
}
