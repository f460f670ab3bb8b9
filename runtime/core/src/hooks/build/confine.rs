//! What a single-file hook's source may not say, checked before it is built:
//! nothing that makes the compiler read a file or a variable of the host.
//!
//! A single-file hook is compiled on the host: `include_bytes!("../../key")`
//! would compile the cache's key into the component, an out-of-line `mod`
//! reads another file, `env!` reads the build's environment. It needs none
//! of them, so the check refuses:
//!
//! - `include`, `include_str`, `include_bytes` and `option_env` anywhere
//!   (raw `r#` too), and `env` before `!` (`std::env::vars()` stays allowed);
//! - every `mod name;` without a body, and a `path` attribute anywhere;
//! - `macro_rules` and `macro`: a macro can assemble any macro call from its
//!   tokens, so a scan of the text cannot see what the compiler expands (a
//!   hook that needs macros of its own is a crate hook);
//! - text the scan cannot lex as Rust: what it cannot read, it cannot clear.
//!
//! `proc-macro2` lexes the source as rustc does (words in literals and
//! comments pass); std's and the SDK's macros turn no identifier into a macro
//! call. The fast first answer: the dep-info check (`depinfo.rs`) and the
//! build's environment (`cargo.rs`) hold even when it misses.

use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// Where a single-file hook's source would read a host file or variable:
/// the 1-based line and what it says there, or `None`.
pub(crate) fn host_read(source: &str) -> Option<(usize, &'static str)> {
    // proc-macro2 keeps the text of every source it lexes (for line numbers)
    // in a map of the thread that lexed it: a thread of its own frees it, and
    // a stack of its own bounds how deep a hostile file can nest.
    let source = source.to_owned();
    std::thread::Builder::new()
        .name("hookrt-confine".to_owned())
        .stack_size(SCAN_STACK_BYTES)
        .spawn(move || scan(&source))
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or(Some((1, UNREADABLE)))
}

/// The scan thread's stack. proc-macro2 lexes nested groups with a stack
/// of its own and the walk below keeps one too, so depth costs heap, not
/// this; the margin is for proc-macro2's own frames.
const SCAN_STACK_BYTES: usize = 8 << 20;

/// What is said when the source cannot be lexed.
const UNREADABLE: &str =
    "text that does not lex as Rust (the scan cannot clear what it cannot read)";

fn scan(source: &str) -> Option<(usize, &'static str)> {
    let tokens = match TokenStream::from_str(source) {
        Ok(t) => t,
        Err(e) => return Some((e.span().start().line.max(1), UNREADABLE)),
    };
    // Each level of groups, walked with a stack of our own (no recursion);
    // the first finding in the text is the one named.
    let mut first: Option<(usize, &'static str)> = None;
    let mut levels: Vec<(Vec<TokenTree>, bool)> = vec![(tokens.into_iter().collect(), false)];
    while let Some((level, in_attribute)) = levels.pop() {
        for (i, token) in level.iter().enumerate() {
            match token {
                TokenTree::Ident(ident) => {
                    let text = ident.to_string();
                    let name = text.strip_prefix("r#").unwrap_or(&text);
                    let next = level.get(i + 1);
                    if let Some(what) = refused(name, next, &level[i + 1..], in_attribute) {
                        let line = ident.span().start().line;
                        if first.is_none_or(|(l, _)| line < l) {
                            first = Some((line, what));
                        }
                    }
                }
                TokenTree::Group(group) => {
                    let attribute = in_attribute
                        || (group.delimiter() == Delimiter::Bracket
                            && is_attribute_start(&level[..i]));
                    levels.push((group.stream().into_iter().collect(), attribute));
                }
                _ => {}
            }
        }
    }
    first
}

/// What identifier `name`, followed by `rest` (`next` its first token),
/// would make the compiler read, if anything.
fn refused(
    name: &str,
    next: Option<&TokenTree>,
    rest: &[TokenTree],
    in_attribute: bool,
) -> Option<&'static str> {
    let punct =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    match name {
        "include" => Some("include"),
        "include_str" => Some("include_str"),
        "include_bytes" => Some("include_bytes"),
        "option_env" => Some("option_env! (a variable of the build's environment)"),
        "env" if punct(next, '!') => Some("env! (a variable of the build's environment)"),
        "macro_rules" | "macro" => Some(
            "macro_rules! (a macro can assemble a call of include_bytes!, env! or mod x; from its input)",
        ),
        "mod" if !has_body(rest) => Some("mod name; (a module read from another file)"),
        "path" if in_attribute && punct(next, '=') => {
            Some("#[path] (a module read from another file)")
        }
        _ => None,
    }
}

/// Whether the tokens after `mod` reach a `{ .. }` body before a `;`.
fn has_body(rest: &[TokenTree]) -> bool {
    for token in rest {
        match token {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return true,
            TokenTree::Punct(p) if p.as_char() == ';' => return false,
            _ => {}
        }
    }
    false
}

