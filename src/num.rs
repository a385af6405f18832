//! Number formatting as fio prints it: at most N digits, scaled by k/Ki steps with a unit
//! prefix, the dropped part shown as decimals where room is left (`4096KiB`, `16.0KiB`,
//! `60.8k`, `238MiB/s`), and C's `%f`/`%.Nf`-style helpers.

/// What a number counts, for the suffix after the prefix. The values are fio's `N2S_*`
/// constants, which travel as `unit_base` in the client/server ETA (fio's `N2S_PERSEC` and
/// `N2S_BIT`, 1 and 3, are never printed here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    None = 0,
    Byte = 2,
    BytePerSec = 4,
    BitPerSec = 5,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// Formats `num` (already multiplied by `base`, 1 or a power of 1000/1024) with at most
/// `maxlen` digits: powers of two with Ki/Mi prefixes when `pow2`, else k/M.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut num = match unit {
        Unit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < SI.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let done = |n: u64, post: usize| format!("{}{}{}", n, prefixes[post], unit.suffix());
    let Some(modulo) = modulo else {
        return done(num, post);
    };
    let digits = num.to_string().len();
    if maxlen as isize - digits as isize <= 1 {
        if carry {
            num += 1;
        }
        return done(num, post);
    }
    let decimals = maxlen - digits - 1;
    let frac = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!(
        "{}.{}{}{}",
        num,
        &frac[2.min(frac.len())..],
        prefixes[post],
        unit.suffix()
    )
}

/// C's `%*.*f` with a minimum width (right aligned).
pub fn fw(width: usize, prec: usize, v: f64) -> String {
    format!("{:>width$.prec$}", v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_fio_samples() {
        // Values seen in fio 3.33 output.
        assert_eq!(num2str(4096, 4, 1, true, Unit::Byte), "4096B");
        assert_eq!(num2str(16384, 4, 1, true, Unit::Byte), "16.0KiB");
        assert_eq!(num2str(4 << 20, 4, 1, true, Unit::Byte), "4096KiB");
        assert_eq!(num2str(4 << 20, 4, 1, false, Unit::Byte), "4194kB");
        assert_eq!(num2str(60800, 4, 1, false, Unit::None), "60.8k");
        assert_eq!(num2str(171000, 4, 1, false, Unit::None), "171k");
        assert_eq!(
            num2str(699_050_666, 4, 1, true, Unit::BytePerSec),
            "667MiB/s"
        );
        assert_eq!(
            num2str(699_050_666, 4, 1, false, Unit::BytePerSec),
            "699MB/s"
        );
        assert_eq!(num2str(2_560_500, 6, 1, false, Unit::None), "2560.5k");
        assert_eq!(num2str(12421, 6, 1, false, Unit::None), "12421");
        assert_eq!(num2str(33_423_360, 4, 1, true, Unit::Byte), "31.9MiB");
        assert_eq!(num2str(33_423_360, 4, 1, false, Unit::Byte), "33.4MB");
        assert_eq!(num2str(1_632_000, 4, 1, false, Unit::None), "1632k");
    }
}
