//! Hook slugs: the path of a hook under `hooks/` without its extension.
//!
//! A slug names a hook everywhere: in `hookrt.toml`, in delivery records, in the
//! journal and in audit reports. It must therefore be stable, portable across
//! file systems and unable to point outside the hooks folder.

use std::fmt;

/// Longest slug accepted, to keep slugs usable as keys and file names.
pub(crate) const MAX_SLUG_LEN: usize = 128;
/// Longest single path segment accepted.
pub(crate) const MAX_SEGMENT_LEN: usize = 64;
/// Deepest nesting accepted under `hooks/`.
pub(crate) const MAX_DEPTH: usize = 8;

/// A validated hook slug such as `audit` or `observability/metrics`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Slug(String);

/// Why a string is not a valid slug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlugError {
    /// The slug is empty or has an empty segment (`a//b`).
    #[error("empty path segment")]
    Empty,
    /// The slug starts with `/`.
    #[error("absolute path")]
    Absolute,
    /// A segment is `.` or `..`, or starts with `..`.
    #[error("segment `{0}` is a relative-path component")]
    DotDot(String),
    /// A segment starts with `.`.
    #[error("segment `{0}` is hidden (starts with `.`)")]
    Hidden(String),
    /// A segment has characters outside `[a-z0-9_-]`.
    #[error(
        "segment `{}` has `{}`; only lowercase letters, digits, `_` and `-` are allowed",
        segment.escape_debug(),
        bad.escape_debug()
    )]
    BadChar {
        /// The offending segment.
        segment: String,
        /// The first character not allowed.
        bad: char,
    },
    /// A segment is longer than [`MAX_SEGMENT_LEN`].
    #[error("segment `{0}` is longer than {MAX_SEGMENT_LEN} characters")]
    SegmentTooLong(String),
    /// The slug is longer than [`MAX_SLUG_LEN`].
    #[error("slug is longer than {MAX_SLUG_LEN} characters")]
    TooLong,
    /// The slug nests deeper than [`MAX_DEPTH`].
    #[error("slug nests deeper than {MAX_DEPTH} folders")]
    TooDeep,
}

impl Slug {
    /// Validates `s` as a slug.
    pub fn parse(s: &str) -> Result<Slug, SlugError> {
        if s.starts_with('/') || s.starts_with('\\') {
            return Err(SlugError::Absolute);
        }
        if s.len() > MAX_SLUG_LEN {
            return Err(SlugError::TooLong);
        }
        let segments: Vec<&str> = s.split('/').collect();
        if segments.len() > MAX_DEPTH {
            return Err(SlugError::TooDeep);
        }
        for seg in segments {
            check_segment(seg)?;
        }
        Ok(Slug(s.to_owned()))
    }

    /// The slug as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A file-name-safe form (`observability/metrics` -> `observability__metrics`)
    /// for generated crate names; never used as a key (two slugs may map to one).
    pub(crate) fn file_stem(&self) -> String {
        self.0.replace('/', "__")
    }
}

fn check_segment(seg: &str) -> Result<(), SlugError> {
    if seg.is_empty() {
        return Err(SlugError::Empty);
    }
    if seg == "." || seg.starts_with("..") {
        return Err(SlugError::DotDot(seg.to_owned()));
    }
    if seg.starts_with('.') {
        return Err(SlugError::Hidden(seg.to_owned()));
    }
    if seg.len() > MAX_SEGMENT_LEN {
        return Err(SlugError::SegmentTooLong(seg.to_owned()));
    }
    if let Some(bad) = seg
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '-'))
    {
        return Err(SlugError::BadChar {
            segment: seg.to_owned(),
            bad,
        });
    }
    Ok(())
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_slug_is_accepted() {
        assert_eq!(
            Slug::parse("observability/metrics").unwrap().as_str(),
            "observability/metrics"
        );
    }

    #[test]
    fn unsafe_slugs_are_rejected_with_their_reason() {
        assert_eq!(Slug::parse("/etc"), Err(SlugError::Absolute));
        assert_eq!(Slug::parse("a/../b"), Err(SlugError::DotDot("..".into())));
        assert_eq!(
            Slug::parse(".secret"),
            Err(SlugError::Hidden(".secret".into()))
        );
        assert_eq!(Slug::parse("a//b"), Err(SlugError::Empty));
        assert_eq!(
            Slug::parse("Audit"),
            Err(SlugError::BadChar {
                segment: "Audit".into(),
                bad: 'A'
            })
        );
        assert_eq!(
            Slug::parse(&"a".repeat(65)),
            Err(SlugError::SegmentTooLong("a".repeat(65)))
        );
        assert_eq!(Slug::parse(&["ab"; 9].join("/")), Err(SlugError::TooDeep));
    }
}
