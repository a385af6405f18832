//! Charts as inline SVG, drawn by hand so that a report is one self-contained file (and
//! each chart can be saved alone). The rules they keep, so that a chart cannot mislead:
//! categories are bars or dots side by side, never joined by a line; numbers are lines on
//! an axis placed by value; an axis is log-scaled when its values span more than a decade
//! (latencies, block sizes, histogram counts) and says "log scale"; units follow the
//! values (ns, µs, ms, s; KiB/s … GiB/s; k and M IOPS); repeats show mean ± σ (a thick
//! bar) and min–max (thin whiskers); a failed point is a red mark with its reason, never a
//! value. Each chart is titled once, inside its SVG; each data point is an element
//! carrying its values (`class="pt" data-series data-x data-y`), each axis says its scale
//! and unit (`class="axis y" data-scale data-unit`), so a browser test can read them back.

use std::fmt::Write;

/// A chart's size: the report's page is about 1400 px wide and a chart takes the width.
pub const W: f64 = 1360.0;
const H: f64 = 460.0;
const LEFT: f64 = 96.0;
const RIGHT: f64 = 96.0;
const TOP: f64 = 78.0;
const BOTTOM: f64 = 58.0;
/// Okabe and Ito's colour-blind-safe palette (its yellow darkened to read on white).
const COLORS: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#B8A200",
];

/// The marker shapes series cycle through beside the colours: with 8 colours and 5
/// shapes no two of the first 40 series share both, and the dashes set them apart further.
const MARKERS: [&str; 5] = ["circle", "square", "triangle", "diamond", "cross"];

/// The line dashes, one per round of the colours.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// The look of the `k`-th series: colour, marker and dash, distinct up to 40 series.
pub fn series_style(k: usize) -> (&'static str, &'static str, &'static str) {
    (
        COLORS[k % COLORS.len()],
        MARKERS[k % MARKERS.len()],
        DASHES[(k / COLORS.len()) % DASHES.len()],
    )
}

/// A marker of `shape` centred on (cx, cy); hollow (white inside) for a point whose noise
/// is unknown (one run).
fn marker(shape: &str, cx: f64, cy: f64, color: &str, hollow: bool, attrs: &str) -> String {
    let fill = if hollow { "#fff" } else { color };
    let style = format!("fill=\"{fill}\" stroke=\"{color}\" stroke-width=\"1.8\"");
    match shape {
        "square" => format!(
            "<rect {attrs} x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" {style}",
            cx - 4.0,
            cy - 4.0
        ),
        "triangle" => format!(
            "<path {attrs} d=\"M{cx:.1} {:.1} l5 9 l-10 0 z\" {style}",
            cy - 5.5
        ),
        "diamond" => format!(
            "<path {attrs} d=\"M{cx:.1} {:.1} l5 5 l-5 5 l-5 -5 z\" {style}",
            cy - 5.0
        ),
        "cross" => format!(
            "<path {attrs} d=\"M{:.1} {:.1} h3 v-3 h3 v3 h3 v3 h-3 v3 h-3 v-3 h-3 z\" {style}",
            cx - 4.5,
            cy - 1.5
        ),
        _ => format!("<circle {attrs} cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"4\" {style}"),
    }
}

/// The closing tag of a [`marker`] of `shape` (its tooltip goes between).
fn marker_end(shape: &str) -> &'static str {
    match shape {
        "square" => "</rect>",
        "triangle" | "diamond" | "cross" => "</path>",
        _ => "</circle>",
    }
}

/// What a legend entry draws: a colour swatch, or a series' marker and dash.
#[derive(Debug, Clone)]
pub enum Swatch {
    Color(String),
    Series(usize),
    /// Text only (the key to the marks: what bars and whiskers are).
    None,
}

/// The legend's rows under the title, from `TOP`'s first row on: the entries' positions
/// and the rows they take.
fn legend_layout(legend: &[(String, Swatch)]) -> (Vec<(f64, f64)>, usize) {
    let (mut x, mut row) = (LEFT, 0usize);
    let mut at = Vec::new();
    for (name, sw) in legend {
        let lead = if matches!(sw, Swatch::None) {
            0.0
        } else {
            30.0
        };
        let w = lead + 10.0 + 7.0 * name.chars().count().min(90) as f64;
        if x + w > W - RIGHT && x > LEFT {
            x = LEFT;
            row += 1;
        }
        at.push((x, row as f64));
        x += w;
    }
    (at, if legend.is_empty() { 0 } else { row + 1 })
}
const FAILED: &str = "#c00000";

/// Text made safe for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number with three significant digits at most and no trailing zeros: 1234 → `1234`,
/// 12.345 → `12.3`, 0.0123 → `0.0123`.
pub fn num3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            "-".into()
        };
    }
    let digits = v.abs().log10().floor() as i32;
    let decimals = (2 - digits).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A number as an axis tick shows it: 1200 → `1.2k`, 0.5 → `0.5`.
pub fn tick_text(v: f64) -> String {
    let a = v.abs();
    let (v, unit) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{unit}", num3(v))
}

/// What a chart's numbers measure, which decides their units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// I/Os per second: k and M IOPS.
    Iops,
    /// Bytes per second: B/s, KiB/s, MiB/s, GiB/s.
    Rate,
    /// A latency in nanoseconds: ns, µs, ms, s.
    Time,
    /// Bytes (block sizes): B, KiB, MiB, GiB.
    Bytes,
    /// Seconds since a log's start.
    Seconds,
    /// A count (histogram buckets): k, M.
    Count,
    /// A percentage.
    Percent,
    /// A plain number (iodepth, numjobs).
    Plain,
}

impl Quantity {
    /// The unit for values up to `max`: (divisor, unit text).
    pub fn unit(self, max: f64) -> (f64, &'static str) {
        let m = max.abs();
        let bin = |units: [&'static str; 4]| {
            let k = 1024f64;
            if m >= k * k * k {
                (k * k * k, units[3])
            } else if m >= k * k {
                (k * k, units[2])
            } else if m >= k {
                (k, units[1])
            } else {
                (1.0, units[0])
            }
        };
        match self {
            Quantity::Time => {
                if m >= 1e9 {
                    (1e9, "s")
                } else if m >= 1e6 {
                    (1e6, "ms")
                } else if m >= 1e3 {
                    (1e3, "µs")
                } else {
                    (1.0, "ns")
                }
            }
            Quantity::Rate => bin(["B/s", "KiB/s", "MiB/s", "GiB/s"]),
            Quantity::Bytes => bin(["B", "KiB", "MiB", "GiB"]),
            Quantity::Iops => {
                if m >= 1e6 {
                    (1e6, "M IOPS")
                } else if m >= 1e3 {
                    (1e3, "k IOPS")
                } else {
                    (1.0, "IOPS")
                }
            }
            Quantity::Count => {
                if m >= 1e6 {
                    (1e6, "M")
                } else if m >= 1e3 {
                    (1e3, "k")
                } else {
                    (1.0, "")
                }
            }
            Quantity::Seconds => (1.0, "s"),
            Quantity::Percent => (1.0, "%"),
            Quantity::Plain => (1.0, ""),
        }
    }

    /// A value with the unit that suits it alone: `1.5 ms`, `4 KiB`, `12.3k IOPS`.
    pub fn text(self, v: f64) -> String {
        let (div, unit) = self.unit(v);
        join_unit(&num3(v / div), unit)
    }
}

fn join_unit(n: &str, unit: &str) -> String {
    match unit {
        "" => n.to_string(),
        "%" => format!("{n}%"),
        u if u.starts_with("k ") || u.starts_with("M ") || u == "k" || u == "M" => {
            format!("{n}{u}")
        }
        u => format!("{n} {u}"),
    }
}

/// The most ticks an axis draws (a scale from a hostile file too).
const MAX_TICKS: usize = 60;

/// One scale: values to pixels, and the ticks to draw.
#[derive(Debug, Clone)]
struct Scale {
    log: bool,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
    q: Quantity,
    /// The linear scale's unit (a log scale gives each tick its own).
    div: f64,
    unit: &'static str,
    step: f64,
}

