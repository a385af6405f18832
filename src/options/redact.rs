//! Credentials kept out of what iobench writes: the option table marks each secret row
//! (`OptDef::secret`), and these helpers replace such an option's value by
//! [`REDACTED`] wherever text that may carry one leaves the process: a command line, a
//! job file's lines, and JSON documents read from elsewhere (fio's own output, an older
//! iobench's) before a report, an export or the history keeps them. The writers that
//! hold a parsed option use `OptDef::shown` instead.

use super::lookup;
use crate::defs::REDACTED;
use std::borrow::Cow;

/// True when `name` (or an alias) is a secret option.
pub fn is_secret(name: &str) -> bool {
    lookup(name.trim()).is_some_and(|d| d.secret)
}

/// One argument or job-file line, `--NAME=VALUE`, `-NAME=VALUE` or `NAME=VALUE`, with the
/// value replaced when NAME is secret; anything else as it is.
pub fn arg(a: &str) -> Cow<'_, str> {
    let Some((name, _)) = a.split_once('=') else {
        return Cow::Borrowed(a);
    };
    let bare = name.trim_start_matches('-');
    if is_secret(bare) && a[name.len() + 1..] != *REDACTED {
        Cow::Owned(format!("{name}={REDACTED}"))
    } else {
        Cow::Borrowed(a)
    }
}

/// True for `--NAME` (no `=`) naming a secret option: the next argument is its value.
fn takes_secret(a: &str) -> bool {
    a.starts_with('-') && !a.contains('=') && is_secret(a.trim_start_matches('-'))
}

/// A command line (program name first), each secret value replaced: `--NAME=VALUE` and
/// `--NAME VALUE` alike.
pub fn argv<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next_is_secret = false;
    for a in args {
        let a = a.as_ref();
        if std::mem::take(&mut next_is_secret) {
            out.push(REDACTED.to_string());
            continue;
        }
        next_is_secret = takes_secret(a);
        out.push(arg(a).into_owned());
    }
    out
}

/// A text of words separated by blanks (a command line joined by spaces) or of lines
/// (a job file), each word or line through [`arg`]; the separators stay as they were.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s.contains('=') && !s.contains('-') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut next_is_secret = false;
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, next: &mut bool, changed: &mut bool| {
        if word.is_empty() {
            return;
        }
        if std::mem::take(next) {
            out.push_str(REDACTED);
            *changed |= word.as_str() != REDACTED;
        } else {
            *next = takes_secret(word.trim());
            let r = arg(word.trim_start());
            if let Cow::Owned(r) = r {
                out.push_str(&word[..word.len() - word.trim_start().len()]);
                out.push_str(&r);
                *changed = true;
            } else {
                out.push_str(word);
            }
        }
        word.clear();
    };
    for c in s.chars() {
        if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
            flush(&mut word, &mut out, &mut next_is_secret, &mut changed);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out, &mut next_is_secret, &mut changed);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(s)
    }
}

/// A JSON document, in place: every member named like a secret option with a string
/// value (fio's `job options`, `global options`, `iobench_env`'s job options) becomes
/// [`REDACTED`], and every other string is read as a command line or job text through
/// [`text`] (`command_line`, a study's command). Returns true when anything changed.
pub fn json(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut changed = false;
            for (k, x) in m.iter_mut() {
                if is_secret(k) && x.is_string() {
                    if x.as_str() != Some(REDACTED) {
                        *x = Value::String(REDACTED.into());
                        changed = true;
                    }
                } else {
                    changed |= json(x);
                }
            }
            changed
        }
        Value::Array(a) => {
            // An argv array: `--NAME VALUE` spans two elements.
            let mut changed = false;
            let mut next_is_secret = false;
            for x in a.iter_mut() {
                if std::mem::take(&mut next_is_secret) && x.is_string() {
                    if x.as_str() != Some(REDACTED) {
                        *x = Value::String(REDACTED.into());
                        changed = true;
                    }
                    continue;
                }
                next_is_secret = x.as_str().is_some_and(takes_secret);
                changed |= json(x);
            }
            changed
        }
        Value::String(s) => match text(s) {
            Cow::Owned(r) => {
                *s = r;
                true
            }
            Cow::Borrowed(_) => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_rows_are_marked_in_the_table() {
        for name in [
            "http_pass",
            "http_s3_key",
            "http_s3_security_token",
            "http_s3_sse_customer_key",
            "http_swift_auth_token",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in ["http_user", "http_s3_keyid", "filename", "bs", "nonesuch"] {
            assert!(!is_secret(name), "{name}");
        }
    }

    #[test]
    fn command_lines_and_job_text_lose_their_secrets() {
        assert_eq!(
            argv(&[
                "iobench",
                "--http_s3_key=SEKRIT",
                "--http_pass",
                "PW",
                "--bs=4k"
            ]),
            [
                "iobench",
                "--http_s3_key=<redacted>",
                "--http_pass",
                "<redacted>",
                "--bs=4k"
            ]
        );
        assert_eq!(
            text("iobench --http_s3_key=SEKRIT -http_swift_auth_token T --size=1m"),
            "iobench --http_s3_key=<redacted> -http_swift_auth_token <redacted> --size=1m"
        );
        assert_eq!(
            text("[j]\nhttp_s3_sse_customer_key=K\n  http_pass=x\nbs=4k\n"),
            "[j]\nhttp_s3_sse_customer_key=<redacted>\n  http_pass=<redacted>\nbs=4k\n"
        );
        assert!(matches!(text("--bs=4k --name=x"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_documents_lose_their_secrets() {
        let mut v = serde_json::json!({
            "global options": {"http_s3_key": "SEKRIT", "bs": "4k"},
            "jobs": [{"job options": {"http_s3_security_token": "TOK"}}],
            "iobench_env": {"command_line": ["iobench", "--http_pass", "PW", "--http_s3_key=S"]},
            "command": "iobench sweep --http_s3_key=S2 job.fio",
        });
        assert!(json(&mut v));
        let s = v.to_string();
        for secret in ["SEKRIT", "TOK", "PW", "\"S\"", "S2"] {
            assert!(!s.contains(secret), "{secret} in {s}");
        }
        assert_eq!(v["global options"]["bs"], "4k");
        assert_eq!(v["global options"]["http_s3_key"], REDACTED);
        assert!(!json(&mut v), "a redacted document stays as it is");
    }
}
