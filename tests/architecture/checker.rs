//! The layering checker checked: it sees an import circle hidden behind a
//! re-export, an arrow up inside a nested folder, and a module with no place.

use std::fs;

use super::violations;

#[test]
fn the_checker_sees_a_circle_through_a_re_export() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use a::Thing;\n").unwrap();
    fs::write(
        src.join("a.rs"),
        "pub struct Thing;\nuse crate::b::Other;\n",
    )
    .unwrap();
    fs::write(
        src.join("b.rs"),
        "pub struct Other;\nfn f(_: crate::Thing) {}\n",
    )
    .unwrap();
    let found = violations(src, &["a", "b"]);
    assert_eq!(found, vec!["a imports b, which comes after it".to_owned()]);
}

#[test]
fn the_checker_sees_an_arrow_up_inside_a_nested_folder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    fs::create_dir_all(src.join("a/low")).unwrap();
    fs::create_dir_all(src.join("a/high")).unwrap();
    fs::write(src.join("lib.rs"), "mod a;\n").unwrap();
    fs::write(
        src.join("a/mod.rs"),
        "mod high;\nmod low;\npub use high::up::Up;\n",
    )
    .unwrap();
    fs::write(src.join("a/low/mod.rs"), "pub(crate) mod base;\n").unwrap();
    fs::write(src.join("a/high/mod.rs"), "pub(crate) mod up;\n").unwrap();
    fs::write(src.join("a/high/up.rs"), "pub struct Up;\n").unwrap();
    fs::write(
        src.join("a/low/base.rs"),
        "use super::super::Up;\nfn f(_: crate::a::high::up::Up) {}\n",
    )
    .unwrap();
    let found = violations(src, &["a::low::base", "a::high::up"]);
    assert_eq!(
        found,
        vec!["a::low::base imports a::high::up, which comes after it".to_owned()]
    );
    let unplaced = violations(src, &["a::low::base"]);
    assert_eq!(
        unplaced,
        vec!["a::high::up has no place in the order: add it to its layer".to_owned()]
    );
}
