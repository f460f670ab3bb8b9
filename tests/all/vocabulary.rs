//! One vocabulary, held: `runtime/core/src/event/kind.rs` (`hookrt::event::KINDS`)
//! declares every event kind once, with its class, its origin and its data's
//! fields; the Rust, Python and TypeScript SDKs and docs/envelope.md write them
//! in their own language and are held to it here, by one check that names each
//! kind or field missing or extra and the file where it goes.
//!
//! A check rather than generated SDK code: the guest SDKs build for wasm32 and
//! must not depend on the runtime library, and their typed structs, dataclasses
//! and interfaces carry the docs authors read (rustdoc, docstrings, TSDoc),
//! which generated code would move into a data file.

use std::collections::BTreeMap;

use hookrt::EventClass;
use hookrt::event::{EventKind, Origin, REWRITABLE, TURN_STOPPING};
use regex::Regex;

use crate::markdown::table_after;
use crate::sdk_sources::{
    OWN_TABLE, documented_fields, kind_structs, python_classes, python_data, python_methods,
    quoted_list, struct_fields, ts_data,
};

const KIND_RS: &str = "runtime/core/src/event/kind.rs";
const EVENTS_RS: &str = "guest-sdk/src/events.rs";
const EVE_RS: &str = "guest-sdk/src/eve.rs";
const HOOK_RS: &str = "guest-sdk/src/hook.rs";
const EVENTS_PY: &str = "guest-sdk/python/hookrt/events.py";
const HOOK_PY: &str = "guest-sdk/python/hookrt/hook.py";
const RESPONSE_PY: &str = "guest-sdk/python/hookrt/response.py";
const HOOKRT_TS: &str = "guest-sdk/ts/src/hookrt.ts";
const ENVELOPE_MD: &str = "docs/envelope.md";

/// Every file the check reads, by its path in the repository.
const FILES: [&str; 8] = [
    EVENTS_RS,
    EVE_RS,
    HOOK_RS,
    EVENTS_PY,
    HOOK_PY,
    RESPONSE_PY,
    HOOKRT_TS,
    ENVELOPE_MD,
];

/// The texts of [`FILES`].
type Sources = BTreeMap<&'static str, String>;

fn sources() -> Sources {
    let root = crate::common::repo();
    FILES
        .iter()
        .map(|f| (*f, std::fs::read_to_string(root.join(f)).unwrap()))
        .collect()
}

#[test]
fn every_sdk_and_the_reference_hold_to_the_one_vocabulary() {
    let problems = check(hookrt::event::KINDS, &sources());
    assert!(
        problems.is_empty(),
        "the vocabulary ({KIND_RS}) and its copies disagree:\n{}",
        problems.join("\n")
    );
}

/// A kind declared but written nowhere, and a field and a kind written but not
/// declared, are each named with the file they go in or come out of.
#[test]
fn the_check_names_what_is_missing_or_extra_and_where() {
    let mut kinds = hookrt::event::KINDS.to_vec();
    kinds.push(EventKind {
        name: "turn.paused",
        when: "a turn parks",
        class: EventClass::Gate,
        origin: Origin::Hookrt,
        fields: &["reason"],
    });
    let mut texts = sources();
    let ts = texts.get_mut(HOOKRT_TS).unwrap();
    *ts = ts.replace(
        "\"turn.started\": { input_message_id?: string };",
        "\"turn.started\": { input_message_id?: string; cause: string };",
    );
    let py = texts.get_mut(HOOK_PY).unwrap();
    *py = py.replace(
        "    (\"any\", \"*\"),\n",
        "    (\"any\", \"*\"),\n    (\"turn_resumed\", \"turn.resumed\"),\n",
    );
    let problems = check(&kinds, &texts).join("\n");
    for expected in [
        "`turn.paused` is missing from guest-sdk/src/events.rs `KINDS`",
        "`turn.paused` is missing from guest-sdk/src/events.rs (a struct and its `kind!`)",
        "`turn.paused` is missing from guest-sdk/src/hook.rs `handlers!`",
        "`observe:turn.paused` is missing from guest-sdk/src/hook.rs `handlers!`",
        "`turn.paused`: guest-sdk/src/event.rs `EventClass::of_kind` says Observe, the vocabulary Gate",
        "`turn.paused` is missing from guest-sdk/python/hookrt/events.py `DATA`",
        "`turn.paused` is missing from guest-sdk/python/hookrt/hook.py `METHODS`",
        "`turn.paused` is missing from guest-sdk/python/hookrt/response.py `BLOCK_GATES`",
        "`turn.paused` is missing from guest-sdk/ts/src/hookrt.ts `EventDataMap`",
        "`turn.paused` is missing from guest-sdk/ts/src/hookrt.ts `BlockGateKind`",
        "`turn.paused` is missing from docs/envelope.md (its table of hookrt's own kinds)",
        "`turn.started`: field `cause` in guest-sdk/ts/src/hookrt.ts `EventDataMap` is not declared",
        "`turn.resumed` in guest-sdk/python/hookrt/hook.py `METHODS` is no kind of the vocabulary",
    ] {
        assert!(problems.contains(expected), "{expected}\nin:\n{problems}");
    }
}

