//! The http engine's own statistics, beyond fio's: failed requests by HTTP status, and
//! latency (and time to first byte) per operation, per object-size class, per endpoint
//! and per multipart stage. They exist only when the job names one of the engine's
//! iobench-only options, so a plain http job's report stays fio's, key for key.
//!
//! The engine records into them itself (it alone knows the status, the first byte and
//! which class a request belongs to), with every class made at setup: recording adds to
//! counters and preallocated histograms, never allocating. They reach the job's stats
//! when the job ends (`Engine::take_obj_stats`) and are reported under `iobench_http`.

use super::hist::Hist;
use super::iostat::IoStat;
use crate::engine::{ObjFailure, ObjLayout, ObjSample};
use serde::{Deserialize, Serialize};

/// Failed requests, by what went wrong (`http_errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// 503 Service Unavailable (S3's SlowDown).
    pub s503: u64,
    /// 429 Too Many Requests.
    pub s429: u64,
    /// Any other 5xx.
    pub s5xx: u64,
    /// Any 4xx but 429 (a GET's 404 reads as zeros and a DELETE's 404 succeeds, as in
    /// fio: neither counts here).
    pub s4xx: u64,
    /// Any other status the request did not expect (1xx, 3xx, an unexpected 2xx).
    pub other_status: u64,
    /// No answer in time (`io_timeout`).
    pub timeout: u64,
    /// The connection was reset, refused or closed before an answer.
    pub reset: u64,
    /// Any other transport failure (TLS, a malformed answer, a body cut short).
    pub other: u64,
}

impl ErrorCounts {
    /// The counters with the names the reports give them, in report order.
    pub fn named(&self) -> [(&'static str, u64); 8] {
        [
            ("503", self.s503),
            ("429", self.s429),
            ("5xx", self.s5xx),
            ("4xx", self.s4xx),
            ("other_status", self.other_status),
            ("timeout", self.timeout),
            ("reset", self.reset),
            ("other", self.other),
        ]
    }

    /// All failed requests.
    pub fn total(&self) -> u64 {
        self.named().iter().map(|(_, n)| n).sum()
    }

    /// Counts one answer with status `status` that failed the request.
    pub fn status(&mut self, status: u16) {
        match status {
            503 => self.s503 += 1,
            429 => self.s429 += 1,
            500..=599 => self.s5xx += 1,
            400..=499 => self.s4xx += 1,
            _ => self.other_status += 1,
        }
    }

    fn merge(&mut self, o: &ErrorCounts) {
        self.s503 += o.s503;
        self.s429 += o.s429;
        self.s5xx += o.s5xx;
        self.s4xx += o.s4xx;
        self.other_status += o.other_status;
        self.timeout += o.timeout;
        self.reset += o.reset;
        self.other += o.other;
    }
}

/// One class of requests (an operation, a size class, an endpoint): how many succeeded,
/// their bytes, full latency and time to first byte; how many failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Class {
    pub name: String,
    pub ios: u64,
    pub bytes: u64,
    pub errors: u64,
    /// From the request's start to its last response byte.
    pub lat: IoStat,
    pub lat_hist: Hist,
    /// From the request's start to the response's first byte (warp's TTFB); only with
    /// `http_ttfb`.
    pub ttfb: IoStat,
    pub ttfb_hist: Hist,
}

impl Class {
    /// An empty class named `name`, its histograms allocated.
    pub fn new(name: impl Into<String>) -> Self {
        Class {
            name: name.into(),
            lat_hist: Hist::new(),
            ttfb_hist: Hist::new(),
            ..Default::default()
        }
    }

    #[inline]
    fn add(&mut self, s: &ObjSample, ttfb: Option<u64>) {
        if s.fail.is_some() {
            self.errors += 1;
            return;
        }
        self.ios += 1;
        self.bytes += s.bytes;
        self.lat.add(s.lat_ns);
        self.lat_hist.add(s.lat_ns);
        if let Some(t) = ttfb {
            self.ttfb.add(t);
            self.ttfb_hist.add(t);
        }
    }

    fn merge(&mut self, o: &Class) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.lat.merge(&o.lat);
        self.lat_hist.merge(&o.lat_hist);
        self.ttfb.merge(&o.ttfb);
        self.ttfb_hist.merge(&o.ttfb_hist);
    }
}

/// The operations, in the order `ObjStats::ops` holds them (the sample's `op`).
pub const OPS: [&str; 5] = ["GET", "PUT", "HEAD", "LIST", "DELETE"];

/// The multipart stages, in the order `ObjStats::multipart` holds them (`op` 5 and 6).
pub const STAGES: [&str; 2] = ["part", "object"];

/// The engine's statistics for one job (or a reporting group, merged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjStats {
    /// Failed requests by status, with `http_errors`.
    pub errors: Option<ErrorCounts>,
    /// Whether time to first byte is measured (`http_ttfb`).
    pub ttfb: bool,
    /// Every request (a multipart upload as one), whatever its class.
    pub all: Class,
    /// Per operation, as `OPS` names them.
    pub ops: Vec<Class>,
    /// Per object-size class (`http_sizes`), empty without it.
    pub sizes: Vec<Class>,
    /// Per endpoint (`http_endpoints`), empty with one.
    pub endpoints: Vec<Class>,
    /// Multipart uploads (`http_multipart`): each part, and each whole object from its
    /// initiation to its completion; empty without it.
    pub multipart: Vec<Class>,
}

