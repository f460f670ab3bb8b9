//! A newcomer, as the install docs lead one: a fresh `HOME` and a `PATH`
//! with no cargo, rustc, node, npm or python, `curl … install.sh | sh`
//! from a loopback server holding what `scripts/dist` built (checked
//! against its signed SHA256SUMS), `hookrt init --pack safe-shell,secrets`,
//! `hookrt install --agent claude-code`, then the real Claude Code (offline
//! against the Messages stand-in) is stopped before `rm -rf` and told about
//! the key a `cat` printed, with no hook error. A changed archive or
//! signature stops the installer before anything is installed.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::claude_e2e::run_claude;
use crate::common::{hookrt_bin, repo};
use crate::plugin_e2e::{config_text, read_then_delete};
use crate::ported_e2e::{all_hooks_succeeded, project};

/// Serves the files of `dir` over loopback HTTP (GET only); its base URL.
fn serve(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let _ = reader.read_line(&mut line);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let name = line
                .split(' ')
                .nth(1)
                .unwrap_or("/")
                .trim_start_matches('/')
                .to_owned();
            let reply = match std::fs::read(dir.join(&name))
                .ok()
                .filter(|_| !name.contains(".."))
            {
                Some(body) => [
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes(),
                    body,
                ]
                .concat(),
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = stream.write_all(&reply);
        }
    });
    url
}

/// A folder of links to the few programs the installer and the hooks use:
/// a `PATH` with no toolchain in it.
fn bare_path(at: &Path) -> PathBuf {
    let bin = at.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in [
        "sh",
        "curl",
        "tar",
        "gzip",
        "sha256sum",
        "ssh-keygen",
        "mktemp",
        "awk",
        "cut",
        "cp",
        "mv",
        "chmod",
        "mkdir",
        "rm",
        "uname",
        "cat",
        "printf",
    ] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists());
        let found = found.unwrap_or_else(|| panic!("the newcomer test needs {tool}"));
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    bin
}

/// `sh -c script` as the newcomer runs it: only `HOME` and the bare `PATH`.
fn newcomer(home: &Path, path: &Path, script: &str, extra: &[(&str, &str)]) -> Output {
    Command::new("/bin/sh")
        .args(["-c", script])
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .envs(extra.iter().copied())
        .current_dir(home)
        .output()
        .expect("sh runs")
}

/// `scripts/dist` into `out` with a throwaway key, publishing at `url`.
fn dist(scratch: &Path, out: &Path, url: &str) {
    let key = scratch.join("release-key");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "hookrt-test", "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let built = Command::new(repo().join("scripts/dist"))
        .arg("--key")
        .arg(&key)
        .arg("--out")
        .arg(out)
        .arg("--binary")
        .arg(hookrt_bin())
        .args(["--base-url", url])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "scripts/dist: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&built.stdout).trim());
}

