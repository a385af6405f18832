//! Command line: NUL-separated arguments through `cli::parse_args` and the resolver.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Positional arguments are job files; `-` would read the fuzzer's stdin.
    let args: Vec<&str> = text.split('\0').filter(|a| *a != "-").collect();
    if let Ok(inv) = iobench::api::cli::parse_args(&args) {
        for job in &inv.jobs {
            let _ = iobench::api::job::resolve(job);
        }
    }
});