impl Scale {
    /// A scale for `vals` between pixels `p0` and `p1`: log when `allow_log` and the
    /// positive values span more than a decade; a linear scale starts at zero.
    fn auto(q: Quantity, vals: &[f64], allow_log: bool, p0: f64, p1: f64) -> Scale {
        let pos: Vec<f64> = vals
            .iter()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        let max = vals
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let min = pos.iter().copied().fold(f64::MAX, f64::min);
        if allow_log && !pos.is_empty() && max / min > 10.0 {
            let lo = 10f64.powf(min.log10().floor());
            let mut hi = 10f64.powf(max.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
            return Scale {
                log: true,
                lo,
                hi,
                p0,
                p1,
                q,
                div: 1.0,
                unit: "",
                step: 0.0,
            };
        }
        // Nice steps in the unit shown (MiB/s ticks at 100, 200, not at 95.4, 191).
        let (div, unit) = q.unit(max);
        let (hi, step) = nice_max(max / div);
        let (hi, step) = (hi * div, step * div);
        Scale {
            log: false,
            lo: 0.0,
            hi,
            p0,
            p1,
            q,
            div,
            unit,
            step,
        }
    }

    /// A linear scale over `lo..hi` exactly (a numeric x axis that need not start at 0).
    fn span(q: Quantity, lo: f64, hi: f64, log: bool, p0: f64, p1: f64) -> Scale {
        let (div, unit) = q.unit(hi);
        Scale {
            log,
            lo,
            hi: if hi > lo { hi } else { lo + 1.0 },
            p0,
            p1,
            q,
            div,
            unit,
            step: 0.0,
        }
    }

    fn px(&self, v: f64) -> f64 {
        let t = if self.log {
            let v = v.max(self.lo * 0.5);
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.p0 + t * (self.p1 - self.p0)
    }

    /// The ticks: every step of a linear scale; each decade of a log one (and 2× and 5×
    /// when it spans two decades or less).
    fn ticks(&self) -> Vec<(f64, String)> {
        // Bounded whatever the values: a scale built from a hostile file (a span of
        // 1e300, an end at -1e308, a log scale reaching 0) gives at most MAX_TICKS ticks,
        // and a step too small to move the value on ends the loop.
        if !(self.lo.is_finite() && self.hi.is_finite()) || self.hi < self.lo {
            return Vec::new();
        }
        if self.log {
            if self.lo <= 0.0 {
                return Vec::new();
            }
            let decades = (self.hi.log10() - self.lo.log10()).round();
            if !decades.is_finite() {
                return Vec::new();
            }
            let mults: &[f64] = if decades <= 2.0 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            // Past MAX_TICKS decades, every k-th decade.
            let every = ((decades / MAX_TICKS as f64).ceil() as i32).max(1);
            let mut t = Vec::new();
            for i in 0..=MAX_TICKS as i32 {
                let d = self.lo * 10f64.powi(i * every);
                if !d.is_finite() || d > self.hi * 1.0001 {
                    break;
                }
                for m in mults {
                    let v = d * m;
                    if v <= self.hi * 1.0001 {
                        t.push((v, self.q.text(v)));
                    }
                }
            }
            return t;
        }
        if !(self.step > 0.0 && self.step.is_finite()) {
            return Vec::new();
        }
        // More steps than MAX_TICKS (a span of 1e300 in steps of 50): a nice step over
        // the whole span instead.
        let mut step = self.step;
        let span = self.hi - self.lo;
        if !span.is_finite() {
            return vec![
                (self.lo, self.tick_label(self.lo)),
                (self.hi, self.tick_label(self.hi)),
            ];
        }
        if span / step > MAX_TICKS as f64 {
            step = nice_max(span).1;
        }
        let mut t = Vec::new();
        for i in 0..=MAX_TICKS {
            let v = self.lo + i as f64 * step;
            if v > self.hi + step / 2.0 || t.last().is_some_and(|l: &(f64, String)| l.0 >= v) {
                break;
            }
            t.push((v, self.tick_label(v)));
        }
        t
    }

    fn tick_label(&self, v: f64) -> String {
        match self.q {
            // Per-tick k/M: 0, 10k, 20k.
            Quantity::Iops | Quantity::Count => tick_text(v),
            _ => num3(v / self.div),
        }
    }

    /// The axis label with the scale's choice: `p99 clat (ms)`, `clat (log scale)`.
    fn label(&self, label: &str) -> String {
        if self.log {
            format!("{label} (log scale)")
        } else {
            match (self.q, self.unit) {
                (Quantity::Iops | Quantity::Count | Quantity::Plain, _) | (_, "") => {
                    label.to_string()
                }
                (_, u) => format!("{label} ({u})"),
            }
        }
    }

    fn kind(&self) -> &'static str {
        if self.log {
            "log"
        } else {
            "linear"
        }
    }

    fn unit_attr(&self) -> &'static str {
        if self.log {
            "per tick"
        } else {
            self.unit
        }
    }
}

/// A "nice" upper bound for a linear axis and its tick step.
fn nice_max(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.25);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

/// A chart being written: the frame, then its marks.
struct Chart {
    out: String,
}

impl Chart {
    /// Opens the chart's figure and SVG with the title (once) and the legend rows. The
    /// legend stays outside the plot: past two rows the picture grows upwards (its
    /// viewBox starts above 0), so the plot's coordinates are the same at any count.
    fn open(id: &str, kind: &str, title: &str, legend: &[(String, String)]) -> Chart {
        let legend: Vec<(String, Swatch)> = legend
            .iter()
            .map(|(n, c)| (n.clone(), Swatch::Color(c.clone())))
            .collect();
        Self::open_with(id, kind, title, &legend)
    }

    fn open_with(id: &str, kind: &str, title: &str, legend: &[(String, Swatch)]) -> Chart {
        let mut out = String::new();
        let (at, rows) = legend_layout(legend);
        let extra = rows.saturating_sub(2) as f64 * 16.0;
        let (top, height) = (if extra > 0.0 { -extra } else { 0.0 }, H + extra);
        let _ = write!(
            out,
            "<figure class=\"chart\" id=\"{id}\" data-kind=\"{kind}\">\
             <svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 {top} {W} {height}\" width=\"{W}\" height=\"{height}\" \
             font-family=\"sans-serif\" role=\"img\" aria-label=\"{t}\">\
             <rect y=\"{top}\" width=\"{W}\" height=\"{height}\" fill=\"#fff\"/>\
             <text class=\"title\" x=\"{cx}\" y=\"{ty}\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">{t}</text>",
            id = esc(id),
            t = esc(title),
            cx = W / 2.0,
            ty = 22.0 - extra,
        );
        // The legend: rows under the title, all above the plot's top.
        let _ = write!(out, "<g class=\"legend\" data-rows=\"{rows}\">");
        for ((name, sw), (x, row)) in legend.iter().zip(at) {
            let y = 46.0 - extra + 16.0 * row;
            let short: String = name.chars().take(90).collect();
            let tx = match sw {
                Swatch::Color(color) => {
                    let _ = write!(
                        out,
                        "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{color}\"/>",
                        y - 10.0
                    );
                    x + 16.0
                }
                Swatch::Series(k) => {
                    let (color, shape, dash) = series_style(*k);
                    let _ = write!(
                        out,
                        "<line x1=\"{x}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\"/>{}/>",
                        y - 4.0,
                        x + 24.0,
                        y - 4.0,
                        marker(shape, x + 12.0, y - 4.0, color, false, "")
                    );
                    x + 30.0
                }
                Swatch::None => x,
            };
            let _ = write!(
                out,
                "<text x=\"{tx}\" y=\"{y}\" font-size=\"12\">{}</text>",
                esc(&short)
            );
        }
        let _ = write!(out, "</g>");
        Chart { out }
    }

