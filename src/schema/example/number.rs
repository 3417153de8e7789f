//! Numbers: keyword values read as counts, `multipleOf` as `jsonschema` reads it (exact in
//! the decimals both numbers print as), and the candidate values between bounds, on the
//! grid of the `multipleOf`s.

use serde_json::{Number, Value};

/// A non-negative integer keyword value (`3` or `3.0`).
pub(super) fn count(value: &Value) -> Option<usize> {
    if let Some(n) = value.as_u64() {
        return Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    value
        .as_f64()
        .filter(|f| *f >= 0.0 && f.fract() == 0.0)
        .map(|f| {
            if f >= usize::MAX as f64 {
                usize::MAX
            } else {
                f as usize
            }
        })
}

/// `multipleOf` as `jsonschema` reads it: exact in the decimals both numbers print as.
pub(super) fn is_multiple(x: f64, m: f64) -> bool {
    if m <= 0.0 || !m.is_finite() || !x.is_finite() {
        return true;
    }
    if x == 0.0 {
        return true;
    }
    if x.abs() < m {
        return false;
    }
    if let (Some((xm, xd)), Some((mm, md))) = (decimal_parts(x), decimal_parts(m))
        && mm != 0
    {
        let shared = xd.min(md);
        let scale = |mantissa: i128, decimals: u32| {
            mantissa.checked_mul(10_i128.checked_pow(decimals - shared)?)
        };
        if let (Some(a), Some(b)) = (scale(xm, md), scale(mm, xd))
            && b != 0
        {
            return a % b == 0;
        }
    }
    let q = x / m;
    (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

/// `1.25` → `(125, 2)`: the shortest decimal a float prints as.
fn decimal_parts(x: f64) -> Option<(i128, u32)> {
    let text = format!("{x}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    if whole.len() + fraction.len() > 36 {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    Some((digits.parse().ok()?, u32::try_from(fraction.len()).ok()?))
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Bounds {
    lo: Option<(f64, bool)>,
    hi: Option<(f64, bool)>,
}

impl Bounds {
    pub(super) fn raise(&mut self, n: f64, exclusive: bool) {
        match self.lo {
            Some((l, e)) if l > n || (l == n && e) => {}
            _ => self.lo = Some((n, exclusive)),
        }
    }

    pub(super) fn lower(&mut self, n: f64, exclusive: bool) {
        match self.hi {
            Some((h, e)) if h < n || (h == n && e) => {}
            _ => self.hi = Some((n, exclusive)),
        }
    }

    pub(super) fn contains(&self, x: f64) -> bool {
        self.lo.is_none_or(|(l, e)| if e { x > l } else { x >= l })
            && self.hi.is_none_or(|(h, e)| if e { x < h } else { x <= h })
    }
}

/// The smallest positive integer that is a multiple of every `multipleOf`.
fn integral_step(multiples: &[f64]) -> Option<f64> {
    if multiples.is_empty() {
        return Some(1.0);
    }
    if multiples.iter().all(|m| m.fract() == 0.0 && *m < 1e15) {
        let mut step: u64 = 1;
        for &m in multiples {
            let m = m as u64;
            step = step.checked_mul(m / gcd(step, m))?;
            if step > 1 << 53 {
                return None;
            }
        }
        return Some(step as f64);
    }
    (1..=1000)
        .map(f64::from)
        .find(|n| multiples.iter().all(|&m| is_multiple(*n, m)))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
}

/// The `k`-th integral value: from 1 when it fits, else from the lower bound up, else from
/// the upper bound down — on the grid of the `multipleOf`s.
pub(super) fn integral_candidate(bounds: &Bounds, multiples: &[f64], k: u32) -> Option<f64> {
    let step = integral_step(multiples)?;
    let k = f64::from(k);
    let preferred = (1.0 / step).ceil() * step;
    if bounds.contains(preferred) {
        let up = preferred + k * step;
        if bounds.contains(up) {
            return Some(up);
        }
    }
    if let Some((l, e)) = bounds.lo {
        let mut start = (l / step).ceil() * step;
        if e && start <= l {
            start += step;
        }
        let x = start + k * step;
        return bounds.contains(x).then_some(x);
    }
    if let Some((h, e)) = bounds.hi {
        let mut start = (h / step).floor() * step;
        if e && start >= h {
            start -= step;
        }
        let x = start - k * step;
        return bounds.contains(x).then_some(x);
    }
    None
}

/// The `k`-th value off the integer grid: halfway points, or steps of a fractional
/// `multipleOf`.
pub(super) fn fractional_candidate(bounds: &Bounds, multiples: &[f64], k: u32) -> Option<f64> {
    let k = f64::from(k);
    if let Some(&m) = multiples.iter().find(|m| m.fract() != 0.0) {
        let start = match bounds.lo {
            Some((l, e)) => {
                let mut n = (l / m).ceil();
                if e && n * m <= l {
                    n += 1.0;
                }
                n
            }
            None => match bounds.hi {
                Some((h, _)) if h < m => (h / m).floor() - 2.0 * k,
                _ => 1.0,
            },
        };
        return round_like((start + k) * m, m);
    }
    if !multiples.is_empty() {
        return None;
    }
    Some(match (bounds.lo, bounds.hi) {
        (Some((l, _)), Some((h, _))) => l + (h - l) / (k + 2.0),
        (Some((l, _)), None) => l.floor() + 1.5 + k,
        (None, Some((h, _))) => h.ceil() - 1.5 - k,
        (None, None) => 1.5 + k,
    })
}

/// `x` rounded to the decimals `m` prints with (so `3 * 0.1` reads `0.3`).
fn round_like(x: f64, m: f64) -> Option<f64> {
    let (_, decimals) = decimal_parts(m)?;
    format!("{x:.*}", decimals as usize).parse().ok()
}

pub(super) fn number_value(x: f64) -> Option<Value> {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Some(Value::from(x as i64))
    } else {
        Number::from_f64(x).map(Value::Number)
    }
}
