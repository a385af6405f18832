//! The client's command line, read as fio reads it: `--client=HOST[,PORT]` (or a file
//! listing hosts, one per word) starts a server entry; job files right after it are that
//! server's own; `--remote-config=FILE` names a job file on the server; other job files go
//! to every server that has none. `--output-format`, `--minimal`, `--output` and
//! `--terse-version` shape the client's report, and the format is also sent to each server
//! (as fio's JOBLINE does), so that servers asked for JSON send no text lines.
//! `--trigger-file`, `--trigger-timeout`, `--trigger`, `--trigger-remote` and `--aux-path`
//! are the client's own, as in fio (see [`super::trigger`]).

use crate::cli::OutputFormat;
use crate::fioproto::addr::{self, Endpoint};
use crate::report::Formats;

/// One server to drive.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// The host as given (fio's `hostname`: JSON's `hostname` and error messages).
    pub given: String,
    pub endpoint: Endpoint,
    /// Its own job files, `true` for `--remote-config` (a path on the server).
    pub files: Vec<(String, bool)>,
}

/// The whole client invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientArgs {
    pub hosts: Vec<Host>,
    /// Job files for servers that have none of their own.
    pub shared_files: Vec<String>,
    /// The report's formats, picked as a plain run picks them (`--output-format`,
    /// `--minimal`, `--terse-version`).
    pub formats: Formats,
    pub output: Option<String>,
    /// Flags sent on to the servers (JOBLINE).
    pub forward: Vec<String>,
    /// `--eta=always|never|auto` (None: auto), for the client's status line.
    pub eta: Option<String>,
    /// `--eta-newline` in ms (0: never a fresh line).
    pub eta_newline_ms: u64,
    /// `--eta-interval` in ms: how often the servers are asked for their status.
    pub eta_interval_ms: u64,
    /// `--trigger-file=FILE`, `--trigger-timeout=T` (ms): when to trigger the servers.
    pub trigger_file: Option<String>,
    pub trigger_timeout_ms: Option<u64>,
    /// `--trigger=CMD`: run here when a server's verify states came back.
    pub trigger: Option<String>,
    /// `--trigger-remote=CMD`: sent to the servers, run there.
    pub trigger_remote: Option<String>,
    /// `--aux-path=DIR`: where the servers' verify states are saved and read from.
    pub aux_path: Option<String>,
}

fn split(a: &str) -> Option<(&str, Option<&str>)> {
    let body = a.strip_prefix("--").or_else(|| a.strip_prefix('-'))?;
    if body.is_empty() {
        return None;
    }
    Some(match body.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (body, None),
    })
}

