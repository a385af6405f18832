//! A build without the `mpi` feature started by an MPI launcher with several ranks says
//! so and exits non-zero, instead of running N unsynchronised copies of the job.
//! (A build with `mpi`, as CI's, checks the refusal's text in src/cluster's unit tests.)

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_under_mpirun() {
    use std::process::Command;
    let d = std::env::temp_dir().join(format!("iobench-refuse-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let _gone = crate::common::Gone(d.clone());
    let bin = env!("CARGO_BIN_EXE_iobench");
    let args = ["--name=x", "--ioengine=null", "--size=1m"];
    for (k, v) in [("OMPI_COMM_WORLD_SIZE", "4"), ("PMI_SIZE", "2")] {
        let o = Command::new(bin)
            .args(args)
            .current_dir(&d)
            .env(k, v)
            .env("PMI_RANK", "0")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{k}");
        assert!(err.contains("without MPI support"), "{err}");
        assert!(err.contains("--features mpi"), "{err}");
        assert!(o.stdout.is_empty());
    }
    // One rank, or no launcher: a plain run.
    let o = Command::new(bin)
        .args(args)
        .current_dir(&d)
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(bin)
        .args(["--rotate-ranks", "--name=x", "--ioengine=null", "--size=1m"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rotate-ranks"));
}
