//! The `--metrics` endpoint's request parser: where a request head ends, and what it asks
//! for (method, path, query string, version). Any bytes a client sends must give an answer
//! or an error response, never a panic.
#![no_main]

use iobench::api::present::metrics::{head_end, parse_request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let head = match head_end(data) {
        Some(end) => &data[..end],
        None => data,
    };
    match parse_request(head) {
        Ok(_) => {}
        Err(r) => assert!(r.status >= 400, "an error is an error status"),
    }
});
