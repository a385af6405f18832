//! `numa_cpu_nodes` and `numa_mem_policy` as values: node lists and memory policies read
//! with fio's rules (which modes take nodes, `all`, online nodes only). The worker
//! applies them with `run::numa`.

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
/// joined by commas. Whether each node is online is checked before a run
/// ([`offline_node`]), not here: fio's `--parse-only` accepts a job file written for a
/// bigger machine (its examples/numa.fio names nodes 0-1), and its run refuses it.
pub fn parse_nodes(text: &str) -> Result<Vec<usize>, String> {
    if text.trim() == "all" {
        return Ok(online_nodes());
    }
    let nodes = crate::job::exec::parse_cpu_list(text)
        .map_err(|e| format!("'{text}' is not a node list ({e}; expected N, N-M, or all)"))?;
    if nodes.is_empty() {
        return Err(format!("'{text}' names no NUMA node"));
    }
    Ok(nodes)
}

/// The first of the job's NUMA nodes (`numa_cpu_nodes`, then `numa_mem_policy`'s) that
/// this machine does not have online, as the message a run stops with.
pub fn offline_node(cpu_nodes: Option<&[usize]>, policy: Option<&MemPolicy>) -> Option<String> {
    let online = online_nodes();
    let policy_nodes: Option<Vec<usize>> = match policy {
        Some(MemPolicy::Prefer(n)) => Some(vec![*n]),
        Some(MemPolicy::Bind(v) | MemPolicy::Interleave(v)) => Some(v.clone()),
        _ => None,
    };
    let check = |option: &str, nodes: &[usize]| {
        let bad = nodes.iter().find(|n| !online.contains(n))?;
        Some(format!(
            "{option}: node {bad} is not online (this machine has nodes {})",
            join(&online)
        ))
    };
    cpu_nodes
        .and_then(|n| check("numa_cpu_nodes", n))
        .or_else(|| policy_nodes.and_then(|n| check("numa_mem_policy", &n)))
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
        // Syntax only here; the run refuses a node the machine does not have.
        assert_eq!(parse_nodes("4095"), Ok(vec![4095]));
        let msg = offline_node(Some(&[4095]), None).unwrap();
        assert!(
            msg.starts_with("numa_cpu_nodes: node 4095 is not online"),
            "{msg}"
        );
        let msg = offline_node(None, Some(&MemPolicy::Bind(vec![0, 4095]))).unwrap();
        assert!(msg.starts_with("numa_mem_policy: node 4095"), "{msg}");
        assert_eq!(offline_node(Some(&[0]), Some(&MemPolicy::Local)), None);
    }
}
