//! The server's connection slots: who holds them, and which one a new connection may
//! take when they are full. fio forks a process per connection, so an idle peer never
//! keeps another out; iobench serves connections on threads up to `--server-max-conns`,
//! and so that silent or slow peers cannot fill them, a new connection that finds them
//! full (or its peer at its share, [`per_peer`]) takes the slot of a connection with no
//! run going: first one that never sent a whole message, then the longest quiet, from
//! the peer that holds the most. A connection with a run going is never taken from.

use crate::fioproto::stream::Stream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a connection's thread says about it, read when a slot is wanted.
#[derive(Debug, Default)]
pub struct State {
    /// A whole message came (the peer speaks the protocol).
    pub greeted: AtomicBool,
    /// A run is going: the slot is never taken.
    pub running: AtomicBool,
    /// When the last message came, in ms since the slots were made.
    pub last_ms: AtomicU64,
}

struct Slot {
    id: u64,
    /// The peer's address without its port (every Unix-socket peer is one peer).
    peer: String,
    state: Arc<State>,
    /// A second handle on the connection, to end it when its slot is taken.
    stream: Stream,
}

/// The slots of one server.
pub struct Slots {
    max: usize,
    t0: Instant,
    next: AtomicU64,
    held: Mutex<Vec<Slot>>,
}

/// How many slots one peer may hold before its own quiet connections make room for its
/// new ones: half the slots (at least one).
pub fn per_peer(max: usize) -> usize {
    (max / 2).max(1)
}

/// A slot held by a connection's thread; dropping it frees the slot.
pub struct Ticket {
    slots: Arc<Slots>,
    id: u64,
    pub state: Arc<State>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|s| s.id != self.id);
    }
}

impl Ticket {
    /// Notes that a message came now.
    pub fn heard(&self) {
        self.state.greeted.store(true, Ordering::Relaxed);
        self.state
            .last_ms
            .store(self.slots.now_ms(), Ordering::Relaxed);
    }
}

impl Slots {
    pub fn new(max: usize) -> Arc<Slots> {
        Arc::new(Slots {
            max: max.max(1),
            t0: Instant::now(),
            next: AtomicU64::new(0),
            held: Mutex::new(Vec::new()),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.t0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A slot for a new connection from `peer` (`stream` a second handle on it), taking
    /// one from a quiet connection when needed; `None` when every slot that could be
    /// taken has a run going.
    pub fn admit(self: &Arc<Self>, peer: &str, stream: Stream) -> Option<Ticket> {
        let peer = peer_of(peer);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mine = held.iter().filter(|s| s.peer == peer).count();
        let full = held.len() >= self.max;
        if full || mine >= per_peer(self.max) {
            // Whose connection goes: this peer's own when it is at its share, else the
            // peer holding the most.
            let from = if mine >= per_peer(self.max) {
                peer.clone()
            } else {
                let mut counts: Vec<(&str, usize)> = Vec::new();
                for s in held.iter() {
                    match counts.iter_mut().find(|c| c.0 == s.peer) {
                        Some(c) => c.1 += 1,
                        None => counts.push((&s.peer, 1)),
                    }
                }
                counts
                    .into_iter()
                    .filter(|&(p, _)| {
                        held.iter()
                            .any(|s| s.peer == p && !s.state.running.load(Ordering::Relaxed))
                    })
                    .max_by_key(|c| c.1)
                    .map(|c| c.0.to_string())?
            };
            let victim = held
                .iter()
                .enumerate()
                .filter(|(_, s)| s.peer == from && !s.state.running.load(Ordering::Relaxed))
                .min_by_key(|(_, s)| {
                    (
                        s.state.greeted.load(Ordering::Relaxed),
                        s.state.last_ms.load(Ordering::Relaxed),
                    )
                })
                .map(|(i, _)| i)?;
            let gone = held.swap_remove(victim);
            // Its thread sees the end of the stream and ends the connection.
            gone.stream.shutdown();
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(State::default());
        state.last_ms.store(self.now_ms(), Ordering::Relaxed);
        held.push(Slot {
            id,
            peer,
            state: Arc::clone(&state),
            stream,
        });
        Some(Ticket {
            slots: Arc::clone(self),
            id,
            state,
        })
    }
}

/// A peer's address without its port: `1.2.3.4:5678` and `[::1]:5678` to the host.
fn peer_of(peer: &str) -> String {
    match peer.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() => h.to_string(),
        _ => peer.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    fn stream() -> (Stream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        (Stream::Unix(a), b)
    }

    #[test]
    fn quiet_connections_make_room_and_runs_keep_theirs() {
        let slots = Slots::new(4);
        let mut keep = Vec::new();
        let mut tickets = Vec::new();
        // Another peer with a run going holds one slot.
        let (s, other) = stream();
        let t = slots.admit("10.0.0.9:1", s).unwrap();
        t.state.running.store(true, Ordering::Relaxed);
        keep.push(other);
        tickets.push(t);
        // One peer fills its share (2) with silent connections.
        for port in 0..2 {
            let (s, other) = stream();
            tickets.push(slots.admit(&format!("10.0.0.1:{port}"), s).unwrap());
            keep.push(other);
        }
        // Its next connection takes the slot of its own quietest one (ended: EOF).
        let (s, other) = stream();
        tickets.push(slots.admit("10.0.0.1:7", s).unwrap());
        keep.push(other);
        use std::io::Read;
        let mut b = [0u8; 1];
        keep[1].set_nonblocking(true).unwrap();
        assert_eq!(
            keep[1].read(&mut b).unwrap(),
            0,
            "the oldest silent one ended"
        );
        // A third peer still gets in (3 held of 4, then full: one of peer 1's goes).
        for port in 0..2 {
            let (s, other) = stream();
            tickets.push(slots.admit(&format!("10.0.0.2:{port}"), s).unwrap());
            keep.push(other);
        }
        assert_eq!(slots.held.lock().unwrap().len(), 4);
        // When every slot has a run going, a new connection is turned away.
        for s in slots.held.lock().unwrap().iter() {
            s.state.running.store(true, Ordering::Relaxed);
        }
        let (s, _other) = stream();
        assert!(slots.admit("10.0.0.3:1", s).is_none());
        drop(tickets);
    }

    #[test]
    fn peers_are_hosts() {
        assert_eq!(peer_of("127.0.0.1:4000"), "127.0.0.1");
        assert_eq!(peer_of("[::1]:4000"), "[::1]");
        assert_eq!(peer_of("/run/x.sock"), "/run/x.sock");
    }
}
