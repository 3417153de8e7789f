//! One tool call end to end: validate the arguments, build the request, send it with the
//! API's timeout and retry rules, read the response up to the size cap, map it to a result.
//! Every failure on the way is a [`ToolResult`] with `is_error`, worded for the model.
//!
//! The call future can be dropped at any point (a cancelled MCP request): reqwest then
//! drops the connection, and nothing else is left running.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::ToolResult;
use super::auth::{Authenticator, CallContext};
use super::request::{self, HttpRequest};
use super::response::{self, HttpResponse};
use super::validate::Validators;
use crate::catalog::{Catalog, Tool};
use crate::config::Config;
use crate::http_client;

/// How one API is called.
#[derive(Debug, Clone)]
pub struct UpstreamSettings {
    pub timeout: Duration,
    pub tool_timeouts: HashMap<String, Duration>,
    pub max_response_bytes: u64,
    pub max_retries: u32,
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        UpstreamSettings {
            timeout: Duration::from_secs(30),
            tool_timeouts: HashMap::new(),
            max_response_bytes: 4 * 1024 * 1024,
            max_retries: 2,
        }
    }
}

/// The tool name is not in the catalog: a protocol error, not a tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool \"{0}\"")]
pub struct UnknownTool(pub String);

/// Calls tools of one catalog.
pub struct Dispatcher {
    catalog: Arc<Catalog>,
    validators: Validators,
    apis: HashMap<String, UpstreamSettings>,
    client: reqwest::Client,
    auth: Authenticator,
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
        Ok(Dispatcher {
            validators: Validators::new(catalog.len()),
            catalog,
            apis,
            client: upstream_client()?,
            auth: Authenticator::default(),
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
        let result = self.call_unredacted(name, arguments, context).await?;
        Ok(self.auth.redact_result(result))
    }

    async fn call_unredacted(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Result<ToolResult, UnknownTool> {
        let Some(index) = self.catalog.index_of(name) else {
            return Err(UnknownTool(name.to_string()));
        };
        let tool = &self.catalog.tools()[index];
        let Some(compiled) = self.validators.get(index, tool) else {
            return Err(UnknownTool(name.to_string()));
        };
        let violations = compiled.check_arguments(&arguments);
        if !violations.is_empty() {
            return Ok(ToolResult::error(format!(
                "Invalid arguments for tool \"{name}\"; no request was sent:\n- {}",
                violations.join("\n- ")
            )));
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
                return Ok(ToolResult::error(format!(
                    "Cannot build the request for tool \"{name}\"; no request was sent: {problem}"
                )));
            }
        };
        let defaults = UpstreamSettings::default();
        let settings = self.apis.get(&tool.route.api).unwrap_or(&defaults);
        let timeout = tool
            .route
            .timeout
            .or_else(|| settings.tool_timeouts.get(name).copied())
            .unwrap_or(settings.timeout);
        let api = tool.route.api.as_str();
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
            };
            return Ok(response::to_result(api, &http, &shape, &|value| {
                compiled.check_output(value)
            }));
        }
        if let Err(problem) = self.auth.forward(api, context, &mut request) {
            return Ok(ToolResult::error(format!(
                "Cannot build the request for tool \"{name}\"; no request was sent: {problem}"
            )));
        }
        let exchange = self.auth.authorized(
            api,
            &tool.route.security,
            request,
            |request| async move {
                let received = self.exchange(tool, &request, settings, timeout).await;
                (request, received)
            },
            |received| received.status,
        );
        let result = match tokio::time::timeout(timeout, exchange).await {
            Ok(Err(problem)) => ToolResult::error(format!(
                "Cannot authenticate tool \"{name}\"; no request was sent: {problem}"
            )),
            Ok(Ok(Ok(received))) => {
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
                };
                response::to_result(api, &http, &shape, &|value| compiled.check_output(value))
            }
            Ok(Ok(Err(failure))) => ToolResult::error(format!(
                "upstream API \"{api}\" could not be reached for {} {}: {failure}",
                tool.route.method, tool.route.path
            )),
            Err(_) => ToolResult::error(format!(
                "upstream API \"{api}\" did not answer {} {} within {} s; the call was abandoned",
                tool.route.method,
                tool.route.path,
                timeout.as_secs_f64()
            )),
        };
        Ok(result)
    }

    /// Sends the request (with retries where they are safe) and reads the response.
    async fn exchange(
        &self,
        tool: &Tool,
        request: &HttpRequest,
        settings: &UpstreamSettings,
        timeout: Duration,
    ) -> Result<Received, String> {
        let started = Instant::now();
        let retryable = tool.route.method.is_idempotent();
        let mut attempt = 0;
        loop {
            let outcome = self.send(request).await;
            let wait = match &outcome {
                Ok(response) if retryable && matches!(response.status().as_u16(), 429 | 503) => {
                    Some(retry_after(response).unwrap_or(backoff(attempt)))
                }
                Err(error) if retryable && error.is_connect() => Some(backoff(attempt)),
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
                        .unwrap_or(settings.max_response_bytes);
                    return read(response, cap).await;
                }
            }
        }
    }

    async fn send(&self, request: &HttpRequest) -> Result<reqwest::Response, reqwest::Error> {
        let method = reqwest::Method::from_bytes(request.method.as_str().as_bytes())
            .unwrap_or(reqwest::Method::GET);
        let mut builder = self.client.request(method, &request.url);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        builder.send().await
    }
}

/// A response read up to the cap.
struct Received {
    status: u16,
    reason: String,
    content_type: Option<String>,
    body: Vec<u8>,
    omitted: u64,
}

/// Reads at most `cap` bytes. Past the cap the rest is drained only to count it, and only
/// up to 16 times the cap: beyond that the count is a lower bound and reading stops.
async fn read(mut response: reqwest::Response, cap: u64) -> Result<Received, String> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let declared = response.content_length();
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
    Ok(Received {
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("").to_string(),
        content_type,
        body,
        omitted,
    })
}

/// `Retry-After` in seconds (RFC 9110 §10.2.3; the HTTP-date form falls back to backoff),
/// capped.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let seconds: u64 = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds).min(MAX_RETRY_WAIT))
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100 * 2u64.pow(attempt.min(6)))
}

/// The upstream client: pooled, keep-alive, no automatic decompression (so a compressed
/// body cannot expand past the cap), and redirects followed only within the same origin,
/// so an upstream cannot send a call (and its credentials) to another host.
fn upstream_client() -> Result<reqwest::Client, String> {
    http_client::install_crypto_provider();
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if same_origin && attempt.previous().len() < 5 {
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
