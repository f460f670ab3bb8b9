//! The rules of `safe-shell`, each a function of a parsed command (or a
//! pipeline) to what it caught: the rule and why, naming what it saw.

use crate::paths::{self, Place};
use crate::shell::{self, Simple, Word};

use serde::{Deserialize, Serialize};

/// One rule of the pack, by the name `disable` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A recursive delete (`rm -r`, `find -delete`) of the project itself,
    /// of anything outside it, or of a path only known when it runs.
    RecursiveDelete,
    /// A download piped or substituted into a shell or interpreter.
    PipeToShell,
    /// `git push --force` (`-f`, `+refspec`); `--force-with-lease` passes.
    ForcePush,
    /// Git hooks skipped: `--no-verify`, `commit -n`, `core.hooksPath`, `HUSKY=0`.
    NoVerify,
    /// `chmod` giving every user write access (`777`, `o+w`).
    WorldWritable,
    /// `sudo`, `su`, `doas`, `pkexec`, setuid bits.
    PrivilegeEscalation,
    /// A secret file or the environment sent by a network tool.
    Exfiltration,
    /// Writing a disk device, making a file system, a fork bomb.
    DiskWipe,
}

impl Rule {
    /// Every rule, in the order findings are reported.
    pub const ALL: [Rule; 8] = [
        Rule::RecursiveDelete,
        Rule::PipeToShell,
        Rule::ForcePush,
        Rule::NoVerify,
        Rule::WorldWritable,
        Rule::PrivilegeEscalation,
        Rule::Exfiltration,
        Rule::DiskWipe,
    ];

    /// The rule's name as settings write it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::RecursiveDelete => "recursive-delete",
            Rule::PipeToShell => "pipe-to-shell",
            Rule::ForcePush => "force-push",
            Rule::NoVerify => "no-verify",
            Rule::WorldWritable => "world-writable",
            Rule::PrivilegeEscalation => "privilege-escalation",
            Rule::Exfiltration => "exfiltration",
            Rule::DiskWipe => "disk-wipe",
        }
    }
}

/// The rules that judge one command on its own.
pub(super) fn simple_rules(c: &Simple) -> Vec<(Rule, String)> {
    let mut out = Vec::new();
    let name = c.name();
    let args: Vec<&str> = c
        .program()
        .iter()
        .skip(1)
        .map(|w| w.text.as_str())
        .collect();
    if let Some(first) = c.words.first() {
        let first = shell::basename(&first.text);
        if ["sudo", "su", "doas", "pkexec", "run0", "sudoedit"].contains(&first.as_str()) {
            out.push((
                Rule::PrivilegeEscalation,
                format!("`{first}` runs a command as another user"),
            ));
        }
    }
    if name == "git" {
        out.extend(git_rules(c, &args));
    }
    if name == "chmod" {
        out.extend(chmod_rules(&args));
    }
    if name.starts_with("mkfs") || name == "wipefs" {
        out.push((Rule::DiskWipe, format!("`{name}` erases a file system")));
    }
    if writes_device(c, &name, &args) {
        out.push((Rule::DiskWipe, "the command writes a disk device".into()));
    }
    if NETWORK.contains(&name.as_str()) {
        out.extend(sends_secret(c, &name));
    }
    out
}

/// `chmod` giving others write access, or setting a setuid bit.
fn chmod_rules(args: &[&str]) -> Vec<(Rule, String)> {
    let mut out = Vec::new();
    let modes = args
        .iter()
        .filter(|a| !a.starts_with('-') || a.len() > 1 && a[1..].contains(['w', 'r', 'x', 's']));
    for mode in modes {
        if others_write(mode) {
            out.push((
                Rule::WorldWritable,
                format!("`chmod {mode}` lets every user write"),
            ));
        }
        if setuid(mode) {
            out.push((
                Rule::PrivilegeEscalation,
                format!("`chmod {mode}` sets a setuid or setgid bit"),
            ));
        }
    }
    out
}

