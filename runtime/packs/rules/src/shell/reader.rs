//! The reader of one command line: characters into words, operators,
//! redirections, here-documents and nested substitutions, as a POSIX shell
//! splits them (`super` says what it yields).

use super::command::{Line, MAX_DEPTH, Redirect, Simple, Word, is_assignment};

/// The reader of one command line.
pub(super) struct Reader {
    chars: Vec<char>,
    i: usize,
    depth: usize,
    line: Line,
    cur: Simple,
    word: Option<Word>,
    redirect: Option<String>,
    piped_next: bool,
    /// Here-documents whose body follows the next newline: the command's
    /// index, the delimiter, whether leading tabs are stripped.
    heredocs: Vec<(usize, String, bool)>,
}

impl Reader {
    pub(super) fn new(src: &str, depth: usize) -> Reader {
        Reader {
            chars: src.chars().collect(),
            i: 0,
            depth,
            line: Line::default(),
            cur: Simple::default(),
            word: None,
            redirect: None,
            piped_next: false,
            heredocs: Vec::new(),
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn end_word(&mut self) {
        let Some(w) = self.word.take() else {
            return;
        };
        if let Some(op) = self.redirect.take() {
            if op == "<<" || op == "<<-" {
                let index = self.line.commands.len();
                self.heredocs.push((index, w.text, op == "<<-"));
            } else {
                self.cur.redirects.push(Redirect { op, target: w });
            }
        } else if self.cur.words.is_empty() && !w.dynamic && is_assignment(&w.text) {
            self.cur.assignments.push(w.text);
        } else {
            self.cur.words.push(w);
        }
    }

    fn end_command(&mut self, piped_next: bool) {
        self.end_word();
        let c = std::mem::take(&mut self.cur);
        if !(c.words.is_empty()
            && c.assignments.is_empty()
            && c.redirects.is_empty()
            && c.nested.is_empty())
        {
            let mut c = c;
            c.piped = self.piped_next;
            self.line.commands.push(c);
        }
        self.piped_next = piped_next;
    }

    pub(super) fn line(mut self) -> Line {
        while let Some(c) = self.peek(0) {
            self.step(c);
        }
        self.end_command(false);
        self.line
    }

    fn step(&mut self, c: char) {
        match c {
            ' ' | '\t' => {
                self.end_word();
                self.i += 1;
            }
            '\n' => {
                self.end_command(false);
                self.i += 1;
                self.read_heredocs();
            }
            ';' | '(' | ')' => {
                self.end_command(false);
                self.i += 1;
            }
            '&' if self.peek(1) == Some('>') => self.operator(2),
            '&' => {
                let n = if self.peek(1) == Some('&') { 2 } else { 1 };
                self.end_command(false);
                self.i += n;
            }
            '|' => {
                let pipe = self.peek(1) != Some('|');
                let n = if self.peek(1).is_some_and(|n| n == '|' || n == '&') {
                    2
                } else {
                    1
                };
                self.end_command(pipe);
                self.i += n;
            }
            '<' | '>' if self.peek(1) == Some('(') => self.substitution(2, ')'),
            '<' | '>' => {
                let len = self.chars[self.i..]
                    .iter()
                    .take(3)
                    .take_while(|c| matches!(c, '<' | '>' | '&' | '|' | '-'))
                    .count();
                self.operator(len);
            }
            '#' if self.word.is_none() => {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
            }
            '\'' => self.single_quoted(),
            '"' => self.double_quoted(),
            '\\' => {
                if let Some(n) = self.peek(1).filter(|n| *n != '\n') {
                    self.word().text.push(n);
                }
                self.i += 2;
            }
            '$' => self.dollar(),
            '`' => self.backtick(),
            '*' | '?' | '[' => {
                let w = self.word();
                w.glob = true;
                w.text.push(c);
                self.i += 1;
            }
            _ => {
                self.word().text.push(c);
                self.i += 1;
            }
        }
    }

    /// A redirection operator of `len` characters; a word of digits before
    /// it is its file descriptor, not a word.
    fn operator(&mut self, len: usize) {
        if self
            .word
            .as_ref()
            .is_some_and(|w| !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        }
        self.end_word();
        let op: String = self.chars[self.i..self.i + len].iter().collect();
        self.i += len;
        // `2>&1`, `>&2`: a duplication, not a file.
        let op = op.trim_end_matches('-').to_owned();
        if op.ends_with('&') && self.peek(0).is_some_and(|c| c.is_ascii_digit() || c == '-') {
            while self.peek(0).is_some_and(|c| c.is_ascii_digit() || c == '-') {
                self.i += 1;
            }
            return;
        }
        let heredoc_strip = op == "<<" && self.chars.get(self.i.wrapping_sub(1)) == Some(&'-');
        self.redirect = Some(if heredoc_strip { "<<-".into() } else { op });
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
    }

    fn single_quoted(&mut self) {
        self.i += 1;
        self.word();
        while let Some(c) = self.peek(0) {
            self.i += 1;
            if c == '\'' {
                return;
            }
            self.word().text.push(c);
        }
    }

    fn double_quoted(&mut self) {
        self.i += 1;
        self.word();
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.i += 1;
                    return;
                }
                '\\' if self.peek(1).is_some_and(|n| "\"\\$`\n".contains(n)) => {
                    if let Some(n) = self.peek(1).filter(|n| *n != '\n') {
                        self.word().text.push(n);
                    }
                    self.i += 2;
                }
                '$' => self.dollar(),
                '`' => self.backtick(),
                _ => {
                    self.word().text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn dollar(&mut self) {
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                let end = matching(&self.chars, self.i + 1, '(', ')');
                self.push_raw(end + 1, true);
            }
            Some('(') => self.substitution(2, ')'),
            Some('{') => {
                let end = matching(&self.chars, self.i + 1, '{', '}');
                self.push_raw(end + 1, true);
            }
            Some('\'') => {
                // `$'…'`: quoted text with C escapes, read as written.
                self.i += 1;
                self.single_quoted();
            }
            Some(c) if c.is_ascii_alphanumeric() || "_?@*#!$-".contains(c) => {
                let mut end = self.i + 2;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .chars
                        .get(end)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                    {
                        end += 1;
                    }
                }
                self.push_raw(end, true);
            }
            _ => {
                self.word().text.push('$');
                self.i += 1;
            }
        }
    }