/// Every disagreement between `kinds` and the files in `texts`, one line each.
fn check(kinds: &[EventKind], texts: &Sources) -> Vec<String> {
    let mut p = Vec::new();
    rust_sdk(kinds, texts, &mut p);
    python_sdk(kinds, texts, &mut p);
    ts_sdk(kinds, texts, &mut p);
    reference(kinds, texts, &mut p);
    p
}

fn names(kinds: &[EventKind], keep: impl Fn(&EventKind) -> bool) -> Vec<&'static str> {
    kinds.iter().filter(|k| keep(k)).map(|k| k.name).collect()
}

fn own(kinds: &[EventKind]) -> Vec<&'static str> {
    names(kinds, |k| k.origin == Origin::Hookrt)
}

/// The gates answered `block` (`turn.stopping`, the one `continue` gate, aside).
fn block_gates(kinds: &[EventKind]) -> Vec<&'static str> {
    names(kinds, |k| {
        k.class == EventClass::Gate && k.name != TURN_STOPPING
    })
}

/// The subscriptions a typed `Hook` has a method for, method by key: every
/// kind, `observe:` for every kind that is not observed already, `rewrite:`
/// for every rewritable kind.
fn methods(kinds: &[EventKind]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for k in kinds {
        let method = k.name.replace('.', "_");
        if k.class != EventClass::Observe {
            m.insert(format!("observe:{}", k.name), format!("{method}_observed"));
        }
        if REWRITABLE.contains(&k.name) {
            m.insert(format!("rewrite:{}", k.name), format!("{method}_rewrite"));
        }
        m.insert(k.name.to_owned(), method);
    }
    m
}

/// `found` against `declared`, as sets: each one missing from `place` (with
/// what to add there) and each one `place` has that the vocabulary lacks.
fn compare(p: &mut Vec<String>, place: &str, add: &str, declared: &[&str], found: &[String]) {
    for d in declared {
        if !found.iter().any(|f| f == d) {
            p.push(format!("`{d}` is missing from {place}: {add}"));
        }
    }
    for f in found {
        if !declared.contains(&f.as_str()) {
            p.push(format!(
                "`{f}` in {place} is no kind of the vocabulary: remove it, or declare it in {KIND_RS} first"
            ));
        }
    }
}

/// A kind's data fields in `place` against its declared ones (`name` or
/// `name?`), in order.
fn compare_fields(
    p: &mut Vec<String>,
    place: &str,
    kind: &str,
    declared: &[&str],
    found: &[String],
) {
    let bare = |f: &str| f.trim_end_matches('?').to_owned();
    for d in declared {
        match found.iter().find(|f| bare(f) == bare(d)) {
            None => p.push(format!("`{kind}`: field `{d}` is missing from {place}")),
            Some(f) if f != d => p.push(format!(
                "`{kind}`: field `{}` is `{d}` in the vocabulary (`?`: optional) but `{f}` in {place}",
                bare(d)
            )),
            Some(_) => {}
        }
    }
    for f in found {
        if !declared.iter().any(|d| bare(d) == bare(f)) {
            p.push(format!(
                "`{kind}`: field `{}` in {place} is not declared: remove it, or declare it in {KIND_RS}",
                bare(f)
            ));
        }
    }
    let order = |v: Vec<String>| {
        v.into_iter()
            .filter(|f| declared.iter().any(|d| bare(d) == *f))
            .collect::<Vec<_>>()
    };
    let (d, f): (Vec<String>, Vec<String>) = (
        declared.iter().map(|d| bare(d)).collect(),
        order(found.iter().map(|f| bare(f)).collect()),
    );
    if d.len() == f.len() && d != f {
        p.push(format!(
            "`{kind}`: {place} has the fields in another order: {f:?}, declared {d:?}"
        ));
    }
}

