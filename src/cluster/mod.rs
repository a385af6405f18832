//! Many hosts in one run, on MPI: `mpirun -np N iobench job.fio` runs the job on every
//! rank, starts each phase on all ranks together, and rank 0 prints one report with each
//! host's jobs and an exact "All clients" total (see `report::clients`).
//!
//! This module is always built: it tells whether the process was started by an MPI
//! launcher, makes the file names of each rank its own, and holds the MPI-free parts of
//! the runner. The MPI calls themselves are in `mpi` (cargo feature `mpi`): a build
//! without it refuses to run under mpirun rather than running N unsynchronised copies
//! that would each print a report and overwrite each other's files.

#[cfg(feature = "mpi")]
pub mod mpi;
pub mod names;

/// The world size an MPI launcher gave this process, from the environment variables
/// Open MPI (`OMPI_COMM_WORLD_SIZE`) and PMI-based launchers (`PMI_SIZE`, with
/// `PMI_RANK`) set; `None` when not launched by one.
pub fn launcher_size() -> Option<u32> {
    let get = |k: &str| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
    };
    get("OMPI_COMM_WORLD_SIZE")
        .or_else(|| get("PMI_SIZE").filter(|_| std::env::var_os("PMI_RANK").is_some()))
        .or_else(|| get("PMIX_SIZE"))
}

/// (Used by the MPI runner only; without the `mpi` feature nothing calls this.)
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
/// The flags of a cluster run, taken out of the arguments before fio's parser sees them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterArgs {
    /// `--rotate-ranks`: read phases read the files another rank wrote (IOR's -C).
    pub rotate: bool,
    /// `--sync-start=clock`: after the barrier, every rank waits for a wall-clock time
    /// rank 0 names, instead of starting as it leaves the barrier (`barrier`, the default).
    pub clock_start: bool,
}

/// True for the flags only an MPI run takes.
fn is_cluster_flag(a: &str) -> bool {
    a == "--rotate-ranks" || a.starts_with("--sync-start")
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
/// Removes the cluster flags from `args` and returns them; a bad `--sync-start` value is
/// an error naming it and the accepted ones.
pub fn take_args(args: &mut Vec<String>) -> Result<ClusterArgs, String> {
    let mut out = ClusterArgs::default();
    let mut bad = None;
    args.retain(|a| {
        if a == "--rotate-ranks" {
            out.rotate = true;
        } else if let Some(v) = a.strip_prefix("--sync-start") {
            match v {
                "=clock" => out.clock_start = true,
                "=barrier" => out.clock_start = false,
                _ => {
                    bad = Some(format!(
                        "bad value '{}' for --sync-start: expected --sync-start=barrier or \
                         --sync-start=clock",
                        v.trim_start_matches('=')
                    ))
                }
            }
        } else {
            return true;
        }
        false
    });
    match bad {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What a build without MPI does when a launcher started it with more than one rank: an
/// error text to print (then exit non-zero), or `None` to run as usual.
pub fn refuse_without_mpi(args: &[String]) -> Option<String> {
    refusal(args, launcher_size(), cfg!(feature = "mpi"))
}

/// [`refuse_without_mpi`] for a launcher's rank count `size` and a build `with_mpi` or
/// not (apart, so that an MPI build's tests check the other build's refusal too).
fn refusal(args: &[String], size: Option<u32>, with_mpi: bool) -> Option<String> {
    let n = size.filter(|&n| n > 1);
    let flag = args.iter().find(|a| is_cluster_flag(a));
    if with_mpi || (n.is_none() && flag.is_none()) {
        return None;
    }
    Some(match n {
        Some(n) => format!(
            "started by an MPI launcher with {n} ranks, but this iobench was built without \
             MPI support: rebuild with `cargo build --release --features mpi` (needs Open MPI \
             and libclang), or run it without mpirun"
        ),
        None => format!(
            "{}: this iobench was built without MPI support (cargo feature `mpi`)",
            flag.map(String::as_str).unwrap_or_default()
        ),
    })
}

/// True when this process is one rank of an MPI run (launched with more than one rank, or
/// given a cluster flag), or must refuse to be one (a build without MPI).
pub fn is_rank(args: &[String]) -> bool {
    refuse_without_mpi(args).is_some()
        || (cfg!(feature = "mpi")
            && (launcher_size().is_some_and(|n| n > 1) || args.iter().any(|a| is_cluster_flag(a))))
}

/// Entry point from `main` for a process `is_rank` is true of: runs the rank, or refuses
/// to; returns the exit status. `help` is `iobench --help`'s text (the command table's,
/// above this module), printed by rank 0 when asked.
pub fn main(args: &[String], help: fn() -> String) -> u8 {
    if let Some(msg) = refuse_without_mpi(args) {
        eprintln!("iobench: {msg}");
        return 1;
    }
    #[cfg(feature = "mpi")]
    {
        mpi::run(args.to_vec(), help)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = help;
        1
    }
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
/// This host's name (the UTS name: each UTS namespace has its own).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is valid for its length; gethostname writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
/// Wall-clock nanoseconds since the epoch (CLOCK_REALTIME): what ranks on different hosts
/// agree a start time in, as far as their clocks are synchronised.
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
/// Sleeps until the wall clock reads `at_ns`, the last stretch spinning so that ranks
/// leave within microseconds of it; returns the time it actually left.
pub fn sleep_until(at_ns: u64) -> u64 {
    loop {
        let now = realtime_ns();
        if now >= at_ns {
            return now;
        }
        let left = at_ns - now;
        if left > 200_000 {
            std::thread::sleep(std::time::Duration::from_nanos(left - 150_000));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_mpi_refuses_ranks_and_cluster_flags() {
        let job: Vec<String> = vec!["--name=x".into()];
        let msg = refusal(&job, Some(4), false).expect("4 ranks refused");
        assert!(
            msg.contains("4 ranks") && msg.contains("--features mpi"),
            "{msg}"
        );
        let rotate: Vec<String> = vec!["--rotate-ranks".into(), "--name=x".into()];
        let msg = refusal(&rotate, None, false).expect("a cluster flag refused");
        assert!(msg.starts_with("--rotate-ranks:"), "{msg}");
        // One rank, no launcher, or a build with MPI: nothing to refuse.
        assert_eq!(refusal(&job, Some(1), false), None);
        assert_eq!(refusal(&job, None, false), None);
        assert_eq!(refusal(&rotate, Some(4), true), None);
    }

    #[test]
    fn rotate_flag_is_taken_out() {
        let mut a: Vec<String> = ["--rotate-ranks", "job.fio", "--output-format=json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = take_args(&mut a).unwrap();
        assert!(c.rotate && !c.clock_start);
        assert_eq!(a, vec!["job.fio", "--output-format=json"]);
        let mut a = vec!["--sync-start=clock".to_string()];
        assert!(take_args(&mut a).unwrap().clock_start);
        let mut a = vec!["--sync-start=never".to_string()];
        let e = take_args(&mut a).unwrap_err();
        assert!(
            e.contains("'never'") && e.contains("--sync-start=clock"),
            "{e}"
        );
    }

    #[test]
    fn sleep_until_leaves_at_the_time() {
        let at = realtime_ns() + 3_000_000;
        let left = sleep_until(at);
        assert!(left >= at && left - at < 2_000_000, "late by {}", left - at);
    }
}
