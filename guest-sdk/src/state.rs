//! Per-hook key-value state kept by the host: `state::set_json("count", &n)?`.
//!
//! Keys are private to the hook and values survive restarts (the host keeps them in the
//! journal database when there is one); sizes are capped by the host. Instance memory
//! (the hook struct) is only a cache: keep here what must last.
//!
//! Off wasm (native unit tests of a hook) the state is an in-memory map per thread, so
//! each `#[test]` starts empty and no cap applies.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::HookError;

/// The bytes stored under `key`, if any.
pub fn get(key: &str) -> Option<Vec<u8>> {
    backend::get(key)
}

/// Store `value` under `key`; fails when a host size cap would be exceeded.
pub fn set(key: &str, value: &[u8]) -> Result<(), HookError> {
    backend::set(key, value)
        .map_err(|message| HookError::new(format!("state key `{key}` not stored: {message}")))
}

/// Remove `key` (nothing happens if it is absent).
pub fn delete(key: &str) {
    backend::delete(key);
}

/// The value stored under `key` as JSON, parsed as `T`; `Ok(None)` if absent, an error if
/// the stored bytes are not `T` (a previous version of the hook may have stored another shape).
pub fn get_json<T: DeserializeOwned>(key: &str) -> Result<Option<T>, HookError> {
    get(key)
        .map(|bytes| {
            serde_json::from_slice(&bytes).map_err(|err| {
                HookError::new(format!(
                    "state key `{key}` does not hold the expected JSON: {err}; delete it or store the new shape"
                ))
            })
        })
        .transpose()
}

/// Store `value` under `key` as JSON. A value past a host cap (docs/hooks-reference.md:
/// a key of 1 to 512 bytes, a value of at most 64 KiB, 1 MiB per hook) is not stored and
/// the error says why; with `?` it fails the delivery. In a native test:
///
/// ```
/// use hookrt_sdk::state;
///
/// state::set_json("read/src/lib.rs", "9f2c")?;
/// assert_eq!(state::get_json::<String>("read/src/lib.rs")?.as_deref(), Some("9f2c"));
/// assert!(state::get_json::<u32>("read/src/lib.rs").is_err(), "another shape");
/// state::delete("read/src/lib.rs");
/// assert_eq!(state::get("read/src/lib.rs"), None);
/// # Ok::<(), hookrt_sdk::HookError>(())
/// ```
pub fn set_json<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<(), HookError> {
    let bytes = serde_json::to_vec(value).map_err(|err| {
        HookError::new(format!(
            "state key `{key}`: value does not serialize: {err}"
        ))
    })?;
    set(key, &bytes)
}

#[cfg(target_arch = "wasm32")]
mod backend {
    use crate::bindings::hookrt::hook::state as host;

    pub fn get(key: &str) -> Option<Vec<u8>> {
        host::get(key)
    }

    pub fn set(key: &str, value: &[u8]) -> Result<(), String> {
        host::set(key, value)
    }

    pub fn delete(key: &str) {
        host::delete(key);
    }
}

// The host import only exists inside a component; natively (a hook's own unit tests)
// calling it would hit wit-bindgen's `unreachable!()` stub.
#[cfg(not(target_arch = "wasm32"))]
mod backend {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    std::thread_local! {
        static MAP: RefCell<BTreeMap<String, Vec<u8>>> = const { RefCell::new(BTreeMap::new()) };
    }

    pub(super) fn get(key: &str) -> Option<Vec<u8>> {
        MAP.with(|map| map.borrow().get(key).cloned())
    }

    pub(super) fn set(key: &str, value: &[u8]) -> Result<(), String> {
        MAP.with(|map| map.borrow_mut().insert(key.to_owned(), value.to_vec()));
        Ok(())
    }

    pub(super) fn delete(key: &str) {
        MAP.with(|map| map.borrow_mut().remove(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_json_round_trip_natively() {
        assert_eq!(get("k"), None);
        set("k", b"raw").expect("set");
        assert_eq!(get("k").as_deref(), Some(&b"raw"[..]));
        delete("k");
        assert_eq!(get("k"), None);

        assert_eq!(get_json::<u64>("count").expect("absent is ok"), None);
        set_json("count", &41u64).expect("set");
        assert_eq!(get_json::<u64>("count").expect("get"), Some(41));
    }

    #[test]
    fn wrong_shape_names_the_key() {
        set("shape", b"\"text\"").expect("set");
        let err = get_json::<u64>("shape").expect_err("not a number");
        assert!(err.message().contains("state key `shape`"), "{err}");
    }
}
