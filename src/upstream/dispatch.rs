//! One tool call end to end: validate the arguments, build the request, send it with the
//! API's timeout and retry rules (and the tool's `Accept`, and `Accept-Encoding`), read the
//! response up to the size cap (decoding a compressed body, see [`super::decode`]), map it
//! to a result. Every failure on the way is a [`ToolResult`] with `is_error`, worded for the
//! model.
//!
//! The call future can be dropped at any point (a cancelled MCP request): reqwest then
//! drops the connection, and nothing else is left running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::auth::{Authenticator, CallContext};
use super::decode::{self, Coding, DecodeError, Decoder};
use super::request::{self, HttpRequest};
use super::response::{self, HttpResponse};
use super::validate::Validators;
use super::{Content, ToolResult};
use crate::catalog::{Catalog, Tool};
use crate::config::{Config, RateLimit};
use crate::http_client;

/// How one API is called.
#[derive(Debug, Clone)]
pub struct UpstreamSettings {
    pub timeout: Duration,
    pub tool_timeouts: HashMap<String, Duration>,
    pub max_response_bytes: u64,
    pub max_retries: u32,
    /// Calls per second for each tool of the API.
    pub rate_limit: Option<RateLimit>,
    pub tool_rate_limits: HashMap<String, RateLimit>,
    /// Origins besides the API's own that redirects may lead to, as
    /// [`crate::config::parse_origin`] writes them.
    pub follow_redirects: Vec<String>,
    /// Send `Accept-Encoding: gzip, deflate, br`.
    pub compression: bool,
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        UpstreamSettings {
            timeout: Duration::from_secs(30),
            tool_timeouts: HashMap::new(),
            max_response_bytes: 4 * 1024 * 1024,
            max_retries: 2,
            rate_limit: None,
            tool_rate_limits: HashMap::new(),
            follow_redirects: Vec::new(),
            compression: true,
        }
    }
}

/// The tool name is not in the catalog: a protocol error, not a tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool \"{0}\"")]
pub struct UnknownTool(pub String);

/// How a call ended, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream answered below 400 (or the mock did).
    Ok,
    /// Refused before sending: bad arguments, a request that cannot be built, missing
    /// credentials.
    ToolError,
    Upstream4xx,
    Upstream5xx,
    Timeout,
    Unreachable,
    RateLimited,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Upstream4xx => "upstream_4xx",
            Outcome::Upstream5xx => "upstream_5xx",
            Outcome::Timeout => "timeout",
            Outcome::Unreachable => "unreachable",
            Outcome::RateLimited => "rate_limited",
        }
    }

    fn of_status(status: u16) -> Outcome {
        match status {
            500.. => Outcome::Upstream5xx,
            400.. => Outcome::Upstream4xx,
            _ => Outcome::Ok,
        }
    }
}

/// What a call did on the wire; never bodies or secrets.
#[derive(Debug, Clone)]
pub struct CallStats {
    pub api: String,
    pub outcome: Outcome,
    /// The final upstream (or mock) status.
    pub status: Option<u16>,
    /// Time from the first send to the body read, retries included.
    pub upstream: Option<Duration>,
    pub attempts: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl CallStats {
    fn new(api: &str, outcome: Outcome) -> CallStats {
        CallStats {
            api: api.to_string(),
            outcome,
            status: None,
            upstream: None,
            attempts: 0,
            bytes_sent: 0,
            bytes_received: 0,
        }
    }
}

/// A finished call: the result for the client and the stats for the operator.
#[derive(Debug, Clone)]
pub struct Called {
    pub result: ToolResult,
    pub stats: CallStats,
}

/// Calls tools of one catalog.
pub struct Dispatcher {
    catalog: Arc<Catalog>,
    validators: Validators,
    apis: HashMap<String, UpstreamSettings>,
    client: reqwest::Client,
    auth: Authenticator,
    /// Token buckets of the tools that have a rate limit.
    buckets: HashMap<String, Mutex<Bucket>>,
}

/// A token bucket (tokens refill continuously up to `burst`).
struct Bucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn new(limit: &RateLimit) -> Bucket {
        let burst = f64::from(limit.burst());
        Bucket {
            per_second: limit.per_second,
            burst,
            tokens: burst,
            updated: Instant::now(),
        }
    }

