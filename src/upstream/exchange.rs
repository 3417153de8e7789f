//! The seam between the dispatcher and an upstream: the dispatcher hands a built request to
//! an [`Exchange`] and maps what comes back to a result. Two sides implement it: the HTTP
//! client (`http::HttpExchange`: credentials, retries, redirects, decoding, the size
//! cap) and the mock upstream (`crate::mock`, which sits above this module and is plugged in
//! with [`super::Dispatcher::with_exchange`] for APIs in mock mode).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::caching::CacheValidators;
use super::context::CallContext;
use super::decode::DecodeError;
use super::request::HttpRequest;
use super::settings::UpstreamSettings;
use crate::catalog::Tool;

/// A future an [`Exchange`] returns: boxed, so the trait stays object safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sends a built request to an upstream and reads its answer.
pub trait Exchange: Send + Sync {
    /// Exchanges `outgoing.request` for an answer. Failures are values ([`Failure`]), so
    /// the dispatcher words every one of them for the model.
    fn exchange<'a>(&'a self, outgoing: Outgoing<'a>) -> BoxFuture<'a, Exchanged>;
}

/// One request on its way out, with what an exchange needs to send it.
pub struct Outgoing<'a> {
    pub tool: &'a Tool,
    /// The request exactly as the tool's route builds it (before credentials, forwarded
    /// headers and trace context, which are the HTTP exchange's to add).
    pub request: HttpRequest,
    pub settings: &'a UpstreamSettings,
    /// The tool's time limit for the whole exchange.
    pub timeout: Duration,
    pub context: &'a CallContext,
    /// Send it without credentials and forwarded headers: a URL the upstream named (an
    /// operation's status monitor) on an origin the operator lets restmcp follow
    /// (`follow_redirects`) but not send credentials to.
    pub bare: bool,
}

/// What an exchange did: the answer (or why there is none) and what went over the wire.
pub struct Exchanged {
    /// Boxed: the answer is moved up through every layer of the exchange's futures, and
    /// at 500 bytes each move cost a copy.
    pub answer: Result<Box<Received>, Failure>,
    /// Requests sent, retries included (0 when none went on the wire).
    pub attempts: u32,
    /// Time from the first send to the body read, retries included.
    pub upstream: Option<Duration>,
    /// Request body bytes sent, over all attempts.
    pub bytes_sent: u64,
}

impl Exchanged {
    /// No request was sent: nothing went over the wire.
    pub fn unsent(failure: Failure) -> Exchanged {
        Exchanged {
            answer: Err(failure),
            attempts: 0,
            upstream: None,
            bytes_sent: 0,
        }
    }
}

/// Why an exchange has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The request could not be completed before sending (a forwarded header refused).
    Unbuildable(String),
    /// The credentials could not be applied (or a fresh token obtained); no request was
    /// sent, or the retry after a 401 was not.
    Unauthenticated(String),
    /// The upstream could not be reached, or the connection failed while reading.
    Unreachable(String),
    /// The upstream named a URL restmcp does not follow (an operation's status monitor or
    /// result on another origin); nothing was sent there. The text says which and why.
    Refused(String),
    /// No answer within the tool's time limit; the exchange was abandoned.
    TimedOut,
}

/// A response read up to the cap.
pub struct Received {
    pub status: u16,
    pub reason: String,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub omitted: u64,
    /// The body's size on the wire (its encoded size when compressed): the bytes read, or
    /// the `Content-Length` when reading stopped early.
    pub wire: u64,
    /// Why the body cannot be given (an encoding restmcp does not know, a corrupt or
    /// bomb-like compressed body); `body` is then empty.
    pub undecodable: Option<Undecodable>,
    /// Where a redirect that was not followed leads, resolved against the request URL.
    pub location: Option<url::Url>,
    /// The origin the request went to last, when `location` is set (empty otherwise: only
    /// a redirect's note compares it).
    pub origin: String,
    /// `Retry-After` of a 429, 503 or 202, as sent.
    pub retry_after: Option<String>,
    /// For a success: where a long-running operation's status is read
    /// (`Operation-Location`, `Azure-AsyncOperation`, else a 202's `Location`), resolved
    /// against the request URL. Followed for a 202, and for a tool marked long-running.
    pub operation: Option<url::Url>,
    /// A success's `Location`, resolved: where a long-running operation's final result may
    /// be read ([`crate::spec::FinalState::Location`]).
    pub result_location: Option<url::Url>,
    /// A success's `Link` header (its first 8 KiB), where the next page may be named.
    pub link: Option<String>,
    /// What the answer says of caching it: its validators and how long it stays fresh.
    pub validators: CacheValidators,
}

impl Received {
    /// What a model needs to act on an error the status alone does not explain.
    pub fn note(&self, api: &str) -> Option<String> {
        if let Some(location) = &self.location {
            let target = location.origin().ascii_serialization();
            return Some(if target == self.origin {
                "It redirects again; restmcp follows at most 5 redirects.".to_string()
            } else {
                format!(
                    "It redirects to another origin, {target}, which restmcp does not follow \
                     unless apis.{api}.follow_redirects lists it."
                )
            });
        }
        if self.status < 400 && self.status != 202 {
            return None;
        }
        let wait = self.retry_after.as_deref()?;
        Some(format!(
            "The upstream asked to wait before retrying: Retry-After: {wait}."
        ))
    }
}

/// A compressed body that cannot be given.
pub enum Undecodable {
    /// The `Content-Encoding`, as sent: restmcp does not decode it (the body was not read).
    Unknown(String),
    Failed(DecodeError),
}
