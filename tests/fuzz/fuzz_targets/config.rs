//! `Config::parse` (`hookrt.toml`): never panics, whatever the text.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = hookrt::hooks::Config::parse(text, Path::new("hookrt.toml"));
    }
});