#[test]
fn a_newcomer_installs_from_the_release_and_the_real_claude_code_is_gated_with_no_toolchain() {
    let scratch = tempfile::tempdir().unwrap();
    let (out, home) = (scratch.path().join("release"), scratch.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let url = serve(out.clone());
    dist(scratch.path(), &out, &url);
    let path = bare_path(scratch.path());
    let started = Instant::now();
    let installed = newcomer(
        &home,
        &path,
        &format!("curl -fsSL {url}/install.sh | sh"),
        &[],
    );
    let installing = started.elapsed();
    let said = String::from_utf8_lossy(&installed.stderr);
    assert!(installed.status.success(), "{said}");
    assert!(
        said.contains("SHA256SUMS is signed by the release key")
            && said.contains("matches SHA256SUMS"),
        "{said}"
    );
    let hookrt = home.join(".local/bin/hookrt");
    let project = project();
    std::fs::write(project.path().join("config.txt"), config_text()).unwrap();
    let (agent, p) = (
        home.join("my-agent"),
        project.path().to_str().unwrap().to_owned(),
    );
    let setup = format!(
        "'{h}' init '{a}' --pack safe-shell,secrets && cd '{p}' && '{h}' install --agent claude-code '{a}'",
        h = hookrt.display(),
        a = agent.display()
    );
    let set_up = newcomer(&home, &path, &setup, &[]);
    assert!(
        set_up.status.success(),
        "{}",
        String::from_utf8_lossy(&set_up.stderr)
    );
    let ready = started.elapsed();
    let cache = home.join(".cache/hookrt");
    // As a newcomer's: the entries `install` wrote run the thin client
    // installed beside hookrt, through the resident service (the other
    // tests' sessions set HOOKRT_NO_SERVICE).
    assert!(home.join(".local/bin/hookrt-hook").is_file());
    let state = home.join(".local/state/hookrt");
    let run = scratch.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let env = [
        ("XDG_RUNTIME_DIR", run.to_str().unwrap()),
        ("PATH", path.to_str().unwrap()),
        ("HOOKRT_CACHE_DIR", cache.to_str().unwrap()),
        ("HOOKRT_NO_SERVICE", "0"),
        ("HOOKRT_STATE_DIR", state.to_str().unwrap()),
    ];
    let s = run_claude(
        "show the config, then clean up",
        read_then_delete,
        project,
        &[],
        &["Bash"],
        &env,
    );
    let gated = started.elapsed();
    all_hooks_succeeded(&s);
    let told = s.requests.last().expect("the model was asked").to_string();
    assert!(
        told.contains("safe-shell: `rm` deletes `~/` recursively, outside the project"),
        "the deny reached the model: {told}"
    );
    assert!(
        told.contains("secrets: the output of `Bash` holds what looks like an aws-access-key"),
        "the context reached the model: {told}"
    );
    // The service the session's hooks started kept its journal, which verifies.
    crate::claude_e2e::service_kept_the_deny(
        |args| {
            Command::new(&hookrt)
                .args(args)
                .envs(env)
                .current_dir(s.project.path())
                .output()
                .unwrap()
        },
        agent.to_str().unwrap(),
        "packs/safe-shell",
    );
    eprintln!(
        "newcomer: installed in {:.1} s, init and install done at {:.1} s, the Claude Code session (its first gated call inside it) ended at {:.1} s",
        installing.as_secs_f64(),
        ready.as_secs_f64(),
        gated.as_secs_f64()
    );
}

#[test]
fn a_changed_archive_or_signature_stops_the_installer_before_anything_is_installed() {
    let scratch = tempfile::tempdir().unwrap();
    let (out, home) = (scratch.path().join("release"), scratch.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let url = serve(out.clone());
    dist(scratch.path(), &out, &url);
    let path = bare_path(scratch.path());
    let install = || {
        newcomer(
            &home,
            &path,
            &format!("curl -fsSL {url}/install.sh | sh"),
            &[],
        )
    };
    let archive = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "gz"))
        .unwrap();
    let original = std::fs::read(&archive).unwrap();
    let mut changed = original.clone();
    let middle = changed.len() / 2;
    changed[middle] ^= 0xff;
    std::fs::write(&archive, &changed).unwrap();
    let refused = install();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("does not match SHA256SUMS") && said.contains("nothing was installed"),
        "{said}"
    );
    assert!(!home.join(".local/bin/hookrt").exists());
    std::fs::write(&archive, &original).unwrap();
    // A SHA256SUMS rewritten to match a changed archive: its signature no longer does.
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    let other = if sums.starts_with('0') { "1" } else { "0" };
    let forged = sums.replacen(|c: char| c.is_ascii_hexdigit(), other, 1);
    assert_ne!(forged, sums);
    std::fs::write(out.join("SHA256SUMS"), forged).unwrap();
    let refused = install();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("signature does not match the release key")
            && said.contains("nothing was installed"),
        "{said}"
    );
    assert!(!home.join(".local/bin/hookrt").exists());
}

#[test]
fn npm_installs_the_packed_tarballs_with_no_install_script_and_runs_hookrt() {
    let scratch = tempfile::tempdir().unwrap();
    let (out, home) = (scratch.path().join("release"), scratch.path().join("home"));
    let project = scratch.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    dist(scratch.path(), &out, "http://127.0.0.1:9");
    let tarballs: Vec<PathBuf> = std::fs::read_dir(out.join("npm"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        tarballs.len(),
        2,
        "the meta-package and this platform's: {tarballs:?}"
    );
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "newcomer", "version": "1.0.0", "private": true}"#,
    )
    .unwrap();
    // As Claude Code installs a plugin's dependencies: no install script runs, nothing is fetched.
    let npm = Command::new("npm")
        .args([
            "install",
            "--offline",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
        ])
        .args(&tarballs)
        .current_dir(&project)
        .env("HOME", &home)
        .output()
        .expect("npm runs");
    assert!(
        npm.status.success(),
        "{}",
        String::from_utf8_lossy(&npm.stderr)
    );
    let bin = project.join("node_modules/.bin/hookrt");
    let agent = project.join("agent");
    let ran = Command::new(&bin)
        .arg("init")
        .arg(&agent)
        .args(["--pack", "safe-shell"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(String::from_utf8_lossy(&ran.stdout).contains("locked 1 hook(s)"));
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("hookrt {}", env!("CARGO_PKG_VERSION"))
    );
    // Without this platform's package (`--omit=optional` elsewhere) the launcher says what is missing.
    std::fs::remove_dir_all(project.join("node_modules/hookrt-linux-x64")).unwrap();
    let missing = Command::new(&bin).arg("--version").output().unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("is not installed beside hookrt"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}
