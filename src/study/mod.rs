//! Studies: what people do around single runs. `sweep` runs a job over axes of options,
//! `compare` repeats jobs and compares them with their noise (or compares result files,
//! fio's included, or runs one side with fio itself: `--tool`), `slo` finds the highest arrival rate that meets latency targets, `quick` is KDiskMark's one-screen standard test. Each builds jobs and
//! calls the same in-process run a plain run uses (`crate::session`), and reads results
//! back as data (`results`).

pub mod axis;
pub mod compare;
pub mod estimate;
pub mod history;
pub mod progress;
pub mod pts;
pub mod quick;
pub mod slo;
pub mod stats;
pub mod sweep;
pub mod table;
pub mod tool;
pub mod vocab;
