//! `iobench report`'s readers: any text, as a result, a study's document (slo, compare,
//! trend, sweep index) or a fio log, gives a page or an error, never a panic, and in
//! bounded time (a hostile number sizes no axis: issue 36).
#![no_main]

use iobench::api::present::report::render_text;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The name decides how a log is read; the JSON documents are told by their keys.
    for name in [
        "/nonexistent/r.json",
        "/nonexistent/x_lat.1.log",
        "/nonexistent/x_clat_hist.1.log",
    ] {
        let _ = render_text(Path::new(name), &text);
    }
});