    /// The y axis (left, or right for a second axis) with its ticks and label.
    fn y_axis(&mut self, s: &Scale, label: &str, right: bool) {
        let (class, x, anchor, lx, rot) = if right {
            ("axis y2", W - RIGHT, "start", W - 14.0, 90)
        } else {
            ("axis y", LEFT, "end", 18.0, -90)
        };
        let _ = write!(
            self.out,
            "<g class=\"{class}\" data-scale=\"{}\" data-unit=\"{}\">\
             <line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{TOP}\" stroke=\"#333\"/>",
            s.kind(),
            s.unit_attr(),
            H - BOTTOM
        );
        for (v, text) in s.ticks() {
            let y = s.px(v);
            let tx = if right { x + 5.0 } else { x - 5.0 };
            if !right {
                let _ = write!(
                    self.out,
                    "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>",
                    W - RIGHT
                );
            }
            let _ = write!(
                self.out,
                "<text class=\"tick\" x=\"{tx}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-size=\"11\">{}</text>",
                y + 4.0,
                esc(&text)
            );
        }
        let _ = write!(
            self.out,
            "<text class=\"axis-label\" transform=\"translate({lx} {}) rotate({rot})\" text-anchor=\"middle\" font-size=\"13\">{}</text></g>",
            (H - BOTTOM + TOP) / 2.0,
            esc(&s.label(label))
        );
    }

    /// The x axis: its line, ticks at `ticks` (pixel, text) and its label.
    fn x_axis(&mut self, scale: &str, unit: &str, ticks: &[(f64, String)], label: &str) {
        let y0 = H - BOTTOM;
        let _ = write!(
            self.out,
            "<g class=\"axis x\" data-scale=\"{scale}\" data-unit=\"{}\">\
             <line x1=\"{LEFT}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"#333\"/>",
            esc(unit),
            W - RIGHT
        );
        for (px, text) in ticks {
            let _ = write!(
                self.out,
                "<line x1=\"{px:.1}\" y1=\"{y0}\" x2=\"{px:.1}\" y2=\"{}\" stroke=\"#333\"/>\
                 <text class=\"tick\" x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
                y0 + 4.0,
                y0 + 17.0,
                esc(text)
            );
        }
        let _ = write!(
            self.out,
            "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text></g>",
            (LEFT + W - RIGHT) / 2.0,
            H - 14.0,
            esc(label)
        );
    }

    fn close(mut self, notes: &[String]) -> String {
        self.out.push_str("</svg>");
        for n in notes {
            let _ = write!(
                self.out,
                "<figcaption class=\"note\">{}</figcaption>",
                esc(n)
            );
        }
        self.out.push_str("</figure>\n");
        self.out
    }
}

/// One point's repeats: how many ran, their mean, σ, min and max, and how many failed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stat {
    /// Runs with a value.
    pub n: usize,
    pub mean: f64,
    /// The sample standard deviation (0 with one run).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// Runs that failed, and the first one's reason.
    pub failed: usize,
    pub reason: String,
}

impl Stat {
    /// The statistics of `vals` (the runs with a value) and `failures` (the reasons of
    /// those that failed).
    pub fn of(vals: &[f64], failures: &[String]) -> Stat {
        let n = vals.len();
        let mean = if n == 0 {
            0.0
        } else {
            vals.iter().sum::<f64>() / n as f64
        };
        let sd = if n < 2 {
            0.0
        } else {
            (vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        Stat {
            n,
            mean,
            sd,
            min: vals.iter().copied().fold(f64::INFINITY, f64::min),
            max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            failed: failures.len(),
            reason: failures.first().cloned().unwrap_or_default(),
        }
    }

    /// The stat as a table cell shows it, every number with its unit and prefix:
    /// `46.4k IOPS ± 2k IOPS (44.2k–48.1k IOPS, n=3)`, or `failed: …`. σ takes the unit
    /// that suits it; the range, the mean's.
    pub fn text(&self, q: Quantity) -> String {
        if self.n == 0 {
            return format!("failed: {}", self.reason);
        }
        let (div, unit) = q.unit(self.mean);
        let v = |x: f64| num3(x / div);
        let mut s = join_unit(&v(self.mean), unit);
        if self.n > 1 {
            // "k IOPS" is a prefix and a unit: the range says "44.2k–48.1k IOPS".
            let (prefix, base) = match unit.split_once(' ') {
                Some((p, b)) if p == "k" || p == "M" => (p, b),
                _ => ("", unit),
            };
            let range = format!("{}{prefix}–{}{prefix}", v(self.min), v(self.max));
            let _ = write!(
                s,
                " ± {} ({}, n={})",
                q.text(self.sd),
                join_unit(&range, base),
                self.n
            );
        }
        if self.failed > 0 {
            let _ = write!(
                s,
                "; {} of {} failed: {}",
                self.failed,
                self.failed + self.n,
                self.reason
            );
        }
        s
    }
}

/// One series of a study chart: a point per x position (an index into the x values).
#[derive(Debug, Clone)]
pub struct StatSeries {
    pub name: String,
    pub points: Vec<(usize, Stat)>,
    /// The series does not depend on x (the option is ignored by its engine): drawn as
    /// one dashed level across the chart, named with this note.
    pub flat: Option<String>,
}

/// A study chart's x axis.
#[derive(Debug, Clone)]
pub enum StudyX {
    /// Named values (ioengine, rw): bars or dots side by side.
    Categories(Vec<String>),
    /// Numbers placed by value (bs, iodepth), with their labels.
    Numbers {
        values: Vec<f64>,
        labels: Vec<String>,
        q: Quantity,
    },
}

/// How a study chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Grouped bars (throughput against categories).
    Bars,
    /// Dots with error bars, side by side (latency against categories).
    Dots,
    /// Lines through the points (anything against numbers).
    Lines,
}

/// A y axis: its label, quantity, and whether it may be log-scaled.
#[derive(Debug, Clone)]
pub struct YSpec {
    pub label: String,
    pub q: Quantity,
    pub allow_log: bool,
}

/// A chart of a result set's points: one metric against one axis, a series per
/// combination of the other axes; optionally a second metric on a right-hand axis (the
/// combined chart: IOPS bars with p99 latency diamonds).
#[derive(Clone)]
pub struct StudyChart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub xlabel: &'a str,
    pub x: &'a StudyX,
    pub y: YSpec,
    pub style: Style,
    pub series: &'a [StatSeries],
    pub second: Option<(YSpec, &'a [StatSeries])>,
    pub notes: &'a [String],
}

/// The values a series' marks reach (mean, σ and min–max), for the scale.
fn reach(series: &[StatSeries]) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| &p.1))
        .filter(|s| s.n > 0)
        .flat_map(|s| {
            [
                s.mean,
                s.mean + s.sd,
                s.max,
                s.min,
                (s.mean - s.sd).max(0.0),
            ]
        })
        .filter(|v| v.is_finite())
        .collect()
}

/// Draws a study chart (see [`StudyChart`]).
pub fn study_chart(c: &StudyChart) -> String {
    study_chart_in(c, None, false)
}

/// The most series one chart draws; past it, [`small_multiples`] draws one small chart
/// per value of an outer axis (8: the palette's colours, each series then has its own).
pub const SERIES_LIMIT: usize = 8;

/// The legend a study chart's series and marks take (see [`study_chart`]).
fn study_legend(c: &StudyChart, series: &[StatSeries]) -> Vec<(String, Swatch)> {
    let mut legend: Vec<(String, Swatch)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = match &s.flat {
                Some(note) => format!("{} ({note})", s.name),
                None => s.name.clone(),
            };
            (name, Swatch::Series(i))
        })
        .collect();
    if let Some((y2, _)) = &c.second {
        legend.push((
            format!("◆ {} (right axis)", y2.label),
            Swatch::Color("#333".into()),
        ));
    }
    legend
}

