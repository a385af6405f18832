//! NBD client against a hostile server: arbitrary bytes as everything the server says
//! during negotiation (greeting, option replies, export info), and arbitrary error codes
//! of transmission replies. Any answer must be an error or an export, never a panic or
//! an allocation sized by the server.
#![no_main]

use iobench::api::engine::nbd::wire;
use libfuzzer_sys::fuzz_target;
use std::io::{Read, Write};

/// A server that says `data` and swallows what the client sends.
struct Script<'a>(&'a [u8]);

impl Read for Script<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

impl Write for Script<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() >= 4 {
        let code = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
        assert!(wire::errno_of(code) > 0);
    }
    let _ = wire::handshake(&mut Script(data), "export");
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = wire::parse_uri(text);
    }
});
