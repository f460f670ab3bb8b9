//! Hostile: one component, many attacks. `config = { attack = "NAME" }` in
//! hookrt.toml picks the attack, `on = "KIND"` what it subscribes to
//! (default `*`), `every = N` that only each instance's Nth delivery
//! attacks (the others log their count and are ok); `tests/all/attacks.rs` runs each one beside
//! the witness and asserts its exact outcome. It implements the world's
//! exports by hand (not with `define_hook!`) so it can also misbehave in
//! `configure` and `subscriptions`, and call the host with raw bindings.
//!
//! Attacks: `trap_in_configure`, `trap_in_subscriptions`, `huge_alloc` (one
//! 1 GiB allocation), `memory_grow_loop` (raw `memory.grow` until refused,
//! then a trap), `stdout_flood`, `stderr_flood`, `state_flood` (small keys
//! until the per-hook cap or the deadline), `state_big_values` (60 KiB values
//! until the per-hook state cap answers), `series_flood` (5,000 metric
//! series), `huge_approvals` (100,000 approvals),
//! `huge_edit` (an 8 MiB edit), `invalid_utf8_log` and `invalid_utf8_error`
//! (bytes that are not UTF-8 where the WIT says `string`), `exit`
//! (`std::process::exit`), `sleep` (ten seconds in a host call), `spin` (a busy loop), `env_probe` (what environment, arguments, clock
//! and randomness the baseline gives: nothing, and inert values).

use std::cell::RefCell;

use hookrt_sdk::bindings::hookrt::hook::{log, metrics, state, types as wit};
use hookrt_sdk::serde_json;

std::thread_local! {
    static ATTACK: RefCell<String> = const { RefCell::new(String::new()) };
    static ON: RefCell<String> = const { RefCell::new(String::new()) };
    static EVERY: RefCell<(u64, u64)> = const { RefCell::new((1, 0)) };
}

fn attack() -> String {
    ATTACK.with(|a| a.borrow().clone())
}

fn info(message: &str, fields: &[(&str, String)]) {
    let fields: Vec<log::Field> = fields
        .iter()
        .map(|(k, v)| log::Field {
            key: (*k).to_owned(),
            value: v.clone(),
        })
        .collect();
    log::log(log::Level::Info, message, &fields);
}

/// A `String` holding bytes that are not UTF-8. Undefined behaviour for
/// Rust code that reads it as text; here it is only handed to the
/// canonical ABI, which must refuse it when the host lifts it.
fn not_utf8() -> String {
    unsafe { String::from_utf8_unchecked(vec![b'o', b'k', 0xff, 0xfe, 0xc0]) }
}

struct Attack;

impl hookrt_sdk::bindings::Guest for Attack {
    fn configure(config: String) -> Result<(), String> {
        let config: serde_json::Value =
            serde_json::from_str(&config).map_err(|e| format!("config is not JSON: {e}"))?;
        let name = config["attack"].as_str().unwrap_or_default().to_owned();
        if name == "trap_in_configure" {
            panic!("attack: trapping in configure");
        }
        ATTACK.with(|a| *a.borrow_mut() = name);
        let on = config["on"].as_str().unwrap_or("*").to_owned();
        ON.with(|o| *o.borrow_mut() = on);
        let every = config["every"].as_u64().unwrap_or(1).max(1);
        EVERY.with(|e| *e.borrow_mut() = (every, 0));
        Ok(())
    }

    fn subscriptions() -> Vec<String> {
        if attack() == "trap_in_subscriptions" {
            panic!("attack: trapping in subscriptions");
        }
        vec![ON.with(|o| o.borrow().clone())]
    }

    fn handle(_envelope: wit::Envelope, _context: wit::Context) -> Result<wit::Reply, String> {
        // With `every = N`, only the Nth delivery of an instance attacks.
        let (every, n) = EVERY.with(|e| {
            let mut e = e.borrow_mut();
            e.1 += 1;
            *e
        });
        if every > 1 {
            info("delivery", &[("n_in_instance", n.to_string())]);
        }
        if n % every != 0 {
            return Ok(reply(wit::Response::None));
        }
        match attack().as_str() {
            "huge_alloc" => {
                let v: Vec<u8> = Vec::with_capacity(1 << 30);
                info(
                    "allocated",
                    &[("capacity", std::hint::black_box(v).capacity().to_string())],
                );
            }
            "memory_grow_loop" => {
                let mut pages = 0usize;
                while core::arch::wasm32::memory_grow(0, 1) != usize::MAX {
                    pages += 1;
                }
                info("memory.grow refused", &[("pages", pages.to_string())]);
                panic!("attack: memory.grow refused after {pages} pages");
            }
            "stdout_flood" => {
                let line = "o".repeat(100);
                for _ in 0..100_000 {
                    println!("{line}");
                }
            }
            "stderr_flood" => {
                let line = "e".repeat(100);
                for _ in 0..100_000 {
                    eprintln!("{line}");
                }
            }
            "state_flood" => {
                for i in 0u64.. {
                    state::set(&format!("k{i}"), &[1])?;
                }
            }
            "state_big_values" => {
                let value = vec![7u8; 60 << 10];
                for i in 0u64.. {
                    state::set(&format!("big{i}"), &value)?;
                }
            }
            "series_flood" => {
                for i in 0..5_000 {
                    metrics::counter(&format!("s{i}"), 1, &[]);
                }
            }
            "huge_approvals" => {
                return Ok(reply(wit::Response::Approvals(vec![
                    wit::Approval::Allow;
                    100_000
                ])));
            }
            "huge_edit" => return Ok(reply(wit::Response::Edit("x".repeat(8 << 20)))),
            "invalid_utf8_log" => log::log(log::Level::Info, &not_utf8(), &[]),
            "invalid_utf8_error" => return Err(not_utf8()),
            "exit" => std::process::exit(3),
            "spin" => loop {
                std::hint::black_box(n);
            },
            "sleep" => std::thread::sleep(std::time::Duration::from_secs(10)),
            "env_probe" => {
                use std::hash::BuildHasher;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                let random = std::collections::hash_map::RandomState::new().hash_one(1u8);
                info(
                    "environment",
                    &[
                        ("vars", std::env::vars_os().count().to_string()),
                        ("args", std::env::args_os().count().to_string()),
                        ("clock_after_2020", (now > 1_577_836_800).to_string()),
                        ("random", random.to_string()),
                    ],
                );
            }
            other => return Err(format!("unknown attack `{other}`")),
        }
        Ok(reply(wit::Response::None))
    }
}

/// World 0.3.0's reply: the answer, and no context for the model.
fn reply(response: wit::Response) -> wit::Reply {
    wit::Reply {
        response,
        context: None,
    }
}

hookrt_sdk::bindings::export!(Attack with_types_in hookrt_sdk::bindings);