/// Whether the command writes a disk device: `dd of=/dev/…`, `shred`,
/// `tee` or `cp` onto one, or a redirection into one.
fn writes_device(c: &Simple, name: &str, args: &[&str]) -> bool {
    let device = |t: &str| {
        let t = t.trim_start_matches("of=");
        let harmless = [
            "/dev/null",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/zero",
            "/dev/tty",
        ];
        t.starts_with("/dev/") && !harmless.contains(&t) && !t.starts_with("/dev/fd/")
    };
    let writes = match name {
        "dd" => args.iter().any(|a| a.starts_with("of=") && device(a)),
        "shred" | "tee" => args.iter().any(|a| device(a)),
        "cp" => args.last().is_some_and(|a| device(a)),
        _ => false,
    };
    writes
        || c.redirects
            .iter()
            .any(|r| r.op.contains('>') && device(&r.target.text))
}

/// A network tool sending a secret file it names, or what a nested
/// command reads from one (`curl -d "$(cat .env)"`).
fn sends_secret(c: &Simple, name: &str) -> Vec<(Rule, String)> {
    let mut out = Vec::new();
    let words = c.program().iter().chain(
        c.redirects
            .iter()
            .filter(|r| r.op.contains('<'))
            .map(|r| &r.target),
    );
    if let Some(secret) = words.filter_map(|w| secret_in(&w.text)).next() {
        out.push((
            Rule::Exfiltration,
            format!("`{name}` would send `{secret}`"),
        ));
    }
    for n in c.nested.iter().flat_map(|n| n.all()) {
        if let Some(what) = reads_secret(n) {
            out.push((Rule::Exfiltration, format!("`{name}` would send {what}")));
        }
    }
    out
}

/// Network tools that can send what they are given.
const NETWORK: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "scp", "sftp", "rsync", "ftp", "telnet",
    "http", "https", "xh",
];

/// Programs that fetch from the network.
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "http", "https", "xh", "aria2c"];

/// Programs that run a script they read.
const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "perl", "ruby", "node", "php", "deno", "bun",
];

/// The rules over a pipeline: a download into a shell, secrets into a network tool.
pub(super) fn pipeline_rules(p: &[Simple]) -> Vec<(Rule, String)> {
    let mut out = Vec::new();
    let runs_script = |c: &Simple| {
        let n = c.name();
        shell::SHELLS.contains(&n.as_str())
            || INTERPRETERS.contains(&n.as_str())
            || ["eval", "source", "."].contains(&n.as_str())
    };
    for (i, c) in p.iter().enumerate() {
        let downloaded = p[..i]
            .iter()
            .any(|b| DOWNLOADERS.contains(&b.name().as_str()));
        if i > 0 && downloaded && runs_script(c) && c.program().len() <= 2 {
            out.push((
                Rule::PipeToShell,
                format!("a download is piped into `{}`", c.name()),
            ));
        }
        if runs_script(c)
            && c.nested
                .iter()
                .flat_map(|n| n.all())
                .any(|n| DOWNLOADERS.contains(&n.name().as_str()))
        {
            out.push((
                Rule::PipeToShell,
                format!("a download is run by `{}`", c.name()),
            ));
        }
        if i > 0
            && NETWORK.contains(&c.name().as_str())
            && let Some(what) = p[..i].iter().find_map(reads_secret)
        {
            out.push((
                Rule::Exfiltration,
                format!("{what} is piped into `{}`", c.name()),
            ));
        }
    }
    out
}

/// What secret a command outputs: the environment, or a secret file it names.
fn reads_secret(c: &Simple) -> Option<String> {
    let name = c.name();
    if ["env", "printenv", "export", "declare", "set"].contains(&name.as_str())
        && c.program().len() <= 2
    {
        return Some(format!("the environment (`{name}`)"));
    }
    c.program()
        .iter()
        .skip(1)
        .chain(
            c.redirects
                .iter()
                .filter(|r| r.op == "<")
                .map(|r| &r.target),
        )
        .find_map(|w| secret_in(&w.text))
        .map(|s| format!("`{s}`"))
}

