//! The cap on long-lived event streams (Streamable HTTP GET streams,
//! `subscriptions/listen`, legacy `/sse`), which no idle timeout closes.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::telemetry::metrics::Metrics;

/// The cap on long-lived event streams.
pub struct Streams {
    slots: Arc<Semaphore>,
    max: usize,
    metrics: Arc<Metrics>,
}

impl Streams {
    pub fn new(max: usize, metrics: Arc<Metrics>) -> Arc<Streams> {
        Arc::new(Streams {
            slots: Arc::new(Semaphore::new(max.max(1))),
            max: max.max(1),
            metrics,
        })
    }

    /// A slot for one stream, held until the stream ends; `None` at the cap.
    pub fn open(&self) -> Option<OwnedSemaphorePermit> {
        let slot = self.slots.clone().try_acquire_owned().ok();
        if slot.is_none() {
            self.metrics.record_refusal("too_many_streams");
        }
        slot
    }

    /// 503 for a stream refused at the cap.
    pub fn refusal(&self) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(axum::http::header::RETRY_AFTER, "5")],
            format!(
                "Service Unavailable: too many open event streams (server.max_sse_streams = {})",
                self.max
            ),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_capped_and_slots_come_back() {
        let streams = Streams::new(2, Metrics::new());
        let first = streams.open().expect("1st");
        let _second = streams.open().expect("2nd");
        assert!(streams.open().is_none(), "a third is refused");
        drop(first);
        assert!(streams.open().is_some(), "a slot came back");
    }
}
