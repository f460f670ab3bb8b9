//! A loopback stand-in of an agent's model API, for the tests that run the
//! agents' real binaries offline (`claude_e2e.rs`, `codex_e2e.rs`,
//! `copilot_e2e.rs`): a thread answering each request with a scripted
//! [`Answer`], keeping every request; and [`within`], an agent's run bounded
//! in time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What a stand-in answers a request with: its content type and body.
pub(crate) type Answer = fn(&Value) -> (&'static str, String);

/// A loopback stand-in of a model API: each `POST` to `path` is answered
/// by its [`Answer`] from the JSON it carries (anything else, a path below
/// it included, is a 404); every request body is kept.
pub(crate) struct StandIn {
    pub(crate) url: String,
    pub(crate) requests: Arc<Mutex<Vec<Value>>>,
}

impl StandIn {
    pub(crate) fn start(path: &'static str, answer: Answer) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, path, answer, &kept));
            }
        });
        StandIn { url, requests }
    }

    /// The requests so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// One HTTP/1.1 request on `stream`, answered and closed.
fn serve(stream: TcpStream, path: &str, answer: Answer, kept: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut out = stream;
    // The path itself (a query may follow), not one below it.
    let target = head
        .strip_prefix("POST ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("");
    if target.split('?').next() != Some(path) {
        let _ = out.write_all(
            b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
        );
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    kept.lock().unwrap().push(request.clone());
    let (content_type, text) = answer(&request);
    let _ = write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = out.flush();
}

/// A task's prompt asking the model for `command`: a stand-in's answer
/// reads it back with [`asked_command`].
pub(crate) fn asking(command: &str) -> String {
    format!("Please run exactly this command: <<{command}>>")
}

/// The command the conversation of chat completions `request` was asked
/// for ([`asking`]), wherever the agent put the prompt.
pub(crate) fn asked_command(request: &Value) -> Option<String> {
    let conversation = request["messages"].to_string();
    let (_, rest) = conversation.split_once("<<")?;
    rest.split_once(">>").map(|(command, _)| command.to_owned())
}

/// The content of the `tool` message answering call `id` among the chat
/// completions `requests` a stand-in kept, if one reached the model.
pub(crate) fn tool_output(requests: &[Value], id: &str) -> Option<String> {
    requests
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
}

/// The output of `child` (read as it comes: a full pipe would stop it),
/// killed past `limit` (a session that loops).
pub(crate) fn within(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout.join().unwrap();
            let err = stderr.join().unwrap();
            panic!(
                "the agent ran past {limit:?}: {}\n{}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}
