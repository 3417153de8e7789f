//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): an incoming `traceparent`
//! is continued on the upstream request with a new parent id (this hop's span), and
//! request ids for log lines.

use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A parsed `traceparent` header (version `00`), with the `tracestate` that came with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: [u8; 16],
    parent_id: [u8; 8],
    flags: u8,
    /// Passed on unchanged (W3C: a vendor that did not take part must not alter it).
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// Parses a `traceparent` value; `None` for anything the specification says to ignore
    /// (wrong length or characters, all-zero ids, version `ff`).
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let value = traceparent.trim();
        let mut parts = value.split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let parent = parts.next()?;
        let flags = parts.next()?;
        let rest: Vec<&str> = parts.collect();
        if version.len() != 2 || version == "ff" || (version == "00" && !rest.is_empty()) {
            return None;
        }
        hex(version)?;
        let trace_id: [u8; 16] = hex(trace)?.try_into().ok()?;
        let parent_id: [u8; 8] = hex(parent)?.try_into().ok()?;
        let flags: [u8; 1] = hex(flags)?.try_into().ok()?;
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceContext {
            trace_id,
            parent_id,
            flags: flags[0],
            tracestate: tracestate
                .map(str::trim)
                .filter(|s| !s.is_empty() && s.len() <= 512)
                .map(str::to_string),
        })
    }

    /// The same trace with this hop as the parent: what the upstream request carries.
    pub fn child(&self) -> TraceContext {
        let mut parent_id = random_bytes::<8>();
        if parent_id == [0; 8] {
            parent_id[7] = 1;
        }
        TraceContext {
            parent_id,
            ..self.clone()
        }
    }

    /// The `traceparent` header value.
    pub fn header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            to_hex(&self.trace_id),
            to_hex(&self.parent_id),
            self.flags
        )
    }

    /// The trace id in hex, for log lines.
    pub fn trace_id(&self) -> String {
        to_hex(&self.trace_id)
    }
}

/// A fresh id for one request's log lines: 16 hex digits, unique within the process and
/// unlikely to repeat across processes.
pub fn request_id() -> String {
    to_hex(&random_bytes::<8>())
}

/// Not cryptographic: ids only need to be distinct. A per-process random seed (std's
/// `RandomState` is seeded from the OS) hashed with a counter.
fn random_bytes<const N: usize>() -> [u8; N] {
    static SEED: LazyLock<std::collections::hash_map::RandomState> =
        LazyLock::new(std::collections::hash_map::RandomState::new);
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let mut hasher = SEED.build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        let bytes = hasher.finish().to_be_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    out
}

fn hex(text: &str) -> Option<Vec<u8>> {
    // Lower-case only, as the specification requires.
    if !text.len().is_multiple_of(2)
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    crate::digest::hex(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_child_keeps_the_trace_and_flags_and_gets_a_new_parent() {
        let incoming = TraceContext::parse(SAMPLE, Some("congo=t61rcWkgMzE")).expect("valid");
        assert_eq!(incoming.header(), SAMPLE);
        let child = incoming.child();
        let header = child.header();
        assert!(header.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(header.ends_with("-01"));
        assert_ne!(header, SAMPLE);
        assert_eq!(child.tracestate.as_deref(), Some("congo=t61rcWkgMzE"));
        assert_eq!(
            TraceContext::parse(&header, None).map(|c| c.trace_id()),
            Some(incoming.trace_id())
        );
        assert_ne!(incoming.child().header(), header);
    }

    #[test]
    fn invalid_values_are_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?}");
        }
        // A later version may append fields; the first four are read.
        assert!(
            TraceContext::parse(
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-ab",
                None
            )
            .is_some()
        );
    }

    #[test]
    fn request_ids_are_distinct_hex() {
        let a = request_id();
        let b = request_id();
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
