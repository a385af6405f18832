//! Value parser: the first byte picks an option from the table, the rest is its value;
//! the typed parsers and keyword arithmetic see the value too.
#![no_main]

use iobench::api::options::{keywords, value, OPTIONS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(v) = std::str::from_utf8(rest) else {
        return;
    };
    let def = &OPTIONS[pick as usize % OPTIONS.len()];
    let _ = value::validate(def, Some(v));
    let _ = def.value_supported(v);
    let kb = if pick & 1 == 0 {
        value::KbBase::Binary
    } else {
        value::KbBase::Decimal
    };
    let _ = value::parse_size(v, kb);
    let _ = value::parse_int_kb(v, kb);
    let _ = value::parse_size_or_percent(v, kb);
    let _ = value::parse_size_list(v, kb);
    let _ = value::parse_range_list(v, kb);
    let _ = value::parse_bssplit(v, kb);
    let _ = value::parse_rw(v, kb);
    let _ = value::parse_distribution(v, kb);
    let _ = value::parse_percent(v);
    let _ = value::parse_bool(v);
    let _ = value::parse_flag(v);
    let _ = value::parse_float_list(v);
    let _ = iobench::api::stats::hist::PercentileList::parse(v);
    let _ = keywords::eval(v);
    let m = keywords::Machine {
        pagesize: 4096,
        mb_memory: 16384,
        ncpus: 8,
    };
    let _ = keywords::replace_keywords(v, &m);
    // A one-job file with this option, through the resolver.
    let text = format!("[f]\n{}={}\n", def.name, v.replace('\n', " "));
    let mut globals = Vec::new();
    if let Ok(jobs) = iobench::api::options::jobfile::parse_str(&text, "fuzz.fio", &mut globals) {
        for job in &jobs {
            let _ = iobench::api::job::resolve(job);
        }
    }
});
