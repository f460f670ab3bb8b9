//! Outbound HTTP: an allow-list entry names one scheme and port, and an
//! allowed name may not lead to a non-public address.

use std::net::TcpListener;
use std::time::Duration;

use hookrt::Outcome;

use crate::common::{TempAgent, last_field, load, transcript};

/// A name other than `localhost` that this machine's hosts file maps to
/// loopback (Debian-style systems map their own host name so).
fn loopback_alias() -> String {
    let hosts = std::fs::read_to_string("/etc/hosts").expect("/etc/hosts");
    hosts
        .lines()
        .filter_map(|l| {
            let mut words = l.split('#').next()?.split_whitespace();
            let ip: std::net::IpAddr = words.next()?.parse().ok()?;
            ip.is_loopback()
                .then(|| words.map(str::to_owned).collect::<Vec<_>>())
        })
        .flatten()
        .find(|name| !name.starts_with("localhost") && !name.starts_with("ip6-"))
        .expect("a loopback alias other than localhost in /etc/hosts")
}

fn probe(allow: &str, url: &str) -> hookrt::Delivery {
    let agent = TempAgent::new()
        .hook("testing/hooks/http-probe", "probe")
        .config(&format!(
            "[hooks.probe]\ngrants = [\"log\", \"http\"]\nhttp_allow = [\"{allow}\"]\n\
         config = {{ urls = [\"{url}\"] }}\n"
        ));
    load(agent.path())
        .dispatch(&transcript()[0])
        .unwrap()
        .deliveries
        .remove(0)
}

/// A listener that records whether anything connected within a short while.
fn listener() -> (u16, std::thread::JoinHandle<bool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    let h = std::thread::spawn(move || {
        for _ in 0..50 {
            if l.accept().is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    });
    (port, h)
}

#[test]
fn an_allowed_name_resolving_to_loopback_is_refused_before_connecting() {
    let name = loopback_alias();
    let (port, contacted) = listener();
    let d = probe(
        &format!("http://{name}:{port}"),
        &format!("http://{name}:{port}/"),
    );
    assert_eq!(d.outcome, Outcome::Ok, "{:?}", d.error);
    assert_eq!(
        last_field(&d, "error").as_deref(),
        Some("ErrorCode::DestinationIpProhibited")
    );
    assert!(
        !contacted.join().unwrap(),
        "nothing connected to the loopback port"
    );
}

#[test]
fn an_entry_without_a_scheme_does_not_allow_plain_http() {
    let (port, contacted) = listener();
    let d = probe(
        &format!("127.0.0.1:{port}"),
        &format!("http://127.0.0.1:{port}/"),
    );
    assert_eq!(
        last_field(&d, "error").as_deref(),
        Some("ErrorCode::HttpRequestDenied")
    );
    assert!(!contacted.join().unwrap());
}

#[test]
fn an_entry_allows_only_its_own_port() {
    let (port, contacted) = listener();
    let d = probe("http://127.0.0.1:1", &format!("http://127.0.0.1:{port}/"));
    assert_eq!(
        last_field(&d, "error").as_deref(),
        Some("ErrorCode::HttpRequestDenied")
    );
    assert!(!contacted.join().unwrap());
}
