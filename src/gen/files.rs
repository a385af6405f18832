//! Which file the next I/O goes to (`file_service_type`): round robin, sequential, random,
//! or zipf/pareto/normal ranks, each file serviced for N I/Os in a row when `:N` is given.

use super::Generator;
use crate::job::workload::FileService;

/// The non-uniform services draw from `nr_files << SERVICE_SHIFT` ranges, as fio does.
pub(super) const SERVICE_SHIFT: u32 = 10;

impl Generator {
    /// fio's `get_next_file`: `None` when every file is done for this pass.
    pub(super) fn next_file(&mut self) -> Option<usize> {
        let n = self.files.len();
        if self.nr_done_files >= n {
            return None;
        }
        if let Some(f) = self.service_file.filter(|&f| !self.files[f].done) {
            if matches!(self.cfg.service, FileService::Sequential(_)) {
                return Some(f);
            }
            if self.service_left > 0 {
                self.service_left -= 1;
                return Some(f);
            }
        }
        let f = match self.cfg.service {
            FileService::RoundRobin(_) | FileService::Sequential(_) => {
                let start = self.next_file;
                let mut found = None;
                loop {
                    let f = self.next_file;
                    self.next_file = (self.next_file + 1) % n;
                    if !self.files[f].done {
                        found = Some(f);
                        break;
                    }
                    if self.next_file == start {
                        break;
                    }
                }
                found?
            }
            _ => loop {
                let f = self.random_fileno();
                if f < n && !self.files[f].done {
                    break f;
                }
            },
        };
        self.service_file = Some(f);
        self.service_left = self.cfg.service_nr.saturating_sub(1);
        Some(f)
    }

    fn random_fileno(&mut self) -> usize {
        let n = self.files.len() as u64;
        match self.cfg.service {
            FileService::Zipf { .. } => {
                self.rng.file_zipf.as_mut().map_or(0, |z| z.next_zipf()) as usize >> SERVICE_SHIFT
            }
            FileService::Pareto { .. } => {
                self.rng.file_zipf.as_mut().map_or(0, |z| z.next_pareto()) as usize >> SERVICE_SHIFT
            }
            FileService::Normal { .. } => {
                self.rng.file_gauss.as_mut().map_or(0, |g| g.next()) as usize >> SERVICE_SHIFT
            }
            _ => self.rng.next_file.scaled(n) as usize,
        }
    }
}
