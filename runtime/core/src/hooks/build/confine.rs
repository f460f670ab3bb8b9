//! What a single-file hook's source may not say, checked before it is built:
//! nothing that makes the compiler read a file of the host.
//!
//! A single-file hook is copied into a generated crate and compiled on the
//! host. `include!`, `include_str!` and `include_bytes!` expand against the
//! host's file system, so `include_bytes!("../../../../key")` would compile
//! the cache's key, or `~/.aws/credentials`, into the component; an
//! out-of-line `mod name;` (with or without `#[path]`) reads another file.
//! A single-file hook has no other file to read, so the check refuses:
//!
//! - the identifiers `include`, `include_str` and `include_bytes` anywhere
//!   in its code (raw `r#` spellings too), not only before a `!`: a
//!   `macro_rules!` macro can call a macro named by an identifier it was
//!   given (`$m!(...)`), so `call!(include_bytes)` is refused as well;
//! - every `mod name;` without a body.
//!
//! Comments and string, byte-string, raw-string and character literals are
//! skipped, so a hook may mention the words in text. The only macros a
//! single-file hook can reach are std's and the SDK's (its one dependency),
//! none of which builds an identifier from parts, so a spelling the scan
//! cannot see cannot reach a macro either.

/// Where a single-file hook's source would read a host file: the 1-based
/// line and what it says there, or `None`.
pub(crate) fn host_read(source: &str) -> Option<(usize, &'static str)> {
    let mut tokens = Tokens::new(source);
    let mut last: [Option<Token<'_>>; 2] = [None, None];
    while let Some(token) = tokens.next() {
        if let Token::Ident(name, line) = token {
            if let Some(what) = INCLUDES.iter().find(|w| **w == name) {
                return Some((line, what));
            }
        }
        // `mod name ;`: the token before last is `mod`, the last a name.
        if let (Token::Punct(';', _), [Some(Token::Ident("mod", line)), Some(Token::Ident(..))]) =
            (&token, &last)
        {
            return Some((*line, "mod name; (a module read from another file)"));
        }
        last = [last[1], Some(token)];
    }
    None
}

const INCLUDES: [&str; 3] = ["include", "include_str", "include_bytes"];

/// One token of Rust source, as far as the check needs: identifiers and
/// punctuation with their line; literals and comments are skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Ident(&'a str, usize),
    Punct(char, usize),
}

