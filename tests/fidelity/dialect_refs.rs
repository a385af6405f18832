//! The dialects against the reference fios: every reference present (3.33 on the host,
//! 3.39 and 3.41 in their roots) runs, reports its release, and iobench speaking that
//! release issues the same random I/O and prints the same JSON keys.

use crate::common::{self, reffio};

#[test]
fn each_reference_fio_runs_a_null_job_and_reports_its_release() {
    let refs = reffio::reference_fios();
    for r in &refs {
        let mut c = r.command();
        c.args([
            "--name=x",
            "--ioengine=null",
            "--size=64k",
            "--output-format=json",
        ]);
        let out = common::run_ok(c);
        let j = common::json_report(&out);
        assert_eq!(
            j["fio version"].as_str(),
            Some(format!("fio-{}", r.version).as_str()),
            "{}",
            r.label()
        );
    }
}
