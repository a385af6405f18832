//! http: each I/O is an HTTP request to an object store, as fio's http engine does
//! (engines/http.c through fio 3.42): a write PUTs, a read GETs, a trim DELETEs, over a
//! WebDAV server, S3 (signed with AWS Signature V4, `http_sigv4.rs`) or OpenStack Swift.
//!
//! - `http_object_mode=block` (the default) names one object per I/O,
//!   `<filename>_<offset>_<length>`, and moves it whole; `range` uses one object per file,
//!   read with a `Range` header (a write PUTs the whole object with the block's data, as
//!   in fio).
//! - A GET answered 404 reads as zeros; a DELETE answered 404 succeeded.
//! - S3 signs `host`, `x-amz-content-sha256` (the real SHA-256 of the body),
//!   `x-amz-date`, the SSE-C headers when a customer key is set, `x-amz-security-token`
//!   when set, and `x-amz-storage-class`: fio's set, in fio's order.
//!
//! The engine is synchronous with one connection per job, kept alive across requests:
//! the worker's thread writes the request and reads the answer itself (ureq, blocking;
//! no runtime thread between the worker and the socket), straight from and into the
//! I/O's buffer.
//!
//! Beyond fio, options of iobench's own (named by the user, so a plain job reports
//! fio's keys only): `http_errors` (failed requests counted by status, `keep_going`),
//! `http_ttfb` (time to first byte), `http_opmix` (GET/PUT/HEAD/LIST/DELETE by weight),
//! `http_size_classes`, `http_endpoints` and `http_multipart`. With any of them the
//! engine times each request itself and hands the samples to the worker after each
//! completion (`Engine::drain_obj_samples`), into `stats::objstats`.

use super::http_sigv4::{self as sigv4, Signer};
use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, ObjFailure, ObjLayout, ObjSample, Op, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::rows::{BS, BSRANGE, BSSPLIT, IO_TIMEOUT, RANDSEED, VERIFY};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use crate::osstr::printable;
use base64::Engine as _;
use std::fmt::Write as _;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

const HTTPS_CHOICES: &[(&str, &str)] = &[
    ("off", "No HTTPS"),
    ("on", "Enable HTTPS"),
    ("insecure", "Enable HTTPS, disable peer verification"),
];

const MODE_CHOICES: &[(&str, &str)] = &[
    ("webdav", "WebDAV server"),
    ("s3", "S3 storage backend"),
    ("swift", "OpenStack Swift storage"),
];

const OBJECT_MODE_CHOICES: &[(&str, &str)] = &[
    ("block", "One object per block"),
    ("range", "One object per file, range reads per block"),
];

const ERRORS_CHOICES: &[(&str, &str)] = &[
    (
        "stop",
        "The first failed request fails the job (fio's behaviour)",
    ),
    (
        "count",
        "Count failed requests by HTTP status; the first fails the job",
    ),
    (
        "keep_going",
        "Count failed requests by HTTP status and keep going",
    ),
];

const ENGINES: &[&str] = &["http"];

pub const HTTPS: OptDef = opt("https", K::Choice(HTTPS_CHOICES), "Enable https")
    .def("off")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_HOST: OptDef = opt("http_host", K::Str, "Hostname (S3 bucket)")
    .def("localhost")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_USER: OptDef = opt("http_user", K::Str, "HTTP user name")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_PASS: OptDef = opt("http_pass", K::Str, "HTTP password")
    .secret()
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_S3_KEY: OptDef = opt("http_s3_key", K::Str, "S3 secret key")
    .secret()
    .def("")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_S3_KEYID: OptDef = opt("http_s3_keyid", K::Str, "S3 key id")
    .def("")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_S3_SECURITY_TOKEN: OptDef =
    opt("http_s3_security_token", K::Str, "S3 security token")
        .secret()
        .def("")
        .cat(C::Engine)
        .engines(ENGINES);
pub const HTTP_SWIFT_AUTH_TOKEN: OptDef = opt(
    "http_swift_auth_token",
    K::Str,
    "OpenStack Swift auth token",
)
.secret()
.def("")
.cat(C::Engine)
.engines(ENGINES);
pub const HTTP_S3_REGION: OptDef = opt("http_s3_region", K::Str, "S3 region")
    .def("us-east-1")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_S3_SSE_CUSTOMER_KEY: OptDef =
    opt("http_s3_sse_customer_key", K::Str, "S3 SSE Customer Key")
        .secret()
        .def("")
        .cat(C::Engine)
        .engines(ENGINES);
pub const HTTP_S3_SSE_CUSTOMER_ALGORITHM: OptDef = opt(
    "http_s3_sse_customer_algorithm",
    K::Str,
    "S3 SSE Customer Algorithm",
)
.def("AES256")
.cat(C::Engine)
.engines(ENGINES);
pub const HTTP_S3_STORAGE_CLASS: OptDef = opt("http_s3_storage_class", K::Str, "S3 Storage Class")
    .def("STANDARD")
    .cat(C::Engine)
    .engines(ENGINES);
pub const HTTP_MODE: OptDef = opt(
    "http_mode",
    K::Choice(MODE_CHOICES),
    "Whether to use WebDAV, Swift, or S3",
)
.def("webdav")
.cat(C::Engine)
.engines(ENGINES);
pub const HTTP_VERBOSE: OptDef = opt(
    "http_verbose",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "increase http engine verbosity",
)
.def("0")
.cat(C::Engine)
.engines(ENGINES);
pub const HTTP_ERRORS: OptDef = opt(
    "http_errors",
    K::Choice(ERRORS_CHOICES),
    "Count failed requests by HTTP status (503, 429, 5xx, 4xx, timeouts, resets)",
)
.def("stop")
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_TTFB: OptDef = opt(
    "http_ttfb",
    K::Bool,
    "Report each request's time to first byte beside its latency",
)
.def("0")
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_OPMIX: OptDef = opt(
    "http_opmix",
    K::Str,
    "Mix of operations by weight, e.g. get:60,put:20,head:10,list:5,delete:5",
)
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_SIZE_CLASSES: OptDef = opt(
    "http_size_classes",
    K::Bool,
    "Report latency per object-size class (from bs, bsrange or bssplit)",
)
.def("0")
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_ENDPOINTS: OptDef = opt(
    "http_endpoints",
    K::Str,
    "Servers to spread requests over in turn, HOST[:PORT],HOST[:PORT],... (for http_host)",
)
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_MULTIPART: OptDef = opt(
    "http_multipart",
    K::Size,
    "S3: upload a write larger than this as a multipart upload of parts this size",
)
.def("0")
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_MULTIPART_JOBS: OptDef = opt(
    "http_multipart_jobs",
    K::Int { min: 1, max: 256 },
    "Parts of one multipart upload in flight at once",
)
.def("1")
.cat(C::Engine)
.engines(ENGINES)
.iobench_only();
pub const HTTP_OBJECT_MODE: OptDef = opt(
    "http_object_mode",
    K::Choice(OBJECT_MODE_CHOICES),
    "How to structure objects when issuing HTTP requests",
)
.def("block")
.cat(C::Engine)
.engines(ENGINES);

/// Whether and how requests use TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    Off,
    /// Verify the server's certificate against the web's root CAs.
    On,
    /// TLS without checking who the server is (fio's `https=insecure`).
    Insecure,
}

/// The protocol spoken on top of HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Webdav,
    S3,
    Swift,
}

/// S3's server-side encryption with a customer key (SSE-C): the headers every request
/// carries, computed once.
#[derive(Debug, Clone)]
struct SseC {
    algorithm: String,
    /// The key (as fio takes it: the option's first 32 bytes, zero-padded), base64.
    key: String,
    /// The key's MD5, base64.
    key_md5: String,
}