/// The secret file a word names, if it names one (`.env`, keys, cloud and
/// registry credentials), after an `@` or `name=@` of curl's forms.
fn secret_in(word: &str) -> Option<&str> {
    let path = word.rsplit_once('@').map_or(word, |(_, p)| p);
    let path = path.rsplit_once('<').map_or(path, |(_, p)| p);
    let base = path.rsplit('/').next().unwrap_or(path);
    let named = base == ".env"
        || base.starts_with(".env.")
        || ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|k| base.starts_with(k))
        || [
            ".netrc",
            ".git-credentials",
            ".npmrc",
            ".pypirc",
            "credentials",
            "shadow",
        ]
        .contains(&base)
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|e| base.ends_with(e))
        || [
            ".ssh/",
            ".aws/",
            ".gnupg/",
            ".kube/config",
            ".docker/config.json",
        ]
        .iter()
        .any(|d| path.contains(d));
    named.then_some(path)
}

/// The git rules: force pushes and skipped hooks.
fn git_rules(c: &Simple, args: &[&str]) -> Vec<(Rule, String)> {
    let mut out = Vec::new();
    // Global options before the subcommand, some with a value.
    let mut i = 0;
    let mut hooks_path = false;
    while let Some(a) = args.get(i) {
        if [
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--exec-path",
        ]
        .contains(a)
        {
            hooks_path |= *a == "-c"
                && args
                    .get(i + 1)
                    .is_some_and(|v| v.to_ascii_lowercase().starts_with("core.hookspath"));
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let sub = args.get(i).copied().unwrap_or("");
    let rest = &args[(i + 1).min(args.len())..];
    if hooks_path {
        out.push((
            Rule::NoVerify,
            "`-c core.hooksPath=…` skips the repository's git hooks".into(),
        ));
    }
    let skip_env = c.assignments.iter().find(|a| {
        a.starts_with("HUSKY=0") || a.starts_with("HUSKY_SKIP_HOOKS=") || a.starts_with("SKIP=")
    });
    if let Some(a) = skip_env {
        out.push((
            Rule::NoVerify,
            format!("`{a}` skips the repository's git hooks"),
        ));
    }
    let flag_group = |a: &str, letter: char, valued: &str| {
        a.starts_with('-')
            && !a.starts_with("--")
            && a[1..]
                .chars()
                .take_while(|c| !valued.contains(*c))
                .any(|c| c == letter)
    };
    if rest.contains(&"--no-verify") {
        out.push((
            Rule::NoVerify,
            format!("`git {sub} --no-verify` skips the repository's git hooks"),
        ));
    } else if sub == "commit" && rest.iter().any(|a| flag_group(a, 'n', "mFCctS")) {
        out.push((
            Rule::NoVerify,
            "`git commit -n` skips the repository's git hooks".into(),
        ));
    }
    if sub == "push" {
        let force = rest.iter().any(|a| {
            *a == "--force" || flag_group(a, 'f', "o") || (a.starts_with('+') && a.len() > 1)
        });
        if force {
            out.push((
                Rule::ForcePush,
                "`git push --force` rewrites the remote's history (use --force-with-lease)".into(),
            ));
        }
    }
    out
}

/// A recursive delete whose target is the project, outside it, or unknown:
/// the reason, naming the target.
pub(super) fn recursive_delete(
    c: &Simple,
    before: Option<&Simple>,
    cwd: Option<&str>,
    root: Option<&str>,
) -> Option<String> {
    let name = c.name();
    let program = c.program();
    let targets: Vec<&Word> = match name.as_str() {
        "rm" => {
            let mut opts = true;
            let mut recursive = false;
            let mut targets = Vec::new();
            for w in &program[1..] {
                let t = w.text.as_str();
                if opts && t == "--" {
                    opts = false;
                } else if opts && t.starts_with("--") {
                    recursive |= t == "--recursive";
                } else if opts && t.starts_with('-') && t.len() > 1 {
                    recursive |= t.contains(['r', 'R']);
                } else {
                    targets.push(w);
                }
            }
            if !recursive {
                return None;
            }
            targets
        }
        "find" => {
            let deletes = program.windows(2).any(|w| {
                w[0].text == "-delete"
                    || (w[0].text.starts_with("-exec") && shell::basename(&w[1].text) == "rm")
            }) || program.last().is_some_and(|w| w.text == "-delete");
            if !deletes {
                return None;
            }
            program[1..]
                .iter()
                .take_while(|w| !w.text.starts_with('-') && w.text != "(" && w.text != "!")
                .collect()
        }
        _ => return None,
    };
    if targets.is_empty() && c.wrapped_by("xargs") {
        // The targets are the previous command's output: known only when
        // it is a `find` from known folders.
        return match before.filter(|b| b.name() == "find") {
            Some(find) => {
                let starts: Vec<&Word> = find.program()[1..]
                    .iter()
                    .take_while(|w| !w.text.starts_with('-'))
                    .collect();
                judge_targets(&starts, cwd, root, "xargs")
            }
            None => Some(format!(
                "`{name}` deletes recursively what `xargs` reads, which is only known when it runs"
            )),
        };
    }
    judge_targets(&targets, cwd, root, &name)
}

fn judge_targets(
    targets: &[&Word],
    cwd: Option<&str>,
    root: Option<&str>,
    name: &str,
) -> Option<String> {
    let targets: Vec<&Word> = if targets.is_empty() && name != "rm" {
        // `find -delete` with no folder starts in the current one.
        return judge_one(
            &Word {
                text: ".".into(),
                ..Word::default()
            },
            cwd,
            root,
            name,
        );
    } else {
        targets.to_vec()
    };
    targets.iter().find_map(|t| judge_one(t, cwd, root, name))
}

fn judge_one(t: &Word, cwd: Option<&str>, root: Option<&str>, name: &str) -> Option<String> {
    let home = t.text == "$HOME" || t.text.starts_with("$HOME/");
    if t.dynamic && !home {
        return Some(format!(
            "`{name}` deletes `{}` recursively, which is only known when it runs",
            t.text
        ));
    }
    match paths::place(&t.text, cwd, root) {
        // `find . -delete` deletes what matches under the project, not the project.
        Place::Inside(p) if name == "rm" && (p.is_empty() || p.split('/').all(|s| s == "*")) => {
            Some(format!(
                "`{name}` deletes `{}` recursively: the whole project",
                t.text
            ))
        }
        Place::Inside(_) => None,
        Place::Outside(p) => Some(format!(
            "`{name}` deletes `{}` recursively, outside the project ({p})",
            t.text
        )),
        Place::Unknown => Some(format!(
            "`{name}` deletes `{}` recursively in a folder that is only known when it runs",
            t.text
        )),
    }
}

/// A mode of `chmod` that gives others write access.
fn others_write(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) && (3..=4).contains(&mode.len()) {
        return mode
            .chars()
            .last()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|d| d & 2 != 0);
    }
    mode.split(',').any(|clause| {
        let (who, rest) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
        (who.contains(['o', 'a'])) && rest.contains('w')
    })
}

/// A mode of `chmod` that sets the setuid or setgid bit.
fn setuid(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) && mode.len() == 4 {
        return mode
            .chars()
            .next()
            .and_then(|c| c.to_digit(8))
            .is_some_and(|d| d & 6 != 0);
    }
    mode.split(',').any(|clause| {
        clause.contains('+') && clause.split('+').nth(1).is_some_and(|p| p.contains('s'))
    })
}

/// `:(){ :|:& };:` in any spacing.
pub(super) fn fork_bomb(command: &str) -> bool {
    let squeezed: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    squeezed.contains(":(){:|:&};:")
}
