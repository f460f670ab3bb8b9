//! Benchmark hook: parses the event data as JSON and looks at one field, the
//! same work as the native function and the peers it is compared with in
//! `runtime/benches/call.rs`. No logging, no state.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct BenchParse;

impl BenchParse {
    fn any(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let data = event.data_json()?;
        std::hint::black_box(data.get("call_id").is_some());
        Ok(())
    }
}

hookrt_sdk::define_hook!(BenchParse { "*" => any });