/// The engine's typed options.
#[derive(Debug, Clone)]
pub struct HttpOpts {
    tls: Tls,
    /// User and password for HTTP authentication (WebDAV and Swift), both or neither.
    login: Option<(String, String)>,
    mode: Mode,
    /// S3: key id, secret and region.
    s3: Option<(String, String, String)>,
    security_token: Option<String>,
    sse: Option<SseC>,
    storage_class: String,
    swift_token: String,
    verbose: i64,
    range: bool,
    /// With `io_timeout`: how long one request may take, from connecting to its last
    /// byte (a hung server then fails the I/O, instead of holding the worker past the
    /// watchdog).
    timeout: Option<std::time::Duration>,
    /// `http_errors`.
    errors: Errors,
    /// `http_ttfb`.
    ttfb: bool,
    /// `http_opmix`: the cumulative weights of GET, PUT, HEAD, LIST and DELETE.
    mix: Option<[u32; 5]>,
    /// The mix's random seed (`randseed`, then the clone's number added).
    seed: u64,
    /// `http_size_classes`: each class's name and largest size, ascending.
    sizes: Vec<(String, u64)>,
    /// Every server requests go to, in turn: `http_host`, or `http_endpoints`' list.
    hosts: Vec<String>,
    /// `http_multipart` (part size; 0: off) and `http_multipart_jobs`.
    multipart: (u64, usize),
}

/// One job's connection and what each request reuses.
pub struct Http {
    opts: Arc<HttpOpts>,
    agent: Option<ureq::Agent>,
    /// Each file's name (the object path, or its prefix in block mode) and size.
    files: Vec<(String, u64)>,
    signer: Option<Signer>,
    /// The Authorization header for HTTP authentication, once the server asked for it
    /// (as curl does with CURLAUTH_ANY: the first request goes without, a 401 picks).
    basic: Option<String>,
    /// The engine times its requests itself (an iobench-only option asked for it).
    measure: bool,
    /// The requests timed since the worker last took them (see `drain_obj_samples`).
    samples: Vec<ObjSample>,
    /// A failure was said already (`http_errors=keep_going` says only the first).
    said: bool,
    /// The mix's random state (xorshift64*).
    rng: u64,
    /// The endpoint of the request being made (an index in `hosts`).
    ep: usize,
}

/// What one request does, in the order of the reports' operations (`ObjSample::op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Req {
    Get,
    Put,
    Head,
    List,
    Delete,
}

impl Req {
    fn method(self) -> &'static str {
        match self {
            Req::Get | Req::List => "GET",
            Req::Put => "PUT",
            Req::Head => "HEAD",
            Req::Delete => "DELETE",
        }
    }

    /// The direction the job's statistics count it in: what it moves (a HEAD or a LIST
    /// reads, zero bytes of the I/O's).
    fn ddir(self) -> Ddir {
        match self {
            Req::Get | Req::Head | Req::List => Ddir::Read,
            Req::Put => Ddir::Write,
            Req::Delete => Ddir::Trim,
        }
    }
}

/// How the engine answers a failed request (`http_errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errors {
    /// fio's: the I/O fails with EIO (and the job with it, unless `continue_on_error`).
    Stop,
    /// As `Stop`, with the failures counted by status.
    Count,
    /// Counted, and the job goes on (the job's error policy passes EIO over, see
    /// `job::errors`); the first failure is said, the rest only counted.
    KeepGoing,
}

/// What a request came to, beside the I/O's result: the failure, the bytes the
/// response body held (a LIST's), and when its first byte came.
#[derive(Debug, Clone, Copy, Default)]
struct Outcome {
    fail: Option<ObjFailure>,
    bytes: u64,
    ttfb_ns: u64,
}

