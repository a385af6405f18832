//! Where a job does its I/O: file names, directories, devices and their sizes.

use super::reader::Reader;
use crate::error::JobError;

/// The resolved file options.
#[derive(Debug, Clone)]
pub struct FileOpts {
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub filesize: Option<u64>,
}

impl FileOpts {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        Ok(FileOpts {
            filename: r.text("filename"),
            directory: r.text("directory"),
            filesize: r.size("filesize")?,
        })
    }
}
