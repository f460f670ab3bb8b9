//! Where a reference in the library's code lands: the module a `::`-path
//! names, directly or through a re-export of lib.rs or a folder's mod.rs.

use std::collections::BTreeMap;

/// The module a `::`-path starting at `container` names, if it is one of ours.
pub(super) fn resolve_path(path: &str, container: &str, known: &[String]) -> Option<String> {
    let mut segs: Vec<String> = Vec::new();
    if !container.is_empty()
        && !known
            .iter()
            .any(|k| k == path || k.starts_with(&format!("{path}::")))
    {
        segs.extend(container.split("::").map(str::to_owned));
    }
    segs.extend(
        path.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    module_named(&segs, known).map(|(m, _)| m)
}

/// The deepest module of ours that `segs` starts with, and how many
/// segments name it.
fn module_named(segs: &[String], known: &[String]) -> Option<(String, usize)> {
    (1..=segs.len())
        .rev()
        .map(|n| (segs[..n].join("::"), n))
        .find(|(m, _)| known.contains(m))
}

/// The module a reference lands in: a file module directly, or through a
/// re-export of lib.rs or a folder's mod.rs.
pub(super) fn target_of(
    segs: &[String],
    known: &[String],
    names: &BTreeMap<(String, String), String>,
) -> Option<String> {
    let (module, depth) = module_named(segs, known).unwrap_or((String::new(), 0));
    if let Some(name) = segs.get(depth)
        && let Some(target) = names.get(&(module.clone(), name.clone()))
    {
        return Some(target.clone());
    }
    (depth > 0).then_some(module)
}
