//! `iobench report --png DIR`: each chart's standalone SVG rasterised to a PNG by resvg
//! (pure Rust: usvg parses, tiny-skia draws, rustybuzz shapes the text with the system's
//! fonts). The image is the SVG's own size times a scale, on an opaque white background.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{self, fontdb};

/// The default `--png-scale`: pixels per SVG unit (a 1360-unit-wide chart is 2720 px).
pub const DEFAULT_SCALE: f32 = 2.0;

/// The largest `--png-scale`: a chart 1360 units wide is then 10880 px.
pub const MAX_SCALE: f32 = 8.0;

/// Families tried, in order, when fontconfig's `sans-serif` names a family that is not
/// installed (Debian's fonts-dejavu-core and fonts-liberation, Fedora's and others').
const SANS: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "FreeSans",
    "Arial",
    "Helvetica",
];

/// Renders SVG charts to PNG with the system's fonts, loaded once.
pub struct Renderer {
    opts: usvg::Options<'static>,
    scale: f32,
}

impl Renderer {
    /// Loads the system's fonts (fontconfig's directories, else the usual font folders)
    /// and picks the family the charts' `sans-serif` text is drawn with. Fails when no
    /// font is installed: the charts' titles, axes and legends would be missing.
    pub fn new(scale: f32) -> Result<Renderer, String> {
        let mut opts = usvg::Options::default();
        let db = opts.fontdb_mut();
        db.load_system_fonts();
        if db.is_empty() {
            return Err("--png: no font found (fontconfig's font directories and \
                 /usr/share/fonts are empty), so the charts' text cannot be drawn; install \
                 one, e.g. apt-get install fonts-dejavu-core"
                .into());
        }
        let sans = fontdb::Query {
            families: &[fontdb::Family::SansSerif],
            ..Default::default()
        };
        if db.query(&sans).is_none() {
            let installed = |name: &str| {
                db.faces()
                    .any(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
            };
            let family = match SANS.iter().find(|n| installed(n)) {
                Some(n) => n.to_string(),
                None => db
                    .faces()
                    .find_map(|f| f.families.first().map(|(n, _)| n.clone()))
                    .unwrap_or_default(),
            };
            db.set_sans_serif_family(family);
        }
        Ok(Renderer { opts, scale })
    }

    /// The PNG of one standalone SVG document: its `width`×`height` times the scale,
    /// on white.
    pub fn render(&self, svg: &str) -> Result<Vec<u8>, String> {
        let tree = usvg::Tree::from_str(svg, &self.opts).map_err(|e| e.to_string())?;
        let size = tree.size();
        let px = |v: f32| -> Result<u32, String> {
            let v = (v * self.scale).ceil();
            if !(1.0..=65535.0).contains(&v) {
                return Err(format!("an image {v} px across is out of range"));
            }
            // In 1..=65535 (checked above): no truncation.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Ok(v as u32)
        };
        let (w, h) = (px(size.width())?, px(size.height())?);
        let mut pixmap =
            Pixmap::new(w, h).ok_or_else(|| format!("cannot allocate a {w}×{h} image"))?;
        pixmap.fill(Color::WHITE);
        resvg::render(
            &tree,
            Transform::from_scale(self.scale, self.scale),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_at_scale_on_white_with_text() {
        let r = Renderer::new(1.5).unwrap();
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"40\" \
                   font-family=\"sans-serif\"><text x=\"4\" y=\"30\" font-size=\"28\">Wg</text></svg>";
        let png = r.render(svg).unwrap();
        let img = Pixmap::decode_png(&png).unwrap();
        assert_eq!((img.width(), img.height()), (300, 60));
        let px = img.pixels();
        // Opaque white where nothing is drawn, dark where the text is.
        assert!(px.iter().all(|p| p.alpha() == 255));
        let last = px[px.len() - 1];
        assert_eq!((last.red(), last.green(), last.blue()), (255, 255, 255));
        assert!(
            px.iter().filter(|p| p.red() < 80).count() > 100,
            "text drawn"
        );
    }

    #[test]
    fn malformed_svg_is_an_error_not_a_panic() {
        let r = Renderer::new(1.0).unwrap();
        assert!(r.render("<svg").is_err());
    }
}
