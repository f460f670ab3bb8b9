//! The `protect-paths` pack: files the agent may not read, write or delete,
//! named by gitignore-like globs, judged on every agent's file tools and on
//! the paths its shell commands name. docs/packs/protect-paths.md.
//!
//! A glob without a `/` (a trailing one aside) matches a name at any depth
//! in the project (`.env`, `node_modules/`); one with a `/` is anchored at
//! the project root (`secrets/**`). `**` spans folders, `*` and `?` stay in
//! one name, `[abc]` and `[!abc]` are classes. A glob starting with `/` or
//! `~/` matches paths outside the project by their absolute form (`~/` also
//! stands for `/home/NAME/`, `/Users/NAME/` and `/root/`: the sandbox does
//! not know the home). A matched folder protects everything below it; with
//! no file system to ask, a trailing `/` matches files too.
//!
//! In a shell command any program's argument is read; redirection targets
//! and what `cp`, `tee`, `sed -i`, `chmod` and the like change are written;
//! what `rm`, `mv`, `git rm`, `shred` remove is deleted. A path only known
//! when the command runs is not judged.

use serde::{Deserialize, Serialize};

use crate::glob::{Glob, compile};
use crate::paths::{self, Place};
use crate::shell::{self, Line, Simple, Word};
use crate::tools::{self, Access};
use crate::{Answer, Invalid};

/// `[packs.protect-paths]` in `hookrt.toml`; every key has a default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// What a caught call gets: `"deny"` (the default) or `"ask"`.
    pub answer: Answer,
    /// Globs the agent may not read (by default `.env`, keys, SSH, cloud and
    /// registry credentials). Each also counts for `write` and `delete`: a
    /// file the agent may not read it may not overwrite either.
    pub read: Vec<String>,
    /// Globs it may not write, edit, create, move onto, chmod or delete (by
    /// default `.git/**`, `.env`, `.env.*`, `*.pem`, `*.key`). Each also
    /// counts for `delete`.
    pub write: Vec<String>,
    /// Globs it may not delete (`rm`, `mv` away, `git rm`, a delete tool);
    /// none by default.
    pub delete: Vec<String>,
    /// Globs let through whatever the lists above say (by default the
    /// `.env` templates: `.env.example`, `.sample`, `.template`, `.dist`).
    pub allow: Vec<String>,
}

const READ: &str = ".env .env.* *.pem *.key *.p12 id_rsa* id_ecdsa* id_ed25519* .netrc \
    .git-credentials ~/.ssh/** ~/.aws/** ~/.gnupg/** ~/.kube/config ~/.docker/config.json";
const WRITE: &str = ".git/** .env .env.* *.pem *.key";
const ALLOW: &str = ".env.example .env.sample .env.template .env.dist";

impl Default for Settings {
    fn default() -> Settings {
        let list = |globs: &str| globs.split_whitespace().map(str::to_owned).collect();
        Settings {
            answer: Answer::Deny,
            read: list(READ),
            write: list(WRITE),
            delete: Vec::new(),
            allow: list(ALLOW),
        }
    }
}

/// A path of a call caught by one of the lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What the call would do to it: `read`, `write` or `delete`.
    pub rule: String,
    /// Why, naming the tool or program, the path and the glob.
    pub reason: String,
}

/// What a call does to a path; each implies the lists of those before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Act {
    Read,
    Write,
    Delete,
}

impl From<Access> for Act {
    fn from(access: Access) -> Act {
        match access {
            Access::Read => Act::Read,
            Access::Write => Act::Write,
            Access::Delete => Act::Delete,
        }
    }
}

/// The lists of the settings, the first three in the order of [`Act`].
const LISTS: [&str; 4] = ["read", "write", "delete", "allow"];

impl Act {
    fn rule(self) -> &'static str {
        LISTS[self as usize]
    }

    fn ing(self) -> &'static str {
        ["reading", "writing", "deleting"][self as usize]
    }
}

/// The settings with their globs compiled.
#[derive(Debug, Clone)]
pub struct Checker {
    answer: Answer,
    /// `read`, `write`, `delete`, in the order of [`Act`].
    lists: [Vec<Glob>; 3],
    allow: Vec<Glob>,
}

