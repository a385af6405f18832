//! Table-driven tests of every value kind, including the errors, and a differential check of
//! size spellings against the real fio's own parse (`--debug=parse`).
use crate::common;

use iobench::api::job::Pattern;
use iobench::api::options::table::TimeUnit;
use iobench::api::options::value::*;
use iobench::api::stats::hist::PercentileList;

/// The one `percentile_list` parser (option validation and job resolution both use it).
fn parse_percentile_list(s: &str) -> Result<PercentileList, String> {
    PercentileList::parse(s)
}

const B: KbBase = KbBase::Binary;
const D: KbBase = KbBase::Decimal;
const K: u64 = 1024;

#[test]
fn sizes_follow_fios_units_under_both_kb_bases() {
    // (text, under kb_base=1024, under kb_base=1000), as fio 3.33 reads them.
    let table: &[(&str, u64, u64)] = &[
        ("0", 0, 0),
        ("512", 512, 512),
        ("4096b", 4096, 4096),
        ("4096B", 4096, 4096),
        ("1k", K, 1000),
        ("1K", K, 1000),
        ("1kb", K, 1000),
        ("1KB", K, 1000),
        ("1kB", K, 1000),
        ("1Ki", K, 1000),
        ("1ki", K, 1000),
        ("1KiB", 1000, K),
        ("1kib", 1000, K),
        ("4Mi", 4 * K * K, 4_000_000),
        ("1m", K * K, 1_000_000),
        ("1MB", K * K, 1_000_000),
        ("1MiB", 1_000_000, K * K),
        ("2g", 2 * K * K * K, 2_000_000_000),
        ("1GiB", 1_000_000_000, K * K * K),
        ("1t", K.pow(4), 1000u64.pow(4)),
        ("1TiB", 1000u64.pow(4), K.pow(4)),
        ("1p", K.pow(5), 1000u64.pow(5)),
        ("1PiB", 1000u64.pow(5), K.pow(5)),
        ("0x10", 16, 16),
        ("0X1f", 31, 31),
        (" 8k ", 8 * K, 8000),
        ("+5", 5, 5),
    ];
    for &(text, bin, dec) in table {
        assert_eq!(parse_size(text, B), Ok(bin), "{text} under 1024");
        assert_eq!(parse_size(text, D), Ok(dec), "{text} under 1000");
    }
}

#[test]
fn sizes_refuse_what_fio_would_misread() {
    for bad in [
        "",
        "k",
        "-5",
        "1.5k",
        "4x",
        "1kfoo",
        "5 k",
        "0x",
        "0x1k",
        "1e3",
        "1 2",
        "1kk",
        "1iB",
        "99999999999999999999",
        "16384p",
        "abc",
        "%",
    ] {
        let err = parse_size(bad, B).expect_err(bad);
        assert!(!err.is_empty(), "{bad}");
    }
    assert!(parse_size("1.5k", B).unwrap_err().contains("fraction"));
    assert!(parse_size("4x", B).unwrap_err().contains("unknown unit"));
}

#[test]
fn integers_take_hex_signs_and_size_suffixes() {
    let table: &[(&str, i64)] = &[
        ("0", 0),
        ("17", 17),
        ("-3", -3),
        ("+3", 3),
        ("0x20", 32),
        ("1k", 1024),
        (" 64 ", 64),
    ];
    for &(text, want) in table {
        assert_eq!(parse_int(text), Ok(want), "{text}");
    }
    assert_eq!(parse_int_kb("2k", D), Ok(2000));
    for bad in ["", "x", "1.0", "12abc", "0xg", "9223372036854775808", "--1"] {
        assert!(parse_int(bad).is_err(), "{bad}");
    }
}

