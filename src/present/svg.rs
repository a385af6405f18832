//! Charts as inline SVG, drawn by hand so that a report is one self-contained file: line
//! charts (linear, or log-scale x for latencies), bar charts with error bars, and heat
//! maps. Every chart has a title, axes with units, a legend, and one element per data
//! point carrying its values (`class="pt" data-series data-x data-y`), so a browser test
//! can count what was drawn and read it back.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 360.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 52.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Text made safe for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
    // Two decimals, or more for small numbers so that ticks 0.005 apart stay apart
    // (three significant digits at the most).
    let small = v.abs();
    let decimals = if small > 0.0 && small < 1.0 {
        ((-small.log10()).ceil() as usize + 2).min(12)
    } else {
        2
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s}{unit}")
}

/// One line of a line chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// The x axis of a line chart.
pub enum XAxis {
    /// Numbers on a linear scale.
    Linear,
    /// Numbers on a log10 scale (latencies).
    Log,
    /// Named positions, evenly spaced (a sweep axis: 1, 2, 4, … or read, randread).
    Categories(Vec<String>),
}

fn open(out: &mut String, id: &str, kind: &str, title: &str) {
    let _ = write!(
        out,
        "<figure class=\"chart\" id=\"{}\" data-kind=\"{kind}\"><figcaption>{}</figcaption>\
         <svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">\
         <text class=\"title\" x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{}</text>",
        esc(id),
        esc(title),
        esc(title),
        LEFT + (W - LEFT - RIGHT) / 2.0,
        esc(title)
    );
}

fn axes(out: &mut String, xlabel: &str, ylabel: &str) {
    let (x0, y0, x1, y1) = (LEFT, H - BOTTOM, W - RIGHT, TOP);
    let _ = write!(
        out,
        "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"#333\"/>\
         <line x1=\"{x0}\" y1=\"{y0}\" x2=\"{x0}\" y2=\"{y1}\" stroke=\"#333\"/>\
         <text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\
         <text class=\"axis-label\" transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">{}</text>",
        (x0 + x1) / 2.0,
        H - 12.0,
        esc(xlabel),
        (y0 + y1) / 2.0,
        esc(ylabel)
    );
}

fn legend(out: &mut String, names: &[String]) {
    let colored: Vec<(String, String)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), COLORS[i % COLORS.len()].to_string()))
        .collect();
    legend_colored(out, &colored);
}

fn legend_colored(out: &mut String, entries: &[(String, String)]) {
    let x = W - RIGHT + 14.0;
    let _ = write!(out, "<g class=\"legend\">");
    for (i, (n, c)) in entries.iter().enumerate() {
        let y = TOP + 8.0 + i as f64 * 18.0;
        let short: String = n.chars().take(24).collect();
        let _ = write!(
            out,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{c}\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            y - 10.0,
            x + 16.0,
            y,
            esc(&short)
        );
    }
    let _ = write!(out, "</g>");
}

/// A "nice" upper bound for a linear axis and its tick step.
fn nice_max(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.25);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

fn y_ticks(out: &mut String, top: f64, step: f64) -> impl Fn(f64) -> f64 {
    let (y0, y1) = (H - BOTTOM, TOP);
    let scale = move |v: f64| y0 - (v / top) * (y0 - y1);
    let mut v = 0.0;
    while v <= top + step / 2.0 {
        let y = scale(v);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\">{}</text>",
            W - RIGHT,
            LEFT - 4.0,
            y + 3.0,
            tick_text(v)
        );
        v += step;
    }
    scale
}

