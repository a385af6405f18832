//! iolog reader: arbitrary bytes as a `read_iolog` file (version 2 or 3, any options),
//! read whole and streamed. Entries past a file's end, huge lengths and garbage must give
//! an error or a log, never a panic.
#![no_main]

use iobench::api::job::workload::Replay;
use libfuzzer_sys::fuzz_target;

/// The iteration's log file, removed when the iteration ends (each process writes its own:
/// a run leaves none behind in $TMPDIR).
struct Gone<'a>(&'a std::path::Path);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let path = std::env::temp_dir().join(format!("iobench-fuzz-iolog-{}", std::process::id()));
    let _gone = Gone(&path);
    if std::fs::write(&path, rest).is_err() {
        return;
    }
    let list = path.display().to_string();
    let opts = Replay {
        read_iolog: Some(list.clone()),
        no_stall: true,
        time_scale: 100,
        align: if pick & 1 != 0 { 4096 } else { 0 },
        scale: if pick & 2 != 0 { 512 } else { 1 },
        chunked: pick & 4 != 0,
        ..Replay::default()
    };
    let _ = iobench::api::iolog::read_iolog(&list, 0, &opts);
    let _ = iobench::api::iolog::summarize_iolog(&list, 0, &opts);
    if let Ok(mut r) = iobench::api::iolog::LogReader::open(&list, 0, &opts) {
        for _ in 0..10_000 {
            match r.next_entry() {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
    }
});