/// The key to a chart's marks, on every chart: failed marks, what a bar or dot is and
/// its whiskers, and the hollow n = 1 mark, from the stats drawn.
fn marks_key<'a>(style: Style, stats: impl Iterator<Item = &'a Stat>) -> Vec<(String, Swatch)> {
    let stats: Vec<&Stat> = stats.collect();
    let mut legend = Vec::new();
    if stats.iter().any(|p| p.failed > 0) {
        legend.push(("✕ failed (no value)".into(), Swatch::Color(FAILED.into())));
    }
    let ns: Vec<usize> = stats.iter().map(|p| p.n).filter(|&n| n > 0).collect();
    let (lo, hi) = (
        ns.iter().copied().min().unwrap_or(0),
        ns.iter().copied().max().unwrap_or(0),
    );
    let runs = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}–{hi}")
    };
    let what = if style == Style::Bars {
        "bars"
    } else {
        "points"
    };
    legend.push((
        if hi > 1 {
            format!("{what}: mean of n = {runs} runs; thick whisker: ±1 σ; thin: min–max")
        } else {
            format!("{what}: one run each")
        },
        Swatch::None,
    ));
    if lo == 1 {
        legend.push(("hollow mark: n = 1, noise unknown".into(), Swatch::None));
    }
    legend
}

/// Draws a study chart; with `shared`, its y scale covers those values (the panels of
/// [`small_multiples`] share one); a `panel` has no legend of its own.
fn study_chart_in(c: &StudyChart, shared: Option<&[f64]>, panel: bool) -> String {
    let kind = match (c.style, c.second.is_some()) {
        (_, true) => "combo",
        (Style::Bars, _) => "bars",
        (Style::Dots, _) => "dots",
        (Style::Lines, _) => "lines",
    };
    let mut legend = study_legend(c, c.series);
    let all = || {
        c.series
            .iter()
            .chain(c.second.iter().flat_map(|s| s.1.iter()))
            .flat_map(|s| &s.points)
    };
    legend.extend(marks_key(c.style, all().map(|p| &p.1)));
    if panel {
        legend.clear();
    }
    let mut ch = Chart::open_with(c.id, kind, c.title, &legend);
    let (py0, py1) = (H - BOTTOM, TOP + 10.0);
    let own = reach(c.series);
    let ys = Scale::auto(
        c.y.q,
        shared.unwrap_or(&own),
        c.y.allow_log && c.style != Style::Bars,
        py0,
        py1,
    );
    ch.y_axis(&ys, &c.y.label, false);
    let y2 = c.second.as_ref().map(|(spec, ser)| {
        let s = Scale::auto(spec.q, &reach(ser), spec.allow_log, py0, py1);
        ch.y_axis(&s, &spec.label, true);
        s
    });
    // x positions: per value and per series.
    let (x0, x1) = (LEFT + 30.0, W - RIGHT - 30.0);
    let n_vals = match c.x {
        StudyX::Categories(v) => v.len(),
        StudyX::Numbers { values, .. } => values.len(),
    };
    let slotted = !matches!(c.x, StudyX::Numbers { .. }) || c.style != Style::Lines;
    let slot = (W - RIGHT - LEFT) / n_vals.max(1) as f64;
    let n_series = c.series.iter().filter(|s| s.flat.is_none()).count().max(1);
    let xnum = match c.x {
        StudyX::Numbers { values, q, .. } if !slotted => {
            let real: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
            let lo = real.iter().copied().fold(f64::MAX, f64::min);
            let hi = real.iter().copied().fold(f64::MIN, f64::max);
            let log = lo > 0.0 && hi / lo > 10.0;
            Some(Scale::span(*q, lo, hi, log, x0, x1))
        }
        _ => None,
    };
    // Which series have a point at each x: a group holds only those, centred.
    let mut present: Vec<Vec<usize>> = vec![Vec::new(); n_vals];
    for (si, s) in c.series.iter().filter(|s| s.flat.is_none()).enumerate() {
        for (xi, _) in &s.points {
            if let Some(p) = present.get_mut(*xi) {
                p.push(si);
            }
        }
    }
    let xpos = |xi: usize, si: usize| -> f64 {
        match (&xnum, c.x) {
            (Some(s), StudyX::Numbers { values, .. }) => s.px(values[xi]),
            _ => {
                let w = slot * 0.8 / n_series as f64;
                let here = present.get(xi).map_or(&[][..], Vec::as_slice);
                let rank = here.iter().position(|s| *s == si).unwrap_or(si);
                let group = w * here.len().max(1) as f64;
                LEFT + slot * (xi as f64 + 0.5) - group / 2.0 + w * (rank as f64 + 0.5)
            }
        }
    };
    let bar_w = slot * 0.8 / n_series as f64 * 0.9;
    let labels: Vec<String> = match c.x {
        StudyX::Categories(v) => v.clone(),
        StudyX::Numbers { labels, .. } => labels.clone(),
    };
    let ticks: Vec<(f64, String)> = labels
        .iter()
        .enumerate()
        .filter(|(i, _)| match c.x {
            StudyX::Numbers { values, .. } => values[*i].is_finite(),
            _ => true,
        })
        .map(|(i, l)| {
            let px = match &xnum {
                Some(_) => xpos(i, 0),
                None => LEFT + slot * (i as f64 + 0.5),
            };
            // A label wider than its group is cut (the whole is in each mark's tooltip).
            let fits = ((slot / 6.5) as usize).max(4);
            let text = if xnum.is_none() && l.chars().count() > fits {
                l.chars().take(fits - 1).chain(['…']).collect()
            } else {
                l.clone()
            };
            (px, text)
        })
        .collect();
    let (xscale, xunit, xlabel) = match (&xnum, c.x) {
        (Some(s), _) if s.log => ("log", "", format!("{} (log scale)", c.xlabel)),
        (Some(_), _) => ("linear", "", c.xlabel.to_string()),
        (None, StudyX::Numbers { .. }) => {
            ("category", "", format!("{} (values as groups)", c.xlabel))
        }
        (None, _) => ("category", "", c.xlabel.to_string()),
    };
    ch.x_axis(xscale, xunit, &ticks, &xlabel);
    let mut si = 0;
    let mut marked: Vec<String> = Vec::new();
    for (k, s) in c.series.iter().enumerate() {
        let (color, shape, dash) = series_style(k);
        if let Some(note) = &s.flat {
            flat_level(&mut ch.out, s, note, &ys, color);
            continue;
        }
        let mut line: Vec<String> = Vec::new();
        // On a numeric axis the series share each x: their marks and whiskers are spread
        // a few pixels apart (40 px in all at most) so that they do not hide each other.
        let dodge = if xnum.is_some() && n_series > 1 {
            let step = (40.0 / (n_series - 1) as f64).min(4.0);
            (si as f64 - (n_series - 1) as f64 / 2.0) * step
        } else {
            0.0
        };
        for (xi, st) in &s.points {
            let cx = xpos(*xi, si) + dodge;
            let xl = labels.get(*xi).cloned().unwrap_or_default();
            if st.n == 0 {
                // Several series failing at one x (a failed run's every metric) get one mark.
                let key = format!("{cx:.0}");
                if !marked.contains(&key) {
                    failed_mark(&mut ch.out, cx, H - BOTTOM - 14.0, &s.name, &xl, st);
                    marked.push(key);
                }
                continue;
            }
            let y = ys.px(st.mean);
            let mut tip = format!("{} at {}: {}", s.name, xl, st.text(c.y.q));
            if st.n == 1 {
                tip.push_str(" (n = 1: noise unknown)");
            }
            match c.style {
                Style::Bars => {
                    let _ = write!(
                        ch.out,
                        "<rect class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{}\" data-n=\"{}\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}</title></rect>",
                        esc(&s.name),
                        esc(&xl),
                        st.mean,
                        st.n,
                        cx - bar_w / 2.0,
                        (H - BOTTOM - y).max(0.0),
                        esc(&tip)
                    );
                    // The series' marker atop its bar: bars of near colours stay apart.
                    let _ = write!(
                        ch.out,
                        "{}><title>{}</title>{}",
                        marker(
                            shape,
                            cx,
                            y - 7.0,
                            color,
                            st.n == 1,
                            "class=\"mk\" data-n1=\"{}\""
                                .replace("{}", if st.n == 1 { "1" } else { "0" })
                                .as_str()
                        ),
                        esc(&tip),
                        marker_end(shape)
                    );
                }
                Style::Dots | Style::Lines => {
                    line.push(format!("{cx:.1},{y:.1}"));
                    let attrs = format!(
                        "class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{}\" data-n=\"{}\" data-marker=\"{shape}\"",
                        esc(&s.name),
                        esc(&xl),
                        st.mean,
                        st.n
                    );
                    let _ = write!(
                        ch.out,
                        "{}><title>{}</title>{}",
                        marker(shape, cx, y, color, st.n == 1, &attrs),
                        esc(&tip),
                        marker_end(shape)
                    );
                }
            }
            errbar(
                &mut ch.out,
                cx,
                st,
                &ys,
                if c.style == Style::Bars {
                    "#000"
                } else {
                    color
                },
            );
            if st.failed > 0 {
                failed_mark(&mut ch.out, cx, y - 14.0, &s.name, &xl, st);
            }
        }
        if c.style == Style::Lines && line.len() > 1 {
            let _ = write!(
                ch.out,
                "<polyline class=\"line\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\" points=\"{}\"/>",
                line.join(" ")
            );
        }
        si += 1;
    }
    if let (Some((spec, ser)), Some(s2)) = (&c.second, &y2) {
        let mut si = 0;
        for s in ser.iter() {
            if s.flat.is_some() {
                continue;
            }
            for (xi, st) in &s.points {
                if st.n == 0 {
                    continue;
                }
                let cx = xpos(*xi, si);
                let y = s2.px(st.mean);
                let xl = labels.get(*xi).cloned().unwrap_or_default();
                let _ = write!(
                    ch.out,
                    "<path class=\"pt2\" data-series=\"{}\" data-x=\"{}\" data-y=\"{}\" d=\"M{cx:.1} {:.1} l6 7 l-6 7 l-6 -7 z\" fill=\"#333\" stroke=\"#fff\"><title>{} at {}: {}</title></path>",
                    esc(&s.name),
                    esc(&xl),
                    st.mean,
                    y - 7.0,
                    esc(&s.name),
                    esc(&xl),
                    esc(&format!("{} {}", spec.label, st.text(spec.q)))
                );
                errbar(&mut ch.out, cx + 9.0, st, s2, "#777");
            }
            si += 1;
        }
    }
    ch.close(c.notes)
}

