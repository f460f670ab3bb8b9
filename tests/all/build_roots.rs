//! A build that cannot see the host: what a Rust hook's build may read.
//!
//! A single-file hook that would make the compiler read a host file is
//! refused before cargo starts (`hooks/build/confine.rs`), however a macro
//! assembles the read; a hook whose dep-info names a file outside the
//! build's roots is refused after cargo ran (`hooks/build/depinfo.rs`); and
//! the build's environment names no home of the user's
//! (`hooks/build/cargo.rs`). Each planted file holds a marker that must show
//! in no problem and no installed component.

use std::fs;
use std::path::{Path, PathBuf};

use hookrt::{ProblemKind, Runtime};

use crate::common::{TempAgent, example, last_field, load, opts, shared_cache, transcript};

/// A file outside every root of the build, holding a marker unique to this
/// test run, as Rust source (`pub const K: &str = "<marker>";`) so a module
/// read from it would compile.
fn planted(dir: &Path) -> (PathBuf, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let marker = format!("PLANTED-{}-{nanos}", std::process::id());
    let file = dir.join("planted-secret.rs");
    fs::write(&file, format!("pub const K: &str = \"{marker}\";\n")).unwrap();
    (file, marker)
}

/// `(kind, path, message and fix)` of every problem of loading `agent`.
fn problems(agent: &Path) -> Vec<(ProblemKind, PathBuf, String)> {
    match Runtime::load_blocking(agent, &opts(), &mut |_| {}) {
        Ok(_) => panic!("{} loaded, but must be refused", agent.display()),
        Err(p) => {
            p.0.into_iter()
                .map(|p| (p.kind, p.path.clone(), p.to_string()))
                .collect()
        }
    }
}

/// No component of the shared cache holds `marker`.
fn in_no_component(marker: &str) {
    let Ok(entries) = fs::read_dir(shared_cache().join("components")) else {
        return;
    };
    for entry in entries.flatten() {
        let bytes = fs::read(entry.path()).unwrap_or_default();
        assert!(
            !bytes.windows(marker.len()).any(|w| w == marker.as_bytes()),
            "{} holds the planted file's text",
            entry.path().display()
        );
    }
}

/// A single-file hook whose extra `code` defines `K: &str` (the handler logs it).
fn single_file(code: &str) -> String {
    format!(
        "use hookrt_sdk::prelude::*;\n{code}\n#[derive(Default)]\npub struct Leak;\nimpl Leak {{ fn any(&mut self, _e: &Event, _c: &Context) -> HookResult {{ log::info(\"k\", &[(\"k\", K)]); Ok(()) }} }}\nhookrt_sdk::define_hook!(Leak {{ \"*\" => any, }});\n"
    )
}

#[test]
fn a_macro_assembled_include_and_a_macro_made_module_are_refused_and_nothing_of_the_file_shows() {
    let tmp = tempfile::tempdir().unwrap();
    let (secret, marker) = planted(tmp.path());
    let secret = secret.to_str().unwrap();
    for (name, code) in [
        // `1.include_str` was one number to the old scan, and rustc 1.95
        // expands the call into `include_str!("<secret>")`.
        (
            "number",
            format!(
                "macro_rules! call {{ ($n:tt . $m:ident) => {{ $m!({secret:?}) }} }}\nconst K: &str = call!(1.include_str);"
            ),
        ),
        // `mod $i;` was no `mod name;` to the old scan.
        (
            "module",
            format!(
                "macro_rules! m {{ ($i:ident) => {{ #[path = {secret:?}] mod $i; }} }}\nm!(k);\nuse k::K;"
            ),
        ),
    ] {
        let agent = TempAgent::new().file(&format!("hooks/{name}.rs"), &single_file(&code));
        let found = problems(agent.path());
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        let (kind, path, text) = &found[0];
        assert_eq!(*kind, ProblemKind::Build);
        assert_eq!(*path, agent.path().join(format!("hooks/{name}.rs")));
        assert!(
            text.contains("line 2: `macro_rules!")
                && text.contains("would read a file of the host"),
            "{name}: {text}"
        );
        assert!(!text.contains(&marker), "{name}: {text}");
        in_no_component(&marker);
    }
}

/// A crate hook `name` whose lib logs `K`, `code` defining it.
fn crate_hook(name: &str, code: &str) -> TempAgent {
    TempAgent::new()
        .file(
            &format!("hooks/{name}/Cargo.toml"),
            &env_leak_file("Cargo.toml", name),
        )
        .file(
            &format!("hooks/{name}/Cargo.lock"),
            &env_leak_file("Cargo.lock", name),
        )
        .file(&format!("hooks/{name}/src/lib.rs"), &single_file(code))
}

/// `file` of the env_leak crate with its package renamed `name`.
fn env_leak_file(file: &str, name: &str) -> String {
    fs::read_to_string(example("testing/hooks/env_leak").join(file))
        .unwrap()
        .replace("env-leak", name)
}

