//! Every SDK page shows every kind's data fields, generated from the one
//! vocabulary (`hookrt::event::KINDS`): the handler each SDK names for it,
//! its class and its data's fields (`name?`: may be absent). A page that
//! shows another table fails, printing the table to paste (or, with
//! `HOOKRT_UPDATE_DOCS=1`, writing it).

use std::fs;

use hookrt::event::{EventKind, KINDS, Origin};

use crate::common::repo;

/// The line before the table on a page.
const BEGIN: &str = "<!-- Every kind's data, generated from runtime/core/src/event/kind.rs (tests/all/kind_pages.rs): edit that, not this. -->";
/// The line after it.
const END: &str = "<!-- End of the kinds' data. -->";

/// How a page names the handler of a kind.
type Handler = fn(&str) -> String;

/// Each SDK page, the header of its handler column and a kind's handler.
const PAGES: [(&str, &str, Handler); 3] = [
    ("docs/python.md", "method", |k| {
        format!("`{}`", k.replace('.', "_"))
    }),
    ("docs/typescript.md", "handler key", |k| {
        format!("`\"{k}\"`")
    }),
    ("docs/hooks-reference.md", "`Hook` method", |k| {
        format!("`{}`", k.replace('.', "_"))
    }),
];

/// The table of `kinds` for a page whose handlers `handler` names.
fn table(kinds: &[EventKind], column: &str, handler: Handler) -> String {
    let mut out =
        format!("{BEGIN}\n| kind | {column} | class | data fields |\n|---|---|---|---|\n");
    for k in kinds {
        let fields = match k.origin {
            Origin::Eve => "Eve's own data (an untyped object)".to_owned(),
            Origin::Hookrt if k.fields.is_empty() => "none".to_owned(),
            Origin::Hookrt => k
                .fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let class = format!("{:?}", k.class).to_lowercase();
        out.push_str(&format!(
            "| `{}` | {} | {class} | {fields} |\n",
            k.name,
            handler(k.name)
        ));
    }
    out.push_str(END);
    out
}

#[test]
fn every_sdk_page_shows_every_kinds_data_fields() {
    let mut stale = Vec::new();
    for (page, column, handler) in PAGES {
        let path = repo().join(page);
        let text = fs::read_to_string(&path).unwrap();
        let wanted = table(KINDS, column, handler);
        let (Some(start), Some(end)) = (text.find(BEGIN), text.find(END)) else {
            panic!("{page} has no table of the kinds' data between\n{BEGIN}\nand\n{END}");
        };
        let shown = &text[start..end + END.len()];
        if shown != wanted {
            if std::env::var_os("HOOKRT_UPDATE_DOCS").is_some() {
                let new = format!("{}{wanted}{}", &text[..start], &text[end + END.len()..]);
                fs::write(&path, new).unwrap();
            } else {
                stale.push(format!("{page}:\n{wanted}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "pages show another table than the vocabulary; run with HOOKRT_UPDATE_DOCS=1 or paste:\n{}",
        stale.join("\n\n")
    );
}

#[test]
fn a_kind_whose_fields_change_changes_the_table() {
    let mut kinds = KINDS.to_vec();
    let before = table(&kinds, "method", PAGES[0].2);
    let i = kinds
        .iter()
        .position(|k| k.name == "prompt.submitted")
        .unwrap();
    kinds[i].fields = &["prompt", "images?"];
    let after = table(&kinds, "method", PAGES[0].2);
    assert_ne!(before, after);
    assert!(
        after.contains("| `prompt.submitted` | `prompt_submitted` | gate | `prompt`, `images?` |"),
        "{after}"
    );
}
