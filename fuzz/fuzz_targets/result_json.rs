//! The result readers of `compare` and `history import` (and report's): fio's or
//! iobench's JSON output, any text, parsed, summed over jobs, bounded, and given the
//! identity the history files it under, without a panic.
#![no_main]

use iobench::api::history::Identity;
use iobench::api::present::results::{check_doc_bounds, parse, totals};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(r) = parse(&text) {
        let _ = totals(&r);
        let _ = Identity::of(&r.doc);
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        let _ = check_doc_bounds(Path::new("fuzz.json"), &v);
        let _ = Identity::of(&v);
    }
});
