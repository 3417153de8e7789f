//! The one log line per tool call, written without `tracing`'s dispatch when the log is
//! the default one: `pretty` format without colours (stderr not a terminal, the sidecar's
//! case). The line is byte for byte what the subscriber [`super::init`] installs writes for
//! the same event (a test compares them), so nothing reading the log can tell; what it
//! saves is the event's way through the subscriber: the layers, the field visitors' dynamic
//! calls and the formatter's `fmt::Write` indirections, about 4,500 instructions per call.
//!
//! Any other format (JSON, compact, colours), and any process whose subscriber restmcp did
//! not install (tests, a library user's), gets the call as a `tracing` event as before.
//! Filters apply either way: [`log`] asks `tracing::enabled!` for the call target at the
//! line's level first. A written line is batched as the subscriber's would be: an info
//! line waits for the writer's flusher, a warning is written at once.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{clock, fields, writer};

/// Set by [`super::init`] when the installed subscriber writes the `pretty` format without
/// colours; never unset.
static DIRECT: AtomicBool = AtomicBool::new(false);

/// Lets [`log`] write call lines itself (see the module documentation).
pub(super) fn enable() {
    DIRECT.store(true, Ordering::Release);
}

/// Whether [`log`] writes lines itself.
pub fn direct() -> bool {
    DIRECT.load(Ordering::Acquire)
}

/// The fields of a call's line, in the order the line writes them.
#[derive(Clone, Copy)]
pub struct CallLine<'a> {
    /// `WARN` rather than `INFO`.
    pub warn: bool,
    /// Written as it is (`Display`).
    pub request_id: &'a str,
    pub tool: &'a str,
    pub api: &'a str,
    pub outcome: &'a str,
    pub status: Option<u16>,
    pub duration_ms: f64,
    pub upstream_ms: Option<f64>,
    pub attempts: u32,
    pub trace_id: Option<&'a str>,
    pub caller: Option<&'a str>,
}

/// Logs a call's line: written here where the log is the default one and `RUST_LOG`'s
/// filter lets it through, else sent through `tracing` (the same text in the pretty format).
pub fn log(line: &CallLine<'_>) {
    if direct() {
        let enabled = if line.warn {
            tracing::enabled!(target: writer::CALL_TARGET, tracing::Level::WARN)
        } else {
            tracing::enabled!(target: writer::CALL_TARGET, tracing::Level::INFO)
        };
        if !enabled || write(line) {
            return;
        }
    }
    through_tracing(line);
}

/// The line as a `tracing` event.
fn through_tracing(line: &CallLine<'_>) {
    macro_rules! event {
        ($level:ident) => {
            tracing::$level!(
                target: writer::CALL_TARGET,
                request_id = %line.request_id,
                // As `&str`, not `%`: recorded as text rather than formatted through
                // `Debug` (about 1,200 instructions each per call).
                tool = line.tool,
                api = line.api,
                outcome = line.outcome,
                status = line.status,
                duration_ms = line.duration_ms,
                upstream_ms = line.upstream_ms,
                attempts = line.attempts,
                trace_id = line.trace_id,
                caller = line.caller,
                "tool call"
            )
        };
    }
    if line.warn {
        event!(warn)
    } else {
        event!(info)
    }
}

/// Writes `line` to the log; `false` (nothing written) when the clock is outside the
/// years [`clock::write_now`] writes.
fn write(line: &CallLine<'_>) -> bool {
    let mut text = String::with_capacity(256);
    if !clock::write_now(&mut text) {
        // Outside the years the clock writes itself: the subscriber's own fallback.
        return false;
    }
    text.push(' ');
    format(line, &mut text);
    writer::put_call_line(text.as_bytes(), line.warn);
    true
}

