//! fio's engines iobench does not run, each with why and what it would take. A job naming
//! one is refused with that reason; `--enghelp` lists them. Their options are declared here
//! (or in the file of the engine that will implement them) so that `--enghelp=ENGINE`
//! still shows fio's option list, and each option is refused as not supported yet.

use super::spec::Spec;
use crate::defs::FioRelease;
use crate::defs::{opt, Category as C, Kind as K, OptDef};

/// fio's engines that a release after 3.33 removed, with that release (fio's git history:
/// `git log --diff-filter=D -- engines/`, `git tag --contains`): in a dialect from that
/// release on, `ioengine=` refuses them as that fio would not know them.
pub static REMOVED: &[(&str, FioRelease)] = &[
    ("pmemblk", FioRelease::V3_34),
    ("librpma_apm_client", FioRelease::V3_38),
    ("librpma_apm_server", FioRelease::V3_38),
    ("librpma_gpspm_client", FioRelease::V3_38),
    ("librpma_gpspm_server", FioRelease::V3_38),
];

/// The release that removed fio's engine `name`, if one did.
pub fn removed_in(name: &str) -> Option<FioRelease> {
    REMOVED.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

const CMD_TYPE_CHOICES: &[(&str, &str)] = &[("nvme", "NVMe passthrough")];

const VERB_CHOICES: &[(&str, &str)] = &[
    ("write", "RDMA write"),
    ("read", "RDMA read"),
    ("send", "send"),
    ("recv", "receive"),
];

pub const VOLUME: OptDef = opt("volume", K::Str, "The GlusterFS volume")
    .cat(C::Engine)
    .engines(&["gfapi", "gfapi_async"])
    .not_yet();

pub const BRICK: OptDef = opt("brick", K::Str, "The GlusterFS brick to connect to")
    .cat(C::Engine)
    .engines(&["gfapi", "gfapi_async"])
    .not_yet();

pub const SINGLE_INSTANCE: OptDef = opt(
    "single-instance",
    K::Bool,
    "Use one GlusterFS connection for all jobs",
)
.cat(C::Engine)
.engines(&["gfapi", "gfapi_async"])
.not_yet();

/// io_uring_cmd's kind of command (NVMe, the only one); fio's io_uring engine takes its
/// value and ignores it, and so does iobench's, so that job files written for either
/// parse alike.
pub const CMD_TYPE: OptDef = opt(
    "cmd_type",
    K::Choice(CMD_TYPE_CHOICES),
    "The kind of passthrough command",
)
.def("nvme")
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const BINDNAME: OptDef = opt("bindname", K::Str, "The local address to bind to")
    .def("")
    .cat(C::Engine)
    .engines(&["rdma"])
    .not_yet();

pub const VERB: OptDef = opt("verb", K::Choice(VERB_CHOICES), "The RDMA operation to do")
    .alias(&["proto"])
    .def("write")
    .cat(C::Engine)
    .engines(&["rdma"])
    .not_yet();

pub const CLUSTERNAME: OptDef = opt("clustername", K::Str, "The Ceph cluster name")
    .cat(C::Engine)
    .engines(&["rados", "rbd"])
    .not_yet();

pub const RBDNAME: OptDef = opt("rbdname", K::Str, "The RBD image name")
    .cat(C::Engine)
    .engines(&["rbd"])
    .not_yet();

pub const POOL: OptDef = opt("pool", K::Str, "The Ceph pool")
    .cat(C::Engine)
    .engines(&["rados", "rbd"])
    .not_yet();

pub const CLIENTNAME: OptDef = opt("clientname", K::Str, "The Ceph client name")
    .cat(C::Engine)
    .engines(&["rados", "rbd"])
    .not_yet();

pub const CONF: OptDef = opt("conf", K::Str, "The Ceph configuration file")
    .def("/etc/ceph/ceph.conf")
    .cat(C::Engine)
    .engines(&["rados"])
    .not_yet();

pub const BUSY_POLL: OptDef = opt("busy_poll", K::Bool, "Spin while waiting for completions")
    .def("0")
    .cat(C::Engine)
    .engines(&["rados", "rbd"])
    .not_yet();

pub const TOUCH_OBJECTS: OptDef = opt(
    "touch_objects",
    K::Bool,
    "Create the objects before starting",
)
.def("1")
.cat(C::Engine)
.engines(&["rados"])
.not_yet();

/// Needs a RAM-backed persistent memory device, absent here.
const NO_PMEM: &str = "needs persistent memory (a DAX-mounted file system or a /dev/dax \
                       device) and PMDK; this machine has neither";

/// The engines fio 3.33 has that iobench refuses, in fio's `--enghelp` order.
pub const SPECS: &[Spec] = &[
    Spec::refused(
        "gfapi",
        "GlusterFS library, synchronous",
        "needs a GlusterFS volume and libgfapi; no cluster is reachable here",
    )
    .options(&[VOLUME, BRICK, SINGLE_INSTANCE]),
    Spec::refused(
        "gfapi_async",
        "GlusterFS library, asynchronous",
        "needs a GlusterFS volume and libgfapi; no cluster is reachable here",
    )
    .options(&[VOLUME, BRICK, SINGLE_INSTANCE]),
    Spec::refused(
        "rdma",
        "RDMA reads, writes, sends and receives",
        "needs RDMA hardware (InfiniBand, RoCE or iWARP) and libibverbs/librdmacm",
    )
    .options(&[super::net::HOSTNAME, BINDNAME, super::net::PORT, VERB]),
    Spec::refused(
        "rados",
        "Ceph RADOS objects",
        "needs a Ceph cluster and librados; no cluster is reachable here",
    )
    .options(&[
        CLUSTERNAME,
        POOL,
        CLIENTNAME,
        CONF,
        BUSY_POLL,
        TOUCH_OBJECTS,
    ])
    .hidden(),
    Spec::refused(
        "rbd",
        "Ceph RADOS block devices",
        "needs a Ceph cluster with an RBD image and librbd; no cluster is reachable here",
    )
    .options(&[CLUSTERNAME, RBDNAME, POOL, CLIENTNAME, BUSY_POLL]),
    Spec::refused("pmemblk", "PMDK libpmemblk", NO_PMEM),
    Spec::refused("dev-dax", "a DAX character device", NO_PMEM),
    Spec::refused("libpmem", "PMDK libpmem", NO_PMEM),
    Spec::refused(
        "external",
        "an engine loaded from a shared object (external:path)",
        "loads a C engine built against fio's internal structures, which iobench does not have",
    ),
];