impl Http {
    fn scheme(&self) -> &'static str {
        if self.opts.tls == Tls::Off {
            "http"
        } else {
            "https"
        }
    }

    /// The headers of one request, beside Host and Content-Length: Range, then the
    /// mode's own (S3's signed set, Swift's token), then authentication.
    fn headers(
        &mut self,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
        range: Option<String>,
    ) -> Vec<(&'static str, String)> {
        let o = Arc::clone(&self.opts);
        let mut h: Vec<(&'static str, String)> = Vec::with_capacity(10);
        if let Some(r) = range {
            h.push(("Range", r));
        }
        match o.mode {
            Mode::S3 => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let signer = self.signer.as_mut().expect("S3 mode has a signer");
                h.extend(s3_headers(
                    &o,
                    &o.hosts[self.ep],
                    signer,
                    (method, path, query),
                    body,
                    &sigv4::amz_date(now),
                ));
            }
            Mode::Swift => {
                if method == "PUT" {
                    h.push(("etag", hex_md5(body)));
                }
                h.push(("x-auth-token", o.swift_token.clone()));
            }
            Mode::Webdav => {}
        }
        if o.mode != Mode::S3 {
            if let Some(b) = &self.basic {
                h.push(("Authorization", b.clone()));
            }
        }
        h
    }

    /// Sends one request and returns the response, its body not read yet, or why there
    /// was no HTTP answer (refused, reset, TLS); with a login, answers a 401 that asks
    /// for Basic authentication once, and sends it from then on. `query` is already
    /// in canonical form (sorted, encoded).
    ///
    /// Redirects are followed here, not by ureq (which would carry S3's token, the SSE-C
    /// key and Swift's token to any host): at most [`MAX_REDIRECTS`], to `http:` or
    /// `https:` only (any other scheme is refused, as fio's curl is limited to those),
    /// and one to another scheme, host or port goes without any credential (curl drops
    /// only Authorization and cookies).
    fn send(
        &mut self,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
        range: Option<String>,
    ) -> Result<ureq::Response, NoAnswer> {
        let home = Origin {
            scheme: self.scheme().to_string(),
            host: self.host().to_string(),
        };
        let mut at = (home.clone(), path.to_string(), query.to_string());
        let mut method = method.to_string();
        let mut body = body;
        let mut hops = 0;
        loop {
            let (origin, path, query) = (&at.0, at.1.as_str(), at.2.as_str());
            let foreign = !origin.same(&home);
            let headers = if foreign {
                range
                    .clone()
                    .map(|r| vec![("Range", r)])
                    .unwrap_or_default()
            } else {
                self.headers(&method, path, query, body, range.clone())
            };
            let url = if query.is_empty() {
                format!("{}://{}{path}", origin.scheme, origin.host)
            } else {
                format!("{}://{}{path}?{query}", origin.scheme, origin.host)
            };
            let agent = self.agent.as_ref().expect("set up before the first I/O");
            let mut req = agent.request(&method, &url).set("Host", &origin.host);
            for (n, v) in &headers {
                req = req.set(n, v);
            }
            if self.opts.verbose > 0 {
                eprintln!("> {method} {} HTTP/1.1", printable(path));
                eprintln!("> Host: {}", printable(&origin.host));
                for (n, v) in &headers {
                    eprintln!("> {n}: {}", shown_header(n, v));
                }
                if self.opts.verbose > 1 && !body.is_empty() {
                    eprintln!("=> Send data: {} bytes", body.len());
                }
            }
            let res = if method == "PUT" || !body.is_empty() {
                req.send_bytes(body)
            } else {
                req.call()
            };
            let resp = match res {
                Ok(r) => r,
                Err(ureq::Error::Status(_, r)) => r,
                Err(ureq::Error::Transport(t)) => return Err(NoAnswer::from(t)),
            };
            let status = resp.status();
            if self.opts.verbose > 0 {
                eprintln!(
                    "< {} {status} {}",
                    printable(resp.http_version()),
                    printable(resp.status_text())
                );
                for n in resp.headers_names() {
                    let v = resp.header(&n).unwrap_or("");
                    eprintln!("< {}: {}", printable(&n), printable(shown_header(&n, v)));
                }
            }
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                if let Some(loc) = resp.header("location").map(str::to_string) {
                    if hops >= MAX_REDIRECTS {
                        drain(resp);
                        return Err(NoAnswer {
                            kind: ObjFailure::Other,
                            text: format!("more than {MAX_REDIRECTS} redirects"),
                        });
                    }
                    let next = redirect(&at, &loc)?;
                    drain(resp);
                    hops += 1;
                    // As curl: a 303 turns anything but a HEAD into a GET, a 301 or
                    // 302 turns a POST into a GET; 307 and 308 keep method and body.
                    let to_get = (status == 303 && method != "HEAD")
                        || (matches!(status, 301 | 302) && method == "POST");
                    if to_get {
                        method = "GET".into();
                        body = &[];
                    }
                    at = next;
                    continue;
                }
            }
            if status == 401 && !foreign && self.basic.is_none() && self.opts.mode != Mode::S3 {
                if let Some((u, p)) = &self.opts.login {
                    let wants_basic = resp
                        .all("www-authenticate")
                        .iter()
                        .any(|c| c.trim_start().to_ascii_lowercase().starts_with("basic"));
                    if wants_basic {
                        drain(resp);
                        let creds =
                            base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
                        self.basic = Some(format!("Basic {creds}"));
                        continue;
                    }
                }
            }
            return Ok(resp);
        }
    }

    /// The object an I/O names, encoded for the request line and the signature.
    fn object(&self, io: &IoUnit) -> (String, u64) {
        let (name, size) = self
            .files
            .get(io.file as usize)
            .map_or(("", 0), |(n, s)| (n.as_str(), *s));
        let object = if self.opts.range {
            name.to_string()
        } else {
            format!("{name}_{}_{}", io.offset, io.len)
        };
        (sigv4::encode_path(&object), size)
    }

    /// A PUT of `body` as an S3 multipart upload: initiated, its parts sent
    /// `http_multipart_jobs` at a time (each part on a thread of its own with the
    /// job's agent, which keeps a connection per part in flight), then completed; a
    /// failed part aborts the upload. Each part is a sample of its own; the I/O's
    /// sample is the whole upload. Returns the I/O's result.
    fn multipart_put(&mut self, path: &str, body: &[u8], t0: Instant, out: &mut Outcome) -> i64 {
        let r = self.send("POST", path, "uploads=", &[], None);
        out.ttfb_ns = elapsed_ns(t0);
        let id = match r {
            Ok(r) if r.status() == 200 => {
                let xml = String::from_utf8_lossy(&drain(r)).into_owned();
                match xml_value(&xml, "UploadId") {
                    Some(id) => id.to_string(),
                    None => {
                        let e = io::Error::new(
                            io::ErrorKind::InvalidData,
                            "the answer to the upload's initiation has no UploadId",
                        );
                        return self.no_answer("POST", path, &e, ObjFailure::Other, out);
                    }
                }
            }
            Ok(r) => return self.bad_status("POST", path, r, out),
            Err(n) => return self.no_answer("POST", path, &n.text, n.kind, out),
        };
        let id_q = query_value(&id);
        let (size, jobs) = (self.opts.multipart.0 as usize, self.opts.multipart.1);
        let parts = body.len().div_ceil(size);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let opts = Arc::clone(&self.opts);
        let host = self.host().to_string();
        let agent = self.agent.clone().expect("set up before the first I/O");
        let signer = self.signer.clone().expect("S3 mode has a signer");
        // Each part: (number, its ETag or why it failed), and its sample.
        type Part = (usize, Result<String, (ObjFailure, String)>, ObjSample);
        let done: Vec<Part> = std::thread::scope(|sc| {
            let workers: Vec<_> = (0..jobs.min(parts))
                .map(|_| {
                    let (opts, host, agent, mut signer) = (&opts, &host, &agent, signer.clone());
                    let (next, id_q) = (&next, &id_q);
                    sc.spawn(move || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if i >= parts {
                                return mine;
                            }
                            let chunk = &body[i * size..((i + 1) * size).min(body.len())];
                            let query = format!("partNumber={}&uploadId={id_q}", i + 1);
                            let p0 = Instant::now();
                            let r = send_part(opts, host, agent, &mut signer, path, &query, chunk);
                            let ttfb_ns = elapsed_ns(p0);
                            let res = match r {
                                Ok(r) if r.status() == 200 => {
                                    let etag = r.header("etag").unwrap_or("").to_string();
                                    drain(r);
                                    Ok(etag)
                                }
                                Ok(r) => {
                                    let st = r.status();
                                    let text = String::from_utf8_lossy(&drain(r)).into_owned();
                                    Err((ObjFailure::Status(st), format!("status {st}: {text}")))
                                }
                                Err(n) => Err((n.kind, n.text)),
                            };
                            let lat_ns = elapsed_ns(p0);
                            let sample = ObjSample {
                                op: 5,
                                size: 0,
                                endpoint: 0,
                                fail: res.as_ref().err().map(|e| e.0),
                                bytes: chunk.len() as u64,
                                lat_ns,
                                ttfb_ns: ttfb_ns.min(lat_ns),
                            };
                            mine.push((i, res, sample));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_default())
                .collect()
        });
        let mut etags = vec![String::new(); parts];
        let mut failed = None;
        for (i, res, sample) in done {
            self.samples.push(sample);
            match res {
                Ok(e) => etags[i] = e,
                Err(f) => failed = failed.or(Some((i, f))),
            }
        }
        let q = format!("uploadId={id_q}");
        if let Some((i, (kind, why))) = failed {
            // Abort, so the server drops the parts it holds (best effort).
            if let Ok(r) = self.send("DELETE", path, &q, &[], None) {
                drain(r);
            }
            let e = io::Error::other(format!("part {} failed: {why}", i + 1));
            return self.no_answer("PUT", path, &e, kind, out);
        }
        let mut xml = String::from("<CompleteMultipartUpload>");
        for (i, e) in etags.iter().enumerate() {
            let _ = write!(
                xml,
                "<Part><PartNumber>{}</PartNumber><ETag>{e}</ETag></Part>",
                i + 1
            );
        }
        xml.push_str("</CompleteMultipartUpload>");
        match self.send("POST", path, &q, xml.as_bytes(), None) {
            // S3 may answer 200 with an error in the body when completing fails late.
            Ok(r) if r.status() == 200 => {
                let text = String::from_utf8_lossy(&drain(r)).into_owned();
                if text.contains("<Error>") {
                    let e = io::Error::other(format!("completing the upload failed: {text}"));
                    return self.no_answer("POST", path, &e, ObjFailure::Status(200), out);
                }
                body.len() as i64
            }
            Ok(r) => self.bad_status("POST", path, r, out),
            Err(n) => self.no_answer("POST", path, &n.text, n.kind, out),
        }
    }

    /// The server of the request being made.
    fn host(&self) -> &str {
        &self.opts.hosts[self.ep]
    }

    /// The mix's next operation, by weight.
    fn pick(&mut self, cumulative: &[u32; 5]) -> Req {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let total = u64::from(cumulative[4]).max(1);
        let r = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % total;
        let i = cumulative
            .iter()
            .position(|&c| r < u64::from(c))
            .unwrap_or(0);
        [Req::Get, Req::Put, Req::Head, Req::List, Req::Delete][i]
    }

    /// True when a failure is to be said: always, but once under `http_errors=keep_going`
    /// (where the counts say the rest).
    fn says(&mut self) -> bool {
        if self.opts.errors != Errors::KeepGoing {
            return true;
        }
        !std::mem::replace(&mut self.said, true)
    }

    /// A request answered with a status it does not accept: counted in `out`, said
    /// (status and the start of the server's answer), and an EIO for the I/O.
    fn bad_status(
        &mut self,
        what: &str,
        path: &str,
        resp: ureq::Response,
        out: &mut Outcome,
    ) -> i64 {
        let status = resp.status();
        out.fail = Some(ObjFailure::Status(status));
        let body = drain(resp);
        if self.says() {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            eprintln!(
                "iobench: http: {what} {path} failed with HTTP status code {status}{}{}",
                if text.is_empty() { "" } else { ": " },
                printable(text.trim())
            );
        }
        -(libc::EIO as i64)
    }

    /// A request that got no HTTP answer (or whose body broke off): counted in `out`,
    /// said, and an EIO for the I/O.
    fn no_answer(
        &mut self,
        what: &str,
        path: &str,
        why: &dyn std::fmt::Display,
        kind: ObjFailure,
        out: &mut Outcome,
    ) -> i64 {
        out.fail = Some(kind);
        if self.says() {
            eprintln!(
                "iobench: http: {what} {path}: {}",
                printable(&why.to_string())
            );
        }
        -(libc::EIO as i64)
    }

    /// Performs request `req` for I/O `io`; returns the I/O's result.
    ///
    /// # Safety
    ///
    /// As [`Engine::queue`]'s: `io.buf` is valid for `io.len` bytes (readable for a PUT,
    /// writable for a GET) and untouched by the worker until this returns.
    unsafe fn request(&mut self, req: Req, io: &IoUnit, t0: Instant, out: &mut Outcome) -> i64 {
        let (path, size) = self.object(io);
        let method = req.method();
        match req {
            Req::Put if self.opts.multipart.0 > 0 && io.len as u64 > self.opts.multipart.0 => {
                // SAFETY: this function's contract.
                let body = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                self.multipart_put(&path, body, t0, out)
            }
            Req::Put => {
                // SAFETY: this function's contract.
                let body = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                let r = self.send(method, &path, "", body, None);
                out.ttfb_ns = elapsed_ns(t0);
                match r {
                    Ok(r) if r.status() == 100 || (200..=204).contains(&r.status()) => {
                        drain(r);
                        io.len as i64
                    }
                    Ok(r) => self.bad_status(method, &path, r, out),
                    Err(n) => self.no_answer(method, &path, &n.text, n.kind, out),
                }
            }
            Req::Get => {
                // fio 3.41's range header: the block, cut at the file's end.
                let range = (self.opts.range && (size == 0 || io.offset < size)).then(|| {
                    let mut end = io.offset + io.len as u64 - 1;
                    if size > 0 {
                        end = end.min(size - 1);
                    }
                    format!("bytes={}-{end}", io.offset)
                });
                // SAFETY: this function's contract.
                let dst = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
                let r = self.send(method, &path, "", &[], range);
                out.ttfb_ns = elapsed_ns(t0);
                match r {
                    Ok(r) if r.status() == 200 || (r.status() == 206 && self.opts.range) => {
                        // The bytes the request asked for: the block, cut at the
                        // object's end when its size is known. A shorter body is a
                        // failed read, never counted as a whole one.
                        let want = if size > io.offset {
                            (size - io.offset).min(io.len as u64) as usize
                        } else {
                            io.len
                        };
                        match read_body(r, dst) {
                            Ok(n) if n < want => {
                                let e = io::Error::new(
                                    io::ErrorKind::UnexpectedEof,
                                    format!("the server sent {n} of the {want} bytes asked for"),
                                );
                                self.no_answer(method, &path, &e, ObjFailure::Other, out)
                            }
                            Ok(n) => {
                                if self.opts.verbose > 1 {
                                    eprintln!("<= Recv data: {n} bytes");
                                }
                                io.len as i64
                            }
                            Err(e) => {
                                let kind = io_kind(&e);
                                self.no_answer(method, &path, &e, kind, out)
                            }
                        }
                    }
                    Ok(r) if r.status() == 404 => {
                        // No such object: it reads as zeros.
                        drain(r);
                        dst.fill(0);
                        io.len as i64
                    }
                    Ok(r) => self.bad_status(method, &path, r, out),
                    Err(n) => self.no_answer(method, &path, &n.text, n.kind, out),
                }
            }
            Req::Delete => {
                let r = self.send(method, &path, "", &[], None);
                out.ttfb_ns = elapsed_ns(t0);
                match r {
                    Ok(r) if matches!(r.status(), 200 | 202 | 204 | 404) => {
                        drain(r);
                        io.len as i64
                    }
                    Ok(r) => self.bad_status(method, &path, r, out),
                    Err(n) => self.no_answer(method, &path, &n.text, n.kind, out),
                }
            }
            Req::Head | Req::List => {
                let (path, query) = if req == Req::Head {
                    (path, String::new())
                } else {
                    let file = self
                        .files
                        .get(io.file as usize)
                        .map_or("", |f| f.0.as_str());
                    list_query(&sigv4::encode_path(file))
                };
                let r = self.send(method, &path, &query, &[], None);
                out.ttfb_ns = elapsed_ns(t0);
                match r {
                    // A HEAD of an object never written is a 404, as a GET's: it succeeds.
                    Ok(r) if r.status() == 200 || (req == Req::Head && r.status() == 404) => {
                        let mut body = r.into_reader();
                        match io::copy(&mut body, &mut io::sink()) {
                            Ok(n) => {
                                out.bytes = n;
                                0
                            }
                            Err(e) => {
                                let kind = io_kind(&e);
                                self.no_answer(method, &path, &e, kind, out)
                            }
                        }
                    }
                    Ok(r) => self.bad_status(method, &path, r, out),
                    Err(n) => self.no_answer(method, &path, &n.text, n.kind, out),
                }
            }
        }
    }
}

/// A header's value as `http_verbose` prints it: the credentials a request carries
/// (Authorization, S3's session token and customer key, Swift's token, cookies) are
/// shown as `<redacted>`, the rest as sent.
fn shown_header<'a>(name: &str, value: &'a str) -> &'a str {
    const SECRET: &[&str] = &[
        "authorization",
        "proxy-authorization",
        "x-amz-security-token",
        "x-amz-server-side-encryption-customer-key",
        "x-auth-token",
        "x-storage-token",
        "x-subject-token",
        "cookie",
        "set-cookie",
    ];
    if SECRET.iter().any(|s| s.eq_ignore_ascii_case(name)) {
        crate::defs::REDACTED
    } else {
        value
    }
}

