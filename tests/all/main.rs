//! Integration tests on real components built from `example-hooks/`.
//!
//! One test binary, one file per concern (as in Wasmtime's `tests/all`).
//! Every test shares one build cache (`target/tmp/hookrt-cache`), so the
//! example hooks compile once per machine and later tests load from cache.

mod common;
mod markdown;
mod sdk_sources;

mod answers;
mod attacks;
mod bridges;
mod build_roots;
mod cache;
mod caps;
mod cascade;
mod claude;
mod components;
mod config;
mod config_values;
mod decisions;
mod discovery;
mod edits;
mod embedding;
mod envelope;
mod eve;
mod host_calls;
mod hostile;
mod http;
mod journal;
mod kind_pages;
mod limits;
mod lock;
mod ordering;
mod owner;
mod promises;
mod python;
mod read;
mod redaction;
mod reload;
mod resolutions;
mod sandbox;
mod scopes;
mod sdk;
mod side_by_side;
mod state_and_config;
mod trust;
mod typed_hooks;
mod typescript;
mod vocabulary;
mod workers;
