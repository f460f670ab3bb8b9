//! `Slug::parse`: never panics, and a slug it accepts parses to itself.
#![no_main]

use hookrt::hooks::Slug;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(slug) = Slug::parse(s) {
        assert_eq!(Slug::parse(slug.as_str()).ok(), Some(slug.clone()));
        assert_eq!(slug.to_string(), slug.as_str());
    }
});