/// Whether `before` ends with `#` or `# !`: the bracket group after it is
/// an attribute.
fn is_attribute_start(before: &[TokenTree]) -> bool {
    let is = |t: &TokenTree, c: char| matches!(t, TokenTree::Punct(p) if p.as_char() == c);
    match before {
        [.., hash, bang] if is(hash, '#') && is(bang, '!') => true,
        [.., last] => is(last, '#'),
        [] => false,
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
                1,
            ),
            ("const K: &[u8] = r#include_bytes!(\"/k\");", 1),
            ("const K: &[u8] = ::core::include_bytes!(\"/k\");", 1),
            ("#[path = \"/etc/passwd\"]\nmod secrets;", 1),
            ("#[cfg_attr(all(), path = \"/k\")] mod m ;", 1),
            ("fn f() {}\nmod m;", 2),
        ] {
            assert_eq!(host_read(source).map(|(l, _)| l), Some(line), "{source}");
        }
    }

    /// The two bypasses of the hand-written tokenizer this scan replaced:
    /// both expand under rustc 1.95 into a read of the host file.
    #[test]
    fn a_number_before_a_macro_name_and_a_macro_made_module_are_refused() {
        let number = "macro_rules! call { ($n:tt . $m:ident) => { $m!(\"/some/host/file\") } }\n\
                      const K: &str = call!(1.include_str);";
        assert_eq!(host_read(number).map(|(l, _)| l), Some(1));
        // Without the macro definition (say, from a macro it could reach),
        // the call alone is still refused: `1.include_str` is two tokens.
        let call = "fn f() {}\nconst K: &str = call!(1.include_str);";
        assert_eq!(host_read(call), Some((2, "include_str")));
        let module =
            "macro_rules! m { ($i:ident) => { #[path = \"/some/host/file\"] mod $i; } }\nm!(k);";
        assert!(host_read(module).is_some(), "{module}");
        // The module line alone, as a macro body would hold it.
        assert!(host_read("fn f() { x!{ #[path = \"/k\"] mod $i; } }").is_some());
    }

    #[test]
    fn the_build_environment_and_lexing_tricks_are_refused() {
        for (source, what) in [
            ("const H: &str = env!(\"HOME\");", "env!"),
            ("const H: &str = ::std::env ! (\"CARGO_HOME\");", "env!"),
            (
                "const H: Option<&str> = option_env!(\"HOME\");",
                "option_env!",
            ),
            ("fn f() { call!(option_env) }", "option_env!"),
            ("const H: &str = r#env!(\"HOME\");", "env!"),
            ("fn f() { call!(env, !) }", "macro_rules!"),
            ("#![doc = include_str!(\"/k\")]", "include_str"),
            (
                "/// doc\nconst K: &str = include_str!(\"/k\");",
                "include_str",
            ),
            ("const S: &str = \"unterminated;", "does not lex"),
            ("fn f() { ( }", "does not lex"),
        ] {
            let found = host_read(source);
            // `call!(env, !)` alone is no call of env!: its macro is refused
            // where it is defined; without one in the file it cannot expand.
            if what == "macro_rules!" {
                assert_eq!(found, None, "{source}");
                continue;
            }
            let (_, said) = found.unwrap_or_else(|| panic!("{source}: passed"));
            assert!(said.contains(what), "{source}: {said}");
        }
    }

    #[test]
    fn words_in_text_comments_runtime_env_and_inline_modules_pass() {
        for source in [
            "// include_bytes!(\"/k\")\nfn f() {}",
            "/* outer /* include!(\"x\") */ still a comment */ fn f() {}",
            "const S: &str = \"include_str!(\\\"/k\\\")\";",
            "const S: &str = r##\"include_bytes!(\"/k\") \"# still\"##;",
            "const B: &[u8] = b\"include\";",
            "const C: char = '\"'; const D: char = '\\''; fn f<'a>(x: &'a str) -> &'a str { x }",
            "mod inner { pub fn f() {} }\nfn including() {} fn included_path() {}",
            "fn f(path: &str) -> bool { path.contains(\"mod x;\") }",
            "fn n() -> usize { std::env::vars_os().count() }",
            "/// Reads `env!(\"HOME\")` and `mod x;` never.\nfn f() {}",
            "#[derive(Default)] pub struct S { path: String }",
            "fn f() { let path = 1; let _ = path; }",
        ] {
            assert_eq!(host_read(source), None, "{source}");
        }
    }

    #[test]
    fn deeply_nested_brackets_are_scanned_without_overflowing() {
        let source = format!(
            "const X: u8 = {}1{};",
            "(".repeat(20_000),
            ")".repeat(20_000)
        );
        assert_eq!(host_read(&source), None);
        let source = format!(
            "fn f() {{ {}include!(\"/k\"){} }}",
            "[".repeat(20_000),
            "]".repeat(20_000)
        );
        assert_eq!(host_read(&source).map(|(_, w)| w), Some("include"));
    }
}
