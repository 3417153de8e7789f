//! The HTTP side of the [`Exchange`] seam: the request goes to the real upstream with the
//! API's forwarded headers, trace context and credentials ([`super::auth`]), the tool's
//! `Accept` and `Accept-Encoding`, retries where they are safe and redirects only within
//! the origins the operator allows; the answer is read up to the size cap (decoding a
//! compressed body, see [`super::decode`]), all within the tool's time limit.
//!
//! The exchange future can be dropped at any point (a cancelled MCP request): the client
//! then drops the connection, and nothing else is left running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

use super::auth::Authenticator;
use super::caching::CacheValidators;
use super::client::{Answer, Client, Outbound};
use super::context::{CallContext, Severity};
use super::decode::{self, Coding, Decoder};
use super::exchange::{BoxFuture, Exchange, Exchanged, Failure, Outgoing, Received, Undecodable};
use super::request::HttpRequest;
use super::settings::UpstreamSettings;
use crate::catalog::{Catalog, Tool};

/// Where a long-running operation's status is read (Azure and others), looked up by name
/// without parsing the name on every answer.
const OPERATION_LOCATION: HeaderName = HeaderName::from_static("operation-location");
const AZURE_ASYNC_OPERATION: HeaderName = HeaderName::from_static("azure-asyncoperation");

/// `Accept: application/json`.
const ACCEPT_JSON: HeaderValue = HeaderValue::from_static("application/json");

/// Longest wait honoured from a `Retry-After` header.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

/// Calls real upstreams over HTTP.
pub struct HttpExchange {
    client: Client,
    auth: Arc<Authenticator>,
}

impl HttpExchange {
    /// A client for the tools of `catalog` that follows redirects to the origins each API's
    /// settings in `apis` list, and sends no credentials.
    pub fn new<S: std::hash::BuildHasher>(
        catalog: &Catalog,
        apis: &HashMap<String, UpstreamSettings, S>,
    ) -> Result<HttpExchange, String> {
        let mut redirects: HashMap<String, Vec<String>> = HashMap::new();
        for tool in catalog.tools() {
            if let Some(settings) = apis.get(&tool.route.api)
                && !settings.follow_redirects.is_empty()
                && let Some(Ok(base)) = tool.route.base_url.as_ref().map(|b| b.parsed())
            {
                // The base URL's origin, whatever its path (`https://api.example.com/v3`).
                let allowed = redirects
                    .entry(base.origin().ascii_serialization())
                    .or_default();
                for origin in &settings.follow_redirects {
                    if !allowed.contains(origin) {
                        allowed.push(origin.clone());
                    }
                }
            }
        }
        Ok(HttpExchange {
            client: Client::new(redirects)?,
            auth: Arc::new(Authenticator::default()),
        })
    }

    /// Replaces the credentials (and header forwarding) requests are sent with.
    pub fn with_authenticator(mut self, auth: Arc<Authenticator>) -> HttpExchange {
        self.auth = auth;
        self
    }

