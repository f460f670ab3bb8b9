//! The guest SDK and the host agree on the vocabulary and the transcript.

use std::collections::BTreeMap;

use crate::markdown::table_after;
use crate::sdk_sources::{
    OWN_TABLE, documented_fields, kind_structs, python_classes, python_data, python_methods,
    struct_fields, ts_data,
};

#[test]
fn sdk_and_runtime_share_one_vocabulary() {
    let host: Vec<&str> = hookrt::event::KINDS.iter().map(|k| k.name).collect();
    assert_eq!(host, hookrt_sdk::events::KINDS);
}

/// The typed `Hook` trait has a method for every kind of the vocabulary (an
/// `_observed` one for every decision, edit and gate kind, and a `_rewrite`
/// one for every kind whose calls can be rewritten), typed with `eve::` data
/// exactly for the kinds only Eve's stream carries: `hookrt new` relies on it.
#[test]
fn every_kind_has_a_typed_method_in_the_sdk() {
    let mut expected = vec![("any".to_owned(), "*".to_owned())];
    for k in hookrt::event::KINDS {
        expected.push((k.name.replace('.', "_"), k.name.to_owned()));
    }
    for k in hookrt::event::KINDS {
        if k.class != hookrt::EventClass::Observe {
            expected.push((
                format!("{}_observed", k.name.replace('.', "_")),
                format!("observe:{}", k.name),
            ));
        }
    }
    for k in hookrt::event::REWRITABLE {
        expected.push((
            format!("{}_rewrite", k.replace('.', "_")),
            format!("rewrite:{k}"),
        ));
    }
    let mut methods: Vec<(String, String)> = hookrt_sdk::hook::METHODS
        .iter()
        .map(|(m, k)| (m.to_string(), k.to_string()))
        .collect();
    methods.sort();
    expected.sort();
    assert_eq!(methods, expected);
    let src = std::fs::read_to_string(crate::common::repo().join("guest-sdk/src/hook.rs")).unwrap();
    for k in hookrt::event::KINDS {
        let line = src
            .lines()
            .find(|l| {
                l.trim_start().starts_with(&format!(
                    "{}, \"{}\", ",
                    k.name.replace('.', "_"),
                    k.name
                ))
            })
            .unwrap_or_else(|| panic!("no handler line for {}", k.name));
        assert_eq!(
            line.contains("crate::eve::"),
            k.origin == hookrt::event::Origin::Eve,
            "{}: {line}",
            k.name
        );
    }
}

#[test]
fn every_transcript_event_is_valid_for_the_runtime() {
    let events = crate::common::transcript();
    assert!(events.len() >= 30);
    let mut ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "event ids are unique");
}

