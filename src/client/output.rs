//! What the client prints, in fio's client layout: the probe line and the servers' text
//! lines as they come (`<host> …`); each server's report (its jobs, its groups, its disks,
//! rendered by iobench's own normal renderer from the statistics the server sent) when that
//! server is done; then the "All clients" total and, for JSON, one document with
//! `client_stats` (each job with `hostname` and `port`) and `disk_util`.
//!
//! `--output=DIR/` writes each format into a file of its own (`report.json`,
//! `report.txt`, `report.terse`), as a plain run does: the servers' text lines and the
//! probe line go with the normal format, each report's parts to their format's file.
//!
//! "All clients" is the shared total of `report::clients` (also the MPI runner's): one per
//! reporting group, every server's jobs merged, histograms included, so unlike fio 3.33's
//! its percentiles are printed, and exact.

use super::args::ClientArgs;
use crate::cli::OutputFormat;
use crate::fioproto::pdu::ProbeReply;
use crate::fioproto::ts::WireTs;
use crate::report::clients::{self, ClientId, ClientStats};
use crate::report::json::{self, Value};
use crate::report::{normal, terse, Formats};
use crate::stats::disk::DiskUtil;
use crate::stats::group::GroupStats;
use crate::stats::JobStats;
use std::io::Write;

/// One server's report as it arrives.
#[derive(Debug, Clone)]
pub struct HostReport {
    /// The host as the user gave it.
    pub hostname: String,
    pub port: u16,
    /// The host's own name, from its PROBE reply (the `<name>` of its text lines).
    pub name: Option<String>,
    /// Its software, from PROBE (`fio-3.33`, `iobench-…`).
    pub version: String,
    /// `job options` sent by JOB_OPT, by the index fio's server gives them.
    pub opt_lists: Vec<Vec<(String, String)>>,
    /// Its `global options`, when each server's are listed apart (fio 3.39 on, several
    /// servers).
    pub globals: Vec<(String, String)>,
    pub threads: Vec<JobStats>,
    pub groups: Vec<GroupStats>,
    pub disks: Vec<DiskUtil>,
    /// Its report so far (fio's per-client buffer), each part with its format (terse or
    /// normal), in the order fio writes them.
    buf: Vec<(OutputFormat, String)>,
}

impl HostReport {
    pub fn new(hostname: &str, port: u16) -> Self {
        HostReport {
            hostname: hostname.to_string(),
            port,
            name: None,
            version: String::new(),
            opt_lists: Vec::new(),
            globals: Vec::new(),
            threads: Vec::new(),
            groups: Vec::new(),
            disks: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// How its text lines are prefixed.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.hostname)
    }
}

/// Where the report goes: one stream with every format in it (stdout or `--output FILE`,
/// as fio writes it), or with `--output=DIR/` a file per format.
enum Out {
    One(Box<dyn Write>),
    PerFormat(Vec<(OutputFormat, std::fs::File)>),
}

/// The client's output, for every format asked.
pub struct Printer {
    out: Out,
    /// The formats asked for (the one picker of every report).
    f: Formats,
    started: std::time::SystemTime,
    global_opts: Vec<(String, String)>,
    /// fio 3.39's `global options` with several servers: one object per server (its
    /// `hostname`, `port`, then its options), in the order of their first reports.
    global_per_server: Option<Vec<Value>>,
    client_stats: Vec<Value>,
    disk_util: Vec<Value>,
    /// Every finished server's statistics, for the "All clients" totals (merged by the
    /// shared `report::clients`), and the host/port of the last report (fio names the
    /// total after the last client).
    hosts: Vec<ClientStats>,
    /// All of them are iobench servers (the first-done / last-done lines are printed).
    all_iobench: bool,
    /// More than one server: each report starts with its server's name.
    several: bool,
    last_host: Option<(String, u16)>,
    /// The dialect of the report (version lines).
    release: crate::defs::release::FioRelease,
}

impl Printer {
    pub fn new(a: &ClientArgs) -> Result<Printer, String> {
        let out = match &a.output {
            Some(dir) if crate::report::is_per_format(dir) => Out::PerFormat(
                crate::report::per_format_files(dir, a.formats)
                    .map_err(|e| format!("output: {e}"))?,
            ),
            Some(p) => Out::One(Box::new(
                std::fs::File::create(p).map_err(|e| format!("output file {p}: {e}"))?,
            )),
            None => {
                crate::report::stdout_is_open().map_err(|e| format!("output: {e}"))?;
                Out::One(Box::new(std::io::stdout()))
            }
        };
        Ok(Printer {
            out,
            f: a.formats,
            started: std::time::SystemTime::now(),
            global_opts: Vec::new(),
            global_per_server: (a.release().client_global_options_per_server()
                && a.hosts.len() > 1)
                .then(Vec::new),
            client_stats: Vec::new(),
            disk_util: Vec::new(),
            hosts: Vec::new(),
            all_iobench: true,
            several: a.hosts.len() > 1,
            last_host: None,
            release: a.release(),
        })
    }

