//! docs/authoring.md, the tutorial, run as a newcomer runs it: every `$ `
//! command of its shell blocks in order, in an empty folder, with its Rust and
//! TOML blocks written where the text says, each command's output compared
//! with the lines the page shows. A tutorial that stops working fails here.

use std::fs;
use std::path::Path;

use crate::common::repo;

/// The page's fenced blocks, in order: (language, lines).
fn blocks(page: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in page.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((lang.to_owned(), Vec::new())),
            }
        } else if let Some((_, lines)) = open.as_mut() {
            lines.push(line.to_owned());
        }
    }
    out
}

/// Output as the page shows it: stdout then stderr without the log lines
/// (` INFO ...`), every sha256 written as `<sha256>` (a component's digest
/// changes with the SDK it was built with).
fn shown(stdout: &[u8], stderr: &[u8]) -> Vec<String> {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(stdout),
        String::from_utf8_lossy(stderr)
    );
    text.lines()
        .filter(|l| !l.starts_with(" INFO ") && !l.trim().is_empty())
        .map(normalize)
        .collect()
}

fn normalize(line: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in line.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
            continue;
        }
        if run.len() == 64 {
            out.push_str("<sha256>");
        } else {
            out.push_str(&run);
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// Whether `actual` shows `expected`: line for line, where a `...` line of
/// the page stands for any number of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == first && matches(rest, more)),
    }
}

fn set_blocked(dir: &Path, from: &str, to: &str) {
    let toml = dir.join("my-agent/hookrt.toml");
    let text = fs::read_to_string(&toml).unwrap();
    assert!(text.contains(from), "{text}");
    fs::write(&toml, text.replace(from, to)).unwrap();
}

#[test]
fn the_tutorial_runs_as_written() {
    let page = fs::read_to_string(repo().join("docs/authoring.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut commands = 0;
    let (mut wrote_rust, mut wrote_toml) = (false, false);
    for (lang, lines) in blocks(&page) {
        match lang.as_str() {
            "rust" if !wrote_rust => {
                fs::write(
                    dir.path().join("my-agent/hooks/tool-guard.rs"),
                    lines.join("\n") + "\n",
                )
                .unwrap();
                wrote_rust = true;
                continue;
            }
            "toml" if !wrote_toml => {
                fs::write(
                    dir.path().join("my-agent/hookrt.toml"),
                    lines.join("\n") + "\n",
                )
                .unwrap();
                wrote_toml = true;
                continue;
            }
            "" if lines.first().is_some_and(|l| l.starts_with("$ ")) => {}
            _ => continue,
        }
        // Each `$ ` line and the lines it prints, up to the next `$ `.
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in lines {
            match line.strip_prefix("$ ") {
                Some(command) => steps.push((command.to_owned(), Vec::new())),
                None if line.trim().is_empty() => {}
                None if line.trim() == "..." => steps.last_mut().unwrap().1.push("...".into()),
                None => steps.last_mut().unwrap().1.push(normalize(&line)),
            }
        }
        for (command, expected) in steps {
            let words: Vec<&str> = command.split_whitespace().collect();
            if words[0] == "cp" {
                fs::copy(repo().join(words[1]), dir.path().join(words[2])).unwrap();
                continue;
            }
            assert_eq!(words[0], "hookrt", "the tutorial runs hookrt: {command}");
            // The page changes the config before the failing test: "here the
            // config blocks nothing any more".
            let differs = expected.iter().any(|l| l.ends_with("differs"));
            if differs {
                set_blocked(dir.path(), "[\"run_shell\"]", "[]");
            }
            let out = crate::common::hookrt_command()
                .args(&words[1..])
                .current_dir(dir.path())
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let actual = shown(&out.stdout, &out.stderr);
            assert!(
                matches(&expected, &actual),
                "`{command}` no longer prints what docs/authoring.md shows\npage:\n{}\nnow:\n{}",
                expected.join("\n"),
                actual.join("\n")
            );
            assert_eq!(
                out.status.success(),
                !differs,
                "`{command}`: exit status {:?}",
                out.status
            );
            if differs {
                set_blocked(dir.path(), "[]", "[\"run_shell\"]");
            }
            commands += 1;
        }
    }
    assert!(wrote_rust && wrote_toml);
    assert_eq!(commands, 8, "every command of the tutorial ran");
}
