//! The log writer. The one line per tool call (target `restmcp::call`, info level) is
//! gathered in memory and written to stderr by a background thread every
//! [`FLUSH_INTERVAL`], so it costs a copy rather than a `write` system call on the thread
//! that served the call. Every other line, and any line before the flusher runs, goes
//! straight through (after what is pending, so order holds); [`flush`] empties the buffer
//! at exit.
//!
//! One event is one line: a line break inside the formatted event (a value that held one,
//! such as a tool name or a request id a client chose, or an upstream's error text) is
//! written as the two characters `\n` or `\r`, so no value can forge a line of its own.

use std::borrow::Cow;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// The target of the per-call log line.
pub const CALL_TARGET: &str = "restmcp::call";

/// How long a call's log line may wait in memory.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Past this many bytes pending, the next line writes everything at once.
const HIGH_WATER: usize = 256 * 1024;

static PENDING: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// Set once the flusher thread runs; until then every line is written at once.
static FLUSHING: AtomicBool = AtomicBool::new(false);

/// Writes what is pending to stderr.
pub fn flush() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
    if !pending.is_empty() {
        let _ = std::io::stderr().lock().write_all(&pending);
    }
}

/// The `MakeWriter` for the fmt subscriber.
#[derive(Clone, Copy, Default)]
pub struct Stderr;

/// One event's output: a whole formatted line, appended or written at once.
pub struct Line {
    through: bool,
}

/// `bytes` as one line: a line break before its last byte written as `\n` or `\r`.
fn one_line(bytes: &[u8]) -> Cow<'_, [u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if memchr::memchr2(b'\n', b'\r', body).is_none() {
        return Cow::Borrowed(bytes);
    }
    let mut line = Vec::with_capacity(bytes.len() + 8);
    for &byte in body {
        match byte {
            b'\n' => line.extend_from_slice(b"\\n"),
            b'\r' => line.extend_from_slice(b"\\r"),
            _ => line.push(byte),
        }
    }
    if body.len() < bytes.len() {
        line.push(b'\n');
    }
    Cow::Owned(line)
}

/// Writes one whole line: at once (`through`, after what is pending) or appended to what
/// is pending.
fn put(bytes: &[u8], through: bool) -> std::io::Result<()> {
    let line = one_line(bytes);
    if through {
        flush();
        return std::io::stderr().lock().write_all(&line);
    }
    let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    pending.extend_from_slice(&line);
    if pending.len() > HIGH_WATER {
        let full = std::mem::take(&mut *pending);
        drop(pending);
        let _ = std::io::stderr().lock().write_all(&full);
    }
    Ok(())
}

/// Writes a call's line formatted by [`super::call_line`] as the subscriber would have
/// written it: an info line pending once the flusher runs, a warning at once.
pub(super) fn put_call_line(bytes: &[u8], warn: bool) {
    let _ = put(bytes, warn || !FLUSHING.load(Ordering::Acquire));
}

impl Write for Line {
    /// Takes a whole formatted event (tracing-subscriber writes each at once).
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        put(bytes, self.through)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line { through: true }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Line {
        // Level order: ERROR < WARN < INFO < DEBUG < TRACE.
        let buffered = meta.target() == CALL_TARGET
            && *meta.level() >= tracing::Level::INFO
            && FLUSHING.load(Ordering::Acquire);
        Line { through: !buffered }
    }
}

/// Starts the thread that writes pending lines every [`FLUSH_INTERVAL`]; until it runs,
/// every line is written at once.
pub fn start_flusher() {
    if FLUSHING.load(Ordering::Acquire) {
        return;
    }
    let started = std::thread::Builder::new()
        .name("restmcp-log".into())
        .spawn(|| {
            loop {
                std::thread::sleep(FLUSH_INTERVAL);
                flush();
            }
        });
    if started.is_ok() {
        FLUSHING.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn a_line_break_inside_an_event_is_written_escaped() {
        assert_eq!(
            &*one_line(b"tool call tool=\"a\"\n"),
            b"tool call tool=\"a\"\n"
        );
        assert_eq!(
            &*one_line(b"unknown tool=nope\nFORGED line\r\n"),
            b"unknown tool=nope\\nFORGED line\\r\n"
        );
        assert_eq!(
            &*one_line(b"no newline at the end\n\n"),
            b"no newline at the end\\n\n"
        );
        assert_eq!(&*one_line(b""), b"");
    }
}