/// How many redirects one request follows (curl's default is 30; fio sets none).
const MAX_REDIRECTS: u32 = 5;

/// Where a request goes: scheme and `HOST[:PORT]`.
#[derive(Debug, Clone)]
struct Origin {
    scheme: String,
    host: String,
}

impl Origin {
    /// The same scheme, host (any case) and port (a missing port is the scheme's).
    fn same(&self, o: &Origin) -> bool {
        fn split(o: &Origin) -> (String, String, u16) {
            let default = if o.scheme == "https" { 443 } else { 80 };
            let h = o.host.to_ascii_lowercase();
            match h.rsplit_once(':') {
                Some((name, port)) if !name.ends_with(']') || h.starts_with('[') => {
                    match port.parse() {
                        Ok(p) => (o.scheme.clone(), name.to_string(), p),
                        Err(_) => (o.scheme.clone(), h.clone(), default),
                    }
                }
                _ => (o.scheme.clone(), h, default),
            }
        }
        split(self) == split(o)
    }
}

/// Where a redirect's `Location` leads from the request at `from` (origin, path,
/// query): only to `http:` or `https:` URLs, anything else (`file:`, `ftp:`, a URL that
/// does not parse) an error.
fn redirect(
    from: &(Origin, String, String),
    location: &str,
) -> Result<(Origin, String, String), NoAnswer> {
    let refuse = |why: String| NoAnswer {
        kind: ObjFailure::Other,
        text: why,
    };
    let base = format!("{}://{}{}", from.0.scheme, from.0.host, from.1);
    let base = url::Url::parse(&base).map_err(|e| {
        refuse(format!(
            "cannot follow a redirect from {}: {e}",
            printable(&base)
        ))
    })?;
    let to = base.join(location).map_err(|e| {
        refuse(format!(
            "redirect to '{}' refused: not a URL ({e})",
            printable(location)
        ))
    })?;
    if !matches!(to.scheme(), "http" | "https") {
        return Err(refuse(format!(
            "redirect to '{}' refused: only http: and https: are followed",
            printable(location)
        )));
    }
    let Some(host) = to.host_str() else {
        return Err(refuse(format!(
            "redirect to '{}' refused: no host",
            printable(location)
        )));
    };
    let host = match to.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    Ok((
        Origin {
            scheme: to.scheme().to_string(),
            host,
        },
        to.path().to_string(),
        to.query().unwrap_or("").to_string(),
    ))
}