/// A line chart: one line per series, a marker per point.
pub fn line_chart(
    id: &str,
    title: &str,
    xlabel: &str,
    ylabel: &str,
    x: &XAxis,
    series: &[Series],
) -> String {
    let mut out = String::new();
    open(&mut out, id, "line", title);
    axes(&mut out, xlabel, ylabel);
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (top, step) = nice_max(ymax);
    let sy = y_ticks(&mut out, top, step);
    let (x0, x1) = (LEFT + 8.0, W - RIGHT - 8.0);
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let (lo, hi) = match x {
        XAxis::Categories(c) => (0.0, (c.len().max(2) - 1) as f64),
        XAxis::Log => (
            xs.iter()
                .copied()
                .filter(|v| *v > 0.0)
                .fold(f64::MAX, f64::min)
                .max(1e-9)
                .log10(),
            xs.iter().copied().fold(0.0, f64::max).max(1e-9).log10(),
        ),
        XAxis::Linear => (
            xs.iter().copied().fold(f64::MAX, f64::min).min(0.0),
            xs.iter().copied().fold(0.0, f64::max),
        ),
    };
    let span = if hi > lo { hi - lo } else { 1.0 };
    let pos = |v: f64| {
        let t = match x {
            XAxis::Log => v.max(1e-9).log10(),
            _ => v,
        };
        x0 + (t - lo) / span * (x1 - x0)
    };
    // x ticks
    let ticks: Vec<(f64, String)> = match x {
        XAxis::Categories(c) => c
            .iter()
            .enumerate()
            .map(|(i, n)| (i as f64, n.clone()))
            .collect(),
        XAxis::Log => {
            let mut t = Vec::new();
            let mut e = lo.floor();
            while e <= hi.ceil() {
                t.push((10f64.powf(e), tick_text(10f64.powf(e))));
                e += 1.0;
            }
            t
        }
        XAxis::Linear => (0..=5)
            .map(|i| lo + span * i as f64 / 5.0)
            .map(|v| (v, tick_text(v)))
            .collect(),
    };
    for (v, label) in ticks {
        let px = pos(v);
        if px < x0 - 9.0 || px > x1 + 9.0 {
            continue;
        }
        let _ = write!(
            out,
            "<line x1=\"{px}\" y1=\"{}\" x2=\"{px}\" y2=\"{}\" stroke=\"#333\"/>\
             <text x=\"{px}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 16.0,
            esc(&label)
        );
    }
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .map(|&(xv, yv)| format!("{:.1},{:.1}", pos(xv), sy(yv)))
            .collect();
        let _ = write!(
            out,
            "<polyline class=\"line\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(xv, yv) in &s.points {
            let xl = match x {
                XAxis::Categories(cats) => cats.get(xv as usize).cloned().unwrap_or_default(),
                _ => format!("{xv}"),
            };
            let _ = write!(
                out,
                "<circle class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{yv}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"><title>{}: {} → {}</title></circle>",
                esc(&s.name),
                esc(&xl),
                pos(xv),
                sy(yv),
                esc(&s.name),
                esc(&xl),
                tick_text(yv)
            );
        }
    }
    legend(
        &mut out,
        &series.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
    );
    out.push_str("</svg></figure>\n");
    out
}

/// One bar: its label, value and standard deviation (0: no error bar).
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub sd: f64,
}

/// A bar chart with σ error bars.
pub fn bar_chart(id: &str, title: &str, ylabel: &str, bars: &[Bar]) -> String {
    let mut out = String::new();
    open(&mut out, id, "bar", title);
    axes(&mut out, "", ylabel);
    let ymax = bars.iter().map(|b| b.value + b.sd).fold(0.0, f64::max);
    let (top, step) = nice_max(ymax);
    let sy = y_ticks(&mut out, top, step);
    let n = bars.len().max(1) as f64;
    let slot = (W - RIGHT - LEFT) / n;
    for (i, b) in bars.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let x = LEFT + slot * i as f64 + slot * 0.2;
        let w = slot * 0.6;
        let y = sy(b.value);
        let _ = write!(
            out,
            "<rect class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{}\" data-sd=\"{}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{c}\"><title>{}: {} ± {}</title></rect>",
            esc(&b.label),
            esc(&b.label),
            b.value,
            b.sd,
            (H - BOTTOM - y).max(0.0),
            esc(&b.label),
            tick_text(b.value),
            tick_text(b.sd)
        );
        if b.sd > 0.0 {
            let cx = x + w / 2.0;
            let (ya, yb) = (sy(b.value + b.sd), sy((b.value - b.sd).max(0.0)));
            let _ = write!(
                out,
                "<g class=\"errbar\" stroke=\"#000\"><line x1=\"{cx:.1}\" y1=\"{ya:.1}\" x2=\"{cx:.1}\" y2=\"{yb:.1}\"/>\
                 <line x1=\"{:.1}\" y1=\"{ya:.1}\" x2=\"{:.1}\" y2=\"{ya:.1}\"/><line x1=\"{:.1}\" y1=\"{yb:.1}\" x2=\"{:.1}\" y2=\"{yb:.1}\"/></g>",
                cx - 6.0,
                cx + 6.0,
                cx - 6.0,
                cx + 6.0
            );
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            x + w / 2.0,
            H - BOTTOM + 16.0,
            esc(&b.label.chars().take(18).collect::<String>())
        );
    }
    legend(
        &mut out,
        &bars.iter().map(|b| b.label.clone()).collect::<Vec<_>>(),
    );
    out.push_str("</svg></figure>\n");
    out
}