impl Checker {
    /// Compiles the settings' globs, or says which one is wrong (`read[2]`).
    pub fn new(settings: Settings) -> Result<Checker, Invalid> {
        let globs = [
            settings.read,
            settings.write,
            settings.delete,
            settings.allow,
        ];
        let [read, write, delete, allow] = std::array::from_fn(|k| {
            let glob = |(i, g): (usize, &String)| {
                let key = format!("{}[{i}]", LISTS[k]);
                compile(g).map_err(|e| Invalid::new(&key, format!("`{key}` is not a glob: {e}")))
            };
            globs[k]
                .iter()
                .enumerate()
                .map(glob)
                .collect::<Result<Vec<_>, _>>()
        });
        let (answer, lists) = (settings.answer, [read?, write?, delete?]);
        Ok(Checker {
            answer,
            lists,
            allow: allow?,
        })
    }

    /// What the pack answers on a call with findings.
    pub fn answer(&self) -> Answer {
        self.answer
    }

    /// The protected paths a call of `tool` with `input` would read, write
    /// or delete, run in `cwd` of the project at `root` (each stands in for
    /// the other when one is unknown): reads, then writes, then deletes,
    /// each in the order the call names them, none twice.
    pub fn check(
        &self,
        tool: &str,
        input: &serde_json::Value,
        cwd: Option<&str>,
        root: Option<&str>,
    ) -> Vec<Finding> {
        let (cwd, root) = (cwd.or(root), root.or(cwd));
        let mut out = Vec::new();
        if let Some(command) = tools::shell_command(tool, input) {
            let line = shell::parse(&command);
            let patching = runs_patcher(&line);
            self.walk(&line, cwd.map(str::to_owned), root, patching, &mut out);
        }
        for (access, path) in tools::file_paths(tool, input) {
            let act = Act::from(access);
            let place = paths::place(&path, cwd, root);
            self.judge(act, &place, &format!("`{tool}` of"), &mut out);
        }
        out.sort_by_key(|(act, _)| *act);
        out.into_iter().map(|(_, f)| f).collect()
    }

    /// Judges every command of `line` and of the lines nested in it, each
    /// nested line starting in the folder its command runs in. When the
    /// command runs a patcher (`patching`), the files every patch text of it
    /// names are judged too.
    fn walk(
        &self,
        line: &Line,
        mut cwd: Option<String>,
        root: Option<&str>,
        patching: bool,
        out: &mut Found,
    ) {
        for c in &line.commands {
            let name = c.name();
            if name == "cd" {
                cwd = match c.program().get(1) {
                    Some(w) if path_of(w).is_none() => None,
                    arg => paths::cd(arg.map(|w| w.text.as_str()), cwd.as_deref()),
                };
            }
            for (act, path) in roles(c) {
                let place = paths::place(path, cwd.as_deref(), root);
                let who = if name.is_empty() {
                    "a redirection".into()
                } else {
                    format!("`{name}`")
                };
                self.judge(act, &place, &format!("{who} {}", act.ing()), out);
            }
            for (act, path) in patched(c).into_iter().filter(|_| patching) {
                let place = paths::place(path, cwd.as_deref(), root);
                self.judge(act, &place, &format!("a patch {}", act.ing()), out);
            }
            for n in &c.nested {
                self.walk(n, cwd.clone(), root, patching, out);
            }
        }
    }