/// How much larger a panel of [`small_multiples`] writes its text and lines, so that
/// at half size (two panels a row) they read as a full chart's.
const PANEL_ZOOM: f64 = 1.7;

/// Small multiples: one small chart per value of an outer axis (`panels`: its value's
/// label and that chart's series, the same names in the same order in each, so that a
/// series keeps its colour, marker and dash), two a row, all on one y scale, under one
/// legend; the caption says so. For a chart whose series would pass [`SERIES_LIMIT`].
pub fn small_multiples(
    c: &StudyChart,
    outer: &str,
    panels: &[(String, Vec<StatSeries>)],
) -> String {
    let cols = if panels.len() > 1 { 2 } else { 1 };
    let rows = panels.len().div_ceil(cols);
    let all: Vec<StatSeries> = panels.iter().flat_map(|p| p.1.iter().cloned()).collect();
    let mut shared = reach(&all);
    if let Some((_, ser)) = &c.second {
        shared.extend(reach(ser));
    }
    // The legend: the first panel's series (every panel has the same), and the key.
    let first = panels.first().map(|p| p.1.clone()).unwrap_or_default();
    let mut legend = study_legend(c, &first);
    legend.extend(marks_key(
        c.style,
        all.iter()
            .chain(c.second.iter().flat_map(|s| s.1.iter()))
            .flat_map(|s| s.points.iter().map(|p| &p.1)),
    ));
    let (_, lrows) = legend_layout(&legend);
    let extra = lrows.saturating_sub(2) as f64 * 16.0;
    let (pw, ph) = (W / cols as f64, H / cols as f64);
    let top = TOP - 12.0;
    let height = top + ph * rows as f64 + 8.0;
    let mut ch = Chart::open_with(c.id, "multiples", c.title, &legend);
    // The frame Chart opened is a full chart's height: this one is the grid's.
    let full = format!("height=\"{}\"", H + extra);
    ch.out = ch
        .out
        .replace(&full, &format!("height=\"{}\"", height + extra));
    ch.out = ch.out.replacen(
        &format!(
            "viewBox=\"0 {} {W} {}\"",
            if extra > 0.0 { -extra } else { 0.0 },
            H + extra
        ),
        &format!(
            "viewBox=\"0 {} {W} {}\"",
            if extra > 0.0 { -extra } else { 0.0 },
            height + extra
        ),
        1,
    );
    let _ = write!(
        ch.out,
        "<g class=\"panels\" data-outer=\"{}\" data-panels=\"{}\">",
        esc(outer),
        panels.len()
    );
    for (k, (value, series)) in panels.iter().enumerate() {
        let id = format!("{}-{k}", c.id);
        let title = format!("{outer}={value}");
        let one = study_chart_in(
            &StudyChart {
                id: &id,
                title: &title,
                series,
                notes: &[],
                ..c.clone()
            },
            Some(&shared),
            true,
        );
        // The panel's drawing, without its figure and svg tags, its text and lines zoomed.
        let body = one
            .find("<svg")
            .and_then(|a| Some(a + one[a..].find('>')? + 1))
            .map_or("", |a| &one[a..one.rfind("</svg>").unwrap_or(a)]);
        let mut body = body.to_string();
        for size in [11, 12, 13, 17] {
            body = body.replace(
                &format!("font-size=\"{size}\""),
                &format!("font-size=\"{:.0}\"", f64::from(size) * PANEL_ZOOM),
            );
        }
        body = body.replace("stroke-width=\"2\"", "stroke-width=\"3.4\"");
        body = body.replace("<g class=\"legend\" data-rows=\"0\"></g>", "");
        let (x, y) = ((k % cols) as f64 * pw, top + (k / cols) as f64 * ph);
        let _ = write!(
            ch.out,
            "<g class=\"panel\" data-value=\"{}\" transform=\"translate({x:.1} {y:.1}) scale({:.4})\">{body}\
             <rect width=\"{W}\" height=\"{H}\" fill=\"none\" stroke=\"#bbb\"/></g>",
            esc(value),
            1.0 / cols as f64
        );
    }
    ch.out.push_str("</g>");
    let mut notes: Vec<String> = vec![format!(
        "Small multiples: one chart per value of {outer} ({} charts), each with the same \
         x and y scales, so that heights compare across them; {} series in all would not \
         read apart in one chart.",
        panels.len(),
        all.len()
    )];
    notes.extend(c.notes.iter().cloned());
    ch.close(&notes)
}

/// A series whose option is ignored: a dashed level at its mean across the chart.
fn flat_level(out: &mut String, s: &StatSeries, note: &str, ys: &Scale, color: &str) {
    let Some((_, st)) = s.points.first() else {
        return;
    };
    if st.n == 0 {
        failed_mark(out, LEFT + 40.0, H - BOTTOM - 14.0, &s.name, "all", st);
        return;
    }
    let y = ys.px(st.mean);
    let _ = write!(
        out,
        "<g class=\"flat\" data-series=\"{}\" data-note=\"{}\">\
         <line class=\"pt\" data-series=\"{}\" data-x=\"all\" data-y=\"{}\" data-n=\"{}\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"8 5\"><title>{}: {} ({note})</title></line>\
         <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\" fill=\"{color}\">{} ({})</text></g>",
        esc(&s.name),
        esc(note),
        esc(&s.name),
        st.mean,
        st.n,
        W - RIGHT,
        esc(&s.name),
        esc(&st.text(ys.q)),
        W - RIGHT - 4.0,
        y - 5.0,
        esc(&s.name),
        esc(note)
    );
    errbar(out, LEFT + 12.0, st, ys, color);
}