#[test]
fn a_file_outside_the_builds_roots_is_refused_by_the_dep_info_check() {
    // A crate hook is not scanned: its `include_str!` of a file outside its
    // folder, the SDK, the registry and the toolchain is what the compiler's
    // dep-info shows. A host file the kernel sandbox lets the build read
    // (its system folders), unique to this boot: refused by the dep-info
    // check itself.
    let boot = "/proc/sys/kernel/random/boot_id";
    let boot_id = fs::read_to_string(boot).unwrap().trim().to_owned();
    let agent = crate_hook(
        "includer",
        &format!("const K: &str = include_str!({boot:?});"),
    );
    let found = problems(agent.path());
    assert_eq!(found.len(), 1, "{found:?}");
    let (kind, path, text) = &found[0];
    assert_eq!(*kind, ProblemKind::Build);
    assert_eq!(*path, agent.path().join("hooks/includer"));
    assert!(
        text.contains("is refused: the compiler read a file outside the build's roots for it (named in the dep-info ")
            && text.contains("includer.d)"),
        "{text}"
    );
    assert!(!text.contains(&boot_id), "{text}");
    assert!(!text.contains("boot_id"), "the file is not named: {text}");
    in_no_component(&boot_id);

    // A file planted outside the roots: refused (where the kernel sandbox
    // holds, the compiler cannot even open it), nothing of it shown.
    let tmp = tempfile::tempdir().unwrap();
    let (secret, marker) = planted(tmp.path());
    let agent = crate_hook(
        "planted",
        &format!("const K: &str = include_str!({secret:?});"),
    );
    let found = problems(agent.path());
    assert_eq!(found.len(), 1, "{found:?}");
    let (_, path, text) = &found[0];
    assert_eq!(*path, agent.path().join("hooks/planted"));
    let denied = landlock_abi() >= 1;
    assert!(
        if denied {
            text.contains("Permission denied")
        } else {
            text.contains("outside the build's roots")
        },
        "{text}"
    );
    assert!(!text.contains(&marker), "{text}");
    in_no_component(&marker);
}

#[test]
fn the_build_environment_names_no_home_of_the_users() {
    // A fresh source, so this build (not an earlier cached one) is what runs.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let agent = TempAgent::new().hook("testing/hooks/env_leak", "env_leak");
    let lib = agent.path().join("hooks/env_leak/src/lib.rs");
    let src = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, format!("{src}\n// {nonce}\n")).unwrap();
    let rt = load(agent.path());
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    let cache = shared_cache().canonicalize().unwrap();
    let user = |key: &str, below_home: &str| {
        std::env::var_os(key)
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(below_home)))
    };
    for (field, users) in [
        ("home", user("HOME", "")),
        ("cargo_home", user("CARGO_HOME", ".cargo")),
        ("rustup_home", user("RUSTUP_HOME", ".rustup")),
    ] {
        let seen = last_field(&d, field).unwrap_or_else(|| panic!("{field}: {:?}", d.logs));
        let seen = Path::new(&seen);
        assert!(
            seen.canonicalize().unwrap().starts_with(&cache),
            "{field} {} is not in the cache",
            seen.display()
        );
        if let Some(users) = users {
            assert_ne!(seen, users, "{field} is the user's");
        }
    }
    let home = PathBuf::from(last_field(&d, "home").unwrap());
    assert_eq!(fs::read_dir(&home).unwrap().count(), 0, "HOME is empty");
}

/// Whether the kernel has Landlock (its ABI version, 0 without).
fn landlock_abi() -> i64 {
    // SAFETY: a query of the ABI version (flag 1): no ruleset is made.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    }
}

#[test]
fn a_build_script_cannot_open_a_file_outside_the_roots_under_landlock() {
    // Build code the dep-info check cannot see through: a build script
    // copies the planted file into OUT_DIR, and the crate includes the copy.
    if landlock_abi() < 1 {
        eprintln!("skipped: this kernel has no Landlock (docs/sandbox.md)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (secret, marker) = planted(tmp.path());
    let manifest = env_leak_file("Cargo.toml", "copier")
        .replace("publish = false", "publish = false\nbuild = \"build.rs\"");
    let build = format!(
        "fn main() {{\n    let text = match std::fs::read_to_string({secret:?}) {{\n        Ok(t) => t,\n        Err(e) => format!(\"denied: {{:?}}\", e.kind()),\n    }};\n    let out = std::path::Path::new(&std::env::var(\"OUT_DIR\").unwrap()).join(\"copy.txt\");\n    std::fs::write(out, text).unwrap();\n}}\n"
    );
    let agent = TempAgent::new()
        .file("hooks/copier/Cargo.toml", &manifest)
        .file(
            "hooks/copier/Cargo.lock",
            &env_leak_file("Cargo.lock", "copier"),
        )
        .file("hooks/copier/build.rs", &build)
        .file(
            "hooks/copier/src/lib.rs",
            &single_file(
                "const K: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/copy.txt\"));",
            ),
        );
    let rt = load(agent.path());
    let d = rt.dispatch(&transcript()[0]).unwrap().deliveries.remove(0);
    let k = last_field(&d, "k").unwrap_or_else(|| panic!("{:?}", d.logs));
    assert_eq!(k, "denied: PermissionDenied");
    in_no_component(&marker);
}
