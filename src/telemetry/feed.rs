//! The calls as they happen, for the console's live list and charts: each finished tool
//! call as one JSON event (tool, API, caller pseudonym, outcome, status, timing, sizes,
//! attempts; never an argument value, a header or a body), and per-tool latency
//! histograms for its percentiles.
//!
//! Nothing is made or kept until a console page first watches: until then a call costs one
//! atomic load here. Each event has a number, one more than the last, so a page that
//! reconnects names the last it saw (`Last-Event-ID`) and gets only what came after. From then on the last [`RECENT`] events are kept (a page that opens
//! sees them first) and each new one is broadcast to the pages watching, at most
//! [`MAX_WATCHERS`] at once, each with a queue of [`QUEUE`] events: a page that falls
//! behind misses events (and is told how many) rather than holding memory.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::broadcast;

/// Events kept for a page that opens.
pub const RECENT: usize = 200;

/// Pages watching at once; more are refused.
pub const MAX_WATCHERS: usize = 8;

/// Events queued per watching page.
pub const QUEUE: usize = 512;

/// One finished tool call, as the metrics count it and the feed tells it.
#[derive(Debug, Clone, Copy)]
pub struct CallRecord<'a> {
    pub api: &'a str,
    pub tool: &'a str,
    /// One of [`super::metrics::OUTCOMES`].
    pub outcome: &'static str,
    pub duration: Duration,
    /// Time spent waiting for the upstream (all attempts), when a request was sent.
    pub upstream: Option<Duration>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The caller's pseudonym (an OAuth caller's `sub:…` or a static token's `tok:…`), when
    /// the call had one.
    pub caller: Option<&'a str>,
    /// The final upstream (or mock) status, and the requests sent (retries included), for
    /// the console's feed.
    pub status: Option<u16>,
    pub attempts: u32,
    /// The call's arguments as JSON text, when the console shows them
    /// ([`CallFeed::wants_arguments`], `server.console_arguments`).
    pub arguments: Option<&'a str>,
}

/// The feed (see the module documentation).
pub struct CallFeed {
    /// Set when a page first watches; never cleared (the recent list stays meaningful).
    watched: AtomicBool,
    /// `server.console_arguments`: events carry the calls' arguments.
    arguments: AtomicBool,
    watchers: Arc<AtomicUsize>,
    /// The last [`RECENT`] events, and the number the next one gets.
    recent: Mutex<(VecDeque<Event>, u64)>,
    sender: broadcast::Sender<Event>,
}

/// One call as the feed tells it: its number and its JSON text.
pub type Event = (u64, Arc<str>);

impl Default for CallFeed {
    fn default() -> Self {
        CallFeed {
            watched: AtomicBool::new(false),
            arguments: AtomicBool::new(false),
            watchers: Arc::new(AtomicUsize::new(0)),
            recent: Mutex::new((VecDeque::new(), 1)),
            sender: broadcast::channel(QUEUE).0,
        }
    }
}

/// A page watching the feed: the events kept when it opened, then each new one.
pub struct Watch {
    pub recent: Vec<Event>,
    pub events: broadcast::Receiver<Event>,
    /// Counts the page among the watchers until dropped.
    pub guard: WatchGuard,
}

/// Counts one watching page until dropped.
pub struct WatchGuard(Arc<AtomicUsize>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CallFeed {
    /// Whether a page has ever watched: the per-tool histograms and the recent list are
    /// kept only from then on.
    pub fn is_watched(&self) -> bool {
        self.watched.load(Ordering::Relaxed)
    }

    /// Whether events carry the calls' arguments (`server.console_arguments`).
    pub fn show_arguments(&self, show: bool) {
        self.arguments.store(show, Ordering::Relaxed);
    }

    /// Whether a finished call should hand its arguments over: a page has watched and
    /// the operator turned them on.
    pub fn wants_arguments(&self) -> bool {
        self.is_watched() && self.arguments.load(Ordering::Relaxed)
    }

    /// Keeps the recent events and durations from now on, as when a page watches: the
    /// console's charts, which read the counters without the feed.
    pub fn mark_watched(&self) {
        self.watched.store(true, Ordering::Relaxed);
    }

    /// Starts watching, with the recent events numbered above `after` (all of them for
    /// `None`), or `None` when [`MAX_WATCHERS`] pages watch already.
    pub fn watch(&self, after: Option<u64>) -> Option<Watch> {
        let taken = self
            .watchers
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_WATCHERS).then_some(n + 1)
            });
        if taken.is_err() {
            return None;
        }
        let guard = WatchGuard(self.watchers.clone());
        self.watched.store(true, Ordering::Relaxed);
        // Subscribed under the lock that numbers and sends events, so each comes once:
        // in the recent list or from the receiver.
        let (recent, events) = {
            let recent = lock(&self.recent);
            let after = after.unwrap_or(0);
            let kept = recent
                .0
                .iter()
                .filter(|(n, _)| *n > after)
                .cloned()
                .collect();
            (kept, self.sender.subscribe())
        };
        Some(Watch {
            recent,
            events,
            guard,
        })
    }

    /// Tells the feed about a finished call: nothing is done until a page first watched.
    pub fn publish(&self, call: &CallRecord<'_>) {
        if !self.is_watched() {
            return;
        }
        let text: Arc<str> = event_json(call, SystemTime::now()).into();
        let mut recent = lock(&self.recent);
        let event = (recent.1, text);
        recent.1 += 1;
        if recent.0.len() == RECENT {
            recent.0.pop_front();
        }
        recent.0.push_back(event.clone());
        // No receiver is not an error: the pages have gone.
        let _ = self.sender.send(event);
    }
}

