//! The http engine against a hostile server: a loopback listener in the test answers
//! each request with bytes the test chooses (redirects to another port or to `file:`,
//! short bodies, bytes past Content-Length, bad lengths) and records what it was sent,
//! so each case checks that no credential leaves for another host, that no answer fakes
//! a result, and that nothing panics.

use crate::common;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::Output;
use std::sync::{Arc, Mutex};

/// One request the server read.
#[derive(Debug, Clone)]
pub struct Req {
    /// Which connection it came on (0 for the first the server accepted).
    pub conn: usize,
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn method(&self) -> &str {
        self.line.split(' ').next().unwrap_or("")
    }
}

/// What the server does with a request: the bytes to write, and whether to close the
/// connection after them.
pub type Answer = (Vec<u8>, bool);

/// A loopback HTTP server whose every answer the test writes; it records the requests.
/// Its thread ends with the test process (it holds no file and no child).
pub struct Hostile {
    pub port: u16,
    seen: Arc<Mutex<Vec<Req>>>,
}

impl Hostile {
    pub fn start(answer: impl Fn(&Req, usize) -> Answer + Send + Sync + 'static) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let s2 = Arc::clone(&seen);
        std::thread::spawn(move || {
            for (k, conn) in listener.incoming().enumerate() {
                let Ok(conn) = conn else { return };
                let (seen, answer) = (Arc::clone(&s2), Arc::clone(&answer));
                std::thread::spawn(move || {
                    let mut r = BufReader::new(conn.try_clone().unwrap());
                    let mut w = conn;
                    while let Some(mut req) = read_req(&mut r) {
                        req.conn = k;
                        let n = {
                            let mut g = seen.lock().unwrap();
                            g.push(req.clone());
                            g.len() - 1
                        };
                        let (bytes, close) = answer(&req, n);
                        if w.write_all(&bytes).is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        Hostile { port, seen }
    }

    pub fn seen(&self) -> Vec<Req> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_req(r: &mut impl BufRead) -> Option<Req> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':')?;
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Req {
        conn: 0,
        line: line.trim_end().to_string(),
        headers,
        body,
    })
}

/// An answer with `status`, extra header lines and a body (its Content-Length right).
pub fn reply(status: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut v = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    v.extend_from_slice(body);
    v
}

pub fn iobench(args: &[String]) -> Output {
    let mut c = common::iobench();
    c.args(args);
    common::run(c)
}

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const SECRETS: [&str; 4] = [
    "S3SECRETKEYvalue",
    "STSSESSIONTOKENvalue",
    "SSECUSTOMERKEYvalue0123456789abc",
    "SWIFTTOKENvalue",
];

/// An S3 job with every credential set, at `port`.
fn s3_job(port: u16, rw: &str) -> Vec<String> {
    let mut a = args(&[
        "--name=s",
        "--ioengine=http",
        "--http_mode=s3",
        "--http_s3_keyid=AKIDEXAMPLE",
        "--filename=/bkt/obj",
        "--bs=4k",
        "--size=4k",
        "--output-format=json",
    ]);
    a.push(format!("--rw={rw}"));
    a.push(format!("--http_host=127.0.0.1:{port}"));
    a.push(format!("--http_s3_key={}", SECRETS[0]));
    a.push(format!("--http_s3_security_token={}", SECRETS[1]));
    a.push(format!("--http_s3_sse_customer_key={}", SECRETS[2]));
    a
}

/// A redirect to another port (another origin) gets none of the credentials: not S3's
/// signature, session token or SSE-C key (curl, and so fio, would send the last two),
/// nor Swift's token or HTTP authentication; the home server had them all.
#[test]
fn a_redirect_to_another_origin_carries_no_credential() {
    let other = Hostile::start(|_, _| (reply("201 Created", "", b""), false));
    let to = other.port;
    let home = Hostile::start(move |r, _| {
        let loc = format!(
            "Location: http://127.0.0.1:{to}/elsewhere{}\r\n",
            r.line.len()
        );
        (reply("307 Temporary Redirect", &loc, b""), false)
    });
    let out = iobench(&s3_job(home.port, "write"));
    assert!(out.status.success(), "{}", text(&out));
    let home_seen = home.seen();
    assert!(home_seen[0].header("authorization").is_some());
    assert!(home_seen[0].header("x-amz-security-token").is_some());
    let seen = other.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].method(), "PUT");
    assert_eq!(seen[0].body.len(), 4096, "a 307 keeps the body");
    for (n, v) in &seen[0].headers {
        let n = n.to_ascii_lowercase();
        assert!(
            !n.starts_with("authorization")
                && !n.starts_with("x-amz-security-token")
                && !n.starts_with("x-amz-server-side-encryption-customer-key")
                && !n.starts_with("x-auth-token"),
            "{n}: {v} went to another origin"
        );
        for s in SECRETS {
            assert!(!v.contains(s), "{n}: {v}");
        }
    }
    assert_eq!(seen[0].header("host"), Some(&*format!("127.0.0.1:{to}")));

    // Swift's token and a WebDAV password alike.
    let other = Hostile::start(|_, _| (reply("201 Created", "", b""), false));
    let to = other.port;
    let home = Hostile::start(move |_, _| {
        let loc = format!("Location: http://127.0.0.1:{to}/x\r\n");
        (reply("308 Permanent Redirect", &loc, b""), false)
    });
    let mut a = args(&[
        "--name=w",
        "--ioengine=http",
        "--http_mode=swift",
        "--filename=/c/o",
        "--rw=write",
        "--bs=4k",
        "--size=4k",
        "--http_user=alice",
        "--http_pass=PASSWORDvalue",
    ]);
    a.push(format!("--http_host=127.0.0.1:{}", home.port));
    a.push(format!("--http_swift_auth_token={}", SECRETS[3]));
    let out = iobench(&a);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(home.seen()[0].header("x-auth-token"), Some(SECRETS[3]));
    let seen = other.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].header("x-auth-token"), None, "{seen:?}");
    assert_eq!(seen[0].header("authorization"), None, "{seen:?}");
}

