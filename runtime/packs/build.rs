//! Builds the packs' components (`guest/`, one crate per pack) for
//! `wasm32-wasip2` with the cargo that builds this crate, into the target
//! dir's `hookrt-packs/` (its own target dir, so the two builds never wait
//! on each other's lock), and writes the table `src/lib.rs` includes: each
//! pack's name, its component's bytes and their sha256.
//!
//! The nested cargo gets none of the outer build's flags or target: the
//! components are built the same whatever profile or host builds hookrt.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// Each pack: its name in `hookrt.toml`, its crate's name.
const PACKS: &[(&str, &str)] = &[
    ("safe-shell", "pack_safe_shell"),
    ("protect-paths", "pack_protect_paths"),
    ("secrets", "pack_secrets"),
    ("budget", "pack_budget"),
    ("format-on-edit", "pack_format_on_edit"),
    ("tests-at-stop", "pack_tests_at_stop"),
    ("notify", "pack_notify"),
    ("notify-webhook", "pack_notify_webhook"),
    ("audit-log", "pack_audit_log"),
];

fn main() {
    let manifest =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let guest = manifest.join("guest");
    let root = manifest.join("../..");
    for watched in [
        guest.clone(),
        manifest.join("rules"),
        root.join("guest-sdk/src"),
        root.join("guest-sdk/macros"),
        root.join("guest-sdk/wit"),
        root.join("guest-sdk/Cargo.toml"),
    ] {
        println!("cargo::rerun-if-changed={}", watched.display());
    }
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<pkg>-<hash>/out.
    let target_dir = out
        .ancestors()
        .nth(4)
        .expect("OUT_DIR is inside the target dir")
        .join("hookrt-packs");
    build_components(&guest, &target_dir);
    write_table(&target_dir, &out);
}

/// `cargo build` of the guest workspace for wasm32-wasip2 into `target_dir`,
/// with none of the outer build's flags.
fn build_components(guest: &Path, target_dir: &Path) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(guest.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_INCREMENTAL",
        "CARGO_BUILD_INCREMENTAL",
        "CARGO_LLVM_COV",
        "LLVM_PROFILE_FILE",
    ] {
        build.env_remove(var);
    }
    for (key, _) in env::vars_os() {
        if key.to_string_lossy().starts_with("CARGO_PROFILE_") {
            build.env_remove(key);
        }
    }
    let status = build
        .status()
        .expect("cargo starts for the packs' components");
    assert!(
        status.success(),
        "building the packs' components (runtime/packs/guest) failed: {status} (after adding a pack, \
         `cargo update --workspace --offline --manifest-path runtime/packs/guest/Cargo.toml` updates its Cargo.lock)"
    );
}

/// Each pack's component copied into `out` and the table naming them.
fn write_table(target_dir: &Path, out: &Path) {
    let mut table = String::from(
        "/// Each pack's name, component and the component's sha256 (hex).\npub(crate) static COMPONENTS: &[(&str, &[u8], &str)] = &[\n",
    );
    for (name, krate) in PACKS {
        let built = target_dir
            .join("wasm32-wasip2/release")
            .join(format!("{krate}.wasm"));
        let bytes = std::fs::read(&built).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
        let kept = out.join(format!("{name}.wasm"));
        write_if_changed(&kept, &bytes);
        let sha = hex::encode(Sha256::digest(&bytes));
        writeln!(
            table,
            "    ({name:?}, include_bytes!({:?}), {sha:?}),",
            kept.display().to_string()
        )
        .expect("writes to a String");
    }
    table.push_str("];\n");
    write_if_changed(&out.join("components.rs"), table.as_bytes());
}

fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}
