//! The http engine's reading of a server's answer: any bytes as a response (status line,
//! headers, Content-Length or chunked body, extra bytes) read as a 4 KiB GET is, give a
//! length or an error, never a panic.
#![no_main]

use iobench::api::engine::http::read_response_text;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_response_text(&String::from_utf8_lossy(data), 4096);
});
