//! The timestamp at the start of every log line: the same RFC 3339 UTC time with
//! microseconds that tracing-subscriber's `SystemTime` timer writes
//! (`2026-11-26T02:42:00.123456Z`), with the date and time of day formatted once per second
//! on each thread rather than for every line (the call log line is written once per call),
//! and durations as logs, the console and its feed show them ([`millis`]).

use std::cell::Cell;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// The last second of the year 9999: later times (and times before 1970) are written by
/// tracing-subscriber's own timer, which spells years outside 0000–9999 differently.
const LAST_SECOND: u64 = 253_402_300_799;

/// `YYYY-MM-DDTHH:MM:SS` of the second last formatted on this thread.
type Prefix = [u8; 19];

thread_local! {
    static LAST: Cell<(u64, Prefix)> = const { Cell::new((u64::MAX, [b'0'; 19])) };
}

/// `duration` in milliseconds, to the microsecond (`0.134`, `1520.5`): the unit and the
/// precision of every `*_ms` a log line, the console or its feed shows. A value made this
/// way is written without `Debug`'s float formatting ([`super::fields`]).
pub fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// The log timer (see the module documentation).
#[derive(Clone, Copy, Default)]
pub struct Clock;

impl FormatTime for Clock {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        let mut now = String::with_capacity(27);
        if write_now(&mut now) {
            w.write_str(&now)
        } else {
            tracing_subscriber::fmt::time::SystemTime.format_time(w)
        }
    }
}

/// Appends the current time as [`Clock`] writes it; `false` (nothing written) outside the
/// years it writes itself, where it falls back to tracing-subscriber's own timer.
pub fn write_now(out: &mut String) -> bool {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) if since.as_secs() <= LAST_SECOND => {
            write_timestamp(out, since.as_secs(), since.subsec_micros());
            true
        }
        _ => false,
    }
}

/// The RFC 3339 UTC timestamp of `since` after the Unix epoch, as log lines write it
/// (times past the year 9999 are written as its last second).
pub fn rfc3339(since: std::time::Duration) -> String {
    timestamp(since.as_secs().min(LAST_SECOND), since.subsec_micros())
}

/// The timestamp of `seconds` and `micros` after the Unix epoch (at most [`LAST_SECOND`]).
fn timestamp(seconds: u64, micros: u32) -> String {
    let mut out = String::with_capacity(27);
    write_timestamp(&mut out, seconds, micros);
    out
}

/// Appends [`timestamp`]'s text.
fn write_timestamp(out: &mut String, seconds: u64, micros: u32) {
    let prefix = LAST.with(|last| match last.get() {
        (cached, prefix) if cached == seconds => prefix,
        _ => {
            let prefix = civil(seconds);
            last.set((seconds, prefix));
            prefix
        }
    });
    let mut text = [0u8; 27];
    text[..19].copy_from_slice(&prefix);
    text[19] = b'.';
    let mut rest = micros;
    for digit in text[20..26].iter_mut().rev() {
        *digit = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    text[26] = b'Z';
    // ASCII: the prefix's digits and separators, digits, `.` and `Z`.
    out.push_str(std::str::from_utf8(&text).unwrap_or_default());
}

/// `YYYY-MM-DDTHH:MM:SS` (UTC) of `seconds` after the epoch: the civil-from-days algorithm
/// of Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms".
fn civil(seconds: u64) -> Prefix {
    let (days, time) = (seconds / 86_400, seconds % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let mut out = *b"0000-00-00T00:00:00";
    let mut put = |at: usize, width: usize, mut value: u64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, time / 3_600);
    put(14, 2, time / 60 % 60);
    put(17, 2, time % 60);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_spell_the_utc_date_and_time_with_microseconds() {
        assert_eq!(timestamp(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            timestamp(951_782_400, 500_000),
            "2000-02-29T00:00:00.500000Z"
        );
        assert_eq!(timestamp(1_709_251_199, 7), "2024-02-29T23:59:59.000007Z");
        assert_eq!(
            timestamp(1_795_660_920, 123_456),
            "2026-11-26T02:42:00.123456Z"
        );
        assert_eq!(
            timestamp(4_107_542_400, 999_999),
            "2100-03-01T00:00:00.999999Z"
        );
        assert_eq!(timestamp(LAST_SECOND, 0), "9999-12-31T23:59:59.000000Z");
        // The same second again comes from the cache, a new one does not.
        assert_eq!(timestamp(1_795_660_920, 1), "2026-11-26T02:42:00.000001Z");
        assert_eq!(timestamp(1_795_660_921, 1), "2026-11-26T02:42:01.000001Z");
    }

    /// Written as tracing-subscriber's own timer writes the same instant: ours is read
    /// between two of theirs, and compared when both of theirs fall in the same second.
    #[test]
    fn the_clock_writes_what_tracing_subscribers_timer_writes() {
        let write = |timer: &dyn FormatTime| {
            let mut text = String::new();
            timer
                .format_time(&mut Writer::new(&mut text))
                .expect("written");
            text
        };
        for _ in 0..100 {
            let before = write(&tracing_subscriber::fmt::time::SystemTime);
            let ours = write(&Clock);
            let after = write(&tracing_subscriber::fmt::time::SystemTime);
            if before[..19] == after[..19] {
                assert_eq!(ours[..19], before[..19]);
                assert_eq!(ours.len(), before.len());
                assert!(before <= ours && ours <= after, "{before} {ours} {after}");
                return;
            }
        }
        panic!("no two readings within one second");
    }
}
