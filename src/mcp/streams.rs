//! The caps on event streams, which no idle timeout closes: Streamable HTTP GET streams,
//! `subscriptions/listen`, the SSE answers of POSTs and legacy `/sse` sessions. At most
//! `server.max_sse_streams` are open at once (503 past it), and at most
//! `server.max_streams_per_client` of one client (429 past it), so one client cannot take
//! every stream, and with them every connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::admission::ClientId;
use crate::telemetry::metrics::Metrics;

/// The caps on event streams.
pub struct Streams {
    slots: Arc<Semaphore>,
    max: usize,
    /// Streams per client; 0 = no per-client cap.
    per_client: usize,
    held: Mutex<HashMap<ClientId, usize>>,
    metrics: Arc<Metrics>,
}

/// One open stream, counted until it is dropped.
pub struct Slot {
    streams: Arc<Streams>,
    client: ClientId,
    _permit: OwnedSemaphorePermit,
}

/// Why a stream was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Every stream of the server is taken (503).
    Full,
    /// The client holds its share (429).
    ClientFull,
}

impl Streams {
    /// `max` streams in all, `per_client` of one client (0: no per-client cap).
    pub fn new(max: usize, per_client: usize, metrics: Arc<Metrics>) -> Arc<Streams> {
        Arc::new(Streams {
            slots: Arc::new(Semaphore::new(max.max(1))),
            max: max.max(1),
            per_client,
            held: Mutex::default(),
            metrics,
        })
    }

    /// A slot for one stream of `client`, held until the stream ends.
    pub fn open(self: &Arc<Self>, client: &ClientId) -> Result<Slot, Refused> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let count = held.get(client).copied().unwrap_or(0);
        if self.per_client > 0 && count >= self.per_client {
            self.metrics.record_refusal("too_many_client_streams");
            return Err(Refused::ClientFull);
        }
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            self.metrics.record_refusal("too_many_streams");
            return Err(Refused::Full);
        };
        held.insert(client.clone(), count + 1);
        Ok(Slot {
            streams: self.clone(),
            client: client.clone(),
            _permit: permit,
        })
    }

    /// The answer to a stream refused: 503 at the server's cap, 429 at the client's.
    pub fn refusal(&self, why: Refused) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        let (status, retry, text) = self.explain(why);
        (status, [(axum::http::header::RETRY_AFTER, retry)], text).into_response()
    }

    /// The status, `Retry-After` seconds and text of a refusal.
    pub fn explain(&self, why: Refused) -> (StatusCode, &'static str, String) {
        match why {
            Refused::Full => (
                StatusCode::SERVICE_UNAVAILABLE,
                "5",
                format!(
                    "Service Unavailable: too many open event streams (server.max_sse_streams = {})",
                    self.max
                ),
            ),
            Refused::ClientFull => (
                StatusCode::TOO_MANY_REQUESTS,
                "1",
                format!(
                    "Too Many Requests: this client has too many open event streams \
                     (server.max_streams_per_client = {}); close one first",
                    self.per_client
                ),
            ),
        }
    }

    /// Streams `client` holds now.
    pub fn held_by(&self, client: &ClientId) -> usize {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(client)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.streams.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = held.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_capped_in_all_and_per_client_and_slots_come_back() {
        let streams = Streams::new(3, 2, Metrics::new());
        let (a, b) = (ClientId("a".into()), ClientId("b".into()));
        let first = streams.open(&a).expect("1st");
        let _second = streams.open(&a).expect("2nd");
        assert_eq!(streams.open(&a).err(), Some(Refused::ClientFull));
        let _third = streams.open(&b).expect("b has its own share");
        assert_eq!(streams.open(&b).err(), Some(Refused::Full), "all 3 taken");
        drop(first);
        assert_eq!(streams.held_by(&a), 1);
        assert!(streams.open(&b).is_ok(), "a slot came back");
        let unlimited = Streams::new(10, 0, Metrics::new());
        let held: Vec<Slot> = (0..10).filter_map(|_| unlimited.open(&a).ok()).collect();
        assert_eq!(held.len(), 10, "0 = no per-client cap");
    }
}