    /// Takes a token, or says how long until one is available.
    fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        self.updated = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.tokens) / self.per_second,
            ))
        }
    }
}

/// Longest wait honoured from a `Retry-After` header.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

impl Dispatcher {
    /// A dispatcher for `catalog` with each API's settings from `config`, and the
    /// credentials its `auth` tables name read from the environment now.
    pub fn new(catalog: Arc<Catalog>, config: &Config) -> Result<Dispatcher, String> {
        let auth = Authenticator::new(&catalog, config, |name| std::env::var(name).ok())?;
        let apis = config
            .apis
            .iter()
            .map(|(name, api)| {
                let settings = UpstreamSettings {
                    timeout: Duration::from_secs_f64(api.timeout_seconds),
                    tool_timeouts: api
                        .tool_timeouts
                        .iter()
                        .map(|(tool, s)| (tool.clone(), Duration::from_secs_f64(*s)))
                        .collect(),
                    max_response_bytes: api.max_response_bytes,
                    max_retries: api.max_retries,
                    rate_limit: api.rate_limit,
                    tool_rate_limits: api
                        .tool_rate_limits
                        .iter()
                        .map(|(tool, limit)| (tool.clone(), *limit))
                        .collect(),
                    follow_redirects: api
                        .follow_redirects
                        .iter()
                        .filter_map(|origin| crate::config::parse_origin(origin).ok())
                        .collect(),
                    compression: api.compression,
                };
                (name.clone(), settings)
            })
            .collect();
        Ok(Dispatcher::with_settings(catalog, apis)?.with_authenticator(auth))
    }

    /// A dispatcher with explicit per-API settings (APIs not listed get the defaults) and no
    /// credentials: requests are sent as built.
    pub fn with_settings(
        catalog: Arc<Catalog>,
        apis: HashMap<String, UpstreamSettings>,
    ) -> Result<Dispatcher, String> {
        let buckets = catalog
            .tools()
            .iter()
            .filter_map(|tool| {
                let settings = apis.get(&tool.route.api)?;
                let limit = settings
                    .tool_rate_limits
                    .get(&tool.name)
                    .or(settings.rate_limit.as_ref())?;
                Some((tool.name.clone(), Mutex::new(Bucket::new(limit))))
            })
            .collect();
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
        Ok(Dispatcher {
            validators: Validators::new(catalog.len()),
            catalog,
            apis,
            client: upstream_client(redirects)?,
            auth: Authenticator::default(),
            buckets,
        })
    }

    /// Replaces the credentials (and header forwarding) the dispatcher uses.
    pub fn with_authenticator(mut self, auth: Authenticator) -> Dispatcher {
        self.auth = auth;
        self
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Calls tool `name` with `arguments`; `context` carries the incoming MCP request's
    /// headers (for the API's `forward_headers`). Every secret is redacted from the result.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Result<ToolResult, UnknownTool> {
        Ok(self.call_with_stats(name, arguments, context).await?.result)
    }

