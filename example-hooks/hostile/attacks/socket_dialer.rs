//! Hostile: dials a TCP socket with `std::net`. On wasm32-wasip2 that makes
//! the component import `wasi:sockets/*`, which hookrt never links: the hook
//! must be refused at load, naming the import, and never run.

use hookrt_sdk::prelude::*;

#[derive(Default)]
pub struct SocketDialer;

impl SocketDialer {
    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        match std::net::TcpStream::connect("127.0.0.1:9") {
            Ok(_) => log::warn("socket connected", &[]),
            Err(e) => log::info("socket refused", &[("error", &e.to_string())]),
        }
        Ok(())
    }
}

hookrt_sdk::define_hook!(SocketDialer {
    "*" => any,
});
