//! Job-file parser: any text must give jobs or an error, never a panic; the jobs it gives
//! must resolve or fail cleanly too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut globals = Vec::new();
    if let Ok(jobs) = iobench::api::options::jobfile::parse_str(text, "fuzz.fio", &mut globals) {
        for job in &jobs {
            let _ = iobench::api::job::resolve(job);
        }
    }
});
