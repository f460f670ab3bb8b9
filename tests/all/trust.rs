//! The agent folder is hostile: `prebuilt` mode compiles nothing, the
//! artifact cache lives outside the folder and loads only what it signed, and
//! a cached component is checked against the digest recorded at build time.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::Digest as _;

use hookrt::{BuildOptions, ProblemKind, Runtime};

use crate::common::{TempAgent, example, load, opts};

/// The component the shared cache holds for `example-hooks/<rel>`, built once.
fn component_of(rel: &str) -> PathBuf {
    let file = Path::new(rel)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let agent = TempAgent::new().hook(rel, &file);
    load(agent.path()).hooks()[0].component.clone()
}

/// An agent folder holding `components` as `hooks/<name>.wasm`.
fn component_agent(components: &[(&str, &Path)]) -> TempAgent {
    let agent = TempAgent::new();
    for (name, from) in components {
        fs::copy(
            from,
            agent.path().join("hooks").join(format!("{name}.wasm")),
        )
        .unwrap();
    }
    agent
}

fn opts_in(cache: &Path) -> BuildOptions {
    BuildOptions {
        cache_dir: cache.to_path_buf(),
        ..opts()
    }
}

/// `(kind, path, message)` of every problem of loading `agent` with `opts`.
fn problems(agent: &Path, opts: &BuildOptions) -> Vec<(ProblemKind, PathBuf, String)> {
    match Runtime::load_blocking(agent, opts, &mut |_| {}) {
        Ok(_) => panic!("{} loaded, but must be refused", agent.display()),
        Err(p) => {
            p.0.into_iter()
                .map(|p| (p.kind, p.path, p.message))
                .collect()
        }
    }
}

const PREBUILT_REFUSAL: &str =
    "is a source hook, and this agent folder is loaded in `prebuilt` mode: nothing is compiled";

#[test]
fn prebuilt_mode_never_builds_a_crate_hook_so_its_build_script_never_runs() {
    let agent = TempAgent::new()
        .hook("testing/build-script/hooks/build_marker", "build_marker")
        .config("mode = \"prebuilt\"\n");
    let krate = agent.path().join("hooks/build_marker");
    let mark = krate.join("build-script-ran");
    assert_eq!(
        problems(agent.path(), &opts()),
        [(
            ProblemKind::Build,
            krate.clone(),
            PREBUILT_REFUSAL.to_owned()
        )]
    );
    assert!(!mark.exists(), "cargo never ran, so neither did build.rs");

    // Control: in `build` mode the same crate builds, and its build script runs
    // on the host, as documented.
    fs::write(agent.path().join("hookrt.toml"), "mode = \"build\"\n").unwrap();
    let rt = load(agent.path());
    assert_eq!(rt.hooks()[0].slug.as_str(), "build_marker");
    assert_eq!(fs::read_to_string(&mark).unwrap(), "ran\n");
}

#[test]
fn prebuilt_option_refuses_single_file_hooks_and_needs_no_sdk() {
    let witness = component_of("hostile/hooks/witness.rs");
    let agent = component_agent(&[("witness", &witness)]).file("hooks/audit.rs", "");
    let no_sdk = BuildOptions {
        prebuilt: true,
        sdk_dir: PathBuf::from("/nonexistent/guest-sdk"),
        ..opts()
    };
    assert_eq!(
        problems(agent.path(), &no_sdk),
        [(
            ProblemKind::Build,
            agent.path().join("hooks/audit.rs"),
            PREBUILT_REFUSAL.to_owned()
        )]
    );
    fs::remove_file(agent.path().join("hooks/audit.rs")).unwrap();
    let rt = Runtime::load_blocking(agent.path(), &no_sdk, &mut |_| {})
        .expect("components only: no SDK needed");
    assert_eq!(rt.hooks()[0].slug.as_str(), "witness");
    assert!(!rt.hooks()[0].cargo_built);
}

#[test]
fn a_cache_dir_inside_the_agent_folder_is_refused() {
    let agent = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let inside = agent.path().join(".hookrt");
    assert_eq!(
        problems(agent.path(), &opts_in(&inside)),
        [(
            ProblemKind::Build,
            inside.clone(),
            "the cache dir is inside the agent folder, whose author could plant compiled artifacts and the cache's key there".to_owned()
        )]
    );
    assert!(!inside.exists(), "nothing was written there");
    let default = BuildOptions::for_agent(agent.path()).cache_dir;
    assert!(!default.starts_with(agent.path()), "{}", default.display());
}