/// One part of a multipart upload, sent from a part's thread: S3's headers signed with
/// that thread's signer, the body as it is.
fn send_part(
    o: &HttpOpts,
    host: &str,
    agent: &ureq::Agent,
    signer: &mut Signer,
    path: &str,
    query: &str,
    body: &[u8],
) -> Result<ureq::Response, NoAnswer> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let headers = s3_headers(
        o,
        host,
        signer,
        ("PUT", path, query),
        body,
        &sigv4::amz_date(now),
    );
    let scheme = if o.tls == Tls::Off { "http" } else { "https" };
    let mut req = agent
        .request("PUT", &format!("{scheme}://{host}{path}?{query}"))
        .set("Host", host);
    for (n, v) in &headers {
        req = req.set(n, v);
    }
    match req.send_bytes(body) {
        Ok(r) | Err(ureq::Error::Status(_, r)) => Ok(r),
        Err(ureq::Error::Transport(t)) => Err(NoAnswer::from(t)),
    }
}

/// The text of the first `<tag>…</tag>` in `xml`.
fn xml_value<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let len = xml[start..].find(&format!("</{tag}>"))?;
    Some(&xml[start..start + len])
}

/// A query value as SigV4 signs it (and as it is sent): unreserved bytes stay, every
/// other byte is `%XX`.
fn query_value(v: &str) -> String {
    sigv4::encode_path(v).replace('/', "%2F")
}

/// A LIST of the job's objects in file `file` (a path, encoded): S3's ListObjectsV2 of
/// the bucket (the path's first part) with the rest as the key prefix (in block mode
/// the file's objects are named from it), at most 100 keys; as (bucket path, canonical
/// query).
fn list_query(file: &str) -> (String, String) {
    let rest = file.trim_start_matches('/');
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    // The path is encoded already but for '/', which a query value encodes too.
    let prefix = key.replace('/', "%2F");
    (
        format!("/{bucket}"),
        format!("list-type=2&max-keys=100&prefix={prefix}"),
    )
}

