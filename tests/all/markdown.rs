//! The docs' tables as their checks read them (shared by `tests/all` and
//! `tests/architecture`, which includes this file by `#[path]`).

/// The rows of the first table at or after `anchor` in `text` (a heading,
/// or a table's own header line), below its header and separator, each
/// row's cells trimmed; none when `anchor` is not in `text`.
pub(crate) fn table_after(text: &str, anchor: &str) -> Vec<Vec<String>> {
    let Some(at) = text.find(anchor) else {
        return Vec::new();
    };
    text[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(cells)
        .collect()
}

/// A row's cells, trimmed: split at each `|` outside backquotes and not
/// escaped (`\|`), so an empty cell and a `a | b` in code both read right.
fn cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let (mut code, mut escaped) = (false, false);
    for c in row
        .trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .chars()
    {
        match c {
            '|' if !code && !escaped => cells.push(String::new()),
            _ => {
                code ^= c == '`';
                cells.last_mut().expect("one cell at least").push(c);
            }
        }
        escaped = c == '\\';
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}
