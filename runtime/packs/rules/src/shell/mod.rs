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

mod command;
mod reader;

pub use command::{Line, MAX_DEPTH, Redirect, SHELLS, Simple, Word, basename, is_assignment};
use reader::Reader;

/// Reads `src` as a command line.
pub fn parse(src: &str) -> Line {
    let mut line = Reader::new(src, 0).line();
    nest_scripts(&mut line, 0);
    line
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
