//! What a job reports: grouping, percentiles, logs.

use super::reader::Reader;
use crate::error::JobError;

/// The resolved reporting options.
#[derive(Debug, Clone)]
pub struct ReportOpts {
    pub group_reporting: bool,
}

impl ReportOpts {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        Ok(ReportOpts {
            group_reporting: r.bool("group_reporting")?,
        })
    }
}
