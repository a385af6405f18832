//! The client's command line, read as fio reads it: `--client=HOST[,PORT]` (or a file
//! listing hosts, one per word) starts a server entry; job files right after it are that
//! server's own; `--remote-config=FILE` names a job file on the server; other job files go
//! to every server that has none. `--output-format`, `--minimal`, `--output` and
//! `--terse-version` shape the client's report, and the format is also sent to each server
//! (as fio's JOBLINE does), so that servers asked for JSON send no text lines.
//! `--trigger-file`, `--trigger-timeout`, `--trigger`, `--trigger-remote` and `--aux-path`
//! are the client's own, as in fio (see [`super::trigger`]). The flags are read by the
//! one flag helper, [`crate::flags::Spec`] ([`SPEC`]), with fio's one-dash long forms.

use crate::cli::OutputFormat;
use crate::fioproto::addr::{self, Endpoint};
use crate::flags::{read_in_order, Flag, Given, Spec, Takes};
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
    /// `--fio-compat=VERSION` (or `IOBENCH_FIO_COMPAT`): the fio release to speak to the
    /// servers and to report as. `None`: each server's protocol is learnt from its first
    /// reply, and the report speaks the default dialect.
    pub fio_compat: Option<crate::defs::release::FioRelease>,
}

impl ClientArgs {
    /// The dialect of the client's own report.
    pub fn release(&self) -> crate::defs::release::FioRelease {
        self.fio_compat.unwrap_or_default()
    }
}

/// The client's flags, read by the one flag helper with fio's `getopt_long_only` rules
/// (`--client=h`, `-client=h`, `--client h`), job files kept where they stand among them.
pub const SPEC: Spec<ClientArgs> = Spec {
    command: "--client=HOST",
    usage: "usage: iobench --client=HOST[,PORT] [JOBFILE ...] [--client=HOST2 ...] [options] [JOBFILE ...]\n\
            \n\
            Drives iobench or fio servers (`iobench --server`): job files right after a --client\n\
            go to that server, the other job files to every server that has none of its own.",
    flags: &[
        Flag {
            names: &["--client"],
            takes: Takes::Value,
            form: "HOST[,PORT]",
            help: "a server to drive (HOST[,PORT], sock:PATH, or a file of hosts)",
            apply: read_in_order,
        },
        Flag {
            names: &["--remote-config"],
            takes: Takes::Value,
            form: "FILE",
            help: "a job file on the last --client's server",
            apply: read_in_order,
        },
        Flag {
            names: &["--output-format"],
            takes: Takes::Value,
            form: "FORMAT",
            help: "normal, json, json+ or terse (comma-separated)",
            apply: read_in_order,
        },
        Flag {
            names: &["--output"],
            takes: Takes::Value,
            form: "FILE",
            help: "write the report to FILE",
            apply: read_in_order,
        },
        Flag {
            names: &["--minimal"],
            takes: Takes::Nothing,
            form: "",
            help: "terse output",
            apply: read_in_order,
        },
        Flag {
            names: &["--terse-version"],
            takes: Takes::Value,
            form: "N",
            help: "terse format version: 2, 3, 4 or 5",
            apply: read_in_order,
        },
        Flag {
            names: &["--eta"],
            takes: Takes::Value,
            form: "WHEN",
            help: "status line: always, never or auto",
            apply: read_in_order,
        },
        Flag {
            names: &["--eta-newline"],
            takes: Takes::Value,
            form: "TIME",
            help: "start a fresh status line every TIME",
            apply: read_in_order,
        },
        Flag {
            names: &["--eta-interval"],
            takes: Takes::Value,
            form: "TIME",
            help: "ask the servers for their status every TIME (at least 250ms)",
            apply: read_in_order,
        },
        Flag {
            names: &["--trigger-file"],
            takes: Takes::Value,
            form: "FILE",
            help: "trigger the servers when FILE appears",
            apply: read_in_order,
        },
        Flag {
            names: &["--trigger-timeout"],
            takes: Takes::Value,
            form: "TIME",
            help: "trigger the servers after TIME",
            apply: read_in_order,
        },
        Flag {
            names: &["--trigger"],
            takes: Takes::Value,
            form: "CMD",
            help: "run CMD here when a server's verify states came back",
            apply: read_in_order,
        },
        Flag {
            names: &["--trigger-remote"],
            takes: Takes::Value,
            form: "CMD",
            help: "run CMD on the servers when they are triggered",
            apply: read_in_order,
        },
        Flag {
            names: &["--fio-compat"],
            takes: Takes::Value,
            form: "VERSION",
            help: "speak to the servers and report as this fio release (3.33 to 3.42)",
            apply: read_in_order,
        },
        Flag {
            names: &["--aux-path"],
            takes: Takes::Value,
            form: "DIR",
            help: "where the servers' verify states are saved and read from",
            apply: read_in_order,
        },
    ],
    pass_unknown: false,
    attached: false,
    single_dash: true,
};

