//! Readers of the SDKs' sources and of docs/envelope.md's tables, for the
//! tests that hold them to the vocabulary (`vocabulary.rs`) and to each other
//! (`sdk.rs`): each reads one list or shape of one file, as it is written.

use std::collections::BTreeMap;

use regex::Regex;

/// The fields of each `pub struct` in Rust source, each renamed by `rename`
/// and marked `?` when it is an `Option`.
pub(crate) fn struct_fields(
    src: &str,
    rename: impl Fn(&str) -> String,
) -> BTreeMap<String, Vec<String>> {
    let field = Regex::new(r"^\s+pub ([A-Za-z_0-9#]+): (.+?),?$").unwrap();
    let mut structs = BTreeMap::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in src.lines() {
        if let Some(name) = line
            .strip_prefix("pub struct ")
            .and_then(|r| r.strip_suffix(" {"))
        {
            current = Some((name.to_owned(), Vec::new()));
        } else if line == "}" {
            structs.extend(current.take());
        } else if let (Some((_, fields)), Some(c)) = (current.as_mut(), field.captures(line)) {
            let optional = if c[2].starts_with("Option<") { "?" } else { "" };
            fields.push(format!("{}{optional}", rename(&c[1])));
        }
    }
    structs
}

/// Each kind's struct in `events.rs`, from its `kind!(Struct => "kind")` line.
pub(crate) fn kind_structs(events_rs: &str) -> BTreeMap<String, String> {
    let kind_line = Regex::new(r#"(?m)^kind!\((\w+) => "([^"]+)"\);$"#).unwrap();
    kind_line
        .captures_iter(events_rs)
        .map(|c| (c[2].to_owned(), c[1].to_owned()))
        .collect()
}

/// The fields of each `@dataclass` of the Python SDK's `events.py`, `name?`
/// for one that may be `None`.
pub(crate) fn python_classes(events_py: &str) -> BTreeMap<String, Vec<String>> {
    let mut classes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut decorated = false;
    let field = Regex::new(r"^    ([a-z_][a-z0-9_]*): (.+?)(?: = .*)?$").unwrap();
    for line in events_py.lines() {
        if line == "@dataclass" {
            decorated = true;
        } else if let Some(name) = line
            .strip_prefix("class ")
            .and_then(|l| l.strip_suffix(':'))
        {
            current = decorated.then(|| name.to_owned());
            decorated = false;
            classes.extend(current.clone().map(|n| (n, Vec::new())));
        } else if !line.is_empty() && !line.starts_with(' ') {
            current = None;
        } else if let (Some(name), Some(c)) = (&current, field.captures(line)) {
            let optional = if c[2].contains("| None") { "?" } else { "" };
            classes
                .get_mut(name)
                .unwrap()
                .push(format!("{}{optional}", &c[1]));
        }
    }
    classes
}

/// The `DATA` entries of `events.py`, (kind, class), in order.
pub(crate) fn python_data(events_py: &str) -> Vec<(String, String)> {
    let entry = Regex::new(r#"(?m)^    "([a-z.]+)": ([A-Za-z]+),$"#).unwrap();
    entry
        .captures_iter(events_py)
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect()
}

/// The `METHODS` entries of `hook.py`, (method, subscription), in order.
pub(crate) fn python_methods(hook_py: &str) -> Vec<(String, String)> {
    let method = Regex::new(r#"(?m)^    \("([a-z_]+)", "([^"]+)"\),$"#).unwrap();
    method
        .captures_iter(hook_py)
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect()
}

/// The text of a TypeScript `{ ... }` block that opens at the end of `from`.
pub(crate) fn ts_body<'a>(ts: &'a str, from: &str) -> &'a str {
    let Some(at) = ts.find(from) else { return "" };
    let start = at + from.len();
    let mut depth = 1;
    for (i, c) in ts[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return &ts[start..start + i];
        }
    }
    ""
}

/// The data fields of each kind the TypeScript SDK's `EventDataMap` types,
/// `name?` for an optional one.
pub(crate) fn ts_data(ts: &str) -> BTreeMap<String, Vec<String>> {
    let field = Regex::new(r"(?m)(?:^|[{;]|\n)\s*([a-z_]+)(\??):").unwrap();
    let fields = |text: &str| -> Vec<String> {
        field
            .captures_iter(text)
            .map(|c| format!("{}{}", &c[1], &c[2]))
            .collect()
    };
    let entry = Regex::new(r#""([a-z.]+)":\s*(\{[^}]*\}|[A-Za-z]+);"#).unwrap();
    entry
        .captures_iter(ts_body(ts, "export interface EventDataMap {"))
        .map(|c| {
            let shape = &c[2];
            let f = if shape.starts_with('{') {
                fields(shape)
            } else {
                fields(ts_body(ts, &format!("export interface {shape} {{")))
            };
            (c[1].to_owned(), f)
        })
        .collect()
}

/// The strings of a Python tuple or list, or of a TypeScript union or array,
/// that starts at `start` and ends at the first `end` after it.
pub(crate) fn quoted_list(text: &str, start: &str, end: char) -> Option<Vec<String>> {
    let at = text.find(start)? + start.len();
    let list = &text[at..at + text[at..].find(end)?];
    Some(
        list.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect(),
    )
}

/// The header of docs/envelope.md's table of hookrt's own kinds.
pub(crate) const OWN_TABLE: &str = "| Kind | Class | Emitted when | SDK struct | Data |";

/// The top-level fields a Data cell names: the first backquoted word of each
/// part between commas outside parentheses (a part without one, as written).
pub(crate) fn documented_fields(cell: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().unwrap().push(c);
    }
    parts
        .iter()
        .map(|p| p.split('`').nth(1).unwrap_or(p.trim()).to_owned())
        .collect()
}