/// Error bars for repeats: min–max as thin whiskers, mean ± σ as a thick bar.
fn errbar(out: &mut String, cx: f64, st: &Stat, ys: &Scale, color: &str) {
    if st.n < 2 {
        return;
    }
    let floor = if ys.log { ys.lo } else { 0.0 };
    let (ymin, ymax) = (ys.px(st.min.max(floor)), ys.px(st.max));
    // On a log scale a σ below the mean can reach past zero: the bar stops at the minimum.
    let low = if ys.log {
        (st.mean - st.sd).max(st.min)
    } else {
        (st.mean - st.sd).max(floor)
    };
    let (ylo, yhi) = (ys.px(low), ys.px(st.mean + st.sd));
    let _ = write!(
        out,
        "<g class=\"errbar\" data-n=\"{}\" data-mean=\"{}\" data-sd=\"{}\" data-min=\"{}\" data-max=\"{}\" stroke=\"{color}\">\
         <line x1=\"{cx:.1}\" y1=\"{ymin:.1}\" x2=\"{cx:.1}\" y2=\"{ymax:.1}\" stroke-width=\"1\"/>\
         <line x1=\"{:.1}\" y1=\"{ymin:.1}\" x2=\"{:.1}\" y2=\"{ymin:.1}\"/><line x1=\"{:.1}\" y1=\"{ymax:.1}\" x2=\"{:.1}\" y2=\"{ymax:.1}\"/>\
         <line x1=\"{cx:.1}\" y1=\"{ylo:.1}\" x2=\"{cx:.1}\" y2=\"{yhi:.1}\" stroke-width=\"5\" stroke-opacity=\"0.55\"/></g>",
        st.n,
        st.mean,
        st.sd,
        st.min,
        st.max,
        cx - 5.0,
        cx + 5.0,
        cx - 5.0,
        cx + 5.0
    );
}

/// A failure: a red ✕ with "failed" (or "k/n failed") and the reason as its tooltip.
fn failed_mark(out: &mut String, cx: f64, y: f64, series: &str, x: &str, st: &Stat) {
    let text = if st.n == 0 {
        "failed".to_string()
    } else {
        format!("{}/{} failed", st.failed, st.failed + st.n)
    };
    let _ = write!(
        out,
        "<g class=\"failed\" data-series=\"{}\" data-x=\"{}\" data-failed=\"{}\" data-runs=\"{}\" data-reason=\"{}\" stroke=\"{FAILED}\" stroke-width=\"2.5\">\
         <title>{}: {}</title>\
         <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>\
         <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{FAILED}\" stroke=\"none\">{text}</text></g>",
        esc(series),
        esc(x),
        st.failed,
        st.failed + st.n,
        esc(&st.reason),
        esc(&text),
        esc(&st.reason),
        cx - 6.0,
        y - 6.0,
        cx + 6.0,
        y + 6.0,
        cx - 6.0,
        y + 6.0,
        cx + 6.0,
        y - 6.0,
        y - 10.0,
    );
}

/// One line of an x–y chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// An axis of an x–y chart: label, quantity, and whether it may be log-scaled.
pub struct Axis<'a> {
    pub label: &'a str,
    pub q: Quantity,
    pub allow_log: bool,
}

/// What an x–y chart draws beside its lines: levels, positions and failed points.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// The chart's `data-kind` (default `xy`).
    pub kind: &'static str,
    /// The x values are Unix times (seconds): a date axis, ticks as UTC dates.
    pub dates: bool,
    /// Vertical markers (a found capacity, a baseline run): x value and label.
    pub vertical: Vec<(f64, String)>,
    /// Horizontal dashed levels (a latency target): y value and label.
    pub levels: Vec<(f64, String)>,
    /// Points that failed (a step over its target): x, y and why, drawn as red crosses.
    pub failed: Vec<(f64, f64, String)>,
}

/// A Unix time (seconds) as a UTC date and time, `2026-11-27 19:05`.
pub fn date_text(t: f64) -> String {
    // Within ±300000 years, so the civil date's arithmetic cannot overflow (a time
    // read from a file may be anything); NaN is the epoch.
    let secs = if t.is_nan() {
        0
    } else {
        t.clamp(-1e13, 1e13).floor() as i64
    };
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian; 400-year eras).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A Unix time (seconds) as a UTC date and time to the second, `2026-11-27 19:05:09`.
pub fn date_seconds(t: f64) -> String {
    let secs = if t.is_nan() {
        0
    } else {
        t.clamp(-1e13, 1e13).floor() as i64
    };
    format!("{}:{:02}", date_text(t), secs.rem_euclid(60))
}

/// An x–y chart (histograms, CDFs, logs over time): one line per series, a marker per
/// point when there are few.
pub fn xy_chart(id: &str, title: &str, x: Axis, y: Axis, series: &[Series]) -> String {
    xy_chart_marked(id, title, x, y, series, &Marks::default())
}

/// An x–y chart with [`Marks`]: the scales take in the marks, so a target above every
/// point still shows.
pub fn xy_chart_marked(
    id: &str,
    title: &str,
    x: Axis,
    y: Axis,
    series: &[Series],
    marks: &Marks,
) -> String {
    let mut legend: Vec<(String, String)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), COLORS[i % COLORS.len()].to_string()))
        .collect();
    if !marks.failed.is_empty() {
        legend.push(("✕ failed step".into(), FAILED.into()));
    }
    let kind = if marks.kind.is_empty() {
        "xy"
    } else {
        marks.kind
    };
    let mut ch = Chart::open(id, kind, title, &legend);
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(marks.vertical.iter().map(|v| v.0))
        .chain(marks.failed.iter().map(|f| f.0))
        .collect();
    let yv: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .chain(marks.levels.iter().map(|l| l.0))
        .chain(marks.failed.iter().map(|f| f.1))
        .collect();
    let ys = Scale::auto(y.q, &yv, y.allow_log, H - BOTTOM, TOP + 10.0);
    ch.y_axis(&ys, y.label, false);
    let (x0, x1) = (LEFT + 10.0, W - RIGHT - 10.0);
    let pos: Vec<f64> = xs.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = xs.iter().copied().fold(f64::MAX, f64::min);
    let hi = xs.iter().copied().fold(f64::MIN, f64::max);
    let xsc = if marks.dates {
        // A date axis spans the runs' times, with a margin so end points are not on the
        // frame; about six ticks.
        let pad = if hi > lo {
            ((hi - lo) * 0.05).max(1.0)
        } else {
            60.0
        };
        let mut s = Scale::span(Quantity::Plain, lo - pad, hi + pad, false, x0, x1);
        s.step = (s.hi - s.lo) / 6.0;
        s
    } else if x.allow_log
        && !pos.is_empty()
        && hi / pos.iter().copied().fold(f64::MAX, f64::min) > 10.0
    {
        Scale::auto(x.q, &xs, true, x0, x1)
    } else {
        let (top, step) = nice_max(hi);
        let mut s = Scale::span(x.q, lo.min(0.0), top, false, x0, x1);
        s.step = step;
        s
    };
    let one_day = marks.dates && date_text(xsc.lo)[..10] == date_text(xsc.hi)[..10];
    let ticks: Vec<(f64, String)> = xsc
        .ticks()
        .into_iter()
        .map(|(v, t)| {
            // Within a day the ticks are times (the label names the day); seconds when
            // the ticks are less than a minute apart.
            let t = match (marks.dates, one_day, xsc.step < 60.0) {
                (false, _, _) => t,
                (true, false, _) => date_text(v),
                (true, true, false) => date_text(v)[11..].to_string(),
                (true, true, true) => date_seconds(v)[11..].to_string(),
            };
            (xsc.px(v), t)
        })
        .collect();
    if marks.dates {
        let label = if one_day {
            format!("{} (UTC, {})", x.label, &date_text(xsc.lo)[..10])
        } else {
            format!("{} (UTC)", x.label)
        };
        ch.x_axis("time", "UTC", &ticks, &label);
    } else {
        ch.x_axis(xsc.kind(), xsc.unit_attr(), &ticks, &xsc.label(x.label));
    }
    let xtext = |v: f64| {
        if marks.dates {
            date_seconds(v)
        } else {
            x.q.text(v)
        }
    };
    for (yv, label) in &marks.levels {
        let py = ys.px(*yv);
        let _ = write!(
            ch.out,
            "<g class=\"level\" data-y=\"{yv}\"><line x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{}\" y2=\"{py:.1}\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"7 5\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"12\" fill=\"#333\">{}</text></g>",
            W - RIGHT,
            W - RIGHT - 4.0,
            py - 5.0,
            esc(label)
        );
    }
    for (xv, label) in &marks.vertical {
        let px = xsc.px(*xv);
        // The label on the side with room: right of the line, left of it past the middle.
        let (tx, anchor) = if px > W / 2.0 {
            (px - 5.0, "end")
        } else {
            (px + 5.0, "start")
        };
        let _ = write!(
            ch.out,
            "<g class=\"marker\" data-x=\"{xv}\"><line x1=\"{px:.1}\" y1=\"{}\" x2=\"{px:.1}\" y2=\"{TOP}\" stroke=\"#2a7f2a\" stroke-width=\"2.5\"/>\
             <text x=\"{tx:.1}\" y=\"{}\" text-anchor=\"{anchor}\" font-size=\"12\" font-weight=\"bold\" fill=\"#2a7f2a\">{}</text></g>",
            H - BOTTOM,
            TOP + 14.0,
            esc(label)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let (c, _, dash) = series_style(i);
        let path: Vec<String> = s
            .points
            .iter()
            .map(|&(xv, yv)| format!("{:.1},{:.1}", xsc.px(xv), ys.px(yv)))
            .collect();
        let _ = write!(
            ch.out,
            "<polyline class=\"line\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"{dash}\" points=\"{}\"/>",
            path.join(" ")
        );
        let r = if s.points.len() > 200 { 0 } else { 3 };
        for &(xv, yv) in &s.points {
            let _ = write!(
                ch.out,
                "<circle class=\"pt\" data-series=\"{}\" data-x=\"{xv}\" data-y=\"{yv}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\" fill=\"{c}\"><title>{}: {} → {}</title></circle>",
                esc(&s.name),
                xsc.px(xv),
                ys.px(yv),
                esc(&s.name),
                esc(&xtext(xv)),
                esc(&y.q.text(yv))
            );
        }
    }
    for (xv, yv, why) in &marks.failed {
        let (cx, cy) = (xsc.px(*xv), ys.px(*yv));
        let _ = write!(
            ch.out,
            "<path class=\"failed\" data-x=\"{xv}\" data-y=\"{yv}\" d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"{FAILED}\" stroke-width=\"2.5\"><title>{}</title></path>",
            cx - 6.0,
            cy - 6.0,
            cx + 6.0,
            cy + 6.0,
            cx - 6.0,
            cy + 6.0,
            cx + 6.0,
            cy - 6.0,
            esc(why)
        );
    }
    ch.close(&[])
}