fn elapsed_ns(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// What kind of failure an I/O error on the connection is.
fn io_kind(e: &io::Error) -> ObjFailure {
    use io::ErrorKind as E;
    match e.kind() {
        E::TimedOut | E::WouldBlock => ObjFailure::Timeout,
        E::ConnectionReset
        | E::ConnectionAborted
        | E::ConnectionRefused
        | E::BrokenPipe
        | E::UnexpectedEof
        | E::NotConnected => ObjFailure::Reset,
        _ => ObjFailure::Other,
    }
}

/// A request that got no HTTP answer: what kind of failure it is and ureq's words for
/// it (made only when a request fails).
#[derive(Debug)]
struct NoAnswer {
    kind: ObjFailure,
    text: String,
}

impl From<ureq::Transport> for NoAnswer {
    fn from(t: ureq::Transport) -> Self {
        NoAnswer {
            kind: transport_kind(&t),
            text: t.to_string(),
        }
    }
}

/// What kind of failure a request without an answer is.
fn transport_kind(t: &ureq::Transport) -> ObjFailure {
    use std::error::Error as _;
    match t.kind() {
        ureq::ErrorKind::ConnectionFailed => ObjFailure::Reset,
        ureq::ErrorKind::Io => t
            .source()
            .and_then(|s| s.downcast_ref::<io::Error>())
            .map_or(ObjFailure::Other, io_kind),
        _ => ObjFailure::Other,
    }
}

fn hex_md5(data: &[u8]) -> String {
    use md5::Digest;
    sigv4::hex(&md5::Md5::digest(data))
}

/// S3's headers for one request at `amz_date`, Authorization last: the payload's real
/// SHA-256 (of the body for a PUT, of nothing otherwise), and fio's signed set in fio's
/// order: host (sent by the client, not listed here), x-amz-content-sha256, x-amz-date,
/// the three SSE-C headers with a customer key, x-amz-security-token when set, and
/// x-amz-storage-class.
fn s3_headers(
    o: &HttpOpts,
    host: &str,
    signer: &mut Signer,
    (method, path, query): (&str, &str, &str),
    body: &[u8],
    amz_date: &str,
) -> Vec<(&'static str, String)> {
    let payload = if method == "PUT" || !body.is_empty() {
        sigv4::sha256_hex(body)
    } else {
        sigv4::EMPTY_SHA256.to_string()
    };
    let mut signed: Vec<(&'static str, &str)> = vec![
        ("host", host),
        ("x-amz-content-sha256", &payload),
        ("x-amz-date", amz_date),
    ];
    if let Some(s) = &o.sse {
        signed.push((
            "x-amz-server-side-encryption-customer-algorithm",
            &s.algorithm,
        ));
        signed.push(("x-amz-server-side-encryption-customer-key", &s.key));
        signed.push(("x-amz-server-side-encryption-customer-key-md5", &s.key_md5));
    }
    if let Some(t) = &o.security_token {
        signed.push(("x-amz-security-token", t));
    }
    signed.push(("x-amz-storage-class", &o.storage_class));
    // SigV4 signs headers sorted by name. fio lists the token after the SSE-C headers,
    // out of order ("x-amz-sec" sorts before "x-amz-ser"), which a server's own sorted
    // canonical request cannot match; sorting signs the same set the way servers check.
    signed.sort_unstable_by_key(|&(n, _)| n);
    let auth = signer.authorize(method, path, query, &signed, &payload, amz_date);
    let mut h: Vec<(&'static str, String)> = signed[1..]
        .iter()
        .map(|&(n, v)| (n, v.to_string()))
        .collect();
    h.push(("Authorization", auth));
    h
}

/// Reads a response's body to its end, so the connection can carry the next request.
fn drain(resp: ureq::Response) -> Vec<u8> {
    let mut v = Vec::new();
    let _ = resp.into_reader().take(1 << 20).read_to_end(&mut v);
    v
}

/// A server's answer given whole as text (head and body), read as a GET of `len` bytes
/// is, and its error body as a failed request's is (for the fuzz target of response
/// parsing: any bytes give a result or an error, never a panic).
pub fn read_response_text(text: &str, len: usize) -> Result<usize, String> {
    let resp: ureq::Response = text.parse().map_err(|e: ureq::Error| e.to_string())?;
    let status = resp.status();
    if status >= 300 {
        let body = drain(resp);
        return Err(crate::osstr::printable(&String::from_utf8_lossy(&body)).into_owned());
    }
    let mut buf = vec![0u8; len.min(1 << 20)];
    read_body(resp, &mut buf).map_err(|e| e.to_string())
}

/// Reads a GET's body into `dst`: Ok(bytes) or Err(why). A body longer than the I/O is
/// an error (as fio's), a shorter one leaves the rest of the buffer as it was.
fn read_body(resp: ureq::Response, dst: &mut [u8]) -> io::Result<usize> {
    // The body's length must be said, and said right: a Content-Length that is not one
    // number, or neither it nor chunked encoding (a body that ends when the server
    // closes, which a cut connection fakes), is an error of this request.
    let bad = |why: String| Err(io::Error::new(io::ErrorKind::InvalidData, why));
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    let lengths: Vec<&str> = resp
        .headers_names()
        .iter()
        .filter(|n| n.eq_ignore_ascii_case("content-length"))
        .flat_map(|n| resp.all(n))
        .collect();
    match lengths.as_slice() {
        [] if !chunked => return bad("the answer says no Content-Length".into()),
        [] => {}
        [l] if l.trim().parse::<u64>().is_ok() => {}
        [l] => return bad(format!("the answer's Content-Length '{l}' is not a length")),
        many => {
            let first = many[0].trim();
            if many.iter().any(|l| l.trim() != first) || first.parse::<u64>().is_err() {
                return bad(format!(
                    "the answer has {} Content-Length headers that differ",
                    many.len()
                ));
            }
        }
    }
    let mut r = resp.into_reader();
    let mut n = 0;
    while n < dst.len() {
        match r.read(&mut dst[n..]) {
            Ok(0) => return Ok(n),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut more = [0u8; 1];
    match r.read(&mut more) {
        Ok(0) => Ok(n),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the object is longer than the {} bytes read", dst.len()),
        )),
        Err(e) => Err(e),
    }
}

/// A certificate verifier that accepts any server (`https=insecure`): the handshake's
/// signatures are still checked against the certificate the server sent, so the session
/// is encrypted, but nothing says who the server is.
#[derive(Debug)]
struct AnyServer(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The job's agent: one kept-alive connection per server, TLS as `https` says.
fn agent(tls: Tls, timeout: Option<std::time::Duration>, hosts: usize) -> io::Result<ureq::Agent> {
    let mut b = ureq::AgentBuilder::new()
        // Redirects are the engine's own (`Http::send`), so credentials never follow one.
        .redirects(0)
        .max_idle_connections(hosts)
        .max_idle_connections_per_host(1)
        .user_agent(concat!("iobench/", env!("CARGO_PKG_VERSION")));
    if let Some(t) = timeout {
        // A deadline for the whole request: ureq 2 clears a kept-alive connection's
        // read timeout when it goes back to the pool and sets it again only for the
        // body, so `timeout_read` alone would let a reused connection wait forever for
        // the response's head.
        b = b.timeout(t);
    }
    let b = match tls {
        Tls::Insecure => {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let cfg = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
                .with_safe_default_protocol_versions()
                .map_err(io::Error::other)?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
                .with_no_client_auth();
            b.tls_config(Arc::new(cfg))
        }
        // ureq's own rustls set-up: the web's root CAs (webpki-roots).
        Tls::On | Tls::Off => b,
    };
    Ok(b.build())
}

impl Engine for Http {
    fn setup(&mut self, s: &Setup<'_>) -> io::Result<()> {
        if let Some(bad) = s.names.iter().find(|n| !n.starts_with('/')) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "http: the object path '{bad}' does not start with '/': name objects \
                     with filename=/bucket/object (or directory=/bucket)"
                ),
            ));
        }
        // A `.` or `..` segment would be resolved by the URL parser (even as %2E%2E), so
        // the request would name another object, or another bucket: refused, never sent.
        if let Some(bad) = s
            .names
            .iter()
            .find(|n| n.split('/').any(|seg| seg == "." || seg == ".."))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "http: the object path '{}' has a '.' or '..' segment, which the \
                     request would resolve to another object: name it without one",
                    printable(bad)
                ),
            ));
        }
        self.agent = Some(agent(
            self.opts.tls,
            self.opts.timeout,
            self.opts.hosts.len() * self.opts.multipart.1,
        )?);
        self.files = s
            .names
            .iter()
            .zip(s.files.iter().map(|f| f.size).chain(std::iter::repeat(0)))
            .map(|(n, sz)| (n.clone(), sz))
            .collect();
        if let Some((id, key, region)) = &self.opts.s3 {
            self.signer = Some(Signer::new(id, key, region, "s3"));
        }
        Ok(())
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let dir = match io.op {
            Op::Rw(d) => d,
            Op::Sync { .. } => {
                eprintln!("iobench: http: only reads, writes and trims are supported (not a sync)");
                io.result = -(libc::EIO as i64);
                return Ok(Queued::Completed);
            }
        };
        let req = match (self.opts.mix, dir) {
            (Some(m), _) => self.pick(&m),
            (None, Ddir::Read) => Req::Get,
            (None, Ddir::Write) => Req::Put,
            (None, Ddir::Trim) => Req::Delete,
        };
        let size = self
            .opts
            .sizes
            .partition_point(|&(_, top)| top < io.len as u64)
            .min(self.opts.sizes.len().saturating_sub(1));
        let t0 = Instant::now();
        let mut out = Outcome::default();
        // SAFETY: queue's contract is request's (a unit's buffer is the same memory,
        // readable and writable, whichever direction the mix turns it to).
        io.result = unsafe { self.request(req, io, t0, &mut out) };
        let endpoint = self.ep;
        self.ep = (self.ep + 1) % self.opts.hosts.len();
        if self.opts.mix.is_some() {
            // The job counts the request in the direction of what it did; a HEAD or a
            // LIST moves none of the I/O's bytes.
            io.op = Op::Rw(req.ddir());
            if matches!(req, Req::Head | Req::List) {
                io.len = 0;
            }
        }
        if self.measure {
            let lat_ns = elapsed_ns(t0);
            let whole = req == Req::Put
                && self.opts.multipart.0 > 0
                && io.len as u64 > self.opts.multipart.0;
            self.samples.push(ObjSample {
                op: if whole { 6 } else { req as u8 },
                size: u16::try_from(size).unwrap_or(u16::MAX),
                endpoint: u16::try_from(endpoint).unwrap_or(u16::MAX),
                fail: out.fail,
                bytes: if io.result > 0 {
                    io.result as u64
                } else {
                    out.bytes
                },
                lat_ns,
                ttfb_ns: out.ttfb_ns.min(lat_ns),
            });
        }
        Ok(Queued::Completed)
    }

    fn obj_layout(&self) -> Option<ObjLayout> {
        self.measure.then(|| ObjLayout {
            errors: self.opts.errors != Errors::Stop,
            ttfb: self.opts.ttfb,
            sizes: self.opts.sizes.iter().map(|(n, _)| n.clone()).collect(),
            endpoints: self.opts.hosts.clone(),
            multipart: self.opts.multipart.0 > 0,
        })
    }

    fn drain_obj_samples(&mut self, record: &mut dyn FnMut(&ObjSample)) {
        for s in &self.samples {
            record(s);
        }
        self.samples.clear();
    }
}

/// The size classes of `http_size_classes`, from the job's own sizes: with `bssplit`,
/// one class per size it names; with a `bsrange` whose ends differ, one per power of two
/// from its low end's to its high end's (`4k-8k` holds 4 KiB to 8 KiB less a byte);
/// otherwise one per `bs` size. Each as (name, largest size in it), ascending.
fn size_classes(r: &Reader) -> Result<Vec<(String, u64)>, JobError> {
    use crate::defs::value::{parse_bssplit, parse_range_list, parse_size_list};
    let base = r.kb_base();
    let mut sizes: Vec<u64> = Vec::new();
    if let Some(t) = r.text(&BSSPLIT) {
        let split = parse_bssplit(&t, base).map_err(|m| r.invalid(&BSSPLIT, m))?;
        sizes.extend(split.iter().flatten().flatten().map(|e| e.0));
    } else if let Some(t) = r.text(&BSRANGE).filter(|_| r.is_set(&BSRANGE)) {
        let ranges = parse_range_list(&t, base).map_err(|m| r.invalid(&BSRANGE, m))?;
        let (lo, hi) = ranges
            .iter()
            .flatten()
            .fold((u64::MAX, 0), |(l, h), &(a, b)| (l.min(a), h.max(b)));
        if lo < hi {
            let mut classes = Vec::new();
            let mut from = 1u64 << (63 - lo.max(1).leading_zeros());
            while from <= hi {
                let to = from.saturating_mul(2);
                classes.push((format!("{}-{}", size_name(from), size_name(to)), to - 1));
                from = to;
            }
            return Ok(classes);
        }
        sizes.push(lo);
    }
    if sizes.is_empty() {
        let t = r.string(&BS);
        let bs = parse_size_list(&t, base).map_err(|m| r.invalid(&BS, m))?;
        sizes.extend(bs.iter().flatten());
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes.into_iter().map(|s| (size_name(s), s)).collect())
}