    /// Forwards the allowlisted headers, continues the caller's trace, applies the
    /// credentials and sends, all within the tool's time limit.
    async fn call(&self, outgoing: Outgoing<'_>) -> Exchanged {
        let Outgoing {
            tool,
            mut request,
            settings,
            timeout,
            context,
            bare,
        } = outgoing;
        let api = tool.route.api.as_str();
        if !bare && let Err(problem) = self.auth.forward(api, context, &mut request) {
            return Exchanged::unsent(Failure::Unbuildable(problem));
        }
        if let Some(trace) = &context.trace {
            let child = trace.child();
            request.headers.retain(|(name, _)| {
                !name.eq_ignore_ascii_case("traceparent")
                    && !name.eq_ignore_ascii_case("tracestate")
            });
            request
                .headers
                .push(("traceparent".to_string(), child.header()));
            if let Some(state) = child.tracestate {
                request.headers.push(("tracestate".to_string(), state));
            }
        }
        let bytes_sent = request.body.as_ref().map_or(0, |b| b.len() as u64);
        let wire = Mutex::new(Wire::default());
        let send = |request: HttpRequest| async {
            if let Some(sent) = &context.sent {
                sent.on_the_wire(&request);
            }
            let received = self
                .send_retrying(tool, &request, settings, timeout, (&wire, context))
                .await;
            (request, received)
        };
        let exchange = async {
            if bare {
                // No credentials: the answer as it is.
                return Ok(send(request).await.1);
            }
            self.auth
                .authorized(
                    api,
                    &tool.route.security,
                    context.caller.as_deref(),
                    request,
                    send,
                    |received| received.status,
                )
                .await
        };
        let answer = match tokio::time::timeout(timeout, exchange).await {
            Ok(Err(problem)) => Err(Failure::Unauthenticated(problem)),
            Ok(Ok(Ok(received))) => Ok(received),
            Ok(Ok(Err(failure))) => Err(Failure::Unreachable(failure)),
            Err(_) => Err(Failure::TimedOut),
        };
        let wire = wire.into_inner().unwrap_or_else(|p| p.into_inner());
        Exchanged {
            answer,
            attempts: wire.attempts,
            upstream: wire.started.map(|started| started.elapsed()),
            bytes_sent: if wire.attempts > 0 {
                bytes_sent * u64::from(wire.attempts)
            } else {
                0
            },
        }
    }

    /// Sends the request (with retries where they are safe) and reads the response.
    async fn send_retrying(
        &self,
        tool: &Tool,
        request: &HttpRequest,
        settings: &UpstreamSettings,
        timeout: Duration,
        (wire, context): (&Mutex<Wire>, &CallContext),
    ) -> Result<Box<Received>, String> {
        let started = Instant::now();
        // A request carrying an idempotency key is safe to send again whatever its method:
        // the upstream acts on that key once.
        let retryable = tool.route.method.is_idempotent()
            || tool.route.idempotency.as_ref().is_some_and(|idempotency| {
                super::request::has_header(&request.headers, &idempotency.header)
            });
        let mut attempt = 0;
        loop {
            {
                let mut wire = wire.lock().unwrap_or_else(|p| p.into_inner());
                wire.started.get_or_insert(started);
                wire.attempts += 1;
            }
            let outcome = self
                .send(tool, request, settings.compression, context.workflow_step)
                .await;
            let wait = match &outcome {
                // A wait longer than MAX_RETRY_WAIT is not shortened: the error quotes it.
                Ok(response)
                    if retryable
                        && !context.workflow_step
                        && matches!(response.status.as_u16(), 429 | 503) =>
                {
                    match retry_after(&response.headers) {
                        Some(asked) if asked > MAX_RETRY_WAIT => None,
                        asked => Some(asked.unwrap_or(backoff(attempt))),
                    }
                }
                Err(error) if retryable && error.is_connect() => Some(backoff(attempt)),
                // A pooled connection the upstream closed just as it was reused: at once,
                // on a new connection.
                Err(error) if retryable && error.closed_before_answer() => Some(Duration::ZERO),
                _ => None,
            };
            let remaining = timeout.saturating_sub(started.elapsed());
            match wait {
                Some(wait) if attempt < settings.max_retries && wait < remaining => {
                    attempt += 1;
                    context.say(Severity::Notice, || {
                        let why = match &outcome {
                            Ok(response) => format!("answered {}", response.status.as_u16()),
                            Err(_) => "could not be reached".to_string(),
                        };
                        format!(
                            "the upstream {why}; retrying in {} ms (retry {attempt} of {})",
                            wait.as_millis(),
                            settings.max_retries
                        )
                    });
                    tokio::time::sleep(wait).await;
                }
                _ => {
                    let response = outcome.map_err(|e| e.to_string())?;
                    if let Some(sent) = &context.sent
                        && sent.wants_answers()
                    {
                        sent.answer_headers(&response.headers);
                    }
                    let cap = tool
                        .route
                        .max_response_bytes
                        .map_or(settings.max_response_bytes, |limit| {
                            limit.over(settings.max_response_bytes)
                        });
                    return read(response, cap).await;
                }
            }
        }
    }