struct Tokens<'a> {
    text: &'a str,
    at: usize,
    line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Tokens<'a> {
        Tokens {
            text,
            at: 0,
            line: 1,
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    /// Moves past `n` bytes, counting lines.
    fn skip(&mut self, n: usize) {
        let n = n.min(self.text.len() - self.at);
        let skipped = &self.text.as_bytes()[self.at..self.at + n];
        self.line += skipped.iter().filter(|&&b| b == b'\n').count();
        self.at += n;
    }

    /// Skips a quoted literal whose opening quote is at the start of the
    /// rest (escapes honoured), to just past its closing quote.
    fn skip_quoted(&mut self, quote: char) {
        let bytes = self.rest().as_bytes();
        let mut i = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b if b == quote as u8 => {
                    i += 1;
                    break;
                }
                _ => i += 1,
            }
        }
        self.skip(i);
    }

    /// Skips a raw string (`r"…"`, `r#"…"#`, `br##"…"##`) starting at the
    /// rest, when there is one.
    fn skip_raw(&mut self) -> bool {
        let rest = self.rest();
        let body = rest
            .strip_prefix("br")
            .or_else(|| rest.strip_prefix("cr"))
            .or_else(|| rest.strip_prefix('r'));
        let Some(body) = body else { return false };
        let hashes = body.bytes().take_while(|&b| b == b'#').count();
        if body.as_bytes().get(hashes) != Some(&b'"') {
            return false;
        }
        let close = format!("\"{}", "#".repeat(hashes));
        let start = rest.len() - body.len() + hashes + 1;
        let end = rest[start..]
            .find(&close)
            .map_or(rest.len(), |i| start + i + close.len());
        self.skip(end);
        true
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = self.rest();
            let c = rest.chars().next()?;
            if c.is_whitespace() {
                // The whole run at once.
                let run = rest
                    .char_indices()
                    .find(|(_, ch)| !ch.is_whitespace())
                    .map_or(rest.len(), |(i, _)| i);
                self.skip(run);
            } else if rest.starts_with("//") {
                self.skip(rest.find('\n').unwrap_or(rest.len()));
            } else if rest.starts_with("/*") {
                // Block comments nest.
                let (mut depth, mut i) = (0usize, 0usize);
                let b = rest.as_bytes();
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                self.skip(i);
            } else if self.skip_raw() {
            } else if c == '"' {
                self.skip_quoted('"');
            } else if (c == 'b' || c == 'c') && rest[1..].starts_with('"') {
                self.skip(1);
                self.skip_quoted('"');
            } else if c == 'b' && rest[1..].starts_with('\'') {
                self.skip(1);
                self.skip_quoted('\'');
            } else if c == '\'' {
                // A character literal (`'x'`, `'\n'`, `'\u{..}'`) or a
                // lifetime / label (`'a`), which is no literal.
                let after: Vec<char> = rest.chars().skip(1).take(3).collect();
                let is_char = matches!(after.as_slice(), ['\\', ..] | [_, '\'', ..]);
                if is_char {
                    self.skip_quoted('\'');
                } else {
                    self.skip(1);
                }
            } else if c == '_' || c.is_alphabetic() {
                let line = self.line;
                let len = rest
                    .char_indices()
                    .find(|(_, ch)| !(*ch == '_' || ch.is_alphanumeric()))
                    .map_or(rest.len(), |(i, _)| i);
                let mut word = &rest[..len];
                self.skip(len);
                // `r#name` is `name`.
                if word == "r" && self.rest().starts_with('#') {
                    let more = self.rest()[1..]
                        .char_indices()
                        .find(|(_, ch)| !(*ch == '_' || ch.is_alphanumeric()))
                        .map_or(self.rest().len() - 1, |(i, _)| i);
                    word = &self.rest()[1..1 + more];
                    self.skip(1 + more);
                }
                return Some(Token::Ident(word, line));
            } else if c.is_ascii_digit() {
                let len = rest
                    .char_indices()
                    .find(|(_, ch)| !(*ch == '_' || ch.is_alphanumeric() || *ch == '.'))
                    .map_or(rest.len(), |(i, _)| i);
                self.skip(len.max(1));
            } else {
                let line = self.line;
                self.skip(c.len_utf8());
                return Some(Token::Punct(c, line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_to_read_a_host_file_is_found_with_its_line() {
        for (source, line) in [
            ("const K: &[u8] = include_bytes!(\"../../../../key\");", 1),
            (
                "fn f() {}\nconst S: &str = include_str!(concat!(env!(\"HOME\"), \"/.aws/credentials\"));",
                2,
            ),
            ("include!(\"/etc/passwd\");", 1),
            (
                "macro_rules! call { ($m:ident) => { $m!(\"/k\") } }\n\nconst K: &[u8] = call!(include_bytes);",
                3,
            ),
            ("const K: &[u8] = r#include_bytes!(\"/k\");", 1),
            ("const K: &[u8] = ::core::include_bytes!(\"/k\");", 1),
            ("#[path = \"/etc/passwd\"]\nmod secrets;", 2),
            ("#[cfg_attr(all(), path = \"/k\")] mod m ;", 1),
        ] {
            assert_eq!(host_read(source).map(|(l, _)| l), Some(line), "{source}");
        }
    }

    #[test]
    fn words_in_text_comments_and_inline_modules_pass() {
        for source in [
            "// include_bytes!(\"/k\")\nfn f() {}",
            "/* outer /* include!(\"x\") */ still a comment */ fn f() {}",
            "const S: &str = \"include_str!(\\\"/k\\\")\";",
            "const S: &str = r##\"include_bytes!(\"/k\") \"# still\"##;",
            "const B: &[u8] = b\"include\";",
            "const C: char = '\"'; const D: char = '\\''; fn f<'a>(x: &'a str) -> &'a str { x }",
            "mod inner { pub fn f() {} }\nfn including() {} fn included_path() {}",
            "fn f(path: &str) -> bool { path.contains(\"mod x;\") }",
        ] {
            assert_eq!(host_read(source), None, "{source}");
        }
    }
}