    pub fn terse(&self) -> bool {
        self.f.terse.is_some()
    }

    /// Writes `s`, a part of the report in `format` (the servers' text lines are the
    /// normal format's): to the one stream, or to that format's file (none: dropped).
    fn write(&mut self, format: OutputFormat, s: &str) -> Result<(), String> {
        let out: &mut dyn Write = match &mut self.out {
            Out::One(w) => w.as_mut(),
            Out::PerFormat(files) => match files.iter_mut().find(|(f, _)| *f == format) {
                Some((_, f)) => f,
                None => return Ok(()),
            },
        };
        out.write_all(s.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| format!("output: {e}"))
    }

    /// Writes parts of several formats: to the one stream in one write, in their order;
    /// else each format's parts to its file.
    fn write_parts(&mut self, parts: &[(OutputFormat, String)]) -> Result<(), String> {
        if let Out::One(_) = self.out {
            let all: String = parts.iter().map(|(_, s)| s.as_str()).collect();
            return self.write(OutputFormat::Normal, &all);
        }
        for format in [OutputFormat::Terse, OutputFormat::Normal] {
            let mine: String = parts
                .iter()
                .filter(|(f, _)| *f == format)
                .map(|(_, s)| s.as_str())
                .collect();
            if !mine.is_empty() {
                self.write(format, &mine)?;
            }
        }
        Ok(())
    }

    /// A server's PROBE reply: fio prints it in the normal format.
    pub fn probe(&mut self, p: &ProbeReply) -> Result<(), String> {
        if self.f.normal {
            self.write(OutputFormat::Normal, &p.line())?;
        }
        Ok(())
    }

    /// A text line, printed at once (one write per line: lines never interleave).
    pub fn text(&mut self, s: &str) -> Result<(), String> {
        self.write(OutputFormat::Normal, s)
    }

    pub fn global_option(&mut self, h: &mut HostReport, name: &str, value: &str) {
        let list = if self.global_per_server.is_some() {
            &mut h.globals
        } else {
            &mut self.global_opts
        };
        match list.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value.to_string(),
            None => list.push((name.to_string(), value.to_string())),
        }
    }

    /// A reported job (TS) of `h`.
    pub fn thread(&mut self, h: &mut HostReport, ts: WireTs) {
        let WireTs {
            stats: t,
            thread_number,
            group: g,
        } = ts;
        let g = g.0;
        let now = crate::report::ctime(std::time::SystemTime::now());
        if let Some(v) = self.f.terse {
            h.buf.push((
                OutputFormat::Terse,
                terse::render_thread(&t, &g, &[], v, self.release),
            ));
        }
        if self.f.normal {
            h.buf.push((
                OutputFormat::Normal,
                normal::render_thread(&t, &g, &now, self.release),
            ));
        }
        // fio's client looks the options up by thread number; an iobench server numbers
        // them by report, which is also what they are listed by.
        let idx = if h.version.starts_with("iobench") {
            h.threads.len()
        } else {
            (thread_number as usize).wrapping_sub(1)
        };
        let opts = h.opt_lists.get(idx).cloned().unwrap_or_default();
        if self.f.json {
            let v = json::thread_obj(&t, &g, None, 0, self.f.plus, self.release).into_value();
            self.client_stats
                .push(client_obj(v, Some(&opts), &h.hostname, h.port));
            // A server's global options join the list with its first report, as in fio.
            if let Some(list) = self.global_per_server.as_mut() {
                if h.threads.is_empty() && !h.globals.is_empty() {
                    let mut o = json::Obj::new();
                    o.str("hostname", &h.hostname).int("port", h.port as i64);
                    for (k, v) in &h.globals {
                        o.str(k, v);
                    }
                    list.push(o.into_value());
                }
            }
        }
        self.last_host = Some((h.hostname.clone(), h.port));
        h.threads.push(t);
    }

    /// A group total (GS) of `h`.
    pub fn group(&mut self, h: &mut HostReport, g: GroupStats) {
        if self.f.normal {
            h.buf.push((OutputFormat::Normal, normal::render_group(&g)));
        }
        h.groups.push(g);
    }