    /// Sends `request` with the tool's `Accept` and, when `compression` is on,
    /// `Accept-Encoding`, unless the request already names them (an argument, a forwarded
    /// header).
    async fn send(
        &self,
        tool: &Tool,
        request: &HttpRequest,
        compression: bool,
        workflow_step: bool,
    ) -> Result<Answer, super::client::Error> {
        // A workflow step sees every answer, redirects included.
        let make = || {
            outbound(tool, request, compression).map(|mut outbound| {
                outbound.follow_redirects = !workflow_step;
                outbound
            })
        };
        self.client.send(make()?, &make).await
    }
}

/// `request` as the client sends it: the URL `build` parsed (not parsed a second time),
/// its headers, the tool's `Accept` and, when `compression` is on, `Accept-Encoding`.
fn outbound(
    tool: &Tool,
    request: &HttpRequest,
    compression: bool,
) -> Result<Outbound, super::client::Error> {
    let method =
        hyper::Method::from_bytes(request.method.as_str().as_bytes()).unwrap_or(hyper::Method::GET);
    let url = match request.parsed_url() {
        Some(parsed) => parsed.clone(),
        None => url::Url::parse(&request.url)
            .map_err(|e| super::client::Error::unsendable(format!("the URL is not valid: {e}")))?,
    };
    // Room for what is added on the way out too: Accept, Accept-Encoding, User-Agent and
    // Host (growing the map costs about 900 instructions).
    let mut headers = HeaderMap::with_capacity(request.headers.len() + 4);
    for (name, value) in &request.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            super::client::Error::unsendable(format!("\"{name}\" is not a valid header name"))
        })?;
        // The value may be a credential: never quoted.
        let value = HeaderValue::from_str(value).map_err(|_| {
            super::client::Error::unsendable(format!("the value of header \"{name}\" is not valid"))
        })?;
        headers.append(name, value);
    }
    // Each name hashed once: looked up and, when absent, added in the same place.
    if let header::Entry::Vacant(vacant) = headers.entry(header::ACCEPT) {
        // Most tools accept JSON alone: that value is a constant, neither checked nor
        // copied again on every call (about 250 instructions).
        let accept = match tool.route.accept.as_str() {
            "application/json" => Ok(ACCEPT_JSON),
            accept => HeaderValue::from_str(accept),
        };
        if let Ok(accept) = accept {
            vacant.insert(accept);
        }
    }
    if compression && let header::Entry::Vacant(vacant) = headers.entry(header::ACCEPT_ENCODING) {
        vacant.insert(HeaderValue::from_static(decode::ACCEPT_ENCODING));
    }
    Ok(Outbound {
        method,
        url,
        headers,
        body: request.body.clone().map(Into::into),
        follow_redirects: true,
    })
}

impl Exchange for HttpExchange {
    fn exchange<'a>(&'a self, outgoing: Outgoing<'a>) -> BoxFuture<'a, Exchanged> {
        crate::alloc::pinned(|| self.call(outgoing))
    }
}

/// What the exchange recorded, kept outside it so a timeout still reports it.
#[derive(Default)]
struct Wire {
    started: Option<Instant>,
    attempts: u32,
}

