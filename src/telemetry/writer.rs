//! The log writer. The one line per tool call (target `restmcp::call`, info level) is
//! gathered in memory and written to stderr by a background thread every
//! [`FLUSH_INTERVAL`], so it costs a copy rather than a `write` system call on the thread
//! that served the call. Every other line, and any line before the flusher runs, goes
//! straight through (after what is pending, so order holds); [`flush`] empties the buffer
//! at exit.

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

impl Write for Line {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.through {
            flush();
            return std::io::stderr().lock().write(bytes);
        }
        let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
        pending.extend_from_slice(bytes);
        if pending.len() > HIGH_WATER {
            let full = std::mem::take(&mut *pending);
            drop(pending);
            let _ = std::io::stderr().lock().write_all(&full);
        }
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