/// A redirect on the same origin is followed with the credentials (S3 signs the new
/// path), as curl does.
#[test]
fn a_redirect_on_the_same_origin_keeps_the_credentials() {
    let home = Hostile::start(|r, _| {
        if r.line.contains("/moved") {
            (reply("200 OK", "", b""), false)
        } else {
            (
                reply("307 Temporary Redirect", "Location: /bkt/moved\r\n", b""),
                false,
            )
        }
    });
    let out = iobench(&s3_job(home.port, "write"));
    assert!(out.status.success(), "{}", text(&out));
    let seen = home.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[1].line.starts_with("PUT /bkt/moved "), "{seen:?}");
    assert!(seen[1].header("authorization").is_some(), "{seen:?}");
    assert_eq!(seen[1].header("x-amz-security-token"), Some(SECRETS[1]));
}

/// `file:` and `ftp:` redirects are refused (the worker panicked on `file://`): the I/O
/// fails with EIO, the message says why, and no redirect loop runs forever.
#[test]
fn file_and_ftp_redirects_are_refused() {
    for loc in ["file:///etc/passwd", "ftp://127.0.0.1/x", "http://[::1"] {
        let header = format!("Location: {loc}\r\n");
        let home = Hostile::start(move |_, _| (reply("302 Found", &header, b""), false));
        let mut a = s3_job(home.port, "read");
        a.push("--http_errors=count".into());
        let out = iobench(&a);
        let all = text(&out);
        assert!(!all.contains("panicked"), "{loc}: {all}");
        assert!(!out.status.success(), "{loc}: {all}");
        assert!(all.contains("refused"), "{loc}: {all}");
    }
    // A loop of redirects ends.
    let home = Hostile::start(|_, _| (reply("302 Found", "Location: /bkt/again\r\n", b""), false));
    let out = iobench(&s3_job(home.port, "read"));
    assert!(!out.status.success());
    assert!(text(&out).contains("redirects"), "{}", text(&out));
    assert!(home.seen().len() <= 6, "{}", home.seen().len());
}

