//! Test hook: on every event, GETs each URL in `config.urls` through
//! `wasi:http` and logs `url` with either `status`, `body_len` and the first
//! 64 characters of `body`, or `error`.

use hookrt_sdk::prelude::*;
use wasi::http::outgoing_handler;
use wasi::http::types::{Fields, Method, OutgoingRequest, Scheme};

#[derive(Default)]
pub struct HttpProbe {
    urls: Vec<String>,
}

impl HttpProbe {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        let urls = config["urls"].as_array().ok_or_else(|| HookError::new("config.urls must list URLs"))?;
        self.urls = urls.iter().filter_map(|u| u.as_str().map(String::from)).collect();
        Ok(())
    }

    fn any(&mut self, _event: &Event, _cx: &Context) -> HookResult {
        for url in &self.urls {
            match get(url) {
                Ok((status, body)) => {
                    let head: String = body.chars().take(64).collect();
                    log::info("fetched", &[("url", url), ("status", &status.to_string()), ("body_len", &body.len().to_string()), ("body", &head)])
                }
                Err(error) => log::info("fetch failed", &[("url", url), ("error", &error)]),
            }
        }
        Ok(())
    }
}

fn get(url: &str) -> Result<(u16, String), String> {
    let (scheme, rest) = url.split_once("://").ok_or("URL has no scheme")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    request.set_method(&Method::Get).map_err(|()| "bad method")?;
    request.set_scheme(Some(&if scheme == "https" { Scheme::Https } else { Scheme::Http })).map_err(|()| "bad scheme")?;
    request.set_authority(Some(authority)).map_err(|()| "bad authority")?;
    request.set_path_with_query(Some(path)).map_err(|()| "bad path")?;
    let pending = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    pending.subscribe().block();
    let response = pending.get().ok_or("no response")?.map_err(|()| "response taken")?.map_err(|e| format!("{e:?}"))?;
    let status = response.status();
    let body = response.consume().map_err(|()| "no body")?;
    let stream = body.stream().map_err(|()| "no body stream")?;
    let mut bytes = Vec::new();
    while let Ok(chunk) = stream.blocking_read(4096) {
        bytes.extend(chunk);
    }
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

hookrt_sdk::define_hook!(HttpProbe {
    configure => setup,
    "*" => any,
});