/// A size as the classes name it: `64k`, `1m`, or bytes.
fn size_name(n: u64) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{}m", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{}k", n >> 10)
    } else {
        n.to_string()
    }
}

/// Reads `http_opmix`: `op:weight` pairs, comma-separated, for get, put, head, list and
/// delete (any case, each at most once; a missing one weighs 0), into cumulative weights.
fn parse_mix(text: &str) -> Result<[u32; 5], String> {
    const NAMES: [&str; 5] = ["get", "put", "head", "list", "delete"];
    let mut w = [None::<u32>; 5];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = part.split_once(':').ok_or_else(|| {
            format!("'{part}' is not OP:WEIGHT (OP one of get, put, head, list, delete)")
        })?;
        let i = NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| format!("'{name}' is not one of get, put, head, list, delete"))?;
        let n: u32 = weight
            .trim()
            .parse()
            .ok()
            .filter(|&n| n <= 1_000_000)
            .ok_or_else(|| format!("'{weight}' in '{part}' is not a weight (0 to 1000000)"))?;
        if w[i].replace(n).is_some() {
            return Err(format!("'{name}' is given twice"));
        }
    }
    let mut acc = 0;
    let mut out = [0; 5];
    for (o, x) in out.iter_mut().zip(w) {
        acc += x.unwrap_or(0);
        *o = acc;
    }
    if acc == 0 {
        return Err(format!(
            "'{text}' gives no operation a weight (e.g. get:60,put:20,head:10,list:5,delete:5)"
        ));
    }
    Ok(out)
}

/// A text option, `None` when unset or empty (fio keeps an empty value as no value).
fn nonempty(r: &Reader, def: &OptDef) -> Option<String> {
    r.text(def).filter(|s| !s.is_empty())
}

