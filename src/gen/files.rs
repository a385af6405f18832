//! Which file the next I/O goes to (`file_service_type`): round robin, sequential, random,
//! or zipf/pareto/normal ranks, each file serviced for N I/Os in a row when `:N` is given.

use super::{FileEvent, Generator};
use crate::job::workload::FileService;

/// The outcome of one try at picking a file.
enum Pick {
    File(usize),
    /// Every file is done for this pass.
    AllDone,
    /// The file picked is not open and `openfiles` are: try again.
    Busy,
}

/// The non-uniform services draw from `nr_files << SERVICE_SHIFT` ranges, as fio does.
pub(super) const SERVICE_SHIFT: u32 = 10;

impl Generator {
    /// fio's `get_next_file`: `None` when every file is done for this pass. A file not
    /// open yet is opened only while fewer than `openfiles` are; otherwise fio's pick
    /// fails busy and is tried again (after a reap), which is what the loop does.
    pub(super) fn next_file(&mut self) -> Option<usize> {
        loop {
            match self.pick_file() {
                Pick::File(f) => return Some(f),
                Pick::AllDone => return None,
                Pick::Busy => {}
            }
        }
    }

    fn pick_file(&mut self) -> Pick {
        let n = self.files.len();
        if self.nr_done_files >= n {
            return Pick::AllDone;
        }
        // One open file served in turn (the usual job): it is every pick.
        if n == 1
            && self.files[0].open
            && !self.files[0].done
            && matches!(
                self.cfg.service,
                FileService::RoundRobin(_) | FileService::Sequential(_)
            )
        {
            self.service_file = Some(0);
            return Pick::File(0);
        }
        if let Some(f) = self.service_file.filter(|&f| self.files[f].open) {
            if matches!(self.cfg.service, FileService::Sequential(_)) {
                return Pick::File(f);
            }
            if self.service_left > 0 {
                self.service_left -= 1;
                return Pick::File(f);
            }
        }
        let f = match self.cfg.service {
            FileService::RoundRobin(_) | FileService::Sequential(_) => {
                let start = self.next_file;
                let mut found = None;
                loop {
                    let f = self.next_file;
                    // (next_file < n: a compare, not a division, per pick)
                    self.next_file = if self.next_file + 1 == n {
                        0
                    } else {
                        self.next_file + 1
                    };
                    if !self.files[f].done {
                        if !self.open_file(f) {
                            return Pick::Busy;
                        }
                        found = Some(f);
                        break;
                    }
                    if self.next_file == start {
                        break;
                    }
                }
                match found {
                    Some(f) => f,
                    None => return Pick::AllDone,
                }
            }
            _ => loop {
                let f = self.random_fileno();
                if f < n && !self.files[f].done {
                    if !self.open_file(f) {
                        return Pick::Busy;
                    }
                    break f;
                }
            },
        };
        self.service_file = Some(f);
        self.service_left = self.cfg.service_nr.saturating_sub(1);
        Pick::File(f)
    }

    /// Opens file `f` unless it is open; false when `openfiles` are open already.
    #[inline]
    fn open_file(&mut self, f: usize) -> bool {
        if self.files[f].open {
            return true;
        }
        if self.nr_open >= self.cfg.max_open {
            return false;
        }
        self.files[f].open = true;
        self.nr_open += 1;
        self.file_events.push_back(FileEvent::Opened(f));
        // fio resets a file as it opens it; for zones that recounts their data (out of
        // line, so this stays small enough to inline into every pick).
        if self.zbd.is_some() {
            self.zbd_file_reset(f);
        }
        true
    }

    /// Closes file `f` if it is open, telling the worker.
    pub(super) fn close_file(&mut self, f: usize) {
        if self.files[f].open {
            self.files[f].open = false;
            self.nr_open -= 1;
            self.file_events.push_back(FileEvent::Closed(f));
        }
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
