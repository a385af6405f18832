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
