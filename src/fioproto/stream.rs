//! A connection of fio's protocol: TCP or a Unix socket, read and written alike by the
//! server and the client.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use super::addr::Endpoint;

/// A connection over TCP or a Unix socket.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn try_clone(&self) -> std::io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// Connects to `ep`, trying each of its addresses.
    pub fn connect(ep: &Endpoint) -> Result<Stream, String> {
        match ep {
            Endpoint::Unix(p) => UnixStream::connect(p)
                .map(Stream::Unix)
                .map_err(|e| format!("connect to {}: {e}", p.display())),
            Endpoint::Tcp { .. } => {
                let mut last = String::from("no address");
                for a in ep.resolve(false)? {
                    match TcpStream::connect(a) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            return Ok(Stream::Tcp(s));
                        }
                        Err(e) => last = format!("connect to {a}: {e}"),
                    }
                }
                Err(last)
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}