/// The artifact file of the component with `sha256` in `cache`.
fn artifact_of(cache: &Path, sha256: &str) -> PathBuf {
    let found: Vec<PathBuf> = fs::read_dir(cache.join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(sha256) && name.ends_with(".cwasm")
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// A private cache (its folder kept by the first value) and two agents of
/// one component hook each, `witness` and `deny_all`, which subscribe
/// differently.
fn witness_and_deny() -> (tempfile::TempDir, PathBuf, TempAgent, TempAgent) {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let witness = component_agent(&[("witness", &component_of("hostile/hooks/witness.rs"))]);
    let deny = component_agent(&[("deny_all", &component_of("testing/hooks/deny_all.rs"))]);
    (dir, cache, witness, deny)
}

#[test]
fn a_planted_artifact_under_the_expected_name_is_never_deserialized() {
    let (_dir, cache, witness, deny) = witness_and_deny();
    let first = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    let expected = first.hooks()[0].subscriptions.clone();
    let sha = first.hooks()[0].component_sha256.clone();
    let other = Runtime::load_blocking(deny.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    assert_ne!(
        other.hooks()[0].subscriptions,
        expected,
        "the two hooks tell apart"
    );

    // Private cache: folders 0700, files 0600.
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let artifact = artifact_of(&cache, &sha);
    assert_eq!(
        (
            mode(&cache),
            mode(&cache.join("artifacts")),
            mode(&artifact),
            mode(&cache.join("key"))
        ),
        (0o700, 0o700, 0o600, 0o600)
    );

    // Past the stamp's settle time, a load checks the MAC once more and
    // stamps the file: later loads map it unread while it stays that file.
    let mac_file = |a: &Path| PathBuf::from(format!("{}.mac", a.display()));
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let stamped = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    assert!(!stamped.hooks()[0].compiled, "the signed artifact is used");
    assert_eq!(
        fs::read(mac_file(&artifact)).unwrap().len(),
        64,
        "MAC and stamp"
    );
    let own_macs = fs::read(mac_file(&artifact)).unwrap();
    // The stamped artifact is mapped as it is, and runs.
    let mapped = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    assert!(!mapped.hooks()[0].compiled);
    let d = mapped.dispatch(&crate::common::transcript()[0]).unwrap();
    assert_eq!(d.deliveries[0].outcome, hookrt::Outcome::Ok);
    assert_eq!(
        fs::read(mac_file(&artifact)).unwrap(),
        own_macs,
        "stamp kept"
    );

    // Planted under the exact name, written in place with the modification
    // time put back: a valid artifact of another component with its own MAC
    // file; the same with this artifact's stamped MAC file; garbage.
    let foreign_artifact = artifact_of(&cache, &other.hooks()[0].component_sha256);
    let foreign = fs::read(&foreign_artifact).unwrap();
    let foreign_macs = fs::read(mac_file(&foreign_artifact)).unwrap();
    let garbage = b"\x7fELF not an artifact".to_vec();
    for (planted, macs) in [
        (&foreign, &foreign_macs),
        (&foreign, &own_macs),
        (&garbage, &own_macs),
    ] {
        let mtime = fs::metadata(&artifact).unwrap().modified().unwrap();
        let mut file = fs::File::options()
            .write(true)
            .truncate(true)
            .open(&artifact)
            .unwrap();
        std::io::Write::write_all(&mut file, planted).unwrap();
        file.set_modified(mtime).unwrap();
        drop(file);
        fs::write(mac_file(&artifact), macs).unwrap();
        let rt = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
        let h = &rt.hooks()[0];
        assert!(
            h.compiled,
            "the planted file was not used: Cranelift compiled the component"
        );
        assert_eq!(
            h.subscriptions, expected,
            "the hook is itself, not the planted one"
        );
        assert_ne!(
            &fs::read(&artifact).unwrap(),
            planted,
            "the planted file was replaced"
        );
    }
    let again = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    assert!(
        !again.hooks()[0].compiled,
        "the replacement is signed and used"
    );
}

/// The start records (`starts/` in the cache) of a cache, by file name.
fn start_records(cache: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(cache.join("starts"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn a_planted_start_record_never_changes_what_a_hook_subscribes_to() {
    let (_dir, cache, witness, deny) = witness_and_deny();
    let first = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    let expected = first.hooks()[0].subscriptions.clone();
    let records = start_records(&cache);
    assert_eq!(records.len(), 1, "its start was recorded");
    let own = fs::read_to_string(&records[0]).unwrap();
    let other = Runtime::load_blocking(deny.path(), &opts_in(&cache), &mut |_| {}).unwrap();
    let foreign_subs = other.hooks()[0].subscriptions.clone();
    assert_ne!(foreign_subs, expected);
    let foreign = start_records(&cache)
        .into_iter()
        .find(|p| *p != records[0])
        .map(|p| fs::read_to_string(p).unwrap())
        .unwrap();

    // Another hook's valid record, and this record's MAC over other
    // subscriptions, under this hook's record name.
    let (own_mac, _) = own.split_once('\n').unwrap();
    let edited = format!(
        "{own_mac}\n{}",
        serde_json::to_string(&foreign_subs).unwrap()
    );
    for planted in [foreign, edited] {
        fs::write(&records[0], &planted).unwrap();
        let rt = Runtime::load_blocking(witness.path(), &opts_in(&cache), &mut |_| {}).unwrap();
        assert_eq!(
            rt.hooks()[0].subscriptions,
            expected,
            "the hook was started again and told its own subscriptions"
        );
        assert_eq!(
            fs::read_to_string(&records[0]).unwrap(),
            own,
            "the planted record was replaced by the true one"
        );
    }
}

#[test]
fn a_forged_component_digest_record_is_detected() {
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let src = fs::read_to_string(example("hostile/hooks/witness.rs")).unwrap();
    let agent = TempAgent::new().file("hooks/forged.rs", &format!("{src}\n// {nonce}\n"));
    let built = load(agent.path());
    let h = &built.hooks()[0];
    let component = h.component.clone();
    let record = component.with_extension("wasm.sha256");
    let true_record = fs::read_to_string(&record).unwrap();
    let mac = true_record.lines().nth(1).expect("a MAC line").to_owned();
    assert_eq!(mac.len(), 64, "{true_record}");
    let reloaded = || Runtime::load_blocking(agent.path(), &opts(), &mut |_| {}).unwrap();

    // A replaced component with a record of its own digest (what someone
    // writing the cache would plant): the record has no MAC of this cache's,
    // so the component is built again, never run.
    let mut planted_bytes = fs::read(&component).unwrap();
    planted_bytes.extend_from_slice(b"\0\x05extra");
    let planted = hex::encode(sha2::Sha256::digest(&planted_bytes));
    fs::write(&component, &planted_bytes).unwrap();
    fs::write(&record, format!("{planted}\n")).unwrap();
    let rt = reloaded();
    assert!(
        rt.hooks()[0].cargo_built,
        "the planted component was rebuilt"
    );
    assert_eq!(
        rt.hooks()[0].component_sha256,
        h.component_sha256,
        "what runs is the true build"
    );
    // A forged digest with the true record's MAC: the MAC covers the digest.
    fs::write(&record, format!("{}\n{mac}\n", "0".repeat(64))).unwrap();
    assert!(
        reloaded().hooks()[0].cargo_built,
        "a forged record is not taken"
    );

    // Past the stamp's settle time a load stamps the record: later loads take
    // the digest without reading the component while it stays that file.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    reloaded();
    let stamped = fs::read_to_string(&record).unwrap();
    let lines: Vec<&str> = stamped.lines().collect();
    assert_eq!(lines.len(), 3, "digest, MAC and stamp: {stamped}");
    assert_eq!(
        (lines[0], lines[2].len()),
        (h.component_sha256.as_str(), 64)
    );
    // The stamped record kept, the component changed in place with its
    // modification time put back: refused.
    let mtime = fs::metadata(&component).unwrap().modified().unwrap();
    let mut bytes = fs::read(&component).unwrap();
    bytes.extend_from_slice(b"\0\x05extra");
    let changed = hex::encode(sha2::Sha256::digest(&bytes));
    fs::write(&component, &bytes).unwrap();
    fs::File::options()
        .write(true)
        .open(&component)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(
        problems(agent.path(), &opts()),
        [(
            ProblemKind::Load,
            component.clone(),
            format!(
                "cached component of `forged` does not match the digest recorded when it was built \
                 (recorded {}, found {changed}): the cache was changed",
                h.component_sha256
            ),
        )]
    );
}

/// A `rustc-wrapper` in `dir` that runs rustc and appends a line to the
/// marker file it names (which exists only once the wrapper ran).
fn marking_wrapper(dir: &Path) -> (PathBuf, PathBuf) {
    let mark = dir.join("wrapper-ran");
    let wrapper = dir.join("wrapper.sh");
    fs::write(
        &wrapper,
        format!("#!/bin/sh\necho ran >> '{}'\nexec \"$@\"\n", mark.display()),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    (mark, wrapper)
}

#[test]
fn cargo_configuration_in_the_agent_folder_never_takes_effect() {
    let tmp = tempfile::tempdir().unwrap();
    let (mark, wrapper) = marking_wrapper(tmp.path());
    let config = format!("[build]\nrustc-wrapper = \"{}\"\n", wrapper.display());
    // A fresh source, so cargo really runs for it.
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let agent = TempAgent::new()
        .hook("testing/build-script/hooks/build_marker", "build_marker")
        .file(".cargo/config.toml", &config)
        .file("hooks/build_marker/.cargo/config.toml", &config);
    let lib = agent.path().join("hooks/build_marker/src/lib.rs");
    let src = fs::read_to_string(&lib).unwrap();
    fs::write(&lib, format!("{src}\n// {nonce}\n")).unwrap();
    let rt = load(agent.path());
    assert!(rt.hooks()[0].cargo_built, "cargo built the crate");
    assert!(!mark.exists(), "the agent folder's rustc-wrapper never ran");
}

#[test]
fn a_cache_dir_others_can_write_own_or_link_is_refused_before_anything_is_read() {
    let agent = TempAgent::new().hook("hostile/hooks/witness.rs", "witness.rs");
    let tmp = tempfile::tempdir().unwrap();
    let refused = |cache: &Path| -> String {
        let o = BuildOptions {
            cache_dir: cache.to_path_buf(),
            ..opts()
        };
        match Runtime::load_blocking(agent.path(), &o, &mut |_| {}) {
            Ok(_) => panic!("{} must be refused", cache.display()),
            Err(p) => p.to_string(),
        }
    };
    // Everyone's, as a pre-made /tmp/hookrt-cache-<uid> could be.
    let open = tmp.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    assert!(
        refused(&open).contains("writable by its group or others"),
        "{}",
        refused(&open)
    );
    assert!(!open.join("key").exists(), "no key was written into it");
    // A link to a folder, even a private one.
    let private = tmp.path().join("private");
    fs::create_dir(&private).unwrap();
    fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    assert!(refused(&link).contains("symbolic link"));
    // Another user's (only root can make one to try).
    if unsafe { libc::geteuid() } == 0 {
        let theirs = tmp.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        fs::set_permissions(&theirs, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        assert!(
            refused(&theirs).contains("owned by uid 65534"),
            "{}",
            refused(&theirs)
        );
    }
}

#[test]
fn cargo_configuration_above_the_cache_dir_never_takes_effect() {
    // A .cargo/config.toml planted in the folder above the (shared) cache
    // dir, as anyone could plant one in /tmp above a cache there: cargo runs
    // in `/`, so it is never read. The wrapper only marks that it ran.
    let tmp = tempfile::tempdir().unwrap();
    let (mark, wrapper) = marking_wrapper(tmp.path());
    let above = crate::common::shared_cache()
        .parent()
        .unwrap()
        .join(".cargo");
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
    fs::create_dir_all(&above).unwrap();
    let _planted = Remove(above.clone());
    fs::write(
        above.join("config.toml"),
        format!("[build]\nrustc-wrapper = \"{}\"\n", wrapper.display()),
    )
    .unwrap();
    let nonce = format!("{:?}", std::time::SystemTime::now());
    let src = fs::read_to_string(example("hostile/hooks/witness.rs")).unwrap();
    let agent = TempAgent::new().file("hooks/witness.rs", &format!("{src}\n// {nonce}\n"));
    let rt = load(agent.path());
    assert!(rt.hooks()[0].cargo_built, "cargo built the hook");
    assert!(!mark.exists(), "the planted rustc-wrapper ran");
}