impl ObjStats {
    /// Empty statistics with the classes `l` names.
    pub fn new(l: &ObjLayout) -> Self {
        ObjStats {
            errors: l.errors.then(ErrorCounts::default),
            ttfb: l.ttfb,
            all: Class::new("all"),
            ops: OPS.iter().map(|o| Class::new(*o)).collect(),
            sizes: l.sizes.iter().map(Class::new).collect(),
            endpoints: if l.endpoints.len() > 1 {
                l.endpoints.iter().map(Class::new).collect()
            } else {
                Vec::new()
            },
            multipart: if l.multipart {
                STAGES.iter().map(|o| Class::new(*o)).collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Records one request the engine measured. A multipart upload's part (`op` 5)
    /// counts only as a part; a whole upload (`op` 6) as an upload and as the job's PUT
    /// (with its size class and endpoint), its failure counted once.
    #[inline]
    pub fn record(&mut self, s: &ObjSample) {
        let ttfb = self.ttfb.then_some(s.ttfb_ns);
        let mut op = s.op as usize;
        if op >= OPS.len() {
            if let Some(c) = self.multipart.get_mut(op - OPS.len()) {
                c.add(s, ttfb);
            }
            if op == OPS.len() {
                return;
            }
            op = 1;
        }
        if let (Some(e), Some(f)) = (&mut self.errors, s.fail) {
            match f {
                ObjFailure::Status(st) => e.status(st),
                ObjFailure::Timeout => e.timeout += 1,
                ObjFailure::Reset => e.reset += 1,
                ObjFailure::Other => e.other += 1,
            }
        }
        if let Some(c) = self.ops.get_mut(op) {
            c.add(s, ttfb);
        }
        self.all.add(s, ttfb);
        if let Some(c) = self.sizes.get_mut(s.size as usize) {
            c.add(s, ttfb);
        }
        if let Some(c) = self.endpoints.get_mut(s.endpoint as usize) {
            c.add(s, ttfb);
        }
    }

    /// Adds another clone's statistics (group reporting): classes by name.
    pub fn merge(&mut self, o: &ObjStats) {
        match (&mut self.errors, &o.errors) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.errors = Some(*b),
            _ => {}
        }
        self.ttfb |= o.ttfb;
        self.all.merge(&o.all);
        for (mine, theirs) in [
            (&mut self.ops, &o.ops),
            (&mut self.sizes, &o.sizes),
            (&mut self.endpoints, &o.endpoints),
            (&mut self.multipart, &o.multipart),
        ] {
            for c in theirs {
                match mine.iter_mut().find(|m| m.name == c.name) {
                    Some(m) => m.merge(c),
                    None => mine.push(c.clone()),
                }
            }
        }
    }

    /// The groups of classes that have something to report, with their names in the
    /// reports; operations that never ran are left out.
    pub fn groups(&self) -> Vec<(&'static str, Vec<&Class>)> {
        let busy: Vec<&Class> = self.ops.iter().filter(|c| c.ios + c.errors > 0).collect();
        let mut g = vec![("ops", busy)];
        for (name, v) in [
            ("sizes", &self.sizes),
            ("endpoints", &self.endpoints),
            ("multipart", &self.multipart),
        ] {
            if !v.is_empty() {
                g.push((name, v.iter().collect()));
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: u8, size: u16, bytes: u64, lat: u64, fail: Option<ObjFailure>) -> ObjSample {
        ObjSample {
            op,
            size,
            endpoint: 0,
            fail,
            bytes,
            lat_ns: lat,
            ttfb_ns: lat / 4,
        }
    }

    #[test]
    fn records_per_class_and_merges_by_name() {
        let l = ObjLayout {
            errors: true,
            ttfb: true,
            sizes: vec!["4k".into(), "1m".into()],
            endpoints: vec!["a".into()],
            multipart: false,
        };
        let mut a = ObjStats::new(&l);
        a.record(&req(0, 0, 4096, 2000, None));
        a.record(&req(1, 1, 1 << 20, 9000, None));
        a.record(&req(1, 1, 0, 1, Some(ObjFailure::Status(503))));
        a.record(&req(0, 0, 0, 1, Some(ObjFailure::Reset)));
        assert_eq!(a.all.ios, 2);
        assert_eq!(a.all.errors, 2);
        assert_eq!(a.ops[0].bytes, 4096);
        assert_eq!(a.ops[1].errors, 1);
        assert_eq!(a.sizes[1].lat.max, 9000);
        assert_eq!(a.all.ttfb.samples, 2);
        let e = a.errors.unwrap();
        assert_eq!((e.s503, e.reset, e.total()), (1, 1, 2));
        assert!(a.endpoints.is_empty(), "one endpoint has no class");
        let mut b = a.clone();
        b.merge(&a);
        assert_eq!(b.ops[0].ios, 2);
        assert_eq!(b.errors.unwrap().s503, 2);
        let names: Vec<_> = b.groups().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["ops", "sizes"]);
        // Without http_ttfb no first-byte time is kept, without http_errors no counts.
        let mut c = ObjStats::new(&ObjLayout::default());
        c.record(&req(0, 0, 1, 1, None));
        c.record(&req(0, 0, 1, 1, Some(ObjFailure::Timeout)));
        assert_eq!(c.all.ttfb.samples, 0);
        assert!(c.errors.is_none());
        // A multipart upload: parts apart, the whole as a PUT.
        let mut m = ObjStats::new(&ObjLayout {
            errors: true,
            multipart: true,
            ..ObjLayout::default()
        });
        m.record(&req(5, 0, 10, 5, None));
        m.record(&req(5, 0, 10, 5, Some(ObjFailure::Reset)));
        m.record(&req(6, 0, 20, 9, Some(ObjFailure::Reset)));
        assert_eq!((m.multipart[0].ios, m.multipart[0].errors), (1, 1));
        assert_eq!(m.multipart[1].errors, 1);
        assert_eq!(m.ops[1].errors, 1);
        assert_eq!(m.errors.unwrap().total(), 1, "counted once");
    }
}