    /// [`Dispatcher::call`], also saying how the call went on the wire.
    pub async fn call_with_stats(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Result<Called, UnknownTool> {
        let mut called = self.call_unredacted(name, arguments, context).await?;
        called.result = self.auth.redact_result(called.result);
        Ok(called)
    }

    async fn call_unredacted(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Result<Called, UnknownTool> {
        let Some(index) = self.catalog.index_of(name) else {
            return Err(UnknownTool(name.to_string()));
        };
        let tool = &self.catalog.tools()[index];
        let Some(compiled) = self.validators.get(index, tool) else {
            return Err(UnknownTool(name.to_string()));
        };
        let api = tool.route.api.as_str();
        let refused = |outcome: Outcome, text: String| Called {
            result: ToolResult::error(text),
            stats: CallStats::new(api, outcome),
        };
        let violations = compiled.check_arguments(&arguments);
        if !violations.is_empty() {
            return Ok(refused(
                Outcome::ToolError,
                format!(
                    "Invalid arguments for tool \"{name}\"; no request was sent:\n- {}",
                    violations.join("\n- ")
                ),
            ));
        }
        if let Some(bucket) = self.buckets.get(name) {
            let taken = bucket
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(Instant::now());
            if let Err(wait) = taken {
                return Ok(refused(
                    Outcome::RateLimited,
                    format!(
                        "Tool \"{name}\" is rate-limited; no request was sent. Retry in {:.1} s.",
                        wait.as_secs_f64().max(0.1)
                    ),
                ));
            }
        }
        let mut arguments = arguments;
        for binding in &tool.route.arguments.bindings {
            if let Some(fixed) = &binding.fixed {
                arguments.insert(binding.argument.clone(), fixed.value());
            } else if let Some(default) = &binding.default
                && !arguments.contains_key(&binding.argument)
            {
                arguments.insert(binding.argument.clone(), default.clone());
            }
        }
        let mut request = match request::build(&tool.route, &arguments) {
            Ok(request) => request,
            Err(problem) => {
                return Ok(refused(
                    Outcome::ToolError,
                    format!(
                        "Cannot build the request for tool \"{name}\"; no request was sent: {problem}"
                    ),
                ));
            }
        };
        let defaults = UpstreamSettings::default();
        let settings = self.apis.get(&tool.route.api).unwrap_or(&defaults);
        let configured = settings
            .tool_timeouts
            .get(name)
            .copied()
            .unwrap_or(settings.timeout);
        let timeout = tool
            .route
            .timeout
            .map_or(configured, |limit| limit.over(configured));
        if let Some(answer) = &tool.route.mock {
            let mocked =
                crate::mock::respond::answer(tool, answer, &request, compiled.mock_body(tool));
            let reason = reqwest::StatusCode::from_u16(mocked.status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("")
                .to_string();
            let http = HttpResponse {
                status: mocked.status,
                reason: &reason,
                content_type: mocked.content_type.as_deref(),
                body: &mocked.body,
                omitted: 0,
            };
            let shape = response::Shape {
                output: tool.route.output.as_ref(),
                fields: &tool.route.response_fields,
                bare: context.bare_structured,
            };
            let mut stats = CallStats::new(api, Outcome::of_status(mocked.status));
            stats.status = Some(mocked.status);
            stats.bytes_sent = request.body.as_ref().map_or(0, |b| b.len() as u64);
            stats.bytes_received = mocked.body.len() as u64;
            return Ok(Called {
                result: response::to_result(api, &http, &shape, &|value| {
                    compiled.check_output(value)
                }),
                stats,
            });
        }
        if let Err(problem) = self.auth.forward(api, context, &mut request) {
            return Ok(refused(
                Outcome::ToolError,
                format!(
                    "Cannot build the request for tool \"{name}\"; no request was sent: {problem}"
                ),
            ));
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
        let exchange = self.auth.authorized(
            api,
            &tool.route.security,
            request,
            |request| async {
                let received = self
                    .exchange(tool, &request, settings, timeout, &wire)
                    .await;
                (request, received)
            },
            |received| received.status,
        );
        let mut stats = CallStats::new(api, Outcome::Ok);
        let result = match tokio::time::timeout(timeout, exchange).await {
            Ok(Err(problem)) => {
                stats.outcome = Outcome::ToolError;
                ToolResult::error(format!(
                    "Cannot authenticate tool \"{name}\"; no request was sent: {problem}"
                ))
            }
            Ok(Ok(Ok(Received {
                status,
                reason,
                wire,
                undecodable: Some(why),
                ..
            }))) => {
                stats.outcome = Outcome::of_status(status);
                stats.status = Some(status);
                stats.bytes_received = wire;
                let answered = format!(
                    "upstream API \"{api}\" answered {} {} with {status} {reason}",
                    tool.route.method, tool.route.path,
                );
                ToolResult::error(match why {
                    Undecodable::Unknown(encoding) => format!(
                        "{answered} and Content-Encoding \"{encoding}\", which restmcp cannot \
                         decode (it asks for {}); the body was not read.",
                        decode::ACCEPT_ENCODING
                    ),
                    Undecodable::Failed(error) => format!("{answered}, but {error}."),
                })
            }
            Ok(Ok(Ok(received))) => {
                stats.outcome = Outcome::of_status(received.status);
                stats.status = Some(received.status);
                stats.bytes_received = received.wire;
                let http = HttpResponse {
                    status: received.status,
                    reason: &received.reason,
                    content_type: received.content_type.as_deref(),
                    body: &received.body,
                    omitted: received.omitted,
                };
                let shape = response::Shape {
                    output: tool.route.output.as_ref(),
                    fields: &tool.route.response_fields,
                    bare: context.bare_structured,
                };
                let mut result =
                    response::to_result(api, &http, &shape, &|value| compiled.check_output(value));
                if let Some(note) = received.note(api) {
                    append_note(&mut result, note);
                }
                result
            }
            Ok(Ok(Err(failure))) => {
                stats.outcome = Outcome::Unreachable;
                ToolResult::error(format!(
                    "upstream API \"{api}\" could not be reached for {} {}: {failure}",
                    tool.route.method, tool.route.path
                ))
            }
            Err(_) => {
                stats.outcome = Outcome::Timeout;
                ToolResult::error(format!(
                    "upstream API \"{api}\" did not answer {} {} within {} s; the call was abandoned",
                    tool.route.method,
                    tool.route.path,
                    timeout.as_secs_f64()
                ))
            }
        };
        let wire = wire.into_inner().unwrap_or_else(|p| p.into_inner());
        stats.attempts = wire.attempts;
        stats.upstream = wire.started.map(|started| started.elapsed());
        if stats.attempts > 0 {
            stats.bytes_sent = bytes_sent * u64::from(stats.attempts);
        }
        Ok(Called { result, stats })
    }

    /// Sends the request (with retries where they are safe) and reads the response.
    async fn exchange(
        &self,
        tool: &Tool,
        request: &HttpRequest,
        settings: &UpstreamSettings,
        timeout: Duration,
        wire: &Mutex<Wire>,
    ) -> Result<Received, String> {
        let started = Instant::now();
        let retryable = tool.route.method.is_idempotent();
        let mut attempt = 0;
        loop {
            {
                let mut wire = wire.lock().unwrap_or_else(|p| p.into_inner());
                wire.started.get_or_insert(started);
                wire.attempts += 1;
            }
            let outcome = self.send(tool, request, settings.compression).await;
            let wait = match &outcome {
                // A wait longer than MAX_RETRY_WAIT is not shortened: the error quotes it.
                Ok(response) if retryable && matches!(response.status().as_u16(), 429 | 503) => {
                    match retry_after(response) {
                        Some(asked) if asked > MAX_RETRY_WAIT => None,
                        asked => Some(asked.unwrap_or(backoff(attempt))),
                    }
                }
                Err(error) if retryable && error.is_connect() => Some(backoff(attempt)),
                // A pooled connection the upstream closed just as it was reused: at once,
                // on a new connection.
                Err(error) if retryable && closed_before_answer(error) => Some(Duration::ZERO),
                _ => None,
            };
            let remaining = timeout.saturating_sub(started.elapsed());
            match wait {
                Some(wait) if attempt < settings.max_retries && wait < remaining => {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                }
                _ => {
                    let response = outcome.map_err(|e| http_client::describe_error(&e))?;
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
    ) -> Result<reqwest::Response, reqwest::Error> {
        let method = reqwest::Method::from_bytes(request.method.as_str().as_bytes())
            .unwrap_or(reqwest::Method::GET);
        let mut builder = self.client.request(method, &request.url);
        let (mut accept, mut accept_encoding) = (false, false);
        for (name, value) in &request.headers {
            accept |= name.eq_ignore_ascii_case("accept");
            accept_encoding |= name.eq_ignore_ascii_case("accept-encoding");
            builder = builder.header(name, value);
        }
        if !accept {
            builder = builder.header(reqwest::header::ACCEPT, tool.route.accept.as_str());
        }
        if compression && !accept_encoding {
            builder = builder.header(
                reqwest::header::ACCEPT_ENCODING,
                reqwest::header::HeaderValue::from_static(decode::ACCEPT_ENCODING),
            );
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        builder.send().await
    }
}

/// What the exchange recorded, kept outside it so a timeout still reports it.
#[derive(Default)]
struct Wire {
    started: Option<Instant>,
    attempts: u32,
}

/// A response read up to the cap.
struct Received {
    status: u16,
    reason: String,
    content_type: Option<String>,
    body: Vec<u8>,
    omitted: u64,
    /// The body's size on the wire (its encoded size when compressed): the bytes read, or
    /// the `Content-Length` when reading stopped early.
    wire: u64,
    /// Why the body cannot be given (an encoding restmcp does not know, a corrupt or
    /// bomb-like compressed body); `body` is then empty.
    undecodable: Option<Undecodable>,
    /// Where a redirect that was not followed leads, resolved against the request URL.
    location: Option<url::Url>,
    /// The origin the request went to last.
    origin: String,
    /// `Retry-After` of a 429 or 503, as sent.
    retry_after: Option<String>,
}

impl Received {
    /// What a model needs to act on an error the status alone does not explain.
    fn note(&self, api: &str) -> Option<String> {
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
        let wait = self.retry_after.as_deref()?;
        Some(format!(
            "The upstream asked to wait before retrying: Retry-After: {wait}."
        ))
    }
}

/// A compressed body that cannot be given.
enum Undecodable {
    /// The `Content-Encoding`, as sent: restmcp does not decode it (the body was not read).
    Unknown(String),
    Failed(DecodeError),
}

/// Adds a sentence to the first text of an error result.
fn append_note(result: &mut ToolResult, note: String) {
    if let Some(Content::Text { text }) = result.content.first_mut() {
        text.push('\n');
        text.push_str(&note);
    }
}

/// Reads at most `cap` bytes (decoded bytes, for a compressed body). Past the cap the rest
/// is drained only to count it, and only up to 16 times the cap: beyond that the count is
/// a lower bound and reading stops.
async fn read(mut response: reqwest::Response, cap: u64) -> Result<Received, String> {
    let status = response.status();
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let content_type = header(reqwest::header::CONTENT_TYPE);
    let coding = header(reqwest::header::CONTENT_ENCODING).map_or(Ok(None), |e| Coding::parse(&e));
    let location = status
        .is_redirection()
        .then(|| header(reqwest::header::LOCATION))
        .flatten()
        .and_then(|l| response.url().join(&l).ok());
    let retry_after = matches!(status.as_u16(), 429 | 503)
        .then(|| header(reqwest::header::RETRY_AFTER))
        .flatten()
        .map(|v| v.chars().take(64).collect());
    let origin = response.url().origin().ascii_serialization();
    let mut received = Received {
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
    };
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
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| http_client::describe_error(&e))?
    {
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

/// [`read`] for a compressed body: decoded as it arrives, the cap and the counting limit
/// applying to the decoded bytes (`Content-Length` gives only the encoded size), and the
/// decoder's ratio limit stopping a bomb at once.
async fn read_encoded(
    mut response: reqwest::Response,
    mut received: Received,
    coding: Coding,
    cap: u64,
    declared: Option<u64>,
) -> Result<Received, String> {
    let mut decoder = Decoder::new(coding, cap);
    let mut wire: u64 = 0;
    let mut complete = true;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| http_client::describe_error(&e))?
    {
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
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let seconds: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds))
}

/// The request failed, before any answer came, because the connection closed or was
/// reset under it. That is what a keep-alive connection meets when the upstream closes it
/// just as it is reused (Node.js servers close idle connections after 5 s, gunicorn after
/// 2 s, while the pool keeps them for 90 s); seen against Prism. Nothing was answered, so
/// an idempotent request may go again on a new connection (RFC 9110 §9.2.2).
fn closed_before_answer(error: &reqwest::Error) -> bool {
    if !error.is_request() || error.is_timeout() || error.is_body() || error.is_decode() {
        return false;
    }
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        if inner
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
        {
            return true;
        }
        if let Some(io) = inner.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            )
        {
            return true;
        }
        source = inner.source();
    }
    false
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100 * 2u64.pow(attempt.min(6)))
}

/// The upstream client: pooled, keep-alive, no automatic decompression (restmcp decodes
/// itself, within its limits: [`super::decode`]), and redirects followed only within the same
/// origin or to the origins an API lists (`allowed`, keyed by the API's own origin), so an
/// upstream cannot send a call (and its credentials) to another host.
fn upstream_client(allowed: HashMap<String, Vec<String>>) -> Result<reqwest::Client, String> {
    http_client::install_crypto_provider();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let start = attempt
            .previous()
            .first()
            .map(|first| first.origin().ascii_serialization());
        let next = attempt.url().origin().ascii_serialization();
        let permitted = start.as_ref().is_some_and(|start| {
            *start == next || allowed.get(start).is_some_and(|list| list.contains(&next))
        });
        if permitted && attempt.previous().len() < 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest::Client::builder()
        .user_agent(http_client::USER_AGENT)
        .redirect(policy)
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .map_err(|e| format!("cannot start the upstream HTTP client: {e}"))
}