    /// Adds a finding when `place` matches a list `act` is refused by: its
    /// own or one before it.
    fn judge(&self, act: Act, place: &Place, actor: &str, out: &mut Found) {
        let (path, outside) = match place {
            Place::Inside(p) => (p, false),
            Place::Outside(p) => (p, true),
            Place::Unknown => return,
        };
        if self.allow.iter().any(|g| g.matches(path, outside)) {
            return;
        }
        let lists = self.lists[..=act as usize].iter().enumerate().rev();
        let mut globs = lists.flat_map(|(i, l)| l.iter().map(move |g| (i, g)));
        if let Some((i, glob)) = globs.find(|(_, g)| g.matches(path, outside)) {
            let (list, text) = (LISTS[i], &glob.text);
            let reason = format!("{actor} `{path}` is refused: it matches `{text}` in `{list}`");
            let f = (
                act,
                Finding {
                    rule: act.rule().to_owned(),
                    reason,
                },
            );
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
}

/// Findings as they are gathered, with what the call does, to sort them.
type Found = Vec<(Act, Finding)>;

/// The text of a word as a path, or `None` when it is only known when it
/// runs (`$HOME` aside), a URL, or standard input (`-`).
fn path_of(w: &Word) -> Option<&str> {
    let t = w.text.as_str();
    let home = t
        .strip_prefix("$HOME")
        .is_some_and(|r| (r.is_empty() || r.starts_with('/')) && !r.contains(['$', '`']));
    let known = (!w.dynamic || home) && !t.contains("://");
    (known && !t.is_empty() && t != "-").then_some(t)
}

/// The programs that apply a patch they are given: Codex runs `apply_patch`
/// and `applypatch` itself when a shell command names them, and a patch
/// may reach one as an argument, a here-document or piped in.
const PATCHERS: &[&str] = &["apply_patch", "applypatch"];

/// Whether `line`, or a line nested in it, runs a patcher.
fn runs_patcher(line: &Line) -> bool {
    line.commands
        .iter()
        .any(|c| PATCHERS.contains(&c.name().as_str()) || c.nested.iter().any(runs_patcher))
}

/// The files the patch texts of `c` name (its assignments, its words and
/// what it feeds in: here-documents and here-strings), and what a patch
/// does to each: judged in a command line that runs a patcher, wherever the
/// patch comes from (`echo 'PATCH' | apply_patch`, `P='PATCH'; apply_patch "$P"`).
fn patched(c: &Simple) -> Vec<(Act, &str)> {
    let words = c.words.iter().map(|w| w.text.as_str());
    let fed = c.redirects.iter().filter(|r| r.op.starts_with("<<"));
    c.assignments
        .iter()
        .map(String::as_str)
        .chain(words)
        .chain(fed.map(|r| r.target.text.as_str()))
        .flat_map(tools::patch_files)
        .map(|(access, p)| (Act::from(access), p))
        .collect()
}

/// The paths one command names, and what it does with each.
fn roles(c: &Simple) -> Vec<(Act, &str)> {
    let mut out: Vec<(Act, &Word)> = Vec::new();
    for r in &c.redirects {
        match r.op.as_str() {
            "<" => out.push((Act::Read, &r.target)),
            op if op.contains('>') => out.push((Act::Write, &r.target)),
            _ => {} // here-documents and here-strings: text, not files
        }
    }
    let (mut name, mut args) = (c.name(), c.program().get(1..).unwrap_or_default());
    while name == "git" || name.starts_with("git -") {
        // Past git's own options to its subcommand.
        let Some((first, rest)) = args.split_first() else {
            break;
        };
        let valued = ["-C", "-c", "--git-dir", "--work-tree", "--namespace"];
        let skip = usize::from(valued.contains(&first.text.as_str()));
        (args, name) = (
            rest.get(skip..).unwrap_or_default(),
            format!("git {}", first.text),
        );
    }
    // The words that are not options (`-x`, `--long`; none after `--`).
    let mut options = true;
    let mut ops: Vec<&Word> = args
        .iter()
        .filter(|w| {
            options &= w.text != "--";
            !(options && w.text.starts_with('-') || w.text == "--")
        })
        .collect();
    let flag = |f: fn(&str) -> bool| args.iter().any(|w| f(&w.text));
    let in_place = |t: &str| {
        t.starts_with("--in-place") || t.starts_with('-') && !t.starts_with("--") && t.contains('i')
    };
    let act = match name.as_str() {
        "rm" | "unlink" | "shred" | "rmdir" | "srm" => Act::Delete,
        "git rm" if !flag(|t| t == "--cached") => Act::Delete,
        "tee" | "touch" | "truncate" | "mkdir" | "git checkout" | "git restore" => Act::Write,
        "sed" | "perl" if flag(in_place) => Act::Write,
        "chmod" | "chown" | "chgrp" => {
            ops.drain(..ops.len().min(1)); // the mode or owner
            Act::Write
        }
        "cp" | "mv" | "git mv" | "install" | "ln" | "rsync" | "scp" => {
            // The target: `-t DIR`, else the last of two or more operands.
            let flagged = args.windows(2).find(|w| w[0].text == "-t").map(|w| &w[1]);
            ops.retain(|w| !flagged.is_some_and(|t| std::ptr::eq(*w, t)));
            let target = flagged.or_else(|| if ops.len() > 1 { ops.pop() } else { None });
            out.extend(target.map(|t| (Act::Write, t)));
            if name.ends_with("mv") {
                Act::Delete
            } else {
                Act::Read
            }
        }
        _ => Act::Read,
    };
    // `cd`'s folder is followed, not read; `echo`'s words are text, and so is
    // a patcher's patch (its files are judged apart, [`patched`]).
    let text_only = ["cd", "dd", "echo", "printf"].contains(&name.as_str());
    if !text_only && !PATCHERS.contains(&name.as_str()) {
        out.extend(ops.iter().map(|w| (act, *w)));
    }
    let mut paths: Vec<(Act, &str)> = out
        .into_iter()
        .filter_map(|(a, w)| Some((a, path_of(w)?)))
        .collect();
    if name == "dd" {
        for p in ops.into_iter().filter_map(path_of) {
            paths.extend(p.strip_prefix("if=").map(|p| (Act::Read, p)));
            paths.extend(p.strip_prefix("of=").map(|p| (Act::Write, p)));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Checks each line of `cases`, `RULES | CALL`: the rules caught (`-`
    /// for none) in CALL, `$ COMMAND` for the shell or `TOOL INPUT-JSON`.
    fn table(settings: &Settings, cases: &str) {
        let checker = Checker::new(settings.clone()).unwrap();
        for case in cases.lines().map(str::trim).filter(|c| !c.is_empty()) {
            let (want, call) = case.split_once(" | ").unwrap();
            let (tool, input) = match call.strip_prefix("$ ") {
                Some(command) => ("Bash", json!({ "command": command.replace("\\n", "\n") })),
                None => call
                    .split_once(' ')
                    .map(|(t, i)| (t, serde_json::from_str(i).unwrap()))
                    .unwrap(),
            };
            let found = checker.check(tool, &input, Some("/p"), Some("/p"));
            let got: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
            assert_eq!(got.join(" "), want.replace('-', ""), "{call}");
        }
    }

    #[test]
    fn every_agents_file_tools_are_judged() {
        table(
            &Settings::default(),
            r#"
            read | Read {"file_path": "/p/.env"}
            write | Write {"file_path": "/p/.git/config"}
            write | Edit {"file_path": "/p/certs/server.pem"}
            read | Read {"file_path": "~/.ssh/id_rsa"}
            read | Read {"file_path": "/home/me/.aws/credentials"}
            read | read_file {"absolute_path": "/p/deploy/prod.key"}
            read | view {"path": "/p/.env.local"}
            write | edit {"path": ".env"}
            read | read_file {"file_path": "/p/sub/.env"}
            delete | delete_file {"target_file": "/p/.git/HEAD"}
            write | apply_patch {"input": "*** Begin Patch\n*** Update File: .env\n@@\n-A=1"}
            write | apply_patch {"command": "*** Begin Patch\n*** Add File: keys/new.pem\n+x"}
            delete | apply_patch "*** Begin Patch\n*** Delete File: config/app.key\n*** End Patch"
            delete | apply_patch {"command": "*** Begin Patch\n*** Delete File: config/app.key\n*** End Patch"}
            delete | apply_patch {"input": "*** Update File: a.pem\n*** Move to: b.txt\n@@"}
            - | Edit {"file_path": "/p/src/main.rs"}
            - | Read {"file_path": "/p/.env.example"}
            - | Write {"file_path": "/p/.env.sample"}
            - | Read {"file_path": "/p/.github/ci.yml"}
            - | Read {"file_path": "/tmp/other/x.pem"}"#,
        );
    }

    #[test]
    fn shell_commands_read_write_and_delete() {
        table(
            &Settings::default(),
            r#"
            read | $ cat .env
            read | $ grep KEY .env
            read | $ cp .env /tmp/x
            read | $ source .env
            read | $ sort < config/.env.production
            read | $ cat ~/.ssh/id_rsa
            read | $ cat $HOME/.kube/config
            read | $ bash -c 'cat .env'
            read | $ echo "$(cat server.key)"
            read | $ sudo -u root less /p/.netrc
            read | $ cd ~/.aws && cat credentials
            write | $ echo x > .git/config
            write | $ printf x >> .env
            write | $ cp x .env
            write | $ install -m 600 x -t .git
            write | $ sed -i 's/a/b/' .env
            write | $ perl -pi -e 's/a/b/' app.pem
            write | $ echo k | tee -a .git/hooks/pre-commit
            write | $ touch .git/index.lock
            write | $ chmod 644 certs/server.pem
            write | $ dd if=/dev/zero of=server.key
            write | $ git checkout -- .env
            delete | $ cd sub && rm ../.env
            delete | $ rm -rf .git
            delete | $ mv .env old.txt
            delete | $ git rm config/prod.key
            delete | $ git -C . mv .env x
            delete | $ shred -u deploy.pem
            delete | $ apply_patch '*** Begin Patch\n*** Delete File: config/app.key\n*** End Patch'
            write | $ apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: .env\n@@\n-A=1\n*** End Patch\nEOF
            delete | $ bash -lc "apply_patch '*** Begin Patch\n*** Update File: a.pem\n*** Move to: b.txt\n@@\n*** End Patch'"
            - | $ apply_patch '*** Begin Patch\n*** Add File: src/new.rs\n+fn x() {}\n*** End Patch'
            delete | $ applypatch '*** Begin Patch\n*** Delete File: config/app.key\n*** End Patch'
            delete | $ printf '%s' '*** Begin Patch\n*** Delete File: config/app.key\n*** End Patch' | apply_patch
            write | $ P='*** Begin Patch\n*** Update File: .env\n@@\n*** End Patch'; apply_patch "$P"
            write | $ cat <<'EOF' | bash -c apply_patch\n*** Begin Patch\n*** Add File: .git/hooks/post-merge\n+x\n*** End Patch\nEOF
            - | $ echo '*** Delete File: config/app.key'
            delete | $ find . -name x | xargs rm -f id_ed25519
            read write delete | $ rm .env; cat .env .env; cat .env > .env.local
            - | $ cat README.md
            - | $ rm -rf target
            - | $ cargo test 2>&1 | tail
            - | $ cp .env.example config.txt
            - | $ git commit -m 'load .env at start'
            - | $ git rm --cached notes.txt
            - | $ curl -fsSL https://example.com/.env -o page.html
            - | $ cat $FILE
            - | $ cd $DIR && cat .env
            - | $ echo done > /dev/null
            - | $ echo .env >> .gitignore
            - | $ cat <<EOF\n.env\nEOF"#,
        );
        // Nothing tells where a relative path is: it is not judged.
        let c = Checker::new(Settings::default()).unwrap();
        assert!(
            c.check("Bash", &json!({"command": "cat .env"}), None, None)
                .is_empty()
        );
    }

    #[test]
    fn folders_outside_paths_and_allow_follow_the_settings() {
        let list = |globs: &str| globs.split_whitespace().map(str::to_owned).collect();
        let settings = Settings {
            read: list("secrets/ /etc/shadow ~/.config/gh/**"),
            write: list("vendor/** node_modules/ docs/*.md"),
            delete: list("migrations/**/*.sql"),
            allow: list("secrets/public/**"),
            answer: Answer::Ask,
        };
        table(
            &settings,
            r#"
            read | $ cat secrets/a/b.txt
            read | $ cat app/secrets/x
            - | $ cat secrets/public/logo.png
            read | $ cat /etc/shadow
            - | $ cat etc/shadow
            read | Read {"file_path": "~/.config/gh/hosts.yml"}
            write | Write {"file_path": "/p/vendor/a/b.rs"}
            delete | $ rm -rf vendor
            - | $ echo > src/vendor/x.rs
            write | $ touch web/node_modules/x/index.js
            write | $ echo > docs/guide.md
            - | $ echo > docs/sub/guide.md
            delete | $ rm migrations/2024/01/init.sql
            - | $ echo x >> migrations/init.sql
            - | $ cat .env"#,
        );
        assert_eq!(Checker::new(settings).unwrap().answer(), Answer::Ask);
    }

    #[test]
    fn reasons_name_the_tool_the_path_and_the_glob() {
        let c = Checker::new(Settings::default()).unwrap();
        let reason = |tool, input| {
            c.check(tool, &input, Some("/p"), Some("/p"))[0]
                .reason
                .clone()
        };
        let read = reason("Read", json!({"file_path": "/p/.env"}));
        assert_eq!(
            read,
            "`Read` of `.env` is refused: it matches `.env` in `read`"
        );
        let write = reason("Write", json!({"file_path": "keys/id_rsa"}));
        assert!(write.ends_with("`keys/id_rsa` is refused: it matches `id_rsa*` in `read`"));
        let rm = reason("Bash", json!({"command": "cd sub && rm ../.env"}));
        assert_eq!(
            rm,
            "`rm` deleting `.env` is refused: it matches `.env` in `write`"
        );
        let redirect = reason("Bash", json!({"command": "> .git/HEAD"}));
        assert!(redirect.starts_with("a redirection writing `.git/HEAD` is refused"));
    }

    #[test]
    fn bad_globs_and_keys_are_refused_by_name() {
        let bad = |key: &str, globs: Value| {
            let settings: Settings = serde_json::from_value(json!({ key: globs })).unwrap();
            Checker::new(settings).unwrap_err()
        };
        assert_eq!(bad("read", json!(["[abc"])).key, "read[0]");
        assert_eq!(bad("write", json!(["ok", "/"])).key, "write[1]");
        assert_eq!(bad("allow", json!(["[z-a]"])).key, "allow[0]");
        let s: Settings = serde_json::from_value(json!({"read": ["x"], "answer": "ask"})).unwrap();
        assert_eq!((s.read.len(), s.write.len(), s.answer), (1, 5, Answer::Ask));
        assert!(serde_json::from_value::<Settings>(json!({"paths": []})).is_err());
    }
}
