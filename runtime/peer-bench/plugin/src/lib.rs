//! The Extism peer of `example-hooks/testing/hooks/bench_parse.rs`: parses the
//! event's JSON data (the call's input) and looks at one field. Returns "1" when
//! `call_id` is there, "0" otherwise.

use extism_pdk::*;

#[plugin_fn]
pub fn handle(data: String) -> FnResult<&'static str> {
    let v: serde_json::Value = serde_json::from_str(&data)?;
    Ok(if std::hint::black_box(v.get("call_id").is_some()) {
        "1"
    } else {
        "0"
    })
}