/// The credentials appear in no output: not in the JSON's job options (a mark says
/// one was given), not in `--http_verbose`'s request lines, not in `--showcmd`, not in
/// `--debug=parse`.
#[test]
fn credentials_are_redacted_from_every_output() {
    let home = Hostile::start(|_, _| (reply("200 OK", "", b""), false));
    let mut a = s3_job(home.port, "write");
    a.push("--http_verbose=2".into());
    a.push("--env".into());
    let out = iobench(&a);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    for s in SECRETS.iter().take(3) {
        assert!(!all.contains(s), "{s} printed:\n{all}");
    }
    let doc: Value = common::json_report(&out);
    let jo = &doc["jobs"][0]["job options"];
    assert_eq!(jo["http_s3_key"], "<redacted>", "{jo}");
    assert_eq!(jo["http_s3_security_token"], "<redacted>", "{jo}");
    assert_eq!(jo["http_s3_keyid"], "AKIDEXAMPLE", "{jo}");
    assert!(all.contains("> Authorization: <redacted>"), "{all}");

    let dir = common::scratch("http_secret_showcmd");
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nioengine=http\nhttp_mode=s3\nhttp_s3_keyid=K\nhttp_s3_key={}\nfilename=/b/o\n",
            SECRETS[0]
        ),
    )
    .unwrap();
    let out = iobench(&["--showcmd".into(), job.display().to_string()]);
    let all = text(&out);
    assert!(all.contains("--http_s3_key=<redacted>"), "{all}");
    assert!(!all.contains(SECRETS[0]), "{all}");
    let out = iobench(&[
        "--debug=parse".into(),
        "--parse-only".into(),
        job.display().to_string(),
    ]);
    assert!(!text(&out).contains(SECRETS[0]), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server's error body with terminal escape sequences is printed escaped.
#[test]
fn a_servers_error_body_reaches_the_terminal_escaped() {
    let home = Hostile::start(|_, _| {
        (
            reply("500 Oops", "", b"\x1b]0;pwned\x07\x1b[31mred\x9b"),
            false,
        )
    });
    let out = iobench(&s3_job(home.port, "write"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(err.contains("\\x1b]0;pwned\\x07"), "{err:?}");
}

/// A body shorter than the block a GET asked for is a failed read, said as such, never
/// counted as a whole block read (a 100-byte answer to a 4 KiB GET counted 4096 bytes).
#[test]
fn a_short_body_is_a_failed_read() {
    let home = Hostile::start(|_, _| (reply("200 OK", "", &[7u8; 100]), false));
    let out = iobench(&s3_job(home.port, "read"));
    let all = text(&out);
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("100 of the 4096 bytes"), "{all}");
    // The same server with the whole block: the read succeeds, so the failure above is
    // the short body's.
    let whole = Hostile::start(|_, _| (reply("200 OK", "", &[7u8; 4096]), false));
    let out = iobench(&s3_job(whole.port, "read"));
    assert!(out.status.success(), "{}", text(&out));
}

/// An object name with a `..` (or `.`) segment is refused before any request: the URL
/// parser would resolve it, and the request would name another bucket's object.
#[test]
fn dot_segments_in_an_object_name_are_refused_unsent() {
    let home = Hostile::start(|_, _| (reply("200 OK", "", b""), false));
    for name in ["/bkt/../other/obj", "/bkt/./obj"] {
        let a: Vec<String> = s3_job(home.port, "write")
            .into_iter()
            .map(|x| {
                if x.starts_with("--filename=") {
                    format!("--filename={name}")
                } else {
                    x
                }
            })
            .collect();
        let out = iobench(&a);
        let all = text(&out);
        assert!(!out.status.success(), "{name}: {all}");
        assert!(all.contains("'.' or '..' segment"), "{name}: {all}");
    }
    assert!(home.seen().is_empty(), "{:?}", home.seen());
}

/// Bytes past a GET's Content-Length, sent with its body: the read takes exactly the
/// Content-Length, and the bytes after it must never be read as the next request's
/// answer (here they are a whole forged 200 with a block of its own, while the server
/// answers every later request 503): the next GET should go out on a new connection and
/// get the server's own answer, as curl (and so fio) does when it finds "excess" data.
///
/// Not so yet: ureq 2 keeps the connection when its buffer still holds bytes after the
/// body (it looks for more only on the socket, before the next request), and offers no
/// way to see them; both GETs go out on one connection and the forged block is counted
/// as the second read. Closing it needs a client that owns its connections' buffers (an
/// HTTP/1.1 transport of the engine's own, or ureq 3, whose Rust 1.85 is above the
/// MSRV): docs/security.md, "Not closed yet".
#[test]
#[ignore = "issue 36: ureq 2 reads bytes past Content-Length as the next answer"]
fn bytes_past_content_length_are_not_the_next_answer() {
    let gets = std::sync::atomic::AtomicUsize::new(0);
    let home = Hostile::start(move |r, _| {
        if r.method() != "GET" {
            return (reply("200 OK", "", b""), false);
        }
        if gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            // Small enough that the answer, the forged one and all come in one read.
            let mut v = reply("200 OK", "", &[1u8; 1024]);
            v.extend(reply("200 OK", "", &[2u8; 1024]));
            return (v, false);
        }
        (reply("503 Slow Down", "", b"busy"), false)
    });
    let mut a = s3_job(home.port, "read");
    a.retain(|x| x != "--size=4k" && x != "--bs=4k");
    a.push("--size=2k".into());
    a.push("--bs=1k".into());
    a.push("--http_errors=count".into());
    let out = iobench(&a);
    let all = text(&out);
    assert!(!all.contains("panicked"), "{all}");
    let seen = home.seen();
    let gets: Vec<&Req> = seen.iter().filter(|r| r.method() == "GET").collect();
    assert_eq!(gets.len(), 2, "{seen:?}");
    assert_ne!(
        gets[0].conn, gets[1].conn,
        "the second GET went out on the connection with the forged answer: {seen:?}\n{all}"
    );
    assert!(!out.status.success(), "the forged answer was taken: {all}");
}