fn rust_sdk(kinds: &[EventKind], texts: &Sources, p: &mut Vec<String>) {
    let all = names(kinds, |_| true);
    let listed: Vec<String> = hookrt_sdk::events::KINDS
        .iter()
        .map(|k| k.to_string())
        .collect();
    let before = p.len();
    compare(
        p,
        &format!("{EVENTS_RS} `KINDS`"),
        "add it in lifecycle order",
        &all,
        &listed,
    );
    if p.len() == before && listed != all {
        p.push(format!(
            "{EVENTS_RS} `KINDS` lists the kinds in another order than {KIND_RS}"
        ));
    }
    let events = &texts[EVENTS_RS];
    let structs = struct_fields(events, str::to_owned);
    let typed = kind_structs(events);
    let place = format!("{EVENTS_RS} (a struct and its `kind!`)");
    compare(
        p,
        &place,
        "add a `pub struct` with the fields and `kind!(Struct => \"kind\")`",
        &own(kinds),
        &typed.keys().cloned().collect::<Vec<_>>(),
    );
    for k in kinds.iter().filter(|k| k.origin == Origin::Hookrt) {
        if let Some(fields) = typed.get(k.name).and_then(|ty| structs.get(ty)) {
            compare_fields(p, EVENTS_RS, k.name, k.fields, fields);
        }
    }
    let eve_kind = Regex::new(r#"const KIND: &'static str = "([^"]+)";"#).unwrap();
    let eve: Vec<String> = eve_kind
        .captures_iter(&texts[EVE_RS])
        .map(|c| c[1].to_owned())
        .collect();
    for k in kinds.iter().filter(|k| k.origin == Origin::Eve) {
        if !eve.iter().any(|e| e == k.name) {
            p.push(format!(
                "`{}` is missing from {EVE_RS}: add its struct and `impl EventData` (Eve's data)",
                k.name
            ));
        }
    }
    let handler = Regex::new(r#"(?m)^    ([a-z_]+), "([^"]+)", ([A-Za-z_:]+),"#).unwrap();
    let lines: BTreeMap<String, (String, String)> = handler
        .captures_iter(&texts[HOOK_RS])
        .map(|c| (c[2].to_owned(), (c[1].to_owned(), c[3].to_owned())))
        .collect();
    let expected = methods(kinds);
    let keys: Vec<&str> = expected.keys().map(String::as_str).collect();
    let place = format!("{HOOK_RS} `handlers!`");
    compare(
        p,
        &place,
        "add its method line",
        &keys,
        &lines.keys().cloned().collect::<Vec<_>>(),
    );
    for k in kinds {
        if let Some((method, ty)) = lines.get(k.name) {
            if *method != expected[k.name] {
                p.push(format!(
                    "`{}`: {place} names its method `{method}`, not `{}`",
                    k.name, expected[k.name]
                ));
            }
            if ty.starts_with("crate::eve::") != (k.origin == Origin::Eve) {
                p.push(format!("`{}`: {place} types its data `{ty}`: `crate::eve::` exactly for a kind only Eve's stream carries", k.name));
            }
        }
        let class = hookrt_sdk::EventClass::of_kind(k.name);
        if format!("{class:?}") != format!("{:?}", k.class) {
            p.push(format!("`{}`: guest-sdk/src/event.rs `EventClass::of_kind` says {class:?}, the vocabulary {:?}", k.name, k.class));
        }
    }
}

fn python_sdk(kinds: &[EventKind], texts: &Sources, p: &mut Vec<String>) {
    let events = &texts[EVENTS_PY];
    let classes = python_classes(events);
    let data: BTreeMap<String, String> = python_data(events).into_iter().collect();
    let place = format!("{EVENTS_PY} `DATA`");
    compare(
        p,
        &place,
        "add a `@dataclass` with the fields, its `DATA` entry and its name in `__all__`",
        &own(kinds),
        &data.keys().cloned().collect::<Vec<_>>(),
    );
    for k in kinds {
        if let Some(fields) = data.get(k.name).and_then(|c| classes.get(c)) {
            compare_fields(p, EVENTS_PY, k.name, k.fields, fields);
        }
    }
    let hook = &texts[HOOK_PY];
    let listed: BTreeMap<String, String> = python_methods(hook)
        .into_iter()
        .map(|(method, key)| (key, method))
        .collect();
    let expected = methods(kinds);
    let keys: Vec<&str> = expected.keys().map(String::as_str).chain(["*"]).collect();
    let place = format!("{HOOK_PY} `METHODS`");
    compare(
        p,
        &place,
        "add its (method, subscription) and the method of `Hook`",
        &keys,
        &listed.keys().cloned().collect::<Vec<_>>(),
    );
    for (key, m) in &expected {
        if listed.contains_key(key) && !hook.contains(&format!("    def {m}(")) {
            p.push(format!("`{key}`: {HOOK_PY}'s `Hook` has no method `{m}`"));
        }
    }
    let response = &texts[RESPONSE_PY];
    let gates = quoted_list(response, "BLOCK_GATES = (", ')').unwrap_or_default();
    compare(
        p,
        &format!("{RESPONSE_PY} `BLOCK_GATES`"),
        "add it",
        &block_gates(kinds),
        &gates,
    );
    let edits = quoted_list(response, "EDIT_KINDS = (", ')').unwrap_or_default();
    compare(
        p,
        &format!("{RESPONSE_PY} `EDIT_KINDS`"),
        "add it",
        &names(kinds, |k| k.class == EventClass::Edit),
        &edits,
    );
}

fn ts_sdk(kinds: &[EventKind], texts: &Sources, p: &mut Vec<String>) {
    let ts = &texts[HOOKRT_TS];
    let typed = ts_data(ts);
    let place = format!("{HOOKRT_TS} `EventDataMap`");
    compare(
        p,
        &place,
        "add its data's shape",
        &own(kinds),
        &typed.keys().cloned().collect::<Vec<_>>(),
    );
    for k in kinds {
        if let Some(f) = typed.get(k.name) {
            compare_fields(p, &place, k.name, k.fields, f);
        }
    }
    let lists: [(&str, &str, char, Vec<&str>); 6] = [
        (
            "OtherKind",
            "export type OtherKind =",
            ';',
            names(kinds, |k| k.origin == Origin::Eve),
        ),
        (
            "BlockGateKind",
            "export type BlockGateKind =",
            ';',
            block_gates(kinds),
        ),
        (
            "BLOCK_GATES",
            "const BLOCK_GATES = [",
            ']',
            block_gates(kinds),
        ),
        (
            "EditKind",
            "type EditKind =",
            ';',
            names(kinds, |k| k.class == EventClass::Edit),
        ),
        (
            "DecisionAnswers",
            "interface DecisionAnswers {",
            '}',
            names(kinds, |k| k.class == EventClass::Decision),
        ),
        (
            "RewriteAnswers",
            "interface RewriteAnswers {",
            '}',
            REWRITABLE.to_vec(),
        ),
    ];
    for (name, start, end, declared) in lists {
        let found = quoted_list(ts, start, end).unwrap_or_default();
        compare(
            p,
            &format!("{HOOKRT_TS} `{name}`"),
            "add it",
            &declared,
            &found,
        );
    }
}

fn reference(kinds: &[EventKind], texts: &Sources, p: &mut Vec<String>) {
    let rows: BTreeMap<String, Vec<String>> = table_after(&texts[ENVELOPE_MD], OWN_TABLE)
        .iter()
        .filter_map(|cells| {
            Some((
                cells[0].trim_matches('`').to_owned(),
                documented_fields(cells.get(4)?),
            ))
        })
        .collect();
    let place = format!("{ENVELOPE_MD} (its table of hookrt's own kinds)");
    compare(
        p,
        &place,
        "add its row",
        &own(kinds),
        &rows.keys().cloned().collect::<Vec<_>>(),
    );
    for k in kinds {
        if let Some(f) = rows.get(k.name) {
            compare_fields(p, ENVELOPE_MD, k.name, k.fields, f);
        }
    }
}