/// Parses the command line (without the program name).
pub fn parse(argv: &[String]) -> Result<ClientArgs, String> {
    let mut a = ClientArgs {
        formats: Formats::from_list(&[], None),
        eta_interval_ms: 1000,
        ..Default::default()
    };
    let mut list: Vec<OutputFormat> = Vec::new();
    let mut terse_version: Option<u32> = None;
    // Job files after a --client attach to it, until an option comes.
    let mut attach: Option<usize> = None;
    let mut i = 0;
    let value = |i: &mut usize, k: &str, v: Option<&str>| -> Result<String, String> {
        match v {
            Some(v) => Ok(v.to_string()),
            None => {
                *i += 1;
                argv.get(*i)
                    .cloned()
                    .ok_or_else(|| format!("option '--{k}' requires a value"))
            }
        }
    };
    while i < argv.len() {
        let arg = &argv[i];
        let Some((k, v)) = split(arg) else {
            match attach {
                Some(h) => a.hosts[h].files.push((arg.clone(), false)),
                None => a.shared_files.push(arg.clone()),
            }
            i += 1;
            continue;
        };
        attach = None;
        match k {
            "client" => {
                let v = value(&mut i, k, v)?;
                if std::path::Path::new(&v).is_file() {
                    // A host list: every word a host; no job file attaches to them.
                    let text = std::fs::read_to_string(&v)
                        .map_err(|e| format!("could not open client list file {v}: {e}"))?;
                    for h in text.split_whitespace() {
                        let endpoint = addr::parse("client", h)
                            .map_err(|e| format!("{e} (in client list file {v})"))?;
                        a.hosts.push(Host {
                            given: host_of(h),
                            endpoint,
                            files: Vec::new(),
                        });
                    }
                } else {
                    let endpoint = addr::parse("client", &v)?;
                    a.hosts.push(Host {
                        given: host_of(&v),
                        endpoint,
                        files: Vec::new(),
                    });
                    attach = Some(a.hosts.len() - 1);
                }
            }
            "remote-config" => {
                let v = value(&mut i, k, v)?;
                let h = a
                    .hosts
                    .last_mut()
                    .ok_or("option '--remote-config' must follow a --client")?;
                h.files.push((v, true));
            }
            "output-format" => {
                let v = value(&mut i, k, v)?;
                // As in a plain run, each --output-format replaces the formats before it.
                list.clear();
                for f in v.split(',') {
                    list.push(OutputFormat::from_word(f).ok_or_else(|| {
                        format!(
                            "option '--output-format': bad value '{f}' \
                             (expected normal, json, json+ or terse)"
                        )
                    })?);
                }
                a.forward.push(format!("--output-format={v}"));
            }
            "output" => a.output = Some(value(&mut i, k, v)?),
            "minimal" => {
                list.push(OutputFormat::Terse);
                a.forward.push("--minimal".into());
            }
            "terse-version" => {
                let v = value(&mut i, k, v)?;
                let n = v.trim().parse::<u32>().map_err(|_| {
                    format!("option '--terse-version': bad value '{v}' (expected 2, 3, 4 or 5)")
                })?;
                terse_version = Some(crate::report::terse_version(n)?);
            }
            // The status line is the client's own: these stay here (an iobench server
            // told `--eta=always` would draw its line into the text it sends).
            "eta" => {
                let v = value(&mut i, k, v)?;
                match v.as_str() {
                    "always" | "never" | "auto" => a.eta = Some(v),
                    _ => {
                        return Err(format!(
                            "option '--eta': bad value '{v}' (expected always, never or auto)"
                        ))
                    }
                }
            }
            "eta-newline" => a.eta_newline_ms = time_ms(k, &value(&mut i, k, v)?, 1)?,
            "eta-interval" => a.eta_interval_ms = time_ms(k, &value(&mut i, k, v)?, 250)?,
            "trigger-file" => a.trigger_file = Some(value(&mut i, k, v)?),
            "trigger-timeout" => a.trigger_timeout_ms = Some(time_ms(k, &value(&mut i, k, v)?, 1)?),
            "trigger" => a.trigger = Some(value(&mut i, k, v)?),
            "trigger-remote" => a.trigger_remote = Some(value(&mut i, k, v)?),
            "aux-path" => a.aux_path = Some(value(&mut i, k, v)?),
            _ => {
                return Err(format!(
                    "option '--{k}' is not supported with --client (expected --client, \
                     --remote-config, --output-format, --output, --eta, --eta-newline, \
                     --eta-interval, --trigger-file, --trigger-timeout, --trigger, \
                     --trigger-remote, --aux-path and job files)"
                ))
            }
        }
        i += 1;
    }
    if a.hosts.is_empty() {
        return Err("option '--client': no server given (expected --client=HOST[,PORT])".into());
    }
    a.formats = Formats::from_list(&list, terse_version);
    Ok(a)
}

/// A `--eta-newline`/`--eta-interval` value in ms, read as fio reads it (a bare number is
/// seconds), at least `min_ms`.
fn time_ms(flag: &str, v: &str, min_ms: u64) -> Result<u64, String> {
    let form = "a time such as 1, 500ms or 2s";
    let us = crate::defs::value::parse_time_us(v, crate::defs::TimeUnit::Sec)
        .map_err(|e| format!("option '--{flag}': bad value '{v}': {e} (expected {form})"))?;
    if us / 1000 < min_ms {
        return Err(format!(
            "option '--{flag}': bad value '{v}': shorter than {min_ms}ms (expected {form})"
        ));
    }
    Ok(us / 1000)
}

