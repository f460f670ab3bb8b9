//! What a hook asks to show, made safe to show: the title and body cut to
//! their bounds, control and direction-override characters taken out, and
//! the body's markup escaped (the notification specification lets a server
//! read `<b>`, `<a href>` and `<img src>` in a body: a hook's text must not
//! link or load anything).

/// Most bytes of a title shown: a title is one line of overview.
pub(crate) const TITLE_BYTES: usize = 256;
/// Most bytes of a body shown (before its markup is escaped): a notifier
/// shows a few lines, and a hook must not push megabytes through the bus.
pub(crate) const BODY_BYTES: usize = 2_048;
/// What ends a cut text.
const CUT_MARK: char = '…';

/// How urgent a notification is, as the specification's `urgency` hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    /// Informational (hint 0).
    Low,
    /// The usual (hint 1).
    Normal,
    /// Needs the user now (hint 2): most servers keep it until dismissed.
    Critical,
}

impl Urgency {
    /// The `urgency` hint's byte.
    pub(crate) fn hint(self) -> u8 {
        match self {
            Urgency::Low => 0,
            Urgency::Normal => 1,
            Urgency::Critical => 2,
        }
    }

    /// Its name, as the WIT and the record write it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Urgency::Low => "low",
            Urgency::Normal => "normal",
            Urgency::Critical => "critical",
        }
    }
}

/// A notification as it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    /// One line of plain text, at most [`TITLE_BYTES`].
    pub(crate) title: String,
    /// Text of at most [`BODY_BYTES`] (its line breaks kept), markup escaped.
    pub(crate) body: String,
    /// How urgent it is.
    pub(crate) urgency: Urgency,
}

impl Message {
    /// The notification a hook asked for, neutralised and bounded.
    pub(crate) fn new(title: &str, body: &str, urgency: Urgency) -> Message {
        Message {
            title: cut(&visible(title, false), TITLE_BYTES),
            body: escape_markup(&cut(&visible(body, true), BODY_BYTES)),
            urgency,
        }
    }
}

/// Characters that reorder or hide text (bidirectional overrides and
/// isolates, zero-width characters, the byte order mark): a hook could make
/// a notification read as something else than it says.
fn is_hiding(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// `text` without control or hiding characters: a tab becomes a space, a
/// line break is kept in a body (`lines`) and becomes a space in a title;
/// surrounding white space is trimmed.
fn visible(text: &str, lines: bool) -> String {
    let shown: String = text
        .chars()
        .filter_map(|c| match c {
            '\n' if lines => Some('\n'),
            '\n' | '\t' => Some(' '),
            c if c.is_control() || is_hiding(c) => None,
            c => Some(c),
        })
        .collect();
    shown.trim().to_owned()
}

/// `text` in at most `max` bytes, cut at a character boundary and ending
/// in [`CUT_MARK`] when it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max - CUT_MARK.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{CUT_MARK}", &text[..end])
}

/// `text` with the characters markup reads (`&`, `<`, `>`) escaped, so a
/// server that reads markup shows them as written.
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_in_a_notification_are_neutralised() {
        let m = Message::new(
            "Build\nfailed\u{7}\u{202E}gpj.exe",
            "<a href=\"https://evil.example\">click</a> & <img src=\"file:///etc/passwd\"/>\r\n\u{1b}[31mred\tline",
            Urgency::Critical,
        );
        assert_eq!(m.title, "Build failedgpj.exe");
        assert_eq!(
            m.body,
            "&lt;a href=\"https://evil.example\"&gt;click&lt;/a&gt; &amp; &lt;img src=\"file:///etc/passwd\"/&gt;\n[31mred line"
        );
        assert_eq!(m.urgency.hint(), 2);
    }

    #[test]
    fn a_long_title_and_body_are_cut_at_a_character_boundary() {
        let m = Message::new(&"é".repeat(1_000), &"x".repeat(100_000), Urgency::Low);
        assert!(m.title.len() <= TITLE_BYTES, "{}", m.title.len());
        assert!(m.title.ends_with(CUT_MARK) && m.title.starts_with("éé"));
        assert_eq!(m.body.len(), BODY_BYTES);
        assert!(m.body.ends_with(CUT_MARK));
        let short = Message::new(" Done ", "all 12 tests pass", Urgency::Normal);
        assert_eq!(
            (short.title.as_str(), short.body.as_str()),
            ("Done", "all 12 tests pass")
        );
    }
}
