//! The state file (`state.json` in the output directory) that makes a PTS run resumable:
//! it records the test's settings and, per section, the purge, the preconditioning and
//! every finished round. It is rewritten (to a temporary file, then renamed) after each
//! step, so a Ctrl-C or a crash loses at most the step under way, and the same command
//! carries on from there: a purged target is not purged again and a finished round is
//! not run again, so the rounds and the determination are those of an uninterrupted run.

use super::plan::Settings;
use super::purge::{Method, Target};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The state file's name in the output directory.
pub const FILE: &str = "state.json";

/// The largest state file a resumed run reads: 256 MiB (the largest a run writes, host
/// idle recovery's 100000 bursts in each of its 10 segments, is about 170 MB).
pub const MAX_STATE_BYTES: u64 = 256 << 20;

/// One finished round of a section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Numbered from 1.
    pub number: usize,
    /// The tracking variable this round, in the section's measure.
    pub tracking: f64,
    /// The further tracking variables this round, in the section's `also_tracked` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<f64>,
    /// The round's time under I/O, summed over its workloads (the runs' own runtimes).
    pub runtime_s: f64,
    /// Bytes the round wrote.
    pub written: u64,
}

/// One finished burst of host idle recovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// The segment (an index into `plan::hir_segments`) and the burst in it, from 1.
    pub segment: usize,
    pub number: usize,
    pub iops: f64,
    pub runtime_s: f64,
    pub written: u64,
}

/// Where one section stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SectionState {
    pub name: String,
    /// How the target was purged, once it was.
    pub purge: Option<Method>,
    pub preconditioned: bool,
    pub rounds: Vec<Round>,
    /// No more rounds: steady (or not achieved after the last), or write saturation's
    /// limit reached.
    pub finished: bool,
    /// Host idle recovery's bursts after the rounds, in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bursts: Vec<Burst>,
}

/// The whole run's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub settings: Settings,
    pub target: Target,
    pub sections: Vec<SectionState>,
    /// How many times the run was started on this directory after the first (the report
    /// says so; the results do not depend on it).
    pub resumed: u32,
}

impl State {
    /// The state in `dir`: the one there when it holds this same test (counted as a
    /// resumption), a fresh one when there is none. A directory that holds another
    /// test, or other settings, is refused.
    pub fn open(
        dir: &Path,
        settings: &Settings,
        target: &Target,
        sections: &[String],
    ) -> Result<State, String> {
        let path = dir.join(FILE);
        // Read as pts wrote it: a regular file, not a link, FIFO or device, within a cap
        // and a count of values, before anything is purged or written.
        let text = crate::safefs::read_own(dir, Path::new(FILE), MAX_STATE_BYTES)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        match text {
            Some(text) => {
                let mut old: State =
                    crate::present::results::parse_doc(String::from_utf8_lossy(&text).trim_start())
                        .and_then(serde_json::from_value)
                        .map_err(|e| format!("{}: not a pts state file: {e}", path.display()))?;
                if &old.settings != settings || old.target.path != target.path {
                    return Err(format!(
                        "{} holds a pts run with other settings or another target ({} {} on {}); \
                         give another -o DIR, or the same options to resume it",
                        dir.display(),
                        old.settings.test.name(),
                        serde_json::to_string(&old.settings).unwrap_or_default(),
                        old.target.path
                    ));
                }
                old.resumed += 1;
                Ok(old)
            }
            None => Ok(State {
                settings: settings.clone(),
                target: target.clone(),
                sections: sections
                    .iter()
                    .map(|n| SectionState {
                        name: n.clone(),
                        ..Default::default()
                    })
                    .collect(),
                resumed: 0,
            }),
        }
    }

    /// Writes the state to `dir`, replacing the last one whole.
    pub fn save(&self, dir: &Path) -> Result<(), String> {
        let path: PathBuf = dir.join(FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())? + "\n";
        crate::safefs::replace(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::pts::plan::{Profile, Test};
    use crate::study::pts::purge::TargetKind;

    #[test]
    fn a_saved_state_reopens_as_a_resumption_and_other_settings_are_refused() {
        let dir = std::env::temp_dir().join(format!("pts-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let settings = Settings {
            test: Test::Latency,
            profile: Profile::Client,
            threads: 1,
            qd: 1,
            engine: "psync".into(),
            capacity: 1 << 20,
            round_ms: 100,
            max_rounds: 25,
            wsat_limit_s: 10,
            purge: true,
            hir_burst_ms: 50,
            hir_bursts: 2,
        };
        let target = Target {
            path: "/x".into(),
            kind: TargetKind::File,
            size: 1 << 20,
        };
        let mut s = State::open(&dir, &settings, &target, &["latency".into()]).unwrap();
        assert_eq!(s.resumed, 0);
        s.sections[0].purge = Some(Method::Recreate);
        s.sections[0].rounds.push(Round {
            number: 1,
            tracking: 0.25,
            also: vec![],
            runtime_s: 0.9,
            written: 4096,
        });
        s.save(&dir).unwrap();
        let again = State::open(&dir, &settings, &target, &["latency".into()]).unwrap();
        assert_eq!(again.sections, s.sections);
        assert_eq!(again.resumed, 1);
        let mut other = settings.clone();
        other.qd = 4;
        let e = State::open(&dir, &other, &target, &[]).unwrap_err();
        assert!(e.contains("other settings"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
