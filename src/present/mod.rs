//! Seeing a run: readers of the results and of the collector's snapshots, never writers
//! into the hot path. `html` draws `iobench report`'s HTML page (SVG charts from `svg`)
//! from result files, sweeps, comparisons and logs, read by `results` (the studies write
//! them); `pts_page` draws an `iobench pts` directory's report pages, `http_page` a run's http
//! engine statistics (`iobench_http`), `png` a chart's SVG as a PNG (`report --png`). `jsonlines` writes each interval's own numbers as JSON Lines (`--live`),
//! `metrics` serves them to Prometheus (`--metrics`), `window` derives an interval from
//! two cumulative snapshots.

pub mod doc;
pub mod html;
pub mod http_page;
pub mod jsonlines;
pub mod metrics;
pub mod outputs;
pub mod png;
pub mod pts_page;
pub mod results;
pub mod svg;
pub mod window;

use crate::cli::CliConfig;

/// Starts what `cfg` asks for (`--live`, `--metrics`) for the next run: opens the live
/// file, binds the endpoint, and registers them with the collector. An error (a file
/// that cannot be created, an address that cannot be bound) comes before any job runs.
pub fn start(cfg: &CliConfig) -> Result<(), String> {
    if let Some(dest) = &cfg.live {
        let mut log = jsonlines::LiveLog::open(dest)?;
        crate::run::interim::add_consumer(Box::new(move |o, last| log.record(o, last)));
    }
    if let Some(addr) = &cfg.metrics {
        let state = metrics::start(addr, cfg.metrics_linger_ms)?;
        crate::run::interim::add_consumer(Box::new(move |o, last| {
            metrics::update(&state, o, last)
        }));
    }
    Ok(())
}