    /// Appends the characters up to `end` as written, marking the word.
    fn push_raw(&mut self, end: usize, dynamic: bool) {
        let end = end.min(self.chars.len());
        let raw: String = self.chars[self.i..end].iter().collect();
        let w = self.word();
        w.text.push_str(&raw);
        w.dynamic |= dynamic;
        self.i = end;
    }

    /// `$(…)`, `<(…)`, `>(…)` (`open` characters long): the command line
    /// inside is read as a nested line.
    fn substitution(&mut self, open: usize, close: char) {
        let end = matching(&self.chars, self.i + open - 1, '(', close);
        let inner: String = self.chars[(self.i + open).min(end)..end].iter().collect();
        self.nest(&inner);
        self.push_raw(end + 1, true);
    }

    fn backtick(&mut self) {
        let mut end = self.i + 1;
        while end < self.chars.len() && self.chars[end] != '`' {
            end += if self.chars[end] == '\\' { 2 } else { 1 };
        }
        let end = end.min(self.chars.len());
        let inner: String = self.chars[self.i + 1..end].iter().collect();
        self.nest(&inner);
        self.push_raw(end + 1, true);
    }

    fn nest(&mut self, inner: &str) {
        if self.depth + 1 > MAX_DEPTH {
            self.line.opaque = true;
            return;
        }
        let nested = Reader::new(inner, self.depth + 1).line();
        self.cur.nested.push(nested);
    }

    /// After a newline: the bodies of the here-documents of the line before.
    fn read_heredocs(&mut self) {
        for (index, delimiter, strip) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.i < self.chars.len() {
                let end = self.chars[self.i..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |p| self.i + p);
                let text: String = self.chars[self.i..end].iter().collect();
                self.i = end + 1;
                let text = if strip {
                    text.trim_start_matches('\t').to_owned()
                } else {
                    text
                };
                if text == delimiter {
                    break;
                }
                body.push_str(&text);
                body.push('\n');
            }
            if let Some(c) = self.line.commands.get_mut(index) {
                c.redirects.push(Redirect {
                    op: "<<".into(),
                    target: Word {
                        text: body,
                        dynamic: false,
                        glob: false,
                    },
                });
            }
        }
    }
}

/// The index of the `close` matching the `open` at `at` (quotes and
/// escapes skipped), or the end of the text when there is none.
fn matching(chars: &[char], at: usize, open: char, close: char) -> usize {
    let mut depth = 0;
    let mut i = at;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '\'' => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            c if c == open => depth += 1,
            c if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    chars.len()
}