/// A heat map: `rows` × `cols` cells, each coloured by its value, with the value written.
pub fn heat_map(
    id: &str,
    title: &str,
    (xlabel, cols): (&str, &[String]),
    (ylabel, rows): (&str, &[String]),
    unit: &str,
    cell: &dyn Fn(usize, usize) -> Option<f64>,
) -> String {
    let mut out = String::new();
    open(&mut out, id, "heatmap", title);
    axes(&mut out, xlabel, ylabel);
    let vals: Vec<f64> = (0..rows.len())
        .flat_map(|r| (0..cols.len()).filter_map(move |c| cell(r, c)))
        .collect();
    let (lo, hi) = (
        vals.iter().copied().fold(f64::MAX, f64::min),
        vals.iter().copied().fold(0.0, f64::max),
    );
    let (cw, ch) = (
        (W - RIGHT - LEFT) / cols.len().max(1) as f64,
        (H - BOTTOM - TOP) / rows.len().max(1) as f64,
    );
    for (r, rname) in rows.iter().enumerate() {
        let y = TOP + ch * r as f64;
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"10\">{}</text>",
            LEFT - 4.0,
            y + ch / 2.0 + 3.0,
            esc(rname)
        );
        for (c, cname) in cols.iter().enumerate() {
            let Some(v) = cell(r, c) else { continue };
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
            // From pale yellow (low) to dark blue (high).
            let (rr, gg, bb) = (
                (255.0 - t * 225.0) as u8,
                (250.0 - t * 160.0) as u8,
                (200.0 - t * 50.0) as u8,
            );
            let x = LEFT + cw * c as f64;
            let fg = if t > 0.55 { "#fff" } else { "#000" };
            let _ = write!(
                out,
                "<rect class=\"pt\" data-series=\"{}\" data-x=\"{}\" data-y=\"{v}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{ch:.1}\" fill=\"rgb({rr},{gg},{bb})\" stroke=\"#fff\"><title>{} / {}: {} {}</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"{fg}\">{}</text>",
                esc(rname),
                esc(cname),
                esc(rname),
                esc(cname),
                tick_text(v),
                esc(unit),
                x + cw / 2.0,
                y + ch / 2.0 + 3.0,
                tick_text(v)
            );
        }
    }
    for (c, cname) in cols.iter().enumerate() {
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            LEFT + cw * c as f64 + cw / 2.0,
            H - BOTTOM + 16.0,
            esc(cname)
        );
    }
    legend_colored(
        &mut out,
        &[
            (
                format!("low {} {unit}", tick_text(lo)),
                "rgb(255,250,200)".into(),
            ),
            (
                format!("high {} {unit}", tick_text(hi)),
                "rgb(30,90,150)".into(),
            ),
        ],
    );
    out.push_str("</svg></figure>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_an_element_with_its_values() {
        let s = line_chart(
            "c1",
            "IOPS by iodepth",
            "iodepth",
            "IOPS",
            &XAxis::Categories(vec!["1".into(), "2".into(), "4".into()]),
            &[Series {
                name: "read".into(),
                points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 35.0)],
            }],
        );
        assert_eq!(s.matches("class=\"pt\"").count(), 3);
        assert!(s.contains("data-x=\"4\" data-y=\"35\""));
        assert!(s.contains("class=\"axis-label\""));
        assert!(s.contains("<figcaption>IOPS by iodepth</figcaption>"));
        let b = bar_chart(
            "b",
            "t",
            "IOPS",
            &[Bar {
                label: "A".into(),
                value: 5.0,
                sd: 1.0,
            }],
        );
        assert!(b.contains("data-sd=\"1\"") && b.contains("class=\"errbar\""));
        assert_eq!(tick_text(1200.0), "1.2k");
        // Small ticks keep apart (they printed 0.01 three times over).
        let small: Vec<String> = [0.0, 0.005, 0.01, 0.015, 0.02].map(tick_text).into();
        assert_eq!(small, ["0", "0.005", "0.01", "0.015", "0.02"]);
        assert_eq!(tick_text(0.1 + 0.2), "0.3");
        assert_eq!(tick_text(100.0), "100");
        assert_eq!(esc("<a&b>"), "&lt;a&amp;b&gt;");
    }
}
