//! Benchmark hook: a tool-approval policy that parses the requested calls
//! and then works for `config.rounds` rounds of hashing (0 by default), so
//! one source gives policy hooks of any cost (`runtime/core/benches/decide.rs`).
//! Abstains on every call.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct BusyPolicy {
    rounds: u64,
}

impl BusyPolicy {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        self.rounds = config
            .get("rounds")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        Ok(())
    }

    fn requested(&mut self, event: &Event, _cx: &Context) -> HookResult<Vec<Approval>> {
        let data: ActionsRequested = event.data()?;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for i in 0..self.rounds {
            h = std::hint::black_box((h ^ i).wrapping_mul(0x100_0000_01b3));
        }
        std::hint::black_box(h);
        Ok(vec![Approval::Abstain; data.actions.len()])
    }
}

hookrt_sdk::define_hook!(BusyPolicy {
    configure => setup,
    "actions.requested" => requested,
});
