//! Outbound HTTP policy: which scheme, host and port a hook granted `http`
//! may reach, and which resolved addresses it may connect to.
//!
//! An `http_allow` entry names one origin: `https://host` is HTTPS on 443
//! only, `http://host:8080` plain HTTP on 8080 only, and a bare `host` (or
//! `host:port`) means HTTPS (on 443, or that port): an entry never opens a
//! second scheme or every port. Names must resolve to public addresses:
//! loopback, private (RFC 1918, ULA), link-local (cloud metadata at
//! 169.254.169.254), unspecified, shared, multicast and reserved addresses are
//! refused, so an allowed name cannot be pointed at the host's own services.
//! Only an entry that names such an address itself (an IP literal, or
//! `localhost` for loopback) may reach it. The connection itself is made in
//! `egress`, to the address checked here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Instant;

use crate::sandbox::redaction::Redactor;

/// Largest response a hook may receive, by its `content-length`.
pub const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// One parsed `http_allow` entry: one scheme, one host, one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// HTTPS (true) or plain HTTP.
    pub https: bool,
    /// The host, lower case (an IPv6 literal without brackets).
    pub host: String,
    /// The one port allowed.
    pub port: u16,
}

impl Entry {
    /// Parses `https://host[:port]`, `http://host[:port]` or a bare
    /// `host[:port]` (HTTPS). Paths, queries, user info and wildcards are refused.
    pub(crate) fn parse(text: &str) -> Result<Entry, String> {
        let full = if text.contains("://") {
            text.to_owned()
        } else {
            format!("https://{text}")
        };
        let uri: http::Uri = full.parse().map_err(|_| "is not a URL origin".to_owned())?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err("names a scheme other than http or https".into()),
        };
        let authority = uri.authority().ok_or("names no host")?;
        if authority.as_str().contains('@') || text.contains('*') || authority.host().is_empty() {
            return Err("must be a plain host (no user info or wildcard)".into());
        }
        if uri.query().is_some() || !matches!(uri.path(), "" | "/") {
            return Err("must not name a path or query".into());
        }
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        Ok(Entry {
            https,
            host: unbracket(authority.host()).to_ascii_lowercase(),
            port,
        })
    }

    /// Whether this entry may connect to `ip`: any address only when the
    /// entry names an address itself; loopback for `localhost`; else only
    /// public addresses.
    pub(crate) fn may_connect(&self, ip: IpAddr) -> bool {
        if let Ok(named) = self.host.parse::<IpAddr>() {
            return canonical(named) == canonical(ip);
        }
        if self.host == "localhost" {
            return canonical(ip).is_loopback();
        }
        is_public(ip)
    }
}

fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// An IPv4 address carried in IPv6 (mapped or NAT64) as the IPv4 it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return IpAddr::V4(Ipv4Addr::new(a, b, c, d));
            }
            IpAddr::V6(v6)
        }
        v4 => v4,
    }
}

/// Whether `ip` is a public unicast address (what an allowed name may reach).
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || a == 0 // "this network"
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16: cloud metadata
        || (a == 100 && (64..128).contains(&b)) // shared (CGNAT) 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || ip.is_multicast()
        || a >= 240) // reserved and broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (s[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
}

/// One hook's outbound HTTP policy.
#[derive(Debug, Clone)]
pub(crate) struct HttpPolicy {
    /// The parsed `http_allow` list (entries that do not parse are dropped:
    /// configuration checking refuses them before a hook loads).
    pub allow: Vec<Entry>,
    /// When the running delivery must end: bounds the whole exchange.
    pub deadline: Instant,
    /// Masks secrets in what is logged about refused requests.
    pub redactor: Redactor,
}

impl Default for HttpPolicy {
    fn default() -> Self {
        HttpPolicy {
            allow: Vec::new(),
            deadline: Instant::now(),
            redactor: Redactor::default(),
        }
    }
}

impl HttpPolicy {
    /// The policy for `allow` (raw `http_allow` entries).
    pub(crate) fn new(allow: &[String], redactor: Redactor) -> HttpPolicy {
        HttpPolicy {
            allow: allow.iter().filter_map(|e| Entry::parse(e).ok()).collect(),
            redactor,
            ..HttpPolicy::default()
        }
    }

    /// The entry that allows a request to `uri` (scheme, host and port must
    /// all match one entry), if any.
    pub(crate) fn allows(&self, uri: &http::Uri) -> Option<&Entry> {
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return None,
        };
        let authority = uri.authority()?;
        let host = unbracket(authority.host()).to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        self.allow
            .iter()
            .find(|e| e.https == https && e.port == port && e.host == host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[&str]) -> HttpPolicy {
        let raw: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
        HttpPolicy::new(&raw, Redactor::default())
    }

    fn allowed(p: &HttpPolicy, url: &str) -> bool {
        p.allows(&url.parse().unwrap()).is_some()
    }

    #[test]
    fn a_bare_host_allows_https_on_443_only() {
        let p = policy(&["api.example.com"]);
        assert!(allowed(&p, "https://api.example.com/v1"));
        assert!(allowed(&p, "https://API.example.com:443/v1"));
        assert!(!allowed(&p, "http://api.example.com/v1"));
        assert!(!allowed(&p, "https://api.example.com:8443/v1"));
        assert!(!allowed(&p, "https://evil.api.example.com/"));
    }

    #[test]
    fn an_entry_with_scheme_and_port_allows_that_pair_only() {
        let p = policy(&["http://127.0.0.1:8080", "https://hooks.slack.com"]);
        assert!(allowed(&p, "http://127.0.0.1:8080/x"));
        assert!(!allowed(&p, "https://127.0.0.1:8080/x"));
        assert!(!allowed(&p, "http://127.0.0.1:8081/x"));
        assert!(!allowed(&p, "http://127.0.0.1/x"));
        assert!(allowed(&p, "https://hooks.slack.com/services"));
        assert!(!allowed(&p, "http://hooks.slack.com/services"));
        let p = policy(&["example.com:8443"]);
        assert!(allowed(&p, "https://example.com:8443/"));
        assert!(!allowed(&p, "http://example.com:8443/"));
    }

    #[test]
    fn wildcards_paths_user_info_and_other_schemes_are_not_entries() {
        for bad in [
            "*.example.com",
            "https://a.com/path",
            "ftp://a.com",
            "https://u@a.com",
            "",
        ] {
            assert!(Entry::parse(bad).is_err(), "{bad}");
        }
        assert!(policy(&["*.example.com"]).allow.is_empty());
    }

    #[test]
    fn names_reach_public_addresses_only_and_literals_reach_themselves() {
        let name = Entry::parse("api.example.com").unwrap();
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(!name.may_connect(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:2800:220:1::1"] {
            assert!(name.may_connect(ip.parse().unwrap()), "{ip}");
        }
        let literal = Entry::parse("http://127.0.0.1:9000").unwrap();
        assert!(literal.may_connect("127.0.0.1".parse().unwrap()));
        assert!(!literal.may_connect("127.0.0.2".parse().unwrap()));
        let v6 = Entry::parse("http://[::1]:9000").unwrap();
        assert_eq!(v6.host, "::1");
        assert!(v6.may_connect("::1".parse().unwrap()));
        let local = Entry::parse("http://localhost:9000").unwrap();
        assert!(local.may_connect("127.0.0.1".parse().unwrap()));
        assert!(local.may_connect("::1".parse().unwrap()));
        assert!(!local.may_connect("10.0.0.1".parse().unwrap()));
    }
}