/// The line after its timestamp and the space that follows it: the level, the target and
/// the fields, as the `pretty` format without colours and [`fields::PlainFields`] write
/// them, and the line break.
fn format(line: &CallLine<'_>, out: &mut String) {
    out.push_str(if line.warn { " WARN " } else { " INFO " });
    out.push_str(writer::CALL_TARGET);
    out.push_str(": tool call request_id=");
    out.push_str(line.request_id);
    quoted(out, "tool", line.tool);
    quoted(out, "api", line.api);
    quoted(out, "outcome", line.outcome);
    if let Some(status) = line.status {
        integer(out, "status", u64::from(status));
    }
    float(out, "duration_ms", line.duration_ms);
    if let Some(upstream_ms) = line.upstream_ms {
        float(out, "upstream_ms", upstream_ms);
    }
    integer(out, "attempts", u64::from(line.attempts));
    if let Some(trace_id) = line.trace_id {
        quoted(out, "trace_id", trace_id);
    }
    if let Some(caller) = line.caller {
        quoted(out, "caller", caller);
    }
    out.push('\n');
}

/// ` name="value"`, escaped as `Debug` escapes a string where it needs it.
fn quoted(out: &mut String, name: &str, value: &str) {
    name_eq(out, name);
    if fields::needs_no_escape(value) {
        out.push('"');
        out.push_str(value);
        out.push('"');
    } else {
        let _ = write!(out, "{value:?}");
    }
}

fn integer(out: &mut String, name: &str, value: u64) {
    name_eq(out, name);
    out.push_str(itoa::Buffer::new().format(value));
}

fn float(out: &mut String, name: &str, value: f64) {
    name_eq(out, name);
    let _ = match fields::thousandths(value) {
        Some(thousandths) => fields::write_thousandths(out, thousandths),
        None => write!(out, "{value:?}"),
    };
}

fn name_eq(out: &mut String, name: &str) {
    out.push(' ');
    out.push_str(name);
    out.push('=');
}

#[cfg(test)]
mod tests {
    use super::{CallLine, format, through_tracing};
    use crate::telemetry::fields::PlainFields;
    use crate::telemetry::fields::tests::Buffer;

    /// The line the subscriber `telemetry::init` installs for the pretty format without
    /// colours writes for `line` sent through `tracing` (without its timestamp).
    fn theirs(line: &CallLine<'_>) -> String {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .without_time()
            .fmt_fields(PlainFields)
            .with_writer(buffer.clone())
            .finish();
        let dispatch = tracing::Dispatch::new(subscriber);
        tracing::dispatcher::with_default(&dispatch, || through_tracing(line));
        let bytes = buffer.0.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("utf-8")
    }

    fn ours(line: &CallLine<'_>) -> String {
        let mut out = String::new();
        format(line, &mut out);
        out
    }

    #[test]
    fn the_line_is_byte_for_byte_the_subscribers() {
        let plain = CallLine {
            warn: false,
            request_id: "23fe10ea49421ee6",
            tool: "getItem",
            api: "items",
            outcome: "ok",
            status: Some(200),
            duration_ms: 1.11,
            upstream_ms: Some(0.736),
            attempts: 1,
            trace_id: None,
            caller: None,
        };
        assert_eq!(
            ours(&plain),
            " INFO restmcp::call: tool call request_id=23fe10ea49421ee6 tool=\"getItem\" \
             api=\"items\" outcome=\"ok\" status=200 duration_ms=1.11 upstream_ms=0.736 \
             attempts=1\n"
        );
        let odd = CallLine {
            warn: true,
            request_id: "7",
            tool: "say \"hi\"\\ café\u{7}",
            api: "a\tb",
            outcome: "upstream_5xx",
            status: None,
            duration_ms: 0.5230001,
            upstream_ms: None,
            attempts: 0,
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736"),
            caller: Some("alice\u{1b}[31m"),
        };
        let large = CallLine {
            status: Some(u16::MAX),
            duration_ms: 123456789.05,
            upstream_ms: Some(0.0),
            attempts: u32::MAX,
            trace_id: Some(""),
            caller: Some("bob"),
            ..odd
        };
        for line in [&plain, &odd, &large] {
            assert_eq!(ours(line), theirs(line));
        }
        assert!(ours(&odd).starts_with(" WARN "), "{}", ours(&odd));
    }
}
