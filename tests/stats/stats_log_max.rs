//! log_max_value: each averaged window of a latency log carries its largest sample, so the
//! worst I/O of the run shows up in the log exactly as the report's clat max.

use crate::common;

#[test]
fn log_max_value_logs_the_worst_latency_of_each_window() {
    let dir = common::scratch("log_max_value");
    let prefix = dir.join("j");
    let mut c = common::iobench();
    c.args([
        "--name=j",
        "--ioengine=null",
        "--rw=randread",
        "--size=64m",
        "--thread",
        "--log_avg_msec=20",
        "--log_max_value=1",
        "--output-format=json",
    ])
    .arg(format!("--write_lat_log={}", prefix.display()));
    let out = common::run_ok(c);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let clat_max = doc["jobs"][0]["read"]["clat_ns"]["max"].as_u64().unwrap();
    let log = std::fs::read_to_string(format!("{}_clat.1.log", prefix.display())).unwrap();
    let logged_max = log
        .lines()
        .map(|l| l.split(',').nth(1).unwrap().trim().parse::<u64>().unwrap())
        .max()
        .expect("samples");
    // Windows of means would sit far below the single worst I/O of 16384.
    assert_eq!(logged_max, clat_max, "{log}");
}