/// Reads at most `cap` bytes (decoded bytes, for a compressed body). Past the cap the rest
/// is drained only to count it, and only up to 16 times the cap: beyond that the count is
/// a lower bound and reading stops.
async fn read(mut response: Answer, cap: u64) -> Result<Box<Received>, String> {
    let (mut received, coding) = head(&response);
    let declared = response.content_length();
    let coding = match coding {
        Ok(None) => None,
        Ok(Some(coding)) => Some(coding),
        // Not read at all: it could not be given anyway.
        Err(unknown) => {
            received.undecodable = Some(Undecodable::Unknown(unknown));
            received.wire = declared.unwrap_or(0);
            return Ok(received);
        }
    };
    if let Some(coding) = coding {
        return read_encoded(response, received, coding, cap, declared).await;
    }
    let mut body = Vec::new();
    let mut omitted: u64 = 0;
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        let room = cap.saturating_sub(body.len() as u64) as usize;
        let kept = room.min(chunk.len());
        body.extend_from_slice(&chunk[..kept]);
        omitted += (chunk.len() - kept) as u64;
        if omitted > 0 {
            if let Some(total) = declared {
                omitted = total.saturating_sub(body.len() as u64).max(omitted);
                break;
            }
            if omitted > cap.saturating_mul(16) {
                break;
            }
        }
    }
    received.wire = body.len() as u64 + omitted;
    received.body = body;
    received.omitted = omitted;
    Ok(received)
}

/// What an answer's status line and headers say, before its body is read: a [`Received`]
/// without a body, and the body's content coding (`Err`: one restmcp cannot decode).
fn head(response: &Answer) -> (Box<Received>, Result<Option<Coding>, String>) {
    let status = response.status;
    let heads = Heads::of(&response.headers);
    let header = |value: Option<&HeaderValue>| {
        value.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let content_type = header(heads.content_type);
    let coding = header(heads.content_encoding).map_or(Ok(None), |e| Coding::parse(&e));
    let location = status
        .is_redirection()
        .then(|| header(heads.location))
        .flatten()
        .and_then(|l| response.url.join(&l).ok());
    // Only a redirect's note compares origins: not serialized for any other answer.
    let origin = location
        .as_ref()
        .map(|_| response.url.origin().ascii_serialization())
        .unwrap_or_default();
    // A long-running operation's status monitor: the headers Azure and others use on any
    // success, and a 202's Location; a success's Location, where its result may be read.
    let url_of = |value: Option<&HeaderValue>| {
        value
            .and_then(|value| value.to_str().ok())
            .and_then(|value| response.url.join(value.trim()).ok())
    };
    let success = status.is_success();
    let result_location = success.then(|| url_of(heads.location)).flatten();
    let operation = success
        .then(|| url_of(heads.operation_location).or_else(|| url_of(heads.azure_async_operation)))
        .flatten()
        .or_else(|| {
            (status.as_u16() == 202)
                .then(|| result_location.clone())
                .flatten()
        });
    let link = success
        .then(|| header(heads.link))
        .flatten()
        .map(|v| v.chars().take(8192).collect());
    let retry_after = (matches!(status.as_u16(), 429 | 503 | 202) || operation.is_some())
        .then(|| header(heads.retry_after))
        .flatten()
        .map(|v| v.chars().take(64).collect());
    let received = Box::new(Received {
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("").to_string(),
        content_type,
        body: Vec::new(),
        omitted: 0,
        wire: 0,
        undecodable: None,
        location,
        origin,
        retry_after,
        operation,
        result_location,
        link,
        validators: CacheValidators::of(
            header(heads.etag).as_deref(),
            header(heads.last_modified).as_deref(),
            header(heads.cache_control).as_deref(),
        ),
    });
    (received, coding)
}

/// The answer's headers [`head`] reads, each its first value, found in one pass over the
/// map: a `HeaderMap::get` hashes the name and probes, and ten of them cost more than
/// reading the few headers an answer has.
#[derive(Default)]
struct Heads<'a> {
    content_type: Option<&'a HeaderValue>,
    content_encoding: Option<&'a HeaderValue>,
    location: Option<&'a HeaderValue>,
    operation_location: Option<&'a HeaderValue>,
    azure_async_operation: Option<&'a HeaderValue>,
    link: Option<&'a HeaderValue>,
    retry_after: Option<&'a HeaderValue>,
    etag: Option<&'a HeaderValue>,
    last_modified: Option<&'a HeaderValue>,
    cache_control: Option<&'a HeaderValue>,
}