#[test]
fn sdk_version_newest_world_and_build_requirement_agree() {
    let root = crate::common::repo();
    let manifest = std::fs::read_to_string(root.join("guest-sdk/Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("guest-sdk/Cargo.toml states its own version");
    assert_eq!(
        version,
        hookrt::sandbox::NEWEST_VERSION,
        "the SDK's version is the newest world's"
    );
    let minor = version.rsplit_once('.').unwrap().0;
    assert_eq!(
        hookrt::hooks::SDK_REQ,
        minor,
        "hooks require the SDK that builds the newest world"
    );
    let mut worlds: Vec<String> = std::fs::read_dir(root.join("wit"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_start_matches('v')
                .to_owned()
        })
        .collect();
    worlds.sort_by_key(|v| {
        v.split('.')
            .map(|n| n.parse::<u32>().unwrap())
            .collect::<Vec<_>>()
    });
    worlds.reverse();
    assert_eq!(
        worlds,
        hookrt::sandbox::SUPPORTED_VERSIONS,
        "one wit/ folder per supported world"
    );
    let lib = std::fs::read_to_string(root.join("guest-sdk/src/lib.rs")).unwrap();
    assert!(
        lib.contains(&format!("path: \"wit/v{version}\"")),
        "the SDK binds the newest world"
    );
    assert!(
        root.join("guest-sdk/wit")
            .join(format!("v{version}/hook.wit"))
            .is_file(),
        "the SDK crate carries its WIT (guest-sdk/wit), so `cargo package` includes it"
    );
}

/// The fields of each data struct in the SDK's `events.rs`, as
/// `name` or `name?` (an `Option`), and each kind's struct from `kind!`.
fn sdk_data_structs() -> (BTreeMap<String, Vec<String>>, BTreeMap<String, String>) {
    let src =
        std::fs::read_to_string(crate::common::repo().join("guest-sdk/src/events.rs")).unwrap();
    (struct_fields(&src, str::to_owned), kind_structs(&src))
}

/// docs/envelope.md's table of Eve's data is checked against the runtime's
/// vocabulary (kind, class, when) and the SDK's `eve` structs (struct, every
/// field by its camelCase name on the wire, all optional): one row per kind
/// `eve.rs` types, in the vocabulary's order.
#[test]
fn the_eve_reference_matches_the_vocabulary_and_the_sdk_structs() {
    let doc = std::fs::read_to_string(crate::common::repo().join("docs/envelope.md")).unwrap();
    let src = std::fs::read_to_string(crate::common::repo().join("guest-sdk/src/eve.rs")).unwrap();
    let camel = |name: &str| {
        let mut out = String::new();
        for (i, word) in name.split('_').enumerate() {
            let mut c = word.chars();
            if i == 0 {
                out.push_str(word);
            } else if let Some(first) = c.next() {
                out.push(first.to_ascii_uppercase());
                out.push_str(c.as_str());
            }
        }
        out
    };
    let structs = struct_fields(&src, camel);
    let lines: Vec<&str> = src.lines().collect();
    let struct_of: BTreeMap<String, String> = lines
        .windows(2)
        .filter_map(|w| {
            let ty = w[0]
                .strip_prefix("impl EventData for ")?
                .strip_suffix(" {")?;
            let kind = w[1]
                .trim()
                .strip_prefix("const KIND: &'static str = \"")?
                .strip_suffix("\";")?;
            Some((kind.to_owned(), ty.to_owned()))
        })
        .collect();
    let rows = table_after(
        &doc,
        "| Kind | Class | Emitted when | SDK struct | Data (Eve's stream) |",
    );
    let typed: Vec<&hookrt::event::EventKind> = hookrt::event::KINDS
        .iter()
        .filter(|k| struct_of.contains_key(k.name))
        .collect();
    assert_eq!(rows.len(), typed.len(), "one row per kind eve.rs types");
    for kind in hookrt::event::KINDS
        .iter()
        .filter(|k| k.origin == hookrt::event::Origin::Eve)
    {
        assert!(
            struct_of.contains_key(kind.name),
            "eve.rs types {}",
            kind.name
        );
    }
    check_rows(&rows, &typed, &struct_of, &structs, "eve::");
}

#[test]
fn the_event_reference_matches_the_vocabulary_and_the_sdk_structs() {
    let doc = std::fs::read_to_string(crate::common::repo().join("docs/envelope.md")).unwrap();
    let (structs, struct_of) = sdk_data_structs();
    let rows = table_after(&doc, OWN_TABLE);
    let own: Vec<&hookrt::event::EventKind> = hookrt::event::KINDS
        .iter()
        .filter(|k| struct_of.contains_key(k.name))
        .collect();
    assert_eq!(rows.len(), own.len(), "one row per kind with an SDK struct");
    check_rows(&rows, &own, &struct_of, &structs, "");
}

/// Each row of a reference table against its kind: name, class, when, the SDK
/// struct (written `{prefix}Struct`) and the struct's fields.
fn check_rows(
    rows: &[Vec<String>],
    kinds: &[&hookrt::event::EventKind],
    struct_of: &BTreeMap<String, String>,
    structs: &BTreeMap<String, Vec<String>>,
    prefix: &str,
) {
    for (row, kind) in rows.iter().zip(kinds) {
        let ty = &struct_of[kind.name];
        assert_eq!(row[0], format!("`{}`", kind.name));
        assert_eq!(
            row[1],
            format!("{:?}", kind.class).to_lowercase(),
            "{}",
            kind.name
        );
        assert_eq!(row[2], kind.when, "{}", kind.name);
        assert_eq!(row[3], format!("`{prefix}{ty}`"), "{}", kind.name);
        assert_eq!(
            documented_fields(&row[4]),
            structs[ty],
            "{}'s data",
            kind.name
        );
    }
}

/// The TypeScript SDK (`guest-sdk/ts/src/hookrt.ts`) types the same kinds as
/// the Rust SDK with the same data fields (and the same optional ones), and
/// lists exactly the rest of the vocabulary, Eve's stream kinds, as untyped:
/// the two SDKs cannot drift apart unnoticed.
#[test]
fn the_ts_sdk_types_the_same_kinds_and_fields_as_the_rust_sdk() {
    let ts =
        std::fs::read_to_string(crate::common::repo().join("guest-sdk/ts/src/hookrt.ts")).unwrap();
    let typed = ts_data(&ts);
    let (structs, struct_of) = sdk_data_structs();
    for k in hookrt::event::KINDS {
        match k.origin {
            hookrt::event::Origin::Hookrt => assert_eq!(
                typed.get(k.name),
                Some(&structs[&struct_of[k.name]]),
                "{}: the TS SDK's data fields against the Rust SDK's",
                k.name
            ),
            hookrt::event::Origin::Eve => assert!(
                !typed.contains_key(k.name),
                "{}: Eve's stream kinds are untyped in the TS SDK",
                k.name
            ),
        }
    }
    assert_eq!(
        typed.len(),
        hookrt::event::KINDS
            .iter()
            .filter(|k| k.origin == hookrt::event::Origin::Hookrt)
            .count()
    );
    let other_start = ts.find("export type OtherKind =").unwrap();
    let other = &ts[other_start..other_start + ts[other_start..].find(';').unwrap()];
    let mut listed: Vec<&str> = other.split('"').skip(1).step_by(2).collect();
    let mut eve: Vec<&str> = hookrt::event::KINDS
        .iter()
        .filter(|k| k.origin == hookrt::event::Origin::Eve)
        .map(|k| k.name)
        .collect();
    listed.sort();
    eve.sort();
    assert_eq!(listed, eve, "OtherKind lists Eve's stream kinds");
}

/// The Python SDK (`guest-sdk/python/hookrt`) has a dataclass for each kind the
/// Rust SDK types, with the same fields (and the same optional ones), maps
/// each kind to its class as the Rust SDK does, and has the Rust `Hook`
/// trait's methods with the same subscriptions: the SDKs cannot drift apart
/// unnoticed.
#[test]
fn the_python_sdk_has_the_same_kinds_fields_and_methods_as_the_rust_sdk() {
    let dir = crate::common::repo().join("guest-sdk/python/hookrt");
    let events = std::fs::read_to_string(dir.join("events.py")).unwrap();
    let classes = python_classes(&events);
    let (structs, struct_of) = sdk_data_structs();
    let mapped = python_data(&events);
    let own: Vec<&hookrt::event::EventKind> = hookrt::event::KINDS
        .iter()
        .filter(|k| k.origin == hookrt::event::Origin::Hookrt)
        .collect();
    assert_eq!(
        mapped.len(),
        own.len(),
        "DATA maps each kind of hookrt's own streams"
    );
    for (kind, class) in &mapped {
        assert_eq!(Some(class), struct_of.get(kind), "{kind}: DATA's class");
        assert_eq!(
            classes.get(class),
            Some(&structs[class]),
            "{class}: the Python SDK's fields against the Rust SDK's"
        );
    }
    let hook = std::fs::read_to_string(dir.join("hook.py")).unwrap();
    let python = python_methods(&hook);
    let rust: Vec<(String, String)> = hookrt_sdk::hook::METHODS
        .iter()
        .map(|(m, k)| (m.to_string(), k.to_string()))
        .collect();
    let (mut p, mut r) = (python.clone(), rust.clone());
    p.sort();
    r.sort();
    assert_eq!(p, r, "the Python Hook's METHODS against the Rust trait's");
}