/// A heat-map cell: a value, or the reason it failed.
pub type Cell = Option<Result<f64, String>>;

/// A heat map: `rows` × `cols` cells coloured by value (on a log colour scale when the
/// values span more than a decade), each with its value written, failed cells marked.
pub fn heat_map(
    id: &str,
    title: &str,
    (xlabel, cols): (&str, &[String]),
    (ylabel, rows): (&str, &[String]),
    q: Quantity,
    cell: &dyn Fn(usize, usize) -> Cell,
) -> String {
    heat_map_in(id, title, (xlabel, cols), (ylabel, rows), q, cell, None)
}

/// A [`heat_map`] whose colours span `range` (low, high) when given: the maps of one
/// set, one per value of a third axis, share their scale.
pub fn heat_map_in(
    id: &str,
    title: &str,
    (xlabel, cols): (&str, &[String]),
    (ylabel, rows): (&str, &[String]),
    q: Quantity,
    cell: &dyn Fn(usize, usize) -> Cell,
    range: Option<(f64, f64)>,
) -> String {
    let vals: Vec<f64> = (0..rows.len())
        .flat_map(|r| (0..cols.len()).filter_map(move |c| cell(r, c)?.ok()))
        .collect();
    let (lo, hi) = range.unwrap_or((
        vals.iter().copied().fold(f64::MAX, f64::min),
        vals.iter().copied().fold(0.0, f64::max),
    ));
    let log = lo > 0.0 && hi / lo > 10.0;
    let scale = if log { "log" } else { "linear" };
    let legend = vec![
        (
            format!("low {}", q.text(lo)),
            "rgb(255,250,200)".to_string(),
        ),
        (
            format!("high {} (colour: {scale} scale)", q.text(hi)),
            "rgb(30,90,150)".to_string(),
        ),
    ];
    let mut ch = Chart::open(id, "heatmap", title, &legend);
    let (cw, rh) = (
        (W - RIGHT - LEFT) / cols.len().max(1) as f64,
        (H - BOTTOM - TOP) / rows.len().max(1) as f64,
    );
    let _ = write!(
        ch.out,
        "<g class=\"axis y\" data-scale=\"category\" data-unit=\"\"><text class=\"axis-label\" transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
        (H - BOTTOM + TOP) / 2.0,
        esc(ylabel)
    );
    for (r, rname) in rows.iter().enumerate() {
        let _ = write!(
            ch.out,
            "<text class=\"tick\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            LEFT - 5.0,
            TOP + rh * r as f64 + rh / 2.0 + 4.0,
            esc(rname)
        );
    }
    ch.out.push_str("</g>");
    let ticks: Vec<(f64, String)> = cols
        .iter()
        .enumerate()
        .map(|(c, n)| (LEFT + cw * (c as f64 + 0.5), n.clone()))
        .collect();
    ch.x_axis("category", "", &ticks, xlabel);
    let t_of = |v: f64| {
        if hi <= lo {
            1.0
        } else if log {
            (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    for (r, rname) in rows.iter().enumerate() {
        let y = TOP + rh * r as f64;
        for (c, cname) in cols.iter().enumerate() {
            let x = LEFT + cw * c as f64;
            match cell(r, c) {
                None => {}
                Some(Err(reason)) => {
                    let st = Stat {
                        failed: 1,
                        reason,
                        ..Default::default()
                    };
                    let _ = write!(
                        ch.out,
                        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{rh:.1}\" fill=\"#eee\" stroke=\"#fff\"/>"
                    );
                    failed_mark(&mut ch.out, x + cw / 2.0, y + rh / 2.0, rname, cname, &st);
                }
                Some(Ok(v)) => {
                    let t = t_of(v).clamp(0.0, 1.0);
                    // From pale yellow (low) to dark blue (high).
                    let (rr, gg, bb) = (
                        (255.0 - t * 225.0) as u8,
                        (250.0 - t * 160.0) as u8,
                        (200.0 - t * 50.0) as u8,
                    );
                    let fg = if t > 0.55 { "#fff" } else { "#000" };
                    let _ = write!(
                        ch.out,
                        "<rect class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{v}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{rh:.1}\" fill=\"rgb({rr},{gg},{bb})\" stroke=\"#fff\"><title>{} / {}: {}</title></rect>\
                         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{fg}\">{}</text>",
                        esc(rname),
                        esc(cname),
                        esc(rname),
                        esc(cname),
                        esc(&q.text(v)),
                        x + cw / 2.0,
                        y + rh / 2.0 + 4.0,
                        esc(&q.text(v))
                    );
                }
            }
        }
    }
    ch.close(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(date_text(0.0), "1970-01-01 00:00");
        assert_eq!(date_seconds(951_782_400.0 + 59.0), "2000-02-29 00:00:59");
        // The history's own clock (SQLite's datetime) said this run started then.
        assert_eq!(date_seconds(1_795_808_745.0), "2026-11-27 19:45:45");
    }

    fn stat(vals: &[f64]) -> Stat {
        Stat::of(vals, &[])
    }

    #[test]
    fn thirty_series_look_different_and_the_legend_stays_above_the_plot() {
        let looks: Vec<_> = (0..30).map(series_style).collect();
        for i in 0..30 {
            for j in 0..i {
                assert_ne!(looks[i], looks[j], "series {i} and {j}");
                // Never the same colour and the same marker (the 1K/1M lines of issue 39).
                assert!(looks[i].0 != looks[j].0 || looks[i].1 != looks[j].1);
            }
        }
        let x = StudyX::Numbers {
            values: vec![1.0, 2.0, 4.0],
            labels: vec!["1".into(), "2".into(), "4".into()],
            q: Quantity::Plain,
        };
        let series: Vec<StatSeries> = (0..24)
            .map(|k| StatSeries {
                name: format!("bs={} KiB iodepth={}", 1 << k, k),
                points: vec![(0, stat(&[1.0 + k as f64])), (1, stat(&[2.0, 2.2, 2.1]))],
                flat: None,
            })
            .collect();
        let svg = study_chart(&StudyChart {
            id: "c",
            title: "t",
            xlabel: "iodepth",
            x: &x,
            y: YSpec {
                label: "IOPS".into(),
                q: Quantity::Iops,
                allow_log: false,
            },
            style: Style::Lines,
            series: &series,
            second: None,
            notes: &[],
        });
        // Every legend text sits above the plot's top edge.
        let legend = &svg[svg.find("<g class=\"legend\"").unwrap()..];
        let legend = &legend[..legend.find("</g>").unwrap()];
        let ys: Vec<f64> = legend
            .split("<text x=\"")
            .skip(1)
            .map(|t| {
                let y = &t[t.find("y=\"").unwrap() + 3..];
                y[..y.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(ys.len() >= 26, "{ys:?}");
        assert!(
            ys.iter().all(|&y| y < TOP),
            "a legend row inside the plot: {ys:?}"
        );
        assert!(svg.contains("viewBox=\"0 -"), "the picture grows upwards");
        // The key to the marks and the single-run warning.
        assert!(svg.contains("thick whisker: ±1 σ; thin: min–max"));
        assert!(svg.contains("hollow mark: n = 1, noise unknown"));
        assert!(svg.contains("(n = 1: noise unknown)"));
        assert!(
            svg.contains("data-marker=\"triangle\"") && svg.contains("stroke-dasharray=\"7 4\"")
        );
    }

    #[test]
    fn spread_and_range_keep_their_prefix() {
        // Issue 39: σ = 2.0k printed as "± 2", the range as "44.2–48.1".
        let s = stat(&[46_900.0, 44_200.0, 48_100.0]);
        assert_eq!(
            s.text(Quantity::Iops),
            format!(
                "46.4k IOPS ± {} (44.2k–48.1k IOPS, n=3)",
                Quantity::Iops.text(s.sd)
            )
        );
        assert!(Quantity::Iops.text(s.sd).ends_with("k IOPS"));
        let s = stat(&[3.0e6, 3.2e6]);
        assert_eq!(s.text(Quantity::Time), "3.1 ms ± 141 µs (3–3.2 ms, n=2)");
        let s = stat(&[512.0 * 1048576.0, 520.0 * 1048576.0]);
        assert_eq!(
            s.text(Quantity::Rate),
            "516 MiB/s ± 5.66 MiB/s (512–520 MiB/s, n=2)"
        );
    }

    #[test]
    fn hostile_spans_give_a_bounded_number_of_ticks() {
        // A linear span of -1e308..250 in steps of 50, a span too fine for its floats, a
        // log span of 600 decades, a log scale starting at 0: at most MAX_TICKS ticks.
        let mut s = Scale::span(Quantity::Iops, -1e308, 250.0, false, 0.0, 100.0);
        s.step = 50.0;
        assert!(s.ticks().len() <= MAX_TICKS + 1);
        let mut s = Scale::span(Quantity::Plain, 1e18, 1e18 + 512.0, false, 0.0, 100.0);
        s.step = 1.0;
        assert!(s.ticks().len() <= MAX_TICKS + 1);
        let s = Scale::auto(Quantity::Time, &[1e-300, 1e300], true, 0.0, 100.0);
        assert!(s.log && !s.ticks().is_empty() && s.ticks().len() <= MAX_TICKS + 1);
        let s = Scale::span(Quantity::Time, 0.0, 1e9, true, 0.0, 100.0);
        assert!(s.ticks().is_empty());
        assert_eq!(&date_text(1e300)[..1], "3");
        assert_eq!(date_text(f64::NAN), "1970-01-01 00:00");
    }

    #[test]
    fn units_follow_the_values() {
        assert_eq!(Quantity::Time.text(30_000_000.0), "30 ms");
        assert_eq!(Quantity::Time.text(1500.0), "1.5 µs");
        assert_eq!(Quantity::Time.text(2.5e9), "2.5 s");
        assert_eq!(Quantity::Rate.text(3.0 * 1048576.0), "3 MiB/s");
        assert_eq!(Quantity::Bytes.text(4096.0), "4 KiB");
        assert_eq!(Quantity::Iops.text(12_345.0), "12.3k IOPS");
        assert_eq!(Quantity::Iops.text(2.0e6), "2M IOPS");
        assert_eq!(Quantity::Count.text(1000.0), "1k");
        assert_eq!(tick_text(1200.0), "1.2k");
        let small: Vec<String> = [0.0, 0.005, 0.01, 0.015, 0.02].map(tick_text).into();
        assert_eq!(small, ["0", "0.005", "0.01", "0.015", "0.02"]);
        assert_eq!(esc("<a&b>"), "&lt;a&amp;b&gt;");
    }

    #[test]
    fn a_latency_axis_spanning_decades_is_log_and_says_so() {
        let s = Scale::auto(
            Quantity::Time,
            &[50_000.0, 438_000_000.0],
            true,
            400.0,
            80.0,
        );
        assert!(s.log);
        assert_eq!(s.label("p99 clat"), "p99 clat (log scale)");
        let ticks: Vec<String> = s.ticks().into_iter().map(|t| t.1).collect();
        assert!(ticks.contains(&"100 µs".to_string()) && ticks.contains(&"1 s".to_string()));
        // Within a decade: linear, one unit on the label, no "30k µs".
        let s = Scale::auto(
            Quantity::Time,
            &[20_000_000.0, 30_000_000.0],
            true,
            400.0,
            80.0,
        );
        assert!(!s.log);
        assert_eq!(s.label("p99 clat"), "p99 clat (ms)");
        assert!(s.ticks().iter().all(|t| !t.1.contains('k')));
    }

    #[test]
    fn repeats_draw_error_bars_and_failures_a_mark() {
        let x = StudyX::Numbers {
            values: vec![4096.0, 65536.0],
            labels: vec!["4 KiB".into(), "64 KiB".into()],
            q: Quantity::Bytes,
        };
        let failed = Stat::of(&[], &["Invalid argument (error 22)".into()]);
        let series = [StatSeries {
            name: "read".into(),
            points: vec![(0, stat(&[10.0, 12.0, 14.0])), (1, failed)],
            flat: None,
        }];
        let svg = study_chart(&StudyChart {
            id: "c",
            title: "IOPS against bs",
            xlabel: "bs",
            x: &x,
            y: YSpec {
                label: "IOPS".into(),
                q: Quantity::Iops,
                allow_log: false,
            },
            style: Style::Lines,
            series: &series,
            second: None,
            notes: &[],
        });
        assert!(svg.contains("data-kind=\"lines\""));
        assert!(svg.contains("class=\"axis x\" data-scale=\"log\""));
        assert!(svg.contains("bs (log scale)"));
        assert!(svg.contains("class=\"errbar\" data-n=\"3\" data-mean=\"12\" data-sd=\"2\""));
        assert!(svg.contains("class=\"failed\" data-series=\"read\" data-x=\"64 KiB\""));
        assert!(svg.contains("data-reason=\"Invalid argument (error 22)\""));
        assert_eq!(
            svg.matches("class=\"pt\"").count(),
            1,
            "no value for the failure"
        );
        assert_eq!(svg.matches("class=\"title\"").count(), 1, "titled once");
    }
}