impl<'a> Heads<'a> {
    fn of(headers: &'a HeaderMap) -> Heads<'a> {
        let mut heads = Heads::default();
        for (name, value) in headers {
            let slot = match name {
                name if name == header::CONTENT_TYPE => &mut heads.content_type,
                name if name == header::CONTENT_ENCODING => &mut heads.content_encoding,
                name if name == header::LOCATION => &mut heads.location,
                name if name == OPERATION_LOCATION => &mut heads.operation_location,
                name if name == AZURE_ASYNC_OPERATION => &mut heads.azure_async_operation,
                name if name == header::LINK => &mut heads.link,
                name if name == header::RETRY_AFTER => &mut heads.retry_after,
                name if name == header::ETAG => &mut heads.etag,
                name if name == header::LAST_MODIFIED => &mut heads.last_modified,
                name if name == header::CACHE_CONTROL => &mut heads.cache_control,
                _ => continue,
            };
            // A repeated header: the first value, as `HeaderMap::get` gives.
            slot.get_or_insert(value);
        }
        heads
    }
}

/// [`read`] for a compressed body: decoded as it arrives, the cap and the counting limit
/// applying to the decoded bytes (`Content-Length` gives only the encoded size), and the
/// decoder's ratio limit stopping a bomb at once.
async fn read_encoded(
    mut response: Answer,
    mut received: Box<Received>,
    coding: Coding,
    cap: u64,
    declared: Option<u64>,
) -> Result<Box<Received>, String> {
    let mut decoder = Decoder::new(coding, cap);
    let mut wire: u64 = 0;
    let mut complete = true;
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        wire += chunk.len() as u64;
        match decoder.feed(&chunk) {
            Ok(true) => {}
            Ok(false) => {
                complete = false;
                break;
            }
            Err(error) => {
                received.wire = wire.max(declared.unwrap_or(0));
                received.undecodable = Some(Undecodable::Failed(error));
                return Ok(received);
            }
        }
    }
    received.wire = wire.max(declared.unwrap_or(0));
    let decoded = if complete {
        decoder.finish()
    } else {
        Ok(decoder.partial())
    };
    match decoded {
        Ok(decoded) => {
            received.body = decoded.body;
            received.omitted = decoded.omitted;
        }
        Err(error) => received.undecodable = Some(Undecodable::Failed(error)),
    }
    Ok(received)
}

/// `Retry-After` in seconds (RFC 9110 §10.2.3; the HTTP-date form falls back to backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds))
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100 * 2u64.pow(attempt.min(6)))
}

#[cfg(test)]
mod tests {
    use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

    use super::{AZURE_ASYNC_OPERATION, Heads, OPERATION_LOCATION};

    #[test]
    fn heads_are_each_headers_first_value_as_header_map_get_gives() {
        let names = [
            header::CONTENT_TYPE,
            header::CONTENT_ENCODING,
            header::LOCATION,
            OPERATION_LOCATION,
            AZURE_ASYNC_OPERATION,
            header::LINK,
            header::RETRY_AFTER,
            header::ETAG,
            header::LAST_MODIFIED,
            header::CACHE_CONTROL,
        ];
        let mut headers = HeaderMap::new();
        headers.append(header::SERVER, HeaderValue::from_static("nginx"));
        for (i, name) in names.iter().enumerate() {
            headers.append(name.clone(), HeaderValue::from(i));
            headers.append(name.clone(), HeaderValue::from(i + 100));
        }
        headers.append(
            HeaderName::from_static("x-other"),
            HeaderValue::from_static("1"),
        );
        let heads = Heads::of(&headers);
        let found = [
            heads.content_type,
            heads.content_encoding,
            heads.location,
            heads.operation_location,
            heads.azure_async_operation,
            heads.link,
            heads.retry_after,
            heads.etag,
            heads.last_modified,
            heads.cache_control,
        ];
        for (name, found) in names.iter().zip(found) {
            assert_eq!(found, headers.get(name), "{name}");
            assert!(found.is_some(), "{name}");
        }
        let empty = HeaderMap::new();
        let none = Heads::of(&empty);
        assert!(none.content_type.is_none() && none.cache_control.is_none());
    }
}
