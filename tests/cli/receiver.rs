//! A loopback stand-in for a service a hook sends to (ntfy, Pushover,
//! Slack): it records each request whole and answers it. Shared by
//! `tests/cli` (`secret.rs`) and `tests/serve` (`ported_e2e.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

/// A loopback stand-in for a service: its origin, and each request (head,
/// blank line, body) as it arrived. It answers each with `reply(head)`.
pub(crate) fn receiver(reply: fn(&str) -> String) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let length = head
                .lines()
                .find_map(|l| {
                    let l = l.to_ascii_lowercase();
                    l.strip_prefix("content-length: ")
                        .map(|n| n.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let answer = reply(&head);
            let _ = tx.send(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    (origin, rx)
}