/// The event's JSON text.
fn event_json(call: &CallRecord<'_>, now: SystemTime) -> String {
    let at = now
        .duration_since(UNIX_EPOCH)
        .map(super::clock::rfc3339)
        .unwrap_or_default();
    let millis = super::clock::millis;
    serde_json::json!({
        "at": at,
        "tool": call.tool,
        "api": call.api,
        "caller": call.caller,
        "outcome": call.outcome,
        "status": call.status,
        "duration_ms": millis(call.duration),
        "upstream_ms": call.upstream.map(millis),
        "bytes_sent": call.bytes_sent,
        "bytes_received": call.bytes_received,
        "attempts": call.attempts,
        "arguments": call.arguments.map(shown_arguments),
    })
    .to_string()
}

/// Argument text longer than this is shown cut, as a string.
const ARGUMENTS_SHOWN: usize = 2000;

/// Arguments as an event carries them: their JSON, or, past [`ARGUMENTS_SHOWN`] bytes, the
/// start of their text.
fn shown_arguments(text: &str) -> serde_json::Value {
    if text.len() <= ARGUMENTS_SHOWN {
        return serde_json::from_str(text).unwrap_or_else(|_| text.into());
    }
    let mut end = ARGUMENTS_SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len()).into()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str) -> CallRecord<'_> {
        CallRecord {
            api: "petstore",
            tool,
            outcome: "ok",
            status: Some(200),
            duration: Duration::from_micros(3_250),
            upstream: Some(Duration::from_millis(2)),
            bytes_sent: 0,
            bytes_received: 120,
            attempts: 1,
            caller: Some("tok:ab12"),
            arguments: None,
        }
    }

    #[test]
    fn nothing_is_kept_until_a_page_watches() {
        let feed = CallFeed::default();
        feed.publish(&call("getPetById"));
        assert!(!feed.is_watched());
        let watch = feed.watch(None).expect("a first page may watch");
        assert!(
            watch.recent.is_empty(),
            "a call before any page is not kept"
        );
    }

    #[tokio::test]
    async fn a_page_sees_the_recent_calls_then_each_new_one() {
        let feed = CallFeed::default();
        drop(feed.watch(None));
        for _ in 0..RECENT + 5 {
            feed.publish(&call("getPetById"));
        }
        let mut watch = feed.watch(None).expect("watch");
        assert_eq!(watch.recent.len(), RECENT, "the recent list is bounded");
        let numbers: Vec<u64> = watch.recent.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers.first(), Some(&6), "the oldest kept is the 6th");
        assert_eq!(numbers.last(), Some(&(RECENT as u64 + 5)));
        let again = feed
            .watch(Some(RECENT as u64 + 3))
            .expect("a reconnecting page");
        assert_eq!(
            again.recent.len(),
            2,
            "only what came after the last it saw"
        );
        feed.publish(&call("addPet"));
        let (number, text) = watch.events.recv().await.expect("an event");
        assert_eq!(number, RECENT as u64 + 6);
        let event: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(event["tool"], "addPet");
        assert_eq!(event["status"], 200);
        assert_eq!(event["duration_ms"], 3.25);
        assert_eq!(event["caller"], "tok:ab12");
        assert!(event["at"].as_str().is_some_and(|at| at.ends_with('Z')));
        assert!(event["arguments"].is_null());
    }

    #[test]
    fn arguments_are_wanted_only_when_turned_on_and_watched_and_long_ones_are_cut() {
        let feed = CallFeed::default();
        feed.show_arguments(true);
        assert!(!feed.wants_arguments(), "no page has watched");
        drop(feed.watch(None));
        assert!(feed.wants_arguments());
        feed.show_arguments(false);
        assert!(!feed.wants_arguments());
        assert_eq!(
            shown_arguments(r#"{"petId":7}"#),
            serde_json::json!({"petId": 7})
        );
        let long = format!(r#"{{"note":"{}"}}"#, "é".repeat(ARGUMENTS_SHOWN));
        let cut = shown_arguments(&long);
        assert!(
            cut.as_str()
                .is_some_and(|t| t.ends_with("bytes in all)") && t.len() < 2100)
        );
    }

    #[test]
    fn at_most_max_watchers_pages_watch_at_once() {
        let feed = CallFeed::default();
        let pages: Vec<Watch> = (0..MAX_WATCHERS).filter_map(|_| feed.watch(None)).collect();
        assert_eq!(pages.len(), MAX_WATCHERS);
        assert!(feed.watch(None).is_none(), "one page too many is refused");
        drop(pages);
        assert!(
            feed.watch(None).is_some(),
            "a page that left frees its place"
        );
    }
}
