//! The build cache: an unchanged hook never starts cargo or Cranelift again.

use std::time::SystemTime;

use crate::common::{TempAgent, load};

fn unique_hook(nonce: &str) -> String {
    let src = std::fs::read_to_string(crate::common::example("hostile/hooks/witness.rs")).unwrap();
    // The nonce is logged, so it changes the component, not just the source.
    let patched = src.replace(
        "safe_log(event, cx);",
        &format!("safe_log(event, cx);\n        log::trace(\"nonce\", &[(\"v\", {nonce:?})]);"),
    );
    assert_ne!(patched, src);
    patched
}

#[test]
fn second_load_of_an_unchanged_hook_compiles_nothing() {
    let nonce = format!("{:?}", SystemTime::now());
    let agent = TempAgent::new().file("hooks/fresh.rs", &unique_hook(&nonce));
    let first = load(agent.path());
    let h = &first.hooks()[0];
    assert!(
        h.cargo_built && h.compiled,
        "a new source is built by cargo and compiled by Cranelift"
    );
    let second = load(agent.path());
    let h2 = &second.hooks()[0];
    assert!(!h2.cargo_built, "unchanged source: cargo is not started");
    assert!(!h2.compiled, "cached artifact: Cranelift does not run");
    assert_eq!(h.component_sha256, h2.component_sha256);

    // A copy of the same source elsewhere is the same cache entry.
    let copy = TempAgent::new().file("hooks/other-name.rs", &unique_hook(&nonce));
    let rt3 = load(copy.path());
    let h3 = &rt3.hooks()[0];
    assert!(!h3.cargo_built && !h3.compiled);
}

#[test]
fn a_built_components_digest_is_kept_beside_it_so_loads_read_no_component_bytes() {
    use sha2::Digest;
    let nonce = format!("{:?} digest", SystemTime::now());
    let agent = TempAgent::new().file("hooks/digest.rs", &unique_hook(&nonce));
    let rt = load(agent.path());
    let h = &rt.hooks()[0];
    let component = crate::common::opts()
        .cache_dir
        .join("components")
        .join(format!("{}.wasm", h.source_sha256));
    let bytes = std::fs::read(&component).unwrap();
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&bytes)),
        h.component_sha256
    );
    // The digest, then its MAC under the cache's key.
    let sidecar = component.with_extension("wasm.sha256");
    let record = std::fs::read_to_string(&sidecar).unwrap();
    let lines: Vec<&str> = record.lines().collect();
    assert_eq!(lines[0], h.component_sha256, "{record}");
    assert_eq!(lines[1].len(), 64, "{record}");
    // A damaged sidecar is not trusted: the component is built again, and
    // its record written again.
    std::fs::write(&sidecar, "not a digest").unwrap();
    let again = load(agent.path());
    assert!(again.hooks()[0].cargo_built, "rebuilt");
    assert_eq!(again.hooks()[0].component_sha256, h.component_sha256);
    let rewritten = std::fs::read_to_string(&sidecar).unwrap();
    assert!(
        rewritten.starts_with(&format!("{}\n{}\n", lines[0], lines[1])),
        "{rewritten}"
    );
}

#[test]
fn editing_a_hook_rebuilds_only_that_hook() {
    let nonce = format!("{:?}", SystemTime::now());
    let agent = TempAgent::new()
        .file("hooks/edited.rs", &unique_hook(&format!("{nonce} v1")))
        .file("hooks/kept.rs", &unique_hook(&format!("{nonce} kept")));
    load(agent.path());
    std::fs::write(
        agent.path().join("hooks/edited.rs"),
        unique_hook(&format!("{nonce} v2")),
    )
    .unwrap();
    let rt = load(agent.path());
    let built: Vec<(&str, bool)> = rt
        .hooks()
        .iter()
        .map(|h| (h.slug.as_str(), h.cargo_built))
        .collect();
    assert_eq!(built, [("edited", true), ("kept", false)]);
}
