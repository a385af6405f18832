//! `numa_cpu_nodes` and `numa_mem_policy`: where a job runs and where its memory comes
//! from on a NUMA machine, set with the raw `sched_setaffinity` and `set_mempolicy` system
//! calls (no libnuma), in the calls fio 3.33 makes through libnuma: the CPUs of the
//! listed nodes, then one memory policy (`default`, `prefer:N`, `bind:LIST`, `interleave[:LIST]`,
//! `local`) for the worker.

/// The kernel's memory policy modes (`MPOL_*` of linux/mempolicy.h).
const MPOL_PREFERRED: i64 = 1;
const MPOL_BIND: i64 = 2;
const MPOL_INTERLEAVE: i64 = 3;
const MPOL_LOCAL: i64 = 4;

use crate::job::numa::MemPolicy;

/// The CPUs of `nodes`, from sysfs.
fn node_cpus(nodes: &[usize]) -> std::io::Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for n in nodes {
        let list = std::fs::read_to_string(format!("/sys/devices/system/node/node{n}/cpulist"))
            .or_else(|e| {
                // Without NUMA in the kernel there is no node directory: node 0 is all.
                if *n == 0 {
                    std::fs::read_to_string("/sys/devices/system/cpu/online")
                } else {
                    Err(e)
                }
            })?;
        cpus.extend(crate::job::exec::parse_cpu_list(list.trim()).map_err(std::io::Error::other)?);
    }
    Ok(cpus)
}

/// Runs the calling worker on the CPUs of `nodes` (libnuma's numa_run_on_node_mask).
pub fn run_on_nodes(nodes: &[usize]) -> std::io::Result<()> {
    crate::affinity::pin_current_thread(&node_cpus(nodes)?)
}

/// Sets the calling worker's memory policy with set_mempolicy(2). `default` leaves the
/// inherited policy alone, as fio does.
pub fn set_policy(p: &MemPolicy) -> std::io::Result<()> {
    let (mode, nodes): (i64, &[usize]) = match p {
        MemPolicy::Default => return Ok(()),
        MemPolicy::Local => (MPOL_LOCAL, &[]),
        MemPolicy::Prefer(n) => (MPOL_PREFERRED, std::slice::from_ref(n)),
        MemPolicy::Bind(v) => (MPOL_BIND, v),
        MemPolicy::Interleave(v) => (MPOL_INTERLEAVE, v),
    };
    // A node mask of 1024 bits, as the kernel's MAX_NUMNODES allows at most.
    let mut mask = [0u64; 16];
    for &n in nodes.iter().filter(|&&n| n < 1024) {
        mask[n / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0u64)
    } else {
        (mask.as_ptr(), 1024 + 1)
    };
    // SAFETY: set_mempolicy reads at most maxnode-1 bits from the mask we own (or none
    // from a null mask) and changes only the calling thread's policy.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