/// The host part of a `--client` value, as fio keeps it for messages and JSON.
fn host_of(v: &str) -> String {
    if let Some(p) = v.strip_prefix("sock:") {
        return p.to_string();
    }
    let v = v
        .strip_prefix("ip:")
        .or_else(|| v.strip_prefix("ip4:"))
        .or_else(|| v.strip_prefix("ip6:"))
        .unwrap_or(v);
    v.split(',').next().unwrap_or(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn job_files_attach_to_the_client_before_them() {
        let a = parse(&s(&[
            "--client=h1,9000",
            "a.fio",
            "--client=h2",
            "--remote-config=/srv/b.fio",
            "--output-format=json",
            "c.fio",
        ]))
        .unwrap();
        assert_eq!(a.hosts.len(), 2);
        assert_eq!(a.hosts[0].given, "h1");
        assert_eq!(a.hosts[0].files, vec![("a.fio".to_string(), false)]);
        assert_eq!(a.hosts[1].files, vec![("/srv/b.fio".to_string(), true)]);
        assert_eq!(a.shared_files, vec!["c.fio".to_string()]);
        assert!(a.formats.json && !a.formats.normal);
        assert_eq!(a.forward, vec!["--output-format=json".to_string()]);
    }

    #[test]
    fn errors_name_the_option() {
        let e = parse(&s(&["--client=h", "--bogus=1"])).unwrap_err();
        assert!(e.contains("--bogus"), "{e}");
        let e = parse(&s(&["--client=h,99999"])).unwrap_err();
        assert!(e.contains("99999"), "{e}");
        assert!(parse(&s(&["--remote-config=x"])).is_err());
        let e = parse(&s(&["--client=h", "--eta=sometimes"])).unwrap_err();
        assert!(e.contains("--eta") && e.contains("sometimes"), "{e}");
        let e = parse(&s(&["--client=h", "--eta-interval=10ms"])).unwrap_err();
        assert!(e.contains("--eta-interval") && e.contains("250ms"), "{e}");
    }

    #[test]
    fn trigger_flags_stay_with_the_client() {
        let a = parse(&s(&[
            "--client=h",
            "--trigger-timeout=2",
            "--trigger-file=/tmp/t",
            "--trigger=touch l",
            "--trigger-remote",
            "touch r",
            "--aux-path=/tmp/a",
            "j.fio",
        ]))
        .unwrap();
        assert_eq!(
            a.trigger_timeout_ms,
            Some(2000),
            "a bare number is seconds, as fio"
        );
        assert_eq!(a.trigger_file.as_deref(), Some("/tmp/t"));
        assert_eq!(a.trigger.as_deref(), Some("touch l"));
        assert_eq!(a.trigger_remote.as_deref(), Some("touch r"));
        assert_eq!(a.aux_path.as_deref(), Some("/tmp/a"));
        assert!(a.forward.is_empty(), "{:?}", a.forward);
        let e = parse(&s(&["--client=h", "--trigger-timeout=soon"])).unwrap_err();
        assert!(e.contains("--trigger-timeout") && e.contains("soon"), "{e}");
    }

    #[test]
    fn status_line_flags_stay_with_the_client() {
        let a = parse(&s(&[
            "--client=h",
            "--eta=always",
            "--eta-newline=2",
            "--eta-interval=500ms",
            "j.fio",
        ]))
        .unwrap();
        assert_eq!(a.eta.as_deref(), Some("always"));
        assert_eq!((a.eta_newline_ms, a.eta_interval_ms), (2000, 500));
        assert!(a.forward.is_empty(), "{:?}", a.forward);
        assert_eq!(a.shared_files, vec!["j.fio".to_string()]);
    }
}
