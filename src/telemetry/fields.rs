//! How a log line's fields are written when the line has no colours: byte for byte what
//! tracing-subscriber's `DefaultFields` writes (`name=value`, separated by spaces; strings
//! quoted and escaped as `Debug` escapes them), without going through `fmt::Arguments` for
//! each name, `=` and plain value. The call log line, written once per call, has about ten
//! fields; formatting them was most of what the line cost. The message, error values, raw
//! identifiers (`r#name`) and strings that need escaping are written by `DefaultFields`'
//! own visitor, so they stay exactly as it writes them (the message with its ANSI escapes
//! sanitized). A float with at most three decimals, as [`super::clock::millis`] makes a
//! duration, is written from its integer thousandths, the same text `Debug` writes (the
//! shortest that reads back as the same `f64`) without `Debug`'s general algorithm.
//!
//! With colours on (a terminal), `DefaultFields` is used as it is: it paints names.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::{DefaultVisitor, Writer};

/// The fields of an uncoloured line (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlainFields;

impl<'a> MakeVisitor<Writer<'a>> for PlainFields {
    type Visitor = PlainVisitor<'a>;

    fn make_visitor(&self, target: Writer<'a>) -> PlainVisitor<'a> {
        PlainVisitor {
            writer: target,
            is_empty: true,
            result: Ok(()),
        }
    }
}

/// Writes one event's or span's fields.
pub struct PlainVisitor<'a> {
    writer: Writer<'a>,
    is_empty: bool,
    result: fmt::Result,
}

impl PlainVisitor<'_> {
    /// Starts the field `name=`, after a space unless it is the first.
    fn name(&mut self, name: &str) -> fmt::Result {
        if self.is_empty {
            self.is_empty = false;
        } else {
            self.writer.write_char(' ')?;
        }
        self.writer.write_str(name)?;
        self.writer.write_char('=')
    }

    /// Whether `field` is one this visitor writes itself: not the message, not a raw
    /// identifier, not the `log.` metadata `DefaultFields` skips.
    fn writes(&self, field: &Field) -> bool {
        let name = field.name();
        self.result.is_ok()
            && name != "message"
            && !name.starts_with("r#")
            && !name.starts_with("log.")
    }

    /// Lets `DefaultFields`' visitor write a field, continuing this line.
    fn by_default(&mut self, record: impl FnOnce(&mut DefaultVisitor<'_>)) {
        if self.result.is_err() {
            return;
        }
        let mut visitor = DefaultVisitor::new(self.writer.by_ref(), self.is_empty);
        record(&mut visitor);
        self.result = visitor.finish();
        // It writes every field it is given but `log.` metadata, which never reaches it.
        self.is_empty = false;
    }

    fn plain(&mut self, field: &Field, value: impl fmt::Display) {
        self.result = self
            .name(field.name())
            .and_then(|()| write!(self.writer, "{value}"));
    }
}

/// The integer thousandths of `value` when it is a non-negative multiple of 0.001 below
/// 10¹² (the `f64` nearest to one): `Debug` writes such a value as its shortest decimal,
/// which is those thousandths with the trailing zeros of the fraction dropped (`0.0`,
/// `0.5`, `12.034`). Below 10¹² an `f64`'s spacing is under 0.0002, so no other decimal of
/// three places or fewer reads back as the same value.
pub(super) fn thousandths(value: f64) -> Option<u64> {
    if !(value.is_sign_positive() && value < 1e12) {
        return None;
    }
    let scaled = (value * 1e3).round();
    // Exact: `scaled` is an integer below 10¹⁵ (< 2⁵³).
    (scaled / 1e3 == value).then_some(scaled as u64)
}

/// Writes `thousandths` / 1000 as `Debug` writes that `f64` (see [`thousandths`]).
pub(super) fn write_thousandths(writer: &mut impl fmt::Write, thousandths: u64) -> fmt::Result {
    let mut digits = itoa::Buffer::new();
    writer.write_str(digits.format(thousandths / 1000))?;
    writer.write_char('.')?;
    let fraction = thousandths % 1000;
    let text = [
        b'0' + (fraction / 100) as u8,
        b'0' + (fraction / 10 % 10) as u8,
        b'0' + (fraction % 10) as u8,
    ];
    let kept = match (fraction % 100, fraction % 10) {
        (0, _) => 1,
        (_, 0) => 2,
        _ => 3,
    };
    // ASCII digits.
    writer.write_str(std::str::from_utf8(&text[..kept]).unwrap_or("0"))
}

