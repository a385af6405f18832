//! Where a server listens or a client connects, in fio's spellings: `sock:PATH` (a Unix
//! socket), `[ip:|ip4:|ip6:]HOST[,PORT]`, `,PORT` or `:PORT` (any address), and nothing
//! (any address, port 8765). An IPv6 host is given with `ip6:` (`ip6:::1,8766`).

use crate::fioproto::DEFAULT_PORT;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// A parsed endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp {
        /// None: every address (server), localhost (client).
        host: Option<String>,
        port: u16,
        ipv6: bool,
    },
    Unix(PathBuf),
}

const FORM: &str = "sock:PATH, [ip:|ip4:|ip6:]HOST[,PORT], ,PORT or :PORT";

fn bad(flag: &str, value: &str, why: &str) -> String {
    format!("option '--{flag}': bad value '{value}': {why} (expected {FORM})")
}

fn port_of(flag: &str, value: &str, p: &str) -> Result<u16, String> {
    match p.trim().parse::<u32>() {
        Ok(n) if (1..=65535).contains(&n) => Ok(n as u16),
        _ => Err(bad(flag, value, &format!("bad port '{p}' (1 to 65535)"))),
    }
}

/// Parses `value` of `--flag` (for messages) as fio does.
pub fn parse(flag: &str, value: &str) -> Result<Endpoint, String> {
    if let Some(path) = value.strip_prefix("sock:") {
        if path.is_empty() {
            return Err(bad(flag, value, "no socket path"));
        }
        return Ok(Endpoint::Unix(PathBuf::from(path)));
    }
    let (mut host, ipv6) = if let Some(h) = value.strip_prefix("ip:") {
        (h, false)
    } else if let Some(h) = value.strip_prefix("ip4:") {
        (h, false)
    } else if let Some(h) = value.strip_prefix("ip6:") {
        (h, true)
    } else if let Some(p) = value.strip_prefix(':') {
        return Ok(Endpoint::Tcp {
            host: None,
            port: port_of(flag, value, p)?,
            ipv6: false,
        });
    } else {
        (value, false)
    };
    let mut port = DEFAULT_PORT;
    // fio splits at the first ',' (an IPv6 address has none).
    if let Some((h, p)) = host.split_once(',') {
        port = port_of(flag, value, p)?;
        host = h;
    }
    Ok(Endpoint::Tcp {
        host: (!host.is_empty()).then(|| host.to_string()),
        port,
        ipv6,
    })
}

impl Endpoint {
    /// The socket addresses to try, resolving a host name for the family asked.
    pub fn resolve(&self, listening: bool) -> Result<Vec<SocketAddr>, String> {
        let Endpoint::Tcp { host, port, ipv6 } = self else {
            return Err("a Unix socket has no network address".into());
        };
        let h = match host {
            Some(h) => h.clone(),
            None if listening && *ipv6 => "::".into(),
            None if listening => "0.0.0.0".into(),
            None if *ipv6 => "::1".into(),
            None => "localhost".into(),
        };
        let addrs: Vec<SocketAddr> = (h.as_str(), *port)
            .to_socket_addrs()
            .map_err(|e| format!("failed to resolve <{h}> ({e})"))?
            .filter(|a| a.is_ipv6() == *ipv6)
            .collect();
        if addrs.is_empty() {
            return Err(format!(
                "failed to resolve <{h}>: no IPv{} address",
                if *ipv6 { 6 } else { 4 }
            ));
        }
        Ok(addrs)
    }

    /// The port; for a Unix socket fio's default port, as fio's JSON shows it.
    pub fn port(&self) -> u16 {
        match self {
            Endpoint::Unix(_) => DEFAULT_PORT,
            Endpoint::Tcp { port, .. } => *port,
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "sock:{}", p.display()),
            Endpoint::Tcp { host, port, ipv6 } => {
                let h = host
                    .as_deref()
                    .unwrap_or(if *ipv6 { "::" } else { "0.0.0.0" });
                write!(f, "{h},{port}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: Option<&str>, port: u16, ipv6: bool) -> Endpoint {
        Endpoint::Tcp {
            host: host.map(str::to_string),
            port,
            ipv6,
        }
    }

    #[test]
    fn fios_forms() {
        assert_eq!(parse("server", "").unwrap(), tcp(None, 8765, false));
        assert_eq!(parse("server", ",9000").unwrap(), tcp(None, 9000, false));
        assert_eq!(parse("server", ":9000").unwrap(), tcp(None, 9000, false));
        assert_eq!(
            parse("server", "ip:127.0.0.1,9000").unwrap(),
            tcp(Some("127.0.0.1"), 9000, false)
        );
        assert_eq!(parse("client", "h1").unwrap(), tcp(Some("h1"), 8765, false));
        assert_eq!(
            parse("server", "ip6:::1,9000").unwrap(),
            tcp(Some("::1"), 9000, true)
        );
        assert_eq!(
            parse("server", "sock:/tmp/s").unwrap(),
            Endpoint::Unix("/tmp/s".into())
        );
    }

    #[test]
    fn bad_ports_name_the_option() {
        let e = parse("server", ",70000").unwrap_err();
        assert!(e.contains("--server") && e.contains("70000"), "{e}");
        assert!(parse("client", "h,x").is_err());
        assert!(parse("server", ":0").is_err());
        assert!(parse("server", "sock:").is_err());
    }
}
