//! Tables of results as text (aligned columns, numbers right-aligned) or markdown, the
//! one renderer the studies print with.

/// Prints a study's text (its tables, its verdicts) on stdout, or on stderr when
/// `to_stderr`: `--live=-` has stdout for its JSON Lines alone.
pub fn emit(to_stderr: bool, text: &str) {
    use std::io::Write;
    if to_stderr {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// A table: a header row and data rows of already formatted cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn numeric(cell: &str) -> bool {
    cell.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-')
        && cell.chars().any(|c| c.is_ascii_digit())
}

impl Table {
    /// Aligned text: each column as wide as its widest cell, numbers right-aligned.
    pub fn text(&self) -> String {
        let widths = self.widths();
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                let w = widths[i];
                if i > 0 {
                    s.push_str("  ");
                }
                if numeric(c) {
                    s.push_str(&format!("{c:>w$}"));
                } else {
                    s.push_str(&format!("{c:<w$}"));
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&self.header, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        out
    }

    /// A GitHub-flavoured markdown table, numeric columns right-aligned.
    pub fn markdown(&self) -> String {
        let esc = |c: &String| c.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n|",
            self.header.iter().map(esc).collect::<Vec<_>>().join(" | ")
        );
        for i in 0..self.header.len() {
            let num = !self.rows.is_empty() && self.rows.iter().all(|r| numeric(&r[i]));
            out.push_str(if num { "---:|" } else { "---|" });
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(esc).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        w
    }
}

/// A number with three significant digits and a k/M/G suffix: 123456 → `123k`.
pub fn si(v: f64) -> String {
    let (v, unit) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

/// Nanoseconds in microseconds with sensible precision: 81234 → `81.2`.
pub fn us(ns: f64) -> String {
    let v = ns / 1000.0;
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Bytes per second in MiB/s: 52428800 → `50.0`.
pub fn mib_s(bytes: f64) -> String {
    let v = bytes / (1u64 << 20) as f64;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_markdown() {
        let t = Table {
            header: vec!["iodepth".into(), "read IOPS".into()],
            rows: vec![
                vec!["1".into(), "9.5k".into()],
                vec!["128".into(), "120k".into()],
            ],
        };
        assert_eq!(
            t.text(),
            "iodepth  read IOPS\n      1       9.5k\n    128       120k\n"
        );
        assert_eq!(
            t.markdown(),
            "| iodepth | read IOPS |\n|---:|---:|\n| 1 | 9.5k |\n| 128 | 120k |\n"
        );
        assert_eq!(
            (si(123456.0), si(9512.0), si(12.0)),
            ("123k".into(), "9.51k".into(), "12.0".into())
        );
        assert_eq!(us(81234.0), "81.2");
        assert_eq!(mib_s(52428800.0), "50.0");
    }
}