    /// A disk (DU) of `h`.
    pub fn disk(&mut self, h: &mut HostReport, d: DiskUtil) {
        if self.f.normal {
            h.buf.push((
                OutputFormat::Normal,
                normal::render_disks(std::slice::from_ref(&d)),
            ));
        }
        if self.f.terse.is_some_and(|v| v >= 3) {
            // fio's client prints a server's disk as a terse line of its own.
            let mut line = String::new();
            terse::disks(&mut line, std::slice::from_ref(&d));
            line.push('\n');
            h.buf.push((OutputFormat::Terse, line));
        }
        if self.f.json {
            let sum = crate::stats::group::RunSummary {
                disks: vec![d.clone()],
                release: self.release,
                ..Default::default()
            };
            for v in json::disk_values(&sum) {
                self.disk_util
                    .push(client_obj(v, None, &h.hostname, h.port));
            }
        }
        h.disks.push(d);
    }

    /// `h` is done: its report is printed now, whole.
    pub fn host_done(&mut self, h: &HostReport) -> Result<(), String> {
        self.all_iobench &= h.version.starts_with("iobench");
        self.hosts.push(ClientStats {
            hostname: h.hostname.clone(),
            id: ClientId::Port(h.port),
            threads: h.threads.clone(),
            groups: h.groups.clone(),
            disks: h.disks.clone(),
        });
        if !h.buf.is_empty() {
            // Beyond fio, for iobench servers and whenever several servers report: the
            // report says whose it is (fio's leave readers guessing, fio#1931).
            let mut parts = Vec::with_capacity(h.buf.len() + 1);
            if self.f.normal && (h.version.starts_with("iobench") || self.several) {
                parts.push((
                    OutputFormat::Normal,
                    format!("hostname={}, port {}\n", h.display_name(), h.port),
                ));
            }
            parts.extend(h.buf.iter().cloned());
            self.write_parts(&parts)?;
        }
        Ok(())
    }

    /// The end: "All clients" when more than one report came, then the JSON document.
    pub fn finish(&mut self, reports: u32) -> Result<(), String> {
        // As fio, a total only when more than one report came; one per reporting group.
        let totals = if reports > 1 {
            clients::all_clients(&self.hosts)
        } else {
            Vec::new()
        };
        let now = crate::report::ctime(std::time::SystemTime::now());
        for t in &totals {
            if let Some(v) = self.f.terse {
                let s = terse::render_thread(&t.stats, &t.group, &[], v, self.release);
                self.write(OutputFormat::Terse, &s)?;
            }
            if self.f.normal {
                let s = normal::render_thread(&t.stats, &t.group, &now, self.release);
                self.write(OutputFormat::Normal, &s)?;
            }
            if self.f.json {
                let (h, p) = self.last_host.clone().unwrap_or_default();
                let v = json::thread_obj(&t.stats, &t.group, None, 0, self.f.plus, self.release)
                    .into_value();
                self.client_stats.push(client_obj(v, None, &h, p));
            }
        }
        // Between iobench peers: which server was first and last done, and the spread.
        if self.f.normal && self.all_iobench && self.hosts.len() > 1 {
            let s = clients::render_spreads(&self.hosts);
            self.write(OutputFormat::Normal, &s)?;
        }
        if self.f.json {
            let since = self
                .started
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            let mut root = json::Obj::new();
            root.str("fio version", &crate::report::version_line(self.release))
                .int("timestamp", since.as_secs())
                .str(
                    "time",
                    crate::report::ctime(self.started).trim_end_matches('\n'),
                );
            match self.global_per_server.take() {
                Some(list) => {
                    root.arr("global options", list);
                }
                None => {
                    let mut go = json::Obj::new();
                    for (k, v) in &self.global_opts {
                        go.str(k, v);
                    }
                    root.obj("global options", go);
                }
            }
            root.arr("client_stats", std::mem::take(&mut self.client_stats));
            root.arr("disk_util", std::mem::take(&mut self.disk_util));
            let mut s = String::from("\n");
            json::print(&mut s, &root.into_value(), 0);
            s.push('\n');
            self.write(OutputFormat::Json, &s)?;
        }
        Ok(())
    }
}

/// A job (or disk) object as fio's client lists it: without `eta` and `elapsed`, with the
/// job's options after `error`, and with the server's `hostname` and `port` at the end.
fn client_obj(mut v: Value, opts: Option<&[(String, String)]>, host: &str, port: u16) -> Value {
    if let Value::Obj(pairs) = &mut v {
        pairs.retain(|(k, _)| k != "eta" && k != "elapsed");
        if let Some(opts) = opts.filter(|o| !o.is_empty()) {
            let o = Value::Obj(
                opts.iter()
                    .map(|(k, v)| (k.clone(), Value::Str(v.clone())))
                    .collect(),
            );
            let at = pairs
                .iter()
                .position(|(k, _)| k == "error")
                .map_or(pairs.len(), |p| p + 1);
            pairs.insert(at, ("job options".into(), o));
        }
        pairs.push(("hostname".into(), Value::Str(host.to_string())));
        pairs.push(("port".into(), Value::Int(port as i64)));
    }
    v
}