impl super::spec::Declared for Http {
    type Opts = Arc<HttpOpts>;
    const SPECS: &'static [Spec] = &[Spec::new(
        "http",
        "HTTP requests to an object store: WebDAV, S3 or Swift",
        Flags {
            diskless: true,
            opens_own_files: true,
            own_deadline: true,
            ..Flags::SYNC
        },
    )
    .options(&[
        HTTPS,
        HTTP_HOST,
        HTTP_USER,
        HTTP_PASS,
        HTTP_S3_KEY,
        HTTP_S3_KEYID,
        HTTP_S3_SECURITY_TOKEN,
        HTTP_SWIFT_AUTH_TOKEN,
        HTTP_S3_REGION,
        HTTP_S3_SSE_CUSTOMER_KEY,
        HTTP_S3_SSE_CUSTOMER_ALGORITHM,
        HTTP_S3_STORAGE_CLASS,
        HTTP_MODE,
        HTTP_VERBOSE,
        HTTP_OBJECT_MODE,
        HTTP_ERRORS,
        HTTP_TTFB,
        HTTP_OPMIX,
        HTTP_SIZE_CLASSES,
        HTTP_ENDPOINTS,
        HTTP_MULTIPART,
        HTTP_MULTIPART_JOBS,
    ])
    // fio lists http among ioengine's choices only when built with libcurl, which the
    // reference fio (Debian's 3.33) is not.
    .hidden()];

    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<Arc<HttpOpts>, JobError> {
        let tls = match r.choice(&HTTPS).as_deref() {
            None | Some("off") => Tls::Off,
            Some("on") => Tls::On,
            Some("insecure") => Tls::Insecure,
            Some(o) => {
                return Err(r.invalid(&HTTPS, format!("'{o}' is not one of off, on, insecure")))
            }
        };
        let mode = match r.choice(&HTTP_MODE).as_deref() {
            None | Some("webdav") => Mode::Webdav,
            Some("s3") => Mode::S3,
            Some("swift") => Mode::Swift,
            Some(o) => {
                return Err(r.invalid(&HTTP_MODE, format!("'{o}' is not one of webdav, s3, swift")))
            }
        };
        let range = match r.choice(&HTTP_OBJECT_MODE).as_deref() {
            None | Some("block") => false,
            Some("range") => true,
            Some(o) => {
                return Err(r.invalid(
                    &HTTP_OBJECT_MODE,
                    format!("'{o}' is not one of block, range"),
                ))
            }
        };
        let host = r.string(&HTTP_HOST);
        if host.is_empty() || host.contains(['/', ' ']) {
            return Err(r.invalid(
                &HTTP_HOST,
                format!("'{host}' is not a host name (HOST or HOST:PORT, no scheme or path)"),
            ));
        }
        let s3 = if mode == Mode::S3 {
            match (nonempty(r, &HTTP_S3_KEYID), nonempty(r, &HTTP_S3_KEY)) {
                (Some(id), Some(key)) => {
                    let region = r.string(&HTTP_S3_REGION);
                    Some((id, key, region))
                }
                _ => {
                    return Err(r.invalid(
                        &HTTP_S3_KEYID,
                        "http_mode=s3 signs every request (AWS Signature V4) and needs both \
                         http_s3_keyid and http_s3_key",
                    ))
                }
            }
        } else {
            None
        };
        let sse = nonempty(r, &HTTP_S3_SSE_CUSTOMER_KEY).map(|k| {
            // fio's customer key: the option's first 32 bytes, zero-padded to 32.
            let mut key = [0u8; 32];
            let n = k.len().min(32);
            key[..n].copy_from_slice(&k.as_bytes()[..n]);
            let b64 = base64::engine::general_purpose::STANDARD;
            let md5 = {
                use md5::Digest;
                md5::Md5::digest(key)
            };
            SseC {
                algorithm: r.string(&HTTP_S3_SSE_CUSTOMER_ALGORITHM),
                key: b64.encode(key),
                key_md5: b64.encode(md5),
            }
        });
        let login = match (r.text(&HTTP_USER), r.text(&HTTP_PASS)) {
            (Some(u), Some(p)) => Some((u, p)),
            _ => None,
        };
        let errors = match r.choice(&HTTP_ERRORS).as_deref() {
            None | Some("stop") => Errors::Stop,
            Some("count") => Errors::Count,
            Some("keep_going") => Errors::KeepGoing,
            Some(o) => {
                return Err(r.invalid(
                    &HTTP_ERRORS,
                    format!("'{o}' is not one of stop, count, keep_going"),
                ))
            }
        };
        let mix = match r.text(&HTTP_OPMIX) {
            Some(t) if !t.is_empty() => Some(parse_mix(&t).map_err(|m| r.invalid(&HTTP_OPMIX, m))?),
            _ => None,
        };
        if let Some(m) = mix {
            if m[3] > m[2] && mode != Mode::S3 {
                return Err(r.invalid(
                    &HTTP_OPMIX,
                    "list is an S3 request (ListObjectsV2): it needs http_mode=s3",
                ));
            }
            if r.text(&VERIFY)
                .is_some_and(|v| !matches!(v.as_str(), "0" | "none" | ""))
            {
                return Err(r.invalid(
                    &HTTP_OPMIX,
                    "a mix picks each request's operation itself, so what a read finds is \
                     not what the job wrote: it cannot run with verify",
                ));
            }
        }
        // Each request's deadline (the engine's `own_deadline`: the watchdog waits a
        // grace longer). A request that misses it fails as a timeout, counted under
        // http_errors.
        let timeout = match r.time_us(&IO_TIMEOUT)? {
            0 => None,
            us => Some(std::time::Duration::from_micros(us)),
        };
        let mut hosts = vec![host];
        if let Some(list) = nonempty(r, &HTTP_ENDPOINTS) {
            hosts = list.split(',').map(|h| h.trim().to_string()).collect();
            if let Some(bad) = hosts
                .iter()
                .find(|h| h.is_empty() || h.contains(['/', ' ']))
            {
                return Err(r.invalid(
                    &HTTP_ENDPOINTS,
                    format!(
                        "'{bad}' is not a host name (HOST or HOST:PORT, no scheme or path; \
                         endpoints are separated by ',')"
                    ),
                ));
            }
        }
        let part = r.bytes(&HTTP_MULTIPART)?;
        if part > 0 && mode != Mode::S3 {
            return Err(r.invalid(
                &HTTP_MULTIPART,
                "multipart uploads are S3's: they need http_mode=s3",
            ));
        }
        if part > 0 && range {
            return Err(r.invalid(
                &HTTP_MULTIPART,
                "range mode writes one object per file in pieces already: use block mode",
            ));
        }
        let part_jobs = r.num(&HTTP_MULTIPART_JOBS)?.clamp(1, 256) as usize;
        Ok(Arc::new(HttpOpts {
            tls,
            multipart: (part, part_jobs),
            hosts,
            login,
            mode,
            s3,
            security_token: nonempty(r, &HTTP_S3_SECURITY_TOKEN),
            sse,
            storage_class: r.string(&HTTP_S3_STORAGE_CLASS),
            swift_token: r.string(&HTTP_SWIFT_AUTH_TOKEN),
            verbose: r.num(&HTTP_VERBOSE)?,
            range,
            timeout,
            errors,
            ttfb: r.bool(&HTTP_TTFB)?,
            mix,
            sizes: if r.bool(&HTTP_SIZE_CLASSES)? {
                size_classes(r)?
            } else {
                Vec::new()
            },
            seed: r
                .int(&RANDSEED)?
                .map_or(0x9e37_79b9_7f4a_7c15, |v| v as u64),
        }))
    }

    fn for_clone(o: &mut Arc<HttpOpts>, clone: u32) {
        if clone > 0 {
            Arc::make_mut(o).seed = o.seed.wrapping_add(u64::from(clone));
        }
    }

    fn build(o: &Arc<HttpOpts>) -> Self {
        Http {
            opts: Arc::clone(o),
            agent: None,
            files: Vec::new(),
            signer: None,
            basic: None,
            measure: o.errors != Errors::Stop
                || o.ttfb
                || o.mix.is_some()
                || !o.sizes.is_empty()
                || o.hosts.len() > 1
                || o.multipart.0 > 0,
            samples: Vec::with_capacity(8),
            said: false,
            rng: o.seed | 1,
            ep: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options for an S3 job with the SigV4 suite's credentials.
    fn s3_opts(region: &str, sse: bool, token: Option<&str>) -> (HttpOpts, Signer) {
        let b64 = base64::engine::general_purpose::STANDARD;
        let key = *b"0123456789abcdef0123456789abcdef";
        let md5 = {
            use md5::Digest;
            md5::Md5::digest(key)
        };
        let o = HttpOpts {
            tls: Tls::Off,
            hosts: vec!["127.0.0.1:8333".into()],
            multipart: (0, 1),
            login: None,
            mode: Mode::S3,
            s3: None,
            security_token: token.map(str::to_string),
            sse: sse.then(|| SseC {
                algorithm: "AES256".into(),
                key: b64.encode(key),
                key_md5: b64.encode(md5),
            }),
            storage_class: "STANDARD".into(),
            swift_token: String::new(),
            verbose: 0,
            range: false,
            timeout: None,
            errors: Errors::Stop,
            ttfb: false,
            mix: None,
            seed: 1,
            sizes: Vec::new(),
        };
        let signer = Signer::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            region,
            "s3",
        );
        (o, signer)
    }

    fn authorization(h: &[(&str, String)]) -> String {
        h.iter()
            .find(|(n, _)| *n == "Authorization")
            .unwrap()
            .1
            .clone()
    }

    #[test]
    fn answers_without_a_right_length_are_errors() {
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd";
        assert_eq!(read_response_text(ok, 4096), Ok(4));
        for (text, why) in [
            ("HTTP/1.1 200 OK\r\n\r\nabcd", "no Content-Length"),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 4x\r\n\r\nabcd",
                "not a length",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 9\r\n\r\nabcd",
                "differ",
            ),
        ] {
            let e = read_response_text(text, 4096).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
        let e =
            read_response_text("HTTP/1.1 500 x\r\nContent-Length: 3\r\n\r\n\x1b[2", 8).unwrap_err();
        assert!(!e.contains('\x1b'), "{e}");
    }

    #[test]
    fn opmix_is_read_into_cumulative_weights() {
        assert_eq!(
            parse_mix("get:60,PUT:20,head:10,list:5,delete:5"),
            Ok([60, 80, 90, 95, 100])
        );
        assert_eq!(parse_mix("put:1, get:3"), Ok([3, 4, 4, 4, 4]));
        for bad in ["get", "get:x", "post:1", "get:1,get:2", "get:0", "get:-1"] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
    }

    /// The engine's S3 requests signed as botocore's S3SigV4Auth signs the same request:
    /// the Signature values below are botocore 1.43.11's, printed by
    /// scripts/http_sigv4_botocore.py (same cases, time 2026-11-27T12:34:56Z). A wrong
    /// payload hash, header set, header order, scope or path encoding changes them.
    #[test]
    fn s3_requests_sign_as_botocore_signs_them() {
        const DATE: &str = "20261127T123456Z";
        let body = b"hello, object store".repeat(10);
        let (o, mut s) = s3_opts("us-east-1", false, None);
        let put = s3_headers(
            &o,
            "127.0.0.1:8333",
            &mut s,
            ("PUT", "/bkt/obj_0_4096", ""),
            &body,
            DATE,
        );
        assert_eq!(
            put[0],
            (
                "x-amz-content-sha256",
                "fdd7545a2434db88f17688781cb551217f9d773f5139c01c2d14ac9502721332".to_string()
            )
        );
        assert_eq!(
            authorization(&put),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261127/us-east-1/s3/aws4_request,\
             SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,\
             Signature=6251f2b6384fc607c856c9cb8431b288a63fa89c4c38354a58bf78768593243f"
        );
        let del = s3_headers(
            &o,
            "127.0.0.1:8333",
            &mut s,
            ("DELETE", "/bkt/obj_8192_4096", ""),
            &[],
            DATE,
        );
        assert!(authorization(&del).ends_with(
            "Signature=2d1d2dd0d7052a87ffc1f416a7a037b2da8dc103f8bcc4fb3209dbf7f5f6a887"
        ));

        let (o, mut s) = s3_opts("eu-central-1", true, Some("FQoGZXIvYXdzEXAMPLETOKEN"));
        let path = sigv4::encode_path("/bkt/a b+c=d_4096_4096");
        let get = s3_headers(&o, "127.0.0.1:8333", &mut s, ("GET", &path, ""), &[], DATE);
        assert_eq!(
            authorization(&get),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261127/eu-central-1/s3/aws4_request,\
             SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token;\
             x-amz-server-side-encryption-customer-algorithm;\
             x-amz-server-side-encryption-customer-key;\
             x-amz-server-side-encryption-customer-key-md5;x-amz-storage-class,\
             Signature=9f7979310362d75cdf500f0770a219262bc6eaf9993491378249299cafac03b4"
        );
        // Every signed header but host is sent.
        let sent: Vec<&str> = get.iter().map(|(n, _)| *n).collect();
        assert_eq!(sent.len(), 8, "{sent:?}");
        assert!(sent.contains(&"x-amz-security-token"));
    }
}
