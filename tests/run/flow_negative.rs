//! `flow` takes negative weights as fio 3.33 does (issue 24, item 4.3): fio stores the
//! weight unsigned, so -1 is 2^32 - 1 and the flow's total wraps. Two jobs in one flow
//! run for a fixed time with iobench and fio; the ratio of their I/O counts agrees.
use crate::common;

use common::{iobench, json_report, run};
use std::process::Command;

/// The two jobs' read counts with weights `a` and `b` in flow 1.
fn ios(mut c: Command, a: &str, b: &str) -> (f64, f64) {
    c.args([
        "--ioengine=null",
        "--size=100m",
        "--flow_id=1",
        "--time_based",
        "--runtime=1s",
        "--name=a",
        &format!("--flow={a}"),
        "--name=b",
        &format!("--flow={b}"),
        "--output-format=json",
    ]);
    let o = run(c);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_report(&o);
    let n = |i: usize| v["jobs"][i]["read"]["total_ios"].as_f64().unwrap();
    (n(0), n(1))
}

#[test]
fn negative_flow_weights_act_as_in_fio() {
    let Some(_) = common::fio() else { return };
    // -1 and 2: the total wraps to 1, so neither job is ever held back (about 1:1).
    // -5 and 3: the total is 2^32 - 2, so the second job is held (after its first I/O).
    // 1 and 8 (positive) for reference: 1:8.
    for (a, b, tol) in [("-1", "2", -1.0), ("-5", "3", 0.0), ("1", "8", 0.02)] {
        let (fa, fb) = ios(Command::new("fio"), a, b);
        let (ia, ib) = ios(iobench(), a, b);
        if tol < 0.0 {
            // Two free-running null jobs: their ratio is the scheduler's (fio's moved from
            // 0.70 to 0.97 between runs on a busy host, iobench's from 1.04 to 1.17), so it
            // is not compared with fio's; what matters is that neither is held to the 1:2
            // that honoured weights 1 and 2 give (within 2 %, as the 1:8 case below shows).
            let ri = ia / ib;
            assert!(
                ia > 1000.0 && ib > 1000.0 && (ri - 0.5).abs() > 0.1,
                "flow={a},{b}: iobench ratio {ri:.3} ({ia}/{ib}), fio {:.3} ({fa}/{fb})",
                fa / fb
            );
            continue;
        }
        if tol == 0.0 {
            // The second job is held back: after its first I/O (fio mostly; once fio's
            // let it do 14405 I/Os beside 3.08M, 0.5 %, on a loaded machine), where an
            // honoured 5:3 would give it 60 % of the first's.
            assert!(
                fb / fa < 0.01 && ib / ia < 0.01 && ib >= 1.0,
                "flow={a},{b}: fio {fa}/{fb}, iobench {ia}/{ib}"
            );
            assert!(fa > 1000.0 && ia > 1000.0, "fio {fa}, iobench {ia}");
            continue;
        }
        let (rf, ri) = (fa / fb, ia / ib);
        assert!(
            (rf - ri).abs() <= tol * rf,
            "flow={a},{b}: fio ratio {rf:.3} ({fa}/{fb}), iobench {ri:.3} ({ia}/{ib})"
        );
    }
}

#[test]
fn flow_weights_past_the_range_are_refused() {
    for v in ["-1001", "1001"] {
        let mut c = iobench();
        c.args(["--name=a", "--ioengine=null", "--size=1m"])
            .arg(format!("--flow={v}"));
        let o = run(c);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(e.contains("'flow'") && e.contains("-1000..=1000"), "{e}");
    }
}
