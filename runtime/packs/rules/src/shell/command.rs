//! A command line as the shell reader gives it: words (quotes removed,
//! marked when only known at run time), redirections, simple commands with
//! the lines nested in them, and what a simple command runs past its
//! wrappers (`sudo`, `env`, `xargs`, …).

/// How deep command lines may nest (`sh -c "$(…)"` is two) before the rest
/// is left unread and the line marked opaque.
pub const MAX_DEPTH: usize = 6;

/// One word of a command, its quotes removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The text as the shell would pass it, before any expansion.
    pub text: String,
    /// It holds a parameter or a command substitution: its value is only
    /// known when it runs.
    pub dynamic: bool,
    /// It holds an unquoted `*`, `?` or `[`.
    pub glob: bool,
}

/// A redirection: `>`, `>>`, `<`, `<<<`, `&>`, `<<` (whose target is the
/// here-document's body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator.
    pub op: String,
    /// The file (or the here-string, or the here-document's body).
    pub target: Word,
}

/// One simple command: `A=1 sudo rm -rf x > log`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    /// `NAME=value` words before the command.
    pub assignments: Vec<String>,
    /// The command and its arguments.
    pub words: Vec<Word>,
    /// Its redirections, in order.
    pub redirects: Vec<Redirect>,
    /// Its standard input is the previous command's output (`a | b`).
    pub piped: bool,
    /// The command lines nested in its words (substitutions, `-c` strings,
    /// `eval`'s arguments, a here-document fed to a shell).
    pub nested: Vec<Line>,
}

/// A command line: its simple commands in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// The simple commands, in the order they appear.
    pub commands: Vec<Simple>,
    /// Something in it nested too deep to read: a rule should not call the
    /// line harmless.
    pub opaque: bool,
}

/// The programs that read a script from their arguments or their input.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox",
];

impl Line {
    /// This line's commands and every nested line's, depth first.
    pub fn all(&self) -> Vec<&Simple> {
        let mut out = Vec::new();
        for c in &self.commands {
            out.push(c);
            for n in &c.nested {
                out.extend(n.all());
            }
        }
        out
    }

    /// This line and every line nested in it.
    pub fn lines(&self) -> Vec<&Line> {
        let mut out = vec![self];
        for c in &self.commands {
            for n in &c.nested {
                out.extend(n.lines());
            }
        }
        out
    }

    /// Whether this line or one nested in it could not be read.
    pub fn any_opaque(&self) -> bool {
        self.lines().iter().any(|l| l.opaque)
    }

    /// The pipelines of this line (not of nested lines): runs of commands
    /// each reading the previous one's output.
    pub fn pipelines(&self) -> Vec<&[Simple]> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, c) in self.commands.iter().enumerate() {
            if i > start && !c.piped {
                out.push(&self.commands[start..i]);
                start = i;
            }
        }
        if start < self.commands.len() {
            out.push(&self.commands[start..]);
        }
        out
    }
}

impl Simple {
    /// The words from the program that really runs: past wrappers that run
    /// their arguments as a command (`sudo`, `env`, `nice`, `nohup`, `time`,
    /// `timeout`, `xargs`, `command`, `exec`, `stdbuf`, `doas`, …) and their
    /// options.
    pub fn program(&self) -> &[Word] {
        let mut w = &self.words[..];
        while let Some(first) = w.first() {
            let Some(skip) = wrapper_len(&basename(&first.text), &w[1..]) else {
                break;
            };
            if 1 + skip >= w.len() {
                // `env` or `time` alone: the wrapper is the program.
                break;
            }
            w = &w[1 + skip..];
        }
        w
    }

    /// The program's name without its folder (`/bin/rm` is `rm`), or "".
    pub fn name(&self) -> String {
        self.program()
            .first()
            .map(|w| basename(&w.text))
            .unwrap_or_default()
    }

    /// Whether a wrapper named `name` runs it (`sudo`, `xargs`).
    pub fn wrapped_by(&self, name: &str) -> bool {
        let program = self.program().len();
        self.words[..self.words.len() - program]
            .iter()
            .any(|w| basename(&w.text) == name)
    }

    /// The command as one text: its words joined by single spaces.
    pub fn text(&self) -> String {
        self.words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The name of a program path: `/usr/bin/rm` is `rm`.
pub fn basename(word: &str) -> String {
    word.rsplit('/').next().unwrap_or(word).to_owned()
}

/// How many words after a wrapper named `name` are its own (options and
/// their values, a duration), or `None` when `name` runs no command.
fn wrapper_len(name: &str, rest: &[Word]) -> Option<usize> {
    // Options of each wrapper that take a value as the next word.
    let valued: &[&str] = match name {
        "sudo" => &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R", "-T",
        ],
        "doas" => &["-u", "-C"],
        "env" => &["-u", "-C", "-S", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "xargs" => &["-I", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "-i"],
        "stdbuf" => &["-i", "-o", "-e"],
        "ionice" => &["-c", "-n", "-p"],
        "nohup" | "time" | "command" | "exec" | "builtin" | "noglob" | "unbuffer" => &[],
        _ => return None,
    };
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if valued.contains(&t) {
            i += 2;
        } else if t.starts_with('-') || (name == "env" || name == "sudo") && is_assignment(t) {
            i += 1;
        } else {
            break;
        }
    }
    if name == "timeout" && rest.get(i).is_some() {
        i += 1; // the duration
    }
    Some(i.min(rest.len()))
}

/// `NAME=value`: an assignment, not a command.
pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}
