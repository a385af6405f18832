//! `numa_cpu_nodes` and `numa_mem_policy`: where a job runs and where its memory comes
//! from on a NUMA machine, set with the raw `sched_setaffinity` and `set_mempolicy` system
//! calls (no libnuma), in the calls fio 3.33 makes through libnuma: the CPUs of the
//! listed nodes, then one memory policy (default, prefer:N, bind:LIST, interleave[:LIST],
//! local) for the worker.

/// The kernel's memory policy modes (`MPOL_*` of linux/mempolicy.h).
const MPOL_PREFERRED: i64 = 1;
const MPOL_BIND: i64 = 2;
const MPOL_INTERLEAVE: i64 = 3;
const MPOL_LOCAL: i64 = 4;

/// A resolved `numa_mem_policy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemPolicy {
    Default,
    Prefer(usize),
    Bind(Vec<usize>),
    Interleave(Vec<usize>),
    Local,
}

/// The NUMA nodes this machine has online (from sysfs); node 0 alone when sysfs has no
/// node directory (a kernel without NUMA).
pub fn online_nodes() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/node/online")
        .ok()
        .and_then(|s| crate::job::exec::parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

/// Reads a node list as libnuma does for these options: `all`, or numbers and ranges
/// joined by commas, each an online node. The error names the value and the nodes there are.
pub fn parse_nodes(text: &str) -> Result<Vec<usize>, String> {
    let online = online_nodes();
    if text.trim() == "all" {
        return Ok(online);
    }
    let nodes = crate::job::exec::parse_cpu_list(text)
        .map_err(|e| format!("'{text}' is not a node list ({e}; expected N, N-M, or all)"))?;
    if nodes.is_empty() {
        return Err(format!("'{text}' names no NUMA node"));
    }
    if let Some(bad) = nodes.iter().find(|n| !online.contains(n)) {
        return Err(format!(
            "'{text}': node {bad} is not online (this machine has nodes {})",
            join(&online)
        ));
    }
    Ok(nodes)
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads `numa_mem_policy`: `MODE[:NODES]`, with fio's rules on which modes take nodes.
pub fn parse_policy(text: &str) -> Result<MemPolicy, String> {
    let (mode, nodes) = match text.split_once(':') {
        Some((m, n)) => (m, Some(n)),
        None => (text, None),
    };
    match (mode, nodes) {
        ("default", None) => Ok(MemPolicy::Default),
        ("local", None) => Ok(MemPolicy::Local),
        ("default" | "local", Some(_)) => Err(format!("'{text}': no node list for '{mode}'")),
        ("prefer", Some(n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(MemPolicy::Prefer(parse_nodes(n)?[0]))
        }
        ("prefer", Some(_)) => Err(format!("'{text}': one node only for 'prefer'")),
        ("prefer", None) => Err(format!("'{text}': one node is needed for 'prefer'")),
        ("bind", Some(n)) => Ok(MemPolicy::Bind(parse_nodes(n)?)),
        ("bind", None) => Err(format!("'{text}': a node list is needed for 'bind'")),
        ("interleave", n) => Ok(MemPolicy::Interleave(parse_nodes(n.unwrap_or("all"))?)),
        _ => Err(format!(
            "'{text}': the policy is one of default, prefer, bind, interleave, local"
        )),
    }
}

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
    let cpus = node_cpus(nodes)?;
    // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: c is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; set is a valid cpu_set_t of that size.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_as_fio_reads_them() {
        assert_eq!(parse_policy("local"), Ok(MemPolicy::Local));
        assert_eq!(parse_policy("default"), Ok(MemPolicy::Default));
        assert_eq!(parse_policy("prefer:0"), Ok(MemPolicy::Prefer(0)));
        assert_eq!(parse_policy("bind:0"), Ok(MemPolicy::Bind(vec![0])));
        assert_eq!(
            parse_policy("interleave"),
            Ok(MemPolicy::Interleave(online_nodes()))
        );
        for bad in [
            "bind",
            "prefer",
            "prefer:0-1",
            "local:0",
            "spread:0",
            "bind:x",
        ] {
            assert!(parse_policy(bad).is_err(), "{bad}");
        }
        assert!(parse_nodes("4095").is_err());
    }
}
