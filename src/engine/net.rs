//! net and netsplice: I/O as messages over TCP, UDP or a Unix socket.

use crate::options::table::{opt, Category as C, Kind as K, OptDef};

const PROTOCOL_CHOICES: &[(&str, &str)] = &[
    ("tcp", "TCP over IPv4"),
    ("tcpv6", "TCP over IPv6"),
    ("udp", "UDP over IPv4"),
    ("udpv6", "UDP over IPv6"),
    ("unix", "a Unix domain socket"),
];

pub const HOSTNAME: OptDef = opt("hostname", K::Str, "The host to connect to")
    .cat(C::Engine)
    .engines(&["net", "netsplice", "rdma"])
    .not_yet();

pub const PORT: OptDef = opt(
    "port",
    K::Int { min: 1, max: 65535 },
    "The port to connect to or listen on",
)
.cat(C::Engine)
.engines(&["net", "netsplice", "rdma"])
.range(1, 65535)
.not_yet();

pub const PROTOCOL: OptDef = opt(
    "protocol",
    K::Choice(PROTOCOL_CHOICES),
    "The network protocol to use",
)
.alias(&["proto"])
.def("tcp")
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const NODELAY: OptDef = opt(
    "nodelay",
    K::Bool,
    "Turn off Nagle's algorithm on TCP sockets",
)
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const LISTEN: OptDef = opt("listen", K::Bool, "Wait for the other side to connect")
    .cat(C::Engine)
    .engines(&["net", "netsplice"])
    .not_yet();

pub const PINGPONG: OptDef = opt(
    "pingpong",
    K::Bool,
    "Answer each message before sending the next",
)
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const INTERFACE: OptDef = opt(
    "interface",
    K::Str,
    "The network interface used for multicast",
)
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const TTL: OptDef = opt(
    "ttl",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Time to live for multicast UDP packets",
)
.def("1")
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const WINDOW_SIZE: OptDef = opt(
    "window_size",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Socket buffer size",
)
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

pub const MSS: OptDef = opt(
    "mss",
    K::Int {
        min: 0,
        max: i64::MAX,
    },
    "Largest TCP segment size",
)
.cat(C::Engine)
.engines(&["net", "netsplice"])
.not_yet();

/// The options net and netsplice share, in fio's order.
pub const OPTIONS: &[OptDef] = &[
    HOSTNAME,
    PORT,
    PROTOCOL,
    NODELAY,
    LISTEN,
    PINGPONG,
    INTERFACE,
    TTL,
    WINDOW_SIZE,
    MSS,
];
