//! The order jobs start in: a job with `stonewall` (or whose `wait_for` names a job that
//! would otherwise run beside it) waits until every earlier job has finished, so jobs are
//! split into phases that run one after another, each phase's jobs all at once.

use crate::job::Job;

/// The run's phases: lists of job indexes that start together.
pub fn phases(jobs: &[Job]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let waits = job.exec.wait_for.as_deref().is_some_and(|name| {
            out.last()
                .is_some_and(|cur| cur.iter().any(|&j| jobs[j].name == name))
        });
        match out.last_mut() {
            Some(cur) if !job.exec.stonewall && !waits => cur.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}
