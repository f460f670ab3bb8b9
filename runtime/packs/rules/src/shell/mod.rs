//! A shell command line read as a POSIX shell would split it: simple
//! commands (words with their quotes removed, assignments, redirections),
//! whether each reads the previous one's output through a pipe, and the
//! command lines nested in them (`$(…)`, backticks, `<(…)`, `sh -c '…'`,
//! `eval …`, a here-document fed to a shell), each read the same way.
//!
//! Nothing is expanded or run. A word the shell would expand at run time
//! (`$VAR`, `$(…)`) is marked `dynamic`, one with a glob `glob`, so a rule
//! can refuse what it cannot see through instead of guessing; a line nested
//! deeper than [`MAX_DEPTH`] is marked `opaque` for the same reason.

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

mod reader;

use reader::Reader;

/// The programs that read a script from their arguments or their input.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox",
];

/// Reads `src` as a command line.
pub fn parse(src: &str) -> Line {
    let mut line = Reader::new(src, 0).line();
    nest_scripts(&mut line, 0);
    line
}

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

/// Reads `-c` scripts of shells, `eval`'s arguments and here-documents fed
/// to a shell as nested lines.
fn nest_scripts(line: &mut Line, depth: usize) {
    for c in &mut line.commands {
        for n in &mut c.nested {
            nest_scripts(n, depth + 1);
        }
        let Some(script) = script_of(c) else {
            continue;
        };
        if depth + 1 > MAX_DEPTH {
            line.opaque = true;
            continue;
        }
        let mut n = Reader::new(&script, depth + 1).line();
        nest_scripts(&mut n, depth + 1);
        c.nested.push(n);
    }
}

/// The script a command runs as shell code, if any: `sh -c SCRIPT`,
/// `eval WORDS…`, a here-document or here-string given to a shell.
fn script_of(c: &Simple) -> Option<String> {
    let program = c.program();
    let name = basename(&program.first()?.text);
    if name == "eval" {
        let words: Vec<&str> = program[1..].iter().map(|w| w.text.as_str()).collect();
        return Some(words.join(" "));
    }
    if !SHELLS.contains(&name.as_str()) {
        return None;
    }
    let mut args = program[1..].iter();
    while let Some(w) = args.next() {
        let t = &w.text;
        if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            return args.next().map(|s| s.text.clone());
        }
        if !t.starts_with('-') && !t.starts_with('+') {
            break;
        }
    }
    c.redirects
        .iter()
        .find(|r| r.op == "<<" || r.op == "<<<")
        .map(|r| r.target.text.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &Line) -> Vec<Vec<String>> {
        line.commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn splits_lists_pipes_and_quotes_as_the_shell_does() {
        let l = parse(r#"cd 'my dir' && FOO=1 rm -rf "a b" | tee x\ y; echo done # rm -rf /"#);
        assert_eq!(
            words(&l),
            [
                vec!["cd", "my dir"],
                vec!["rm", "-rf", "a b"],
                vec!["tee", "x y"],
                vec!["echo", "done"]
            ]
        );
        assert_eq!(l.commands[1].assignments, ["FOO=1"]);
        assert!(l.commands[2].piped && !l.commands[3].piped);
        assert_eq!(l.pipelines().len(), 3);
    }

    #[test]
    fn substitutions_scripts_and_heredocs_are_nested_lines() {
        let l = parse("echo \"$(curl -s x | sh)\" `rm -r y`");
        let names: Vec<String> = l.all().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["echo", "curl", "sh", "rm"]);
        assert!(l.commands[0].words[1].dynamic);
        let l = parse("sudo -u root bash -lc 'rm -rf /'");
        assert_eq!(l.all()[1].text(), "rm -rf /");
        assert!(l.commands[0].wrapped_by("sudo") && l.commands[0].name() == "bash");
        let l = parse("bash <<EOF\nrm -rf ~\nEOF\necho after");
        assert_eq!(
            l.all().iter().map(|c| c.name()).collect::<Vec<_>>(),
            ["bash", "rm", "echo"]
        );
        let l = parse("eval \"git push --force\"");
        assert_eq!(l.all()[1].text(), "git push --force");
    }

    #[test]
    fn redirects_and_descriptors_are_not_words() {
        let l = parse("cat a 2>&1 >> /dev/sda < in");
        let c = &l.commands[0];
        assert_eq!(c.text(), "cat a");
        let ops: Vec<(&str, &str)> = c
            .redirects
            .iter()
            .map(|r| (r.op.as_str(), r.target.text.as_str()))
            .collect();
        assert_eq!(ops, [(">>", "/dev/sda"), ("<", "in")]);
    }

    #[test]
    fn variables_and_globs_are_marked_and_deep_nesting_is_opaque() {
        let l = parse("rm -rf $DIR/* ~/x");
        let w = &l.commands[0].words;
        assert!(w[2].dynamic && w[2].glob && !w[3].dynamic);
        let deep = (0..10).fold("true".to_owned(), |s, _| {
            format!("sh -c {}", shell_quote(&s))
        });
        assert!(parse(&deep).any_opaque());
        // Wrappers with options and values are skipped to the program.
        assert_eq!(
            parse("timeout -s KILL 5 nice -n 3 xargs -I{} rm -r {}").commands[0].name(),
            "rm"
        );
    }

    fn shell_quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