/// A string `Debug` writes as it is, between quotes: printable ASCII but `"` and `\`.
pub(super) fn needs_no_escape(value: &str) -> bool {
    value
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

impl Visit for PlainVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.writes(field) && needs_no_escape(value) {
            self.result = self.name(field.name()).and_then(|()| {
                self.writer.write_char('"')?;
                self.writer.write_str(value)?;
                self.writer.write_char('"')
            });
        } else if !field.name().starts_with("log.") {
            self.by_default(|visitor| visitor.record_str(field, value));
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.writes(field) {
            self.plain(field, value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.writes(field) {
            self.plain(field, value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        match thousandths(value) {
            Some(thousandths) if self.writes(field) => {
                self.result = self
                    .name(field.name())
                    .and_then(|()| write_thousandths(&mut self.writer, thousandths));
            }
            _ => self.record_debug(field, &value),
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.writes(field) {
            self.plain(field, value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.by_default(|visitor| visitor.record_error(field, value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.writes(field) {
            self.result = self
                .name(field.name())
                .and_then(|()| write!(self.writer, "{value:?}"));
        } else if !field.name().starts_with("log.") {
            self.by_default(|visitor| visitor.record_debug(field, value));
        }
    }
}

impl VisitOutput<fmt::Result> for PlainVisitor<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for PlainVisitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        &mut self.writer
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;
    use tracing_subscriber::fmt::format::Writer;

    use super::PlainFields;

    /// A writer that keeps what the subscriber writes.
    #[derive(Clone, Default)]
    pub(in crate::telemetry) struct Buffer(pub(in crate::telemetry) Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("buffer").write(bytes)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Buffer {
            self.clone()
        }
    }

    /// The lines `events` log through a subscriber without time or colours, in the full
    /// or the compact format, with `PlainFields` or with tracing-subscriber's own.
    fn lines(plain: bool, compact: bool, events: fn()) -> String {
        let buffer = Buffer::default();
        let builder = tracing_subscriber::fmt()
            .with_ansi(false)
            .without_time()
            .with_writer(buffer.clone());
        let dispatch = match (plain, compact) {
            (true, false) => tracing::Dispatch::new(builder.fmt_fields(PlainFields).finish()),
            (true, true) => {
                tracing::Dispatch::new(builder.compact().fmt_fields(PlainFields).finish())
            }
            (false, false) => tracing::Dispatch::new(builder.finish()),
            (false, true) => tracing::Dispatch::new(builder.compact().finish()),
        };
        tracing::dispatcher::with_default(&dispatch, events);
        let bytes = buffer.0.lock().expect("buffer").clone();
        String::from_utf8(bytes).expect("utf-8")
    }

    fn events() {
        let id = serde_json::json!(7);
        let error = std::io::Error::other("disk \"full\"");
        let nested: &(dyn std::error::Error + 'static) = &error;
        tracing::info!(
            target: "restmcp::call",
            request_id = %id,
            tool = %"getItem",
            api = "items",
            outcome = "ok",
            status = 200u16,
            duration_ms = 0.5230001f64,
            upstream_ms = Some(1.0f64),
            first_ms = 0.134f64,
            zero_ms = 0.0f64,
            long_ms = 123456789.05f64,
            negative_ms = -0.5f64,
            attempts = 1u32,
            trace_id = None::<&str>,
            caller = Some("alice"),
            "tool call"
        );
        tracing::warn!(
            quoted = "say \"hi\"\\",
            control = "bell\u{7}\ttab",
            unicode = "café ✓",
            negative = -3i64,
            yes = true,
            tiny = 1e-7f64,
            huge = 1e300f64,
            debug = ?vec!["a", "b"],
            r#type = "raw",
            error = nested,
            "message with \u{1b}[31m escape {}", 1
        );
        let span = tracing::info_span!("outer", session = "s1", n = 2u64);
        let _entered = span.enter();
        tracing::error!(inside = "span", "no {} here", "args");
        tracing::info!("only a message");
        tracing::info!(first = "no message");
    }

    /// The text `write_thousandths` writes for `value`, when it takes it.
    fn fast(value: f64) -> Option<String> {
        let thousandths = super::thousandths(value)?;
        let mut text = String::new();
        super::write_thousandths(&mut Writer::new(&mut text), thousandths).ok()?;
        Some(text)
    }

    #[test]
    fn durations_are_written_as_debug_writes_them() {
        // Every microsecond up to 1 s, as `clock::millis` makes them, then larger ones.
        for micros in (0..1_000_000u64).chain((0..200_000).map(|i| i * 499_999_993)) {
            let value = crate::telemetry::clock::millis(std::time::Duration::from_micros(micros));
            assert_eq!(fast(value).as_deref(), Some(format!("{value:?}").as_str()));
        }
        // Not thousandths: left to `Debug`.
        for value in [
            0.5230001,
            1e-7,
            -0.5,
            -0.0,
            1e12,
            1e300,
            f64::NAN,
            f64::INFINITY,
            0.0005,
        ] {
            assert_eq!(fast(value), None, "{value:?}");
        }
    }

    #[test]
    fn lines_are_byte_for_byte_those_of_the_default_fields() {
        for compact in [false, true] {
            let ours = lines(true, compact, events);
            let theirs = lines(false, compact, events);
            assert_eq!(ours, theirs, "compact: {compact}");
            assert!(
                ours.contains(
                    "tool call request_id=7 tool=getItem api=\"items\" outcome=\"ok\" status=200 \
                 duration_ms=0.5230001 upstream_ms=1.0 first_ms=0.134 zero_ms=0.0 \
                 long_ms=123456789.05 negative_ms=-0.5 attempts=1 caller=\"alice\""
                ) || compact,
                "{ours}"
            );
        }
        let ours = lines(true, false, events);
        assert!(ours.contains(r#"quoted="say \"hi\"\\""#), "{ours}");
        assert!(ours.contains(r#"control="bell\u{7}\ttab""#), "{ours}");
        assert!(ours.contains("type=\"raw\""), "{ours}");
        assert!(
            !ours.contains('\u{1b}'),
            "the message's escape is sanitized: {ours}"
        );
    }
}