#[test]
fn percentages_are_whole_and_at_most_100() {
    assert_eq!(parse_percent("20%"), Ok(20.0));
    assert_eq!(parse_percent("0%"), Ok(0.0));
    assert_eq!(parse_percent("100%"), Ok(100.0));
    for bad in ["101%", "12.5%", "%", "x%", "20", "-5%"] {
        assert!(parse_percent(bad).is_err(), "{bad}");
    }
    assert_eq!(
        parse_size_or_percent("80%", B),
        Ok(SizeOrPercent::Percent(80.0))
    );
    assert_eq!(
        parse_size_or_percent("256m", B),
        Ok(SizeOrPercent::Bytes(256 * K * K))
    );
    assert_eq!(
        parse_size_or_percent("10z", B),
        Ok(SizeOrPercent::Zones(10))
    );
    for bad in ["z", "1.5z", "xz", "250%", "1q"] {
        assert!(parse_size_or_percent(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn times_take_units_and_each_options_default_unit() {
    let table: &[(&str, TimeUnit, u64)] = &[
        ("10", TimeUnit::Sec, 10_000_000),
        ("10", TimeUnit::Msec, 10_000),
        ("10", TimeUnit::Usec, 10),
        ("10s", TimeUnit::Usec, 10_000_000),
        ("10S", TimeUnit::Usec, 10_000_000),
        ("10sec", TimeUnit::Usec, 10_000_000),
        ("500ms", TimeUnit::Sec, 500_000),
        ("500msec", TimeUnit::Sec, 500_000),
        ("100us", TimeUnit::Sec, 100),
        ("100usec", TimeUnit::Sec, 100),
        ("2m", TimeUnit::Sec, 120_000_000),
        ("2M", TimeUnit::Sec, 120_000_000),
        ("2min", TimeUnit::Sec, 120_000_000),
        ("2h", TimeUnit::Sec, 7_200_000_000),
        ("1d", TimeUnit::Sec, 86_400_000_000),
        ("0x10", TimeUnit::Usec, 16),
    ];
    for &(text, unit, want) in table {
        assert_eq!(parse_time_us(text, unit), Ok(want), "{text} {unit:?}");
    }
    for bad in [
        "",
        "s",
        "10k",
        "1.5s",
        "-5",
        "10 s",
        "99999999999999999999d",
    ] {
        assert!(parse_time_us(bad, TimeUnit::Sec).is_err(), "{bad}");
    }
}

#[test]
fn booleans_are_numbers_as_in_fio() {
    assert_eq!(parse_bool("1"), Ok(true));
    assert_eq!(parse_bool("0"), Ok(false));
    assert_eq!(parse_bool(" 1 "), Ok(true));
    assert_eq!(parse_bool("0x1"), Ok(true));
    for bad in ["2", "true", "yes", "", "-1", "1foo"] {
        assert!(parse_bool(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_flag(""), Ok(true));
    assert_eq!(parse_flag("0"), Ok(false));
    assert_eq!(parse_flag("2"), Ok(true));
    assert!(parse_flag("yes").is_err());
}

#[test]
fn size_lists_spread_over_read_write_trim_as_fio_does() {
    let k = |n: u64| Some(n * K);
    let table: &[(&str, [Option<u64>; 3])] = &[
        ("4k", [k(4), k(4), k(4)]),
        ("4k,8k", [k(4), k(8), k(8)]),
        ("4k,8k,16k", [k(4), k(8), k(16)]),
        (",8k", [None, k(8), k(8)]),
        ("4k,", [k(4), k(4), k(4)]),
        ("4k,,16k", [k(4), None, k(16)]),
        ("4k:8k", [k(4), k(8), k(8)]),
        ("4k-8k", [k(4), k(8), k(8)]),
    ];
    for (text, want) in table {
        assert_eq!(parse_size_list(text, B).as_ref(), Ok(want), "{text}");
    }
    for bad in ["", ",", "4k,8k,16k,32k", "4k,x", "1.5k"] {
        assert!(parse_size_list(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn ranges_swap_backwards_ends_and_spread_per_direction() {
    let r = |a: u64, b: u64| Some((a * K, b * K));
    let table: &[(&str, PerDir<(u64, u64)>)] = &[
        ("4k-512k", [r(4, 512), r(4, 512), r(4, 512)]),
        ("1k:4k", [r(1, 4), r(1, 4), r(1, 4)]),
        ("4k:1k", [r(1, 4), r(1, 4), r(1, 4)]),
        ("1k-4k,8k-32k", [r(1, 4), r(8, 32), r(8, 32)]),
        ("1k-4k,,8k-16k", [r(1, 4), None, r(8, 16)]),
    ];
    for (text, want) in table {
        assert_eq!(parse_range_list(text, B).as_ref(), Ok(want), "{text}");
    }
    for bad in [
        "4k",
        "",
        "1k-4k/8k-32k",
        "a-b",
        "1k-",
        "1k-2k,2k-3k,3k-4k,4k-5k",
    ] {
        assert!(parse_range_list(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn bssplit_fills_missing_shares_and_sorts_by_share() {
    let all = |v: Vec<(u64, u32)>| [Some(v.clone()), Some(v.clone()), Some(v)];
    assert_eq!(
        parse_bssplit("4k/10:64k/50:32k/40", B),
        Ok(all(vec![(4 * K, 10), (32 * K, 40), (64 * K, 50)]))
    );
    assert_eq!(
        parse_bssplit("4k/10:64k", B),
        Ok(all(vec![(4 * K, 10), (64 * K, 90)]))
    );
    assert_eq!(
        parse_bssplit("4k:8k", B),
        Ok(all(vec![(4 * K, 50), (8 * K, 50)]))
    );
    assert_eq!(parse_bssplit("4k/0", B), Ok(all(vec![(4 * K, 100)])));
    let two = parse_bssplit("4k/10:64k/90,8k", B).unwrap();
    assert_eq!(two[0], Some(vec![(4 * K, 10), (64 * K, 90)]));
    assert_eq!(two[1], Some(vec![(8 * K, 100)]));
    assert_eq!(two[2], Some(vec![(8 * K, 100)]));
    let skip_read = parse_bssplit(",8k/100", B).unwrap();
    assert_eq!(skip_read[0], None);
    for bad in [
        "",
        "4k/x",
        "4k/60:64k/60",
        "4k/101",
        "4k/10:foo/50",
        "0/100",
        "4k,4k,4k,4k",
    ] {
        assert!(parse_bssplit(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn float_lists_and_percentile_lists() {
    assert_eq!(
        parse_float_list("99:99.9:99.99"),
        Ok(vec![99.0, 99.9, 99.99])
    );
    assert_eq!(parse_percentile_list("50").map(|p| p.list), Ok(vec![50.0]));
    // Sorted, a zero ends the list, and the precision is the most decimals given.
    let p = parse_percentile_list("99.95:50%:0:10").unwrap();
    assert_eq!((p.list, p.precision), (vec![50.0, 99.95], 2));
    let twenty = (1..=20)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(":");
    assert!(parse_percentile_list(&twenty).is_ok());
    let many = (1..=21)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(":");
    for bad in ["", "99:abc", "101", "-1", "nan", "inf", "1::2", &many] {
        assert!(parse_percentile_list(bad).is_err(), "{bad}");
    }
}

#[test]
fn rw_takes_a_count_for_random_and_a_signed_size_for_sequential() {
    let table: &[(&str, Pattern, Option<SeqModifier>)] = &[
        ("read", Pattern::Read, None),
        ("randread:8", Pattern::RandRead, Some(SeqModifier::Count(8))),
        ("randrw:2", Pattern::RandRw, Some(SeqModifier::Count(2))),
        ("write:-8k", Pattern::Write, Some(SeqModifier::Skip(-8192))),
        ("write:4k", Pattern::Write, Some(SeqModifier::Skip(4096))),
        ("rw", Pattern::ReadWrite, None),
        (
            "readwrite:1m",
            Pattern::ReadWrite,
            Some(SeqModifier::Skip(1 << 20)),
        ),
        ("randread:", Pattern::RandRead, None),
        ("trimwrite", Pattern::TrimWrite, None),
        ("randtrimwrite", Pattern::RandTrimWrite, None),
    ];
    for &(text, pattern, modifier) in table {
        assert_eq!(
            parse_rw(text, B),
            Ok(RwSpec { pattern, modifier }),
            "{text}"
        );
    }
    for bad in [
        "READ",
        "",
        "randread:x",
        "randread:0",
        "write:foo",
        "sideways",
        "randread:-1",
    ] {
        assert!(parse_rw(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn distributions_check_their_parameters_as_fio_does() {
    assert_eq!(parse_distribution("random", B), Ok(Distribution::Random));
    assert_eq!(
        parse_distribution("zipf:1.2", B),
        Ok(Distribution::Zipf {
            theta: 1.2,
            center: None
        })
    );
    assert_eq!(
        parse_distribution("zipf", B),
        Ok(Distribution::Zipf {
            theta: 1.1,
            center: None
        })
    );
    assert_eq!(
        parse_distribution("pareto:0.9", B),
        Ok(Distribution::Pareto {
            h: 0.9,
            center: None
        })
    );
    assert_eq!(
        parse_distribution("normal:10:0.5", B),
        Ok(Distribution::Normal {
            dev: 10.0,
            center: Some(0.5)
        })
    );
    let zoned = parse_distribution("zoned:60/10:30/20:10/70", B).unwrap();
    let zs = |v: &[(u32, u64)]| -> Vec<ZoneSplit> {
        v.iter()
            .map(|&(access_perc, size)| ZoneSplit { access_perc, size })
            .collect()
    };
    let z = zs(&[(60, 10), (30, 20), (10, 70)]);
    assert_eq!(zoned, Distribution::Zoned([z.clone(), z.clone(), z]));
    let filled = parse_distribution("zoned:50/10:50", B).unwrap();
    let z = zs(&[(50, 10), (50, 90)]);
    assert_eq!(filled, Distribution::Zoned([z.clone(), z.clone(), z]));
    // fio reads a zone size of 0 as "not given" (it shares the rest), and a direction
    // left empty draws uniformly.
    let zero = parse_distribution("zoned:50/0:50/40,", B).unwrap();
    let z = zs(&[(50, 60), (50, 40)]);
    assert_eq!(zero, Distribution::Zoned([z, vec![], vec![]]));
    let abs = parse_distribution("zoned_abs:50/10m:50/90m", B).unwrap();
    let z = zs(&[(50, 10 << 20), (50, 90 << 20)]);
    assert_eq!(abs, Distribution::ZonedAbs([z.clone(), z.clone(), z]));
    for bad in [
        "zipf:1",
        "zipf:abc",
        "pareto:1.5",
        "pareto:0",
        "normal:100",
        "normal:10:2",
        "zoned:50/10:40/90",
        "zoned:50/60:50/60",
        "zoned",
        "gauss",
        "random:3",
        "",
    ] {
        assert!(parse_distribution(bad, B).is_err(), "{bad}");
    }
}

#[test]
fn kb_base_reads_only_1024_or_1000() {
    assert_eq!(KbBase::parse("1024"), Ok(KbBase::Binary));
    assert_eq!(KbBase::parse("1000"), Ok(KbBase::Decimal));
    assert!(KbBase::parse("512").is_err());
}

/// Runs fio once with one job per size spelling and reads back the byte count fio computed
/// for each (`--debug=parse` prints `out=N` after every value it parses).
fn fio_sizes(kb_base: &str, spellings: &[&str]) -> Option<Vec<u64>> {
    let mut cmd = common::fio()?;
    cmd.args([
        "--debug=parse",
        "--parse-only",
        &format!("--kb_base={kb_base}"),
    ]);
    for (i, s) in spellings.iter().enumerate() {
        cmd.arg(format!("--name=j{i}")).arg(format!("--size={s}"));
    }
    let out = common::run(cmd);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let mut values = Vec::new();
    let mut in_size = false;
    for line in text.lines() {
        if line.contains("__handle_option=size,") {
            in_size = true;
        } else if in_size && line.contains("out=") {
            let n = line.rsplit("out=").next().unwrap().trim();
            values.push(n.parse().expect("fio's out= value"));
            in_size = false;
        }
    }
    Some(values)
}

#[test]
fn sizes_agree_with_the_real_fio() {
    let spellings = [
        "1k", "1K", "1kb", "1KB", "1Ki", "1KiB", "1kib", "4Mi", "1MiB", "3m", "2g", "1GiB", "1t",
        "1TiB", "1p", "4096b", "0x10",
    ];
    for (kb, base) in [("1024", B), ("1000", D)] {
        let Some(fio) = fio_sizes(kb, &spellings) else {
            return;
        };
        assert_eq!(fio.len(), spellings.len(), "fio printed {fio:?}");
        for (s, want) in spellings.iter().zip(fio) {
            assert_eq!(parse_size(s, base), Ok(want), "{s} under kb_base={kb}");
        }
    }
}

use iobench::api::options::keywords::{eval, expand_env_with, replace_keywords, Machine};
use iobench::api::options::{lookup, make_opt, value::validate, Origin};

#[test]
fn env_variables_expand_like_fio() {
    let env = |name: &str| match name {
        "DIR" => Some("/mnt/x".to_string()),
        "N" => Some("4".to_string()),
        _ => None,
    };
    let table: &[(&str, &str)] = &[
        ("${DIR}", "/mnt/x"),
        ("${DIR}/f.${N}", "/mnt/x/f.4"),
        ("${UNSET}x", "x"),
        ("${}", "${}"),
        ("${DIR", "${DIR"),
        ("$DIR", "$DIR"),
        ("a${N}${N}b", "a44b"),
        ("", ""),
    ];
    for &(text, want) in table {
        assert_eq!(expand_env_with(text, env), want, "{text}");
    }
}

#[test]
fn keywords_and_arithmetic_work_out_as_bc_would() {
    let m = Machine {
        pagesize: 4096,
        mb_memory: 16000,
        ncpus: 8,
    };
    let table: &[(&str, &str)] = &[
        ("$ncpus", "8"),
        ("$pagesize", "4096"),
        ("$mb_memory", "16000"),
        ("$ncpus*2", "16"),
        ("$ncpus/3", "2"),
        ("$ncpus-10", "-2"),
        ("2*$ncpus+1", "17"),
        ("($ncpus+2)*3", "30"),
        ("($ncpus%3)+1", "3"),
        ("2^$ncpus-1", "255"),
        // fio works out arithmetic only when there is a + - * or /.
        ("$ncpus%3", "8%3"),
        (" $ncpus * 2 ", "16"),
        ("-$ncpus+1", "-7"),
        // Not arithmetic: replaced, left for the option's own parser to judge.
        ("$mb_memory*1k", "16000*1k"),
        ("file-$ncpus", "file-8"),
        // No keyword: untouched, even if it looks like arithmetic (fio does no math then).
        ("4*2", "4*2"),
        ("4k-8k", "4k-8k"),
    ];
    for &(text, want) in table {
        assert_eq!(replace_keywords(text, &m).as_deref(), Ok(want), "{text}");
    }
    for bad in [
        "$ncpus/0",
        "$ncpus+1%0",
        "($ncpus+1",
        "$ncpus*",
        "$ncpus^99+1",
    ] {
        assert!(replace_keywords(bad, &m).is_err(), "{bad}");
    }
    assert_eq!(eval("1+2*3"), Ok(7));
    assert_eq!(eval("(1+2)*3"), Ok(9));
    assert_eq!(eval("2^3^2"), Ok(512), "right-associative");
    assert_eq!(eval("7/2"), Ok(3));
    assert_eq!(eval("--3"), Ok(3));
    let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(
        eval(&deep).is_err(),
        "deep nesting is an error, not a stack overflow"
    );
    let minus = format!("{}1", "-".repeat(10_000));
    assert!(eval(&minus).is_err());
    assert!(eval("9223372036854775807+1").is_err());
    assert!(eval("").is_err());
    assert!(eval("1 2").is_err());
}

/// (option, value, valid?) through the one gate every option passes, for every value kind.
#[test]
fn every_value_kind_validates_through_the_option_table() {
    let table: &[(&str, Option<&str>, bool)] = &[
        // Int, with hex and suffixes, and its bounds
        ("iodepth", Some("32"), true),
        ("iodepth", Some("0x20"), true),
        ("iodepth", Some("1k"), true),
        ("iodepth", Some("-1"), false),
        ("iodepth", Some("many"), false),
        ("numjobs", Some("0"), true),
        ("nice", Some("-20"), true),
        ("nice", Some("20"), false),
        // Size
        ("size", Some("1GiB"), true),
        ("size", Some("20%"), true),
        ("size", Some("1.5g"), false),
        ("offset", Some("80%"), true),
        ("offset", Some("101%"), false),
        // SizeList, per direction
        ("bs", Some("4k,8k,16k"), true),
        ("bs", Some(",8k"), true),
        ("bs", Some("4k,8k,16k,32k"), false),
        ("bs", Some("4kk"), false),
        // RangeList
        ("bsrange", Some("4k-512k"), true),
        ("bsrange", Some("1k-4k,8k-32k"), true),
        ("bsrange", Some("4k"), false),
        // bssplit
        ("bssplit", Some("4k/10:64k/50:32k/40"), true),
        ("bssplit", Some("4k/50:8k/50,16k/100"), true),
        ("bssplit", Some("4k/80:8k/80"), false),
        // Time, each with its default unit
        ("runtime", Some("10"), true),
        ("runtime", Some("2m"), true),
        ("runtime", Some("10parsecs"), false),
        ("thinktime", Some("500"), true),
        ("ramp_time", Some("1s"), true),
        // Bool and flags
        ("direct", Some("1"), true),
        ("direct", Some("2"), false),
        ("direct", None, false),
        ("time_based", None, true),
        ("time_based", Some("1"), true),
        ("stonewall", None, true),
        ("new_group", None, true),
        ("group_reporting", None, true),
        // Choices, with modifiers
        ("rw", Some("randread:8"), true),
        ("rw", Some("write:-8k"), true),
        ("rw", Some("readwrite"), true),
        ("rw", Some("READ"), false),
        ("rw", Some("sideways"), false),
        ("kb_base", Some("1000"), true),
        ("kb_base", Some("1024"), true),
        ("kb_base", Some("1001"), false),
        ("unit_base", Some("0"), true),
        ("unit_base", Some("1"), true),
        ("unit_base", Some("8"), true),
        ("unit_base", Some("2"), false),
        ("random_distribution", Some("zipf:1.2"), true),
        ("random_distribution", Some("pareto:0.5"), true),
        ("random_distribution", Some("normal:10"), true),
        ("random_distribution", Some("zoned:50/5:30/15:20/"), true),
        ("random_distribution", Some("zipf:1"), false),
        ("random_distribution", Some("zipf:x"), false),
        ("random_distribution", Some("zoned:50/5:30/15"), false),
        // Float and float list
        ("percentile_list", Some("99:99.9:99.99"), true),
        ("percentile_list", Some("99:101"), false),
        ("percentile_list", Some("a:b"), false),
        // Text
        ("filename", Some("/dev/sdb"), true),
        ("filename", Some(""), false),
        ("write_bw_log", None, true),
        // ioengine: known names pass validation
        ("ioengine", Some("psync"), true),
        ("ioengine", Some("libhdfs"), true),
        ("ioengine", Some("bogus"), false),
        ("filesize", Some("1g"), true),
        ("filesize", Some("1k-4k"), true),
        ("filesize", Some("lots"), false),
    ];
    for &(name, value, ok) in table {
        let def = lookup(name).unwrap_or_else(|| panic!("{name} unknown"));
        assert_eq!(
            validate(def, value).is_ok(),
            ok,
            "{name}={value:?}: {:?}",
            validate(def, value)
        );
    }
}

#[test]
fn bad_values_name_option_value_and_expected_form() {
    let origin = Origin::command_line();
    let e = make_opt("bs", Some("4q"), &origin).unwrap_err().to_string();
    assert!(
        e.contains("bad value '4q' for option 'bs'") && e.contains("expected sizes"),
        "{e}"
    );
    let e = make_opt("rw", Some("randread:x"), &origin)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'rw'") && e.contains("randread:8"), "{e}");
    let e = make_opt("runtime", Some("5y"), &origin)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected a time"), "{e}");
    let e = make_opt("bsize", Some("4k"), &origin)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown option 'bsize'") && e.contains("did you mean"),
        "{e}"
    );
}

#[test]
fn float_lists_take_a_percent_sign_as_fio_does() {
    // fio reads a float with sscanf, so `50%` is 50: `latency_percentile=50%` and
    // `percentile_list=50%:99%` parse in fio 3.33, and in iobench as the same numbers.
    assert_eq!(parse_float_list("50%:99.5%").unwrap(), vec![50.0, 99.5]);
    assert_eq!(parse_float_list("50").unwrap(), vec![50.0]);
    assert!(parse_float_list("50%%").is_err());
    assert!(parse_float_list("abc").is_err());
    for arg in ["--latency_percentile=50%", "--percentile_list=50%:99%"] {
        let args = ["--name=x", "--latency_target=10ms", arg, "--parse-only"];
        let mut ib = common::iobench();
        ib.args(args);
        let ours = common::run(ib);
        assert!(
            ours.status.success(),
            "{arg}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        if let Some(mut fio) = common::fio() {
            fio.args(args);
            assert!(common::run(fio).status.success(), "fio refuses {arg}");
        }
    }
}