/// Parses the command line (without the program name). `Ok(None)`: `--help` was asked
/// for (the caller prints [`SPEC`]'s help).
pub fn parse(argv: &[String]) -> Result<Option<ClientArgs>, String> {
    let mut a = ClientArgs {
        formats: Formats::from_list(&[], None),
        eta_interval_ms: 1000,
        ..Default::default()
    };
    if std::env::var(crate::defs::release::ENV).is_ok_and(|v| !v.trim().is_empty()) {
        a.fio_compat = Some(crate::defs::release::FioRelease::from_env()?);
    }
    // A job option among the client's flags is not sent on as fio's client would define
    // a job with it: refused, naming what the client takes.
    let m = SPEC
        .parse(argv)
        .map_err(|e| match e.strip_prefix("unknown option '") {
            Some(rest) => {
                let flag = rest.split(['\'', '=']).next().unwrap_or(rest);
                format!(
                    "option '{flag}' is not supported with --client (expected the client's \
                 flags and job files: see iobench --client=HOST --help)"
                )
            }
            None => e,
        })?;
    if m.help {
        return Ok(None);
    }
    let mut list: Vec<OutputFormat> = Vec::new();
    let mut terse_version: Option<u32> = None;
    // Job files after a --client attach to it, until an option comes.
    let mut attach: Option<usize> = None;
    let after_dashes = m.rest.iter().flatten().map(|f| Given::Positional(f));
    for given in m.in_order().into_iter().chain(after_dashes) {
        let (k, v) = match given {
            Given::Positional(file) => {
                match attach {
                    Some(h) => a.hosts[h].files.push((file.to_string(), false)),
                    None => a.shared_files.push(file.to_string()),
                }
                continue;
            }
            Given::Flag(k, v) => (k, v.unwrap_or_default().to_string()),
        };
        attach = None;
        match k {
            "--client" => {
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
            "--remote-config" => {
                let h = a
                    .hosts
                    .last_mut()
                    .ok_or("option '--remote-config' must follow a --client")?;
                h.files.push((v, true));
            }
            "--output-format" => {
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
            "--output" => a.output = Some(v),
            "--fio-compat" => {
                a.fio_compat = Some(
                    crate::defs::release::FioRelease::parse(&v)
                        .map_err(|e| format!("option '--fio-compat': {e}"))?,
                )
            }
            "--minimal" => {
                list.push(OutputFormat::Terse);
                a.forward.push("--minimal".into());
            }
            "--terse-version" => {
                let n = v.trim().parse::<u32>().map_err(|_| {
                    format!("option '--terse-version': bad value '{v}' (expected 2, 3, 4 or 5)")
                })?;
                terse_version = Some(crate::report::terse_version(n)?);
            }
            // The status line is the client's own: these stay here (an iobench server
            // told `--eta=always` would draw its line into the text it sends).
            "--eta" => match v.as_str() {
                "always" | "never" | "auto" => a.eta = Some(v),
                _ => {
                    return Err(format!(
                        "option '--eta': bad value '{v}' (expected always, never or auto)"
                    ))
                }
            },
            "--eta-newline" => a.eta_newline_ms = time_ms(k, &v, 1)?,
            "--eta-interval" => a.eta_interval_ms = time_ms(k, &v, 250)?,
            "--trigger-file" => a.trigger_file = Some(v),
            "--trigger-timeout" => a.trigger_timeout_ms = Some(time_ms(k, &v, 1)?),
            "--trigger" => a.trigger = Some(v),
            "--trigger-remote" => a.trigger_remote = Some(v),
            "--aux-path" => a.aux_path = Some(v),
            _ => unreachable!("every flag of SPEC is handled: {k}"),
        }
    }
    if a.hosts.is_empty() {
        return Err("option '--client': no server given (expected --client=HOST[,PORT])".into());
    }
    a.formats = Formats::from_list(&list, terse_version);
    Ok(Some(a))
}

/// A `--eta-newline`/`--eta-interval` value in ms, read as fio reads it (a bare number is
/// seconds), at least `min_ms`.
fn time_ms(flag: &str, v: &str, min_ms: u64) -> Result<u64, String> {
    let flag = flag.trim_start_matches('-');
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

    fn parse_ok(v: &[String]) -> ClientArgs {
        parse(v).unwrap().expect("not --help")
    }

    /// fio's one-dash long forms and a value in the next argument read as `--flag=value`,
    /// and `--help` asks for the table's help.
    #[test]
    fn getopt_long_only_forms() {
        let a = parse_ok(&s(&[
            "-client=h1",
            "a.fio",
            "-client",
            "h2,9000",
            "-output",
            "out.txt",
            "--eta",
            "never",
            "-minimal",
            "--",
            "b.fio",
        ]));
        assert_eq!(a.hosts.len(), 2);
        assert_eq!(a.hosts[0].files, vec![("a.fio".to_string(), false)]);
        assert!(a.hosts[1].files.is_empty());
        assert_eq!(a.output.as_deref(), Some("out.txt"));
        assert_eq!(a.eta.as_deref(), Some("never"));
        assert!(a.formats.terse.is_some());
        assert_eq!(a.shared_files, vec!["b.fio".to_string()]);
        assert_eq!(parse(&s(&["--client=h", "--help"])), Ok(None));
        let help = SPEC.help();
        assert!(help.contains("--remote-config=FILE") && help.contains("--trigger-remote=CMD"));
    }

    #[test]
    fn job_files_attach_to_the_client_before_them() {
        let a = parse_ok(&s(&[
            "--client=h1,9000",
            "a.fio",
            "--client=h2",
            "--remote-config=/srv/b.fio",
            "--output-format=json",
            "c.fio",
        ]));
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
        let a = parse_ok(&s(&[
            "--client=h",
            "--trigger-timeout=2",
            "--trigger-file=/tmp/t",
            "--trigger=touch l",
            "--trigger-remote",
            "touch r",
            "--aux-path=/tmp/a",
            "j.fio",
        ]));
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
        let a = parse_ok(&s(&[
            "--client=h",
            "--eta=always",
            "--eta-newline=2",
            "--eta-interval=500ms",
            "j.fio",
        ]));
        assert_eq!(a.eta.as_deref(), Some("always"));
        assert_eq!((a.eta_newline_ms, a.eta_interval_ms), (2000, 500));
        assert!(a.forward.is_empty(), "{:?}", a.forward);
        assert_eq!(a.shared_files, vec!["j.fio".to_string()]);
    }
}
