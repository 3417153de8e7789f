//! One tool call end to end: validate the arguments, honour the tool's rate limit, build
//! the request, hand it to the API's [`Exchange`] (the HTTP client, or the mock plugged in
//! for an API in mock mode) within the tool's time limit, and map the answer to a result.
//! Every failure on the way is a [`ToolResult`] with `is_error`, worded for the model here.
//!
//! The call future can be dropped at any point (a cancelled MCP request): the exchange is
//! dropped with it, and nothing else is left running.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::auth::Authenticator;
use super::called::{CallOutcome, CallStats, Called, UnknownTool};
use super::context::{CallContext, Severity};
use super::decode;
use super::exchange::{Exchange, Exchanged, Failure, Outgoing, Received, Undecodable};
use super::operation::{self, Pending, Polled};
use super::paging;
use super::rate_limit::Limited;
use super::request;
use super::response::{self, HttpResponse};
use super::settings::UpstreamSettings;
use super::validate::Validators;
use super::wire::HttpExchange;
use super::{Content, ToolResult};
use crate::catalog::{Catalog, ToolLimit};
use crate::config::Config;

/// Calls tools of one catalog.
pub struct Dispatcher {
    pub(super) catalog: Arc<Catalog>,
    pub(super) validators: Arc<Validators>,
    apis: HashMap<String, UpstreamSettings, foldhash::fast::RandomState>,
    /// The exchange of every API not plugged in otherwise.
    http: HttpExchange,
    /// APIs answered by another exchange (the mock upstream).
    exchanges: HashMap<String, Arc<dyn Exchange>, foldhash::fast::RandomState>,
    pub(super) auth: Arc<Authenticator>,
    /// Token buckets of the tools that have a rate limit: one shared by the callers
    /// without an identity, and one per caller (by pseudonym), made on first call.
    buckets: HashMap<String, Limited, foldhash::fast::RandomState>,
    /// [`Dispatcher::longest_time_limit`], worked out when first asked.
    longest: std::sync::OnceLock<Duration>,
}

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
                    credential_origins: api
                        .base_url
                        .iter()
                        .filter_map(|base| url::Url::parse(base).ok())
                        .map(|base| base.origin().ascii_serialization())
                        .chain(
                            api.credential_origins
                                .iter()
                                .filter_map(|origin| crate::config::parse_origin(origin).ok()),
                        )
                        .collect(),
                    compression: api.compression,
                    max_result_tokens: api.max_result_tokens,
                    max_page_size: api.max_page_size,
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
        let apis: HashMap<_, _, foldhash::fast::RandomState> = apis.into_iter().collect();
        let buckets = catalog
            .tools()
            .iter()
            .filter_map(|tool| {
                let settings = apis.get(&tool.route.api)?;
                let limit = settings
                    .tool_rate_limits
                    .get(&tool.name)
                    .or(settings.rate_limit.as_ref())?;
                Some((tool.name.clone(), Limited::new(limit)))
            })
            .collect();
        Ok(Dispatcher {
            validators: Arc::new(Validators::new(catalog.len())),
            http: HttpExchange::new(&catalog, &apis)?,
            exchanges: HashMap::default(),
            catalog,
            apis,
            auth: Arc::new(Authenticator::default()),
            buckets,
            longest: std::sync::OnceLock::new(),
        })
    }

    /// Replaces the credentials (and header forwarding) the dispatcher uses.
    pub fn with_authenticator(mut self, auth: Authenticator) -> Dispatcher {
        let auth = Arc::new(auth);
        self.http = self.http.with_authenticator(Arc::clone(&auth));
        self.auth = auth;
        self
    }

    /// Sends the calls of API `api` through `exchange` instead of the HTTP client (the mock
    /// upstream, for an API in mock mode). Results are mapped and redacted as for any API.
    pub fn with_exchange(mut self, api: &str, exchange: Arc<dyn Exchange>) -> Dispatcher {
        self.exchanges.insert(api.to_string(), exchange);
        self
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// `text` with every secret this dispatcher knows replaced (credentials, and hidden
    /// arguments' values read from the environment), for texts shown outside a result.
    pub fn redact(&self, text: &str) -> String {
        self.auth.redact(text)
    }

    /// The context of a call that came with the HTTP `headers`: its trace context and the
    /// headers some API forwards (the others are not copied).
    pub fn context_of(&self, headers: &reqwest::header::HeaderMap) -> CallContext {
        CallContext::from_headers_kept(headers, |name| self.auth.forwards(name))
    }

    /// Compiles the validators of the catalog's small tools in the background, so their
    /// first calls do not pay for it ([`Validators::warm`]); the snapshot being served
    /// calls this once.
    pub fn warm(&self) {
        self.validators.warm(Arc::clone(&self.catalog));
    }

    /// Whether the validators of tool `name` are compiled already.
    pub fn is_compiled(&self, name: &str) -> bool {
        self.catalog
            .index_of(name)
            .is_some_and(|index| self.validators.is_compiled(index))
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
        if let Some(tool) = self.catalog.get(name)
            && let Some(plan) = &tool.workflow
        {
            return Ok(Box::pin(self.run_workflow(tool, plan, arguments, context)).await);
        }
        Ok(match self.prepare(name, arguments)? {
            Prepared::Ready(ready) => self.send(ready, context).await,
            Prepared::Refused(called) => called,
        })
    }

    /// The first half of a call: checks the arguments against the tool's schema and builds
    /// the request, sending nothing. A [`Ready`] call is what a human confirming it is shown
    /// ([`Ready::preview`]); [`Dispatcher::send`] sends it.
    pub fn prepare(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Prepared<'_>, UnknownTool> {
        let Some(index) = self.catalog.index_of(name) else {
            return Err(UnknownTool(name.to_string()));
        };
        let tool = &self.catalog.tools()[index];
        let Some(compiled) = self.validators.get(index, tool) else {
            return Err(UnknownTool(name.to_string()));
        };
        let api = tool.route.api.as_str();
        let refused = |text: String| {
            Prepared::Refused(Called {
                operation: None,
                result: ToolResult::error(text),
                stats: CallStats::new(api, CallOutcome::ToolError),
            })
        };
        // A workflow sends no request of its own (`Dispatcher::run_workflow` runs it).
        if tool.workflow.is_some() {
            return Ok(refused(format!(
                "Tool \"{name}\" runs a workflow, which is not one request; no request was sent."
            )));
        }
        let mut arguments = arguments;
        let violations = compiled.check_argument_map(&mut arguments);
        if !violations.is_empty() {
            return Ok(refused(format!(
                "Invalid arguments for tool \"{name}\"; no request was sent:\n- {}",
                violations.join("\n- ")
            )));
        }
        for binding in &tool.route.arguments.bindings {
            if let Some(fixed) = &binding.fixed {
                arguments.insert(binding.argument.clone(), fixed.value());
            } else if let Some(default) = &binding.default
                && !arguments.contains_key(&binding.argument)
            {
                arguments.insert(binding.argument.clone(), default.clone());
            }
        }
        // Paging parameters are looked for only when a page size is to be clamped here, or
        // (in `send`) when an answer is over the result budget: most calls need neither.
        let clamped = self
            .apis
            .get(api)
            .and_then(|s| s.max_page_size)
            .and_then(|max| paging::Paging::of(&tool.route, &arguments).clamp(&mut arguments, max));
        match request::build(&tool.route, &arguments) {
            Ok(mut request) => {
                // A non-idempotent operation with an idempotency header always sends a key:
                // the model's, else a fresh one (which makes retrying it safe).
                let idempotency_key = tool.route.idempotency.as_ref().and_then(|idempotency| {
                    let given = arguments
                        .get(&idempotency.argument)
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    request::set_default_header(
                        &mut request.headers,
                        &idempotency.header,
                        given.clone().unwrap_or_else(generated_key),
                    );
                    given
                });
                Ok(Prepared::Ready(Ready {
                    tool,
                    compiled,
                    request,
                    idempotency_key,
                    arguments,
                    clamped,
                }))
            }
            Err(problem) => Ok(refused(format!(
                "Cannot build the request for tool \"{name}\"; no request was sent: {problem}"
            ))),
        }
    }

    /// The second half of a call: the tool's rate limit, then the request goes to the
    /// upstream (or the mock) and its answer is mapped to a result, with every secret
    /// redacted. A long-running operation it starts is waited for within the tool's time
    /// limit; one still going then is in [`Called::operation`].
    pub async fn send(&self, ready: Ready<'_>, context: &CallContext) -> Called {
        self.send_as(ready, context, LongRunning::Wait).await
    }

    /// [`Dispatcher::send`], saying what becomes of a long-running operation the request
    /// starts.
    pub async fn send_as(
        &self,
        ready: Ready<'_>,
        context: &CallContext,
        long_running: LongRunning,
    ) -> Called {
        let mut called = self.send_unredacted(ready, context, long_running).await;
        called.result = self.auth.redact_result(called.result);
        called
    }

    /// Looks once at a long-running operation a call of tool `name` started (and, when it
    /// ended, reads its result): still running, or the call's result as if it had been
    /// waited for, redacted. Nothing is remembered between looks.
    pub async fn resume(
        &self,
        name: &str,
        pending: Pending,
        context: &CallContext,
    ) -> Result<Resumed, UnknownTool> {
        let unknown = || UnknownTool(name.to_string());
        let index = self.catalog.index_of(name).ok_or_else(unknown)?;
        let tool = &self.catalog.tools()[index];
        let compiled = self.validators.get(index, tool).ok_or_else(unknown)?;
        let (settings, timeout) = self.settings_of(tool);
        let exchange = match self.exchange_of(tool) {
            Ok(exchange) => exchange,
            Err(result) => {
                let called = Called::unsent(&tool.route.api, result, CallOutcome::ToolError);
                return Ok(Resumed::Done(called));
            }
        };
        let started = Instant::now();
        let mut totals = Exchanged::unsent(Failure::TimedOut);
        let polled = operation::poll(
            exchange,
            (tool, settings, context),
            pending,
            started + timeout,
            &mut totals,
        )
        .await;
        totals.upstream = Some(started.elapsed());
        let failed = match polled {
            Polled::Running(pending) => return Ok(Resumed::Running(pending)),
            Polled::Failed(received, status) => Some((received, status)),
            Polled::Finished(answer) => {
                totals.answer = answer;
                None
            }
        };
        let finish = Finish {
            tool,
            compiled: &compiled,
            settings,
            timeout,
            arguments: &Map::new(),
            called: None,
            followed: true,
            clamped: None,
            context,
        };
        let mut called = self.finish(&finish, totals, failed);
        called.result = self.auth.redact_result(called.result);
        Ok(Resumed::Done(called))
    }

    /// The time limit of a call of `tool`: how long its upstream exchange (retries, and
    /// following an operation the upstream accepted, included) may take.
    pub fn time_limit(&self, tool: &crate::catalog::Tool) -> Duration {
        self.settings_of(tool).1
    }

    /// The longest [`Dispatcher::time_limit`] of any tool of the catalog (the APIs'
    /// defaults when it has none).
    pub fn longest_time_limit(&self) -> Duration {
        *self.longest.get_or_init(|| {
            let defaults = self.apis.values().map(|settings| settings.timeout);
            self.catalog
                .tools()
                .iter()
                .map(|tool| self.time_limit(tool))
                .chain(defaults)
                .max()
                .unwrap_or(UpstreamSettings::default().timeout)
        })
    }

    /// The most a result of `tool` may hold, in bytes of compact JSON (its
    /// `max_result_tokens`); `None` when it has no budget.
    pub fn result_budget_bytes(&self, tool: &crate::catalog::Tool) -> Option<u64> {
        let budget = result_budget(tool, self.settings_of(tool).0);
        (budget > 0).then(|| budget.saturating_mul(paging::BYTES_PER_TOKEN))
    }

    /// The API settings tool `tool` is called with, and its time limit.
    fn settings_of(&self, tool: &crate::catalog::Tool) -> (&UpstreamSettings, Duration) {
        static DEFAULTS: std::sync::OnceLock<UpstreamSettings> = std::sync::OnceLock::new();
        let settings = self
            .apis
            .get(&tool.route.api)
            .unwrap_or_else(|| DEFAULTS.get_or_init(UpstreamSettings::default));
        let configured = settings
            .tool_timeouts
            .get(&tool.name)
            .copied()
            .unwrap_or(settings.timeout);
        let timeout = tool
            .route
            .timeout
            .map_or(configured, |limit| limit.over(configured));
        (settings, timeout)
    }

    /// The exchange tool `tool`'s requests go through; when there is none, the result
    /// saying why.
    fn exchange_of(&self, tool: &crate::catalog::Tool) -> Result<&dyn Exchange, ToolResult> {
        match self.exchanges.get(tool.route.api.as_str()) {
            Some(plugged) => Ok(plugged.as_ref()),
            // The catalog answers this tool from the spec, but whoever built this dispatcher
            // did not plug the mock in (`crate::mock::plug`): say so rather than send the
            // request to the mock's placeholder host.
            None if tool.route.mock.is_some() => Err(ToolResult::error(format!(
                "Tool \"{}\" is answered by the mock upstream, which is not plugged in here; \
                 no request was sent.",
                tool.name
            ))),
            None => Ok(&self.http),
        }
    }

    async fn send_unredacted(
        &self,
        ready: Ready<'_>,
        context: &CallContext,
        long_running: LongRunning,
    ) -> Called {
        let Ready {
            tool,
            compiled,
            request,
            idempotency_key: _,
            arguments,
            clamped,
        } = ready;
        if let Some(refused) = self.rate_limited(tool, context) {
            return refused;
        }
        let (settings, timeout) = self.settings_of(tool);
        let exchange = match self.exchange_of(tool) {
            Ok(exchange) => exchange,
            Err(result) => {
                return Called::unsent(tool.route.api.as_str(), result, CallOutcome::ToolError);
            }
        };
        let mut request = request;
        if let Some(validators) = &context.conditional {
            request.headers.extend(validators.conditions());
        }
        self.announce(tool, &request, context);
        let started = Instant::now();
        let request_url = request.url.clone();
        let mut exchanged = exchange
            .exchange(Outgoing {
                tool,
                request,
                settings,
                timeout,
                context,
                bare: false,
            })
            .await;
        // An operation that goes on upstream: waited for within the tool's time limit
        // (progress notifications keep going out meanwhile), or handed back at once.
        let started_operation = exchanged
            .answer
            .as_ref()
            .ok()
            .and_then(|received| Pending::start(tool, &request_url, received));
        let mut failed = None;
        let followed = started_operation.is_some();
        if let Some(pending) = started_operation {
            let polled = match long_running {
                LongRunning::Return => Polled::Running(pending),
                // Boxed: most calls never follow an operation, and their future stays small.
                LongRunning::Wait => {
                    Box::pin(operation::follow(
                        exchange,
                        (tool, settings, context),
                        pending,
                        started + timeout,
                        &mut exchanged,
                    ))
                    .await
                }
            };
            exchanged.upstream = Some(started.elapsed());
            match polled {
                Polled::Finished(answer) => exchanged.answer = answer,
                Polled::Failed(received, status) => failed = Some((received, status)),
                Polled::Running(pending) => {
                    return still_running(tool, pending, long_running, &exchanged);
                }
            }
        }
        let finish = Finish {
            tool,
            compiled: &compiled,
            settings,
            timeout,
            arguments: &arguments,
            called: Some(&request_url),
            followed,
            clamped,
            context,
        };
        self.finish(&finish, exchanged, failed)
    }

    /// Tells who follows the call the request about to go out: the call's log (method and
    /// URL, redacted) and the console's recorder (the request as built).
    fn announce(
        &self,
        tool: &crate::catalog::Tool,
        request: &request::HttpRequest,
        context: &CallContext,
    ) {
        context.say(Severity::Debug, || {
            let body = request
                .body
                .as_ref()
                .map(|b| format!(" with a {} byte body", b.len()))
                .unwrap_or_default();
            format!(
                "tool {}: sending {} {}{body}",
                tool.name,
                request.method,
                self.redact(&request.url)
            )
        });
        if let Some(sent) = &context.sent {
            sent.built(request);
        }
    }

    /// The refusal of a call over its tool's rate limit (per caller), when it is.
    fn rate_limited(&self, tool: &crate::catalog::Tool, context: &CallContext) -> Option<Called> {
        let name = tool.name.as_str();
        let limited = self.buckets.get(name)?;
        let caller = Some(context.pseudonym()).filter(|name| !name.is_empty());
        let wait = limited.take(caller, Instant::now()).err()?;
        Some(Called::unsent(
            tool.route.api.as_str(),
            ToolResult::error(format!(
                "Tool \"{name}\" is rate-limited; no request was sent. Retry in {:.1} s.",
                wait.as_secs_f64().max(0.1)
            )),
            CallOutcome::RateLimited,
        ))
    }

    /// Maps the answer `exchanged` holds (or why there is none) to the call's result, with
    /// what went over the wire; `failed`, when set, is an operation the upstream says
    /// failed (its monitor's answer and status), which is reported instead.
    fn finish(
        &self,
        finish: &Finish<'_>,
        exchanged: Exchanged,
        failed: Option<(Box<Received>, String)>,
    ) -> Called {
        let Exchanged {
            answer,
            attempts,
            upstream,
            bytes_sent,
        } = exchanged;
        let mut stats = CallStats::new(finish.tool.route.api.as_str(), CallOutcome::Ok);
        if let (Some(sent), Ok(received)) = (&finish.context.sent, &answer)
            && sent.wants_answers()
        {
            let answer = super::Response {
                status: received.status,
                headers: Vec::new(),
                content_type: received.content_type.clone(),
                body: received.body.clone(),
            };
            sent.answer_body(answer, received.retry_after.as_deref());
        }
        let result = match (failed, answer) {
            // The operation ended badly upstream: the monitor's answer says how.
            (Some((received, status)), _) => {
                operation_failed(finish.tool, &received, &status, &mut stats)
            }
            (None, Ok(mut received)) => match received.undecodable.take() {
                Some(why) => undecodable(finish.tool, &received, why, &mut stats),
                None => answered(finish, &received, &mut stats),
            },
            (None, Err(failure)) => failure_result(finish, failure, &mut stats),
        };
        stats.attempts = attempts;
        stats.upstream = upstream;
        stats.bytes_sent = bytes_sent;
        if let Some(sent) = &finish.context.sent {
            sent.answered(stats.status, stats.upstream, stats.attempts);
        }
        if finish.context.log.is_some() {
            tell_outcome(finish, &stats, &result, &|text| self.redact(text));
        }
        Called {
            result,
            stats,
            operation: None,
        }
    }
}

/// Tells the call's log how the upstream answered and how the answer was mapped.
fn tell_outcome(
    finish: &Finish<'_>,
    stats: &CallStats,
    result: &ToolResult,
    redact: &dyn Fn(&str) -> String,
) {
    let context = finish.context;
    let api = &finish.tool.route.api;
    let waited = stats
        .upstream
        .map(|d| format!(" in {} ms", d.as_millis()))
        .unwrap_or_default();
    let tries = match stats.attempts {
        0 | 1 => String::new(),
        n => format!(", after {n} attempts"),
    };
    match stats.status {
        Some(status) => {
            let severity = if status >= 500 {
                Severity::Warning
            } else {
                Severity::Info
            };
            context.say(severity, || {
                format!(
                    "upstream API \"{api}\" answered {status}{waited}{tries} ({} bytes, {})",
                    stats.bytes_received,
                    stats.media_type.as_deref().unwrap_or("no media type")
                )
            });
        }
        None => context.say(Severity::Warning, || {
            format!("upstream API \"{api}\" gave no answer{waited}{tries}")
        }),
    }
    context.say(Severity::Debug, || {
        let structured = if result.has_structured() {
            " and structured content"
        } else {
            ""
        };
        format!(
            "mapped to {} content block(s){structured}{}",
            result.content.len(),
            if result.is_error { ", as an error" } else { "" }
        )
    });
    // What the mapping added after the answer itself: truncation, paging, redirects.
    for note in result.content.iter().skip(1) {
        if let Content::Text { text } = note {
            context.say(Severity::Notice, || redact(text));
        }
    }
}

/// A call whose operation goes on upstream: handed back at once (`LongRunning::Return`),
/// or still running when the tool's time limit ran out; the result says where its status is.
fn still_running(
    tool: &crate::catalog::Tool,
    pending: Pending,
    long_running: LongRunning,
    exchanged: &Exchanged,
) -> Called {
    let (name, api) = (tool.name.as_str(), tool.route.api.as_str());
    let (text, outcome) = match long_running {
        LongRunning::Return => (
            format!("upstream API \"{api}\" accepted the operation; it goes on upstream."),
            CallOutcome::Ok,
        ),
        LongRunning::Wait => (
            format!(
                "upstream API \"{api}\" accepted the operation, and it was still {} when tool \
                 \"{name}\"'s time limit ran out; it goes on upstream. Its status is at {}. \
                 Raise apis.{api}.tool_timeouts.{name} to wait longer.",
                pending.status,
                pending.monitor.as_str(),
            ),
            CallOutcome::Timeout,
        ),
    };
    let mut stats = CallStats::new(api, outcome);
    stats.status = Some(202);
    stats.attempts = exchanged.attempts;
    stats.upstream = exchanged.upstream;
    stats.bytes_sent = exchanged.bytes_sent;
    Called {
        result: ToolResult::error(text),
        stats,
        operation: Some(Box::new(pending)),
    }
}

/// The result of an operation the upstream accepted and then says failed: its monitor's
/// answer (`received`), quoted up to [`MAX_FAILED_BODY`] characters, and its `status`.
fn operation_failed(
    tool: &crate::catalog::Tool,
    received: &Received,
    status: &str,
    stats: &mut CallStats,
) -> ToolResult {
    stats.outcome = CallOutcome::Upstream5xx;
    stats.status = Some(received.status);
    stats.bytes_received = received.wire;
    let body = String::from_utf8_lossy(&received.body);
    let shown: String = body.chars().take(MAX_FAILED_BODY).collect();
    let more = if shown.len() < body.len() { " …" } else { "" };
    ToolResult::error(format!(
        "upstream API \"{}\" accepted {} {}, and the operation then ended as \"{status}\": \
         {shown}{more}",
        tool.route.api, tool.route.method, tool.route.path
    ))
}

/// The result of an answer whose body could not be decoded (`why`).
fn undecodable(
    tool: &crate::catalog::Tool,
    received: &Received,
    why: Undecodable,
    stats: &mut CallStats,
) -> ToolResult {
    let (status, reason) = (received.status, &received.reason);
    stats.outcome = CallOutcome::of_status(status);
    stats.status = Some(status);
    stats.bytes_received = received.wire;
    let answered = format!(
        "upstream API \"{}\" answered {} {} with {status} {reason}",
        tool.route.api, tool.route.method, tool.route.path,
    );
    ToolResult::error(match why {
        Undecodable::Unknown(encoding) => format!(
            "{answered} and Content-Encoding \"{encoding}\", which restmcp cannot decode (it \
             asks for {}); the body was not read.",
            decode::ACCEPT_ENCODING
        ),
        Undecodable::Failed(error) => format!("{answered}, but {error}."),
    })
}

/// The result of the upstream's answer: the response mapped to a result (paged when over
/// the tool's budget), with the notes it needs (how the answer came, its next page, a
/// clamped page size).
fn answered(finish: &Finish<'_>, received: &Received, stats: &mut CallStats) -> ToolResult {
    let tool = finish.tool;
    let api = tool.route.api.as_str();
    stats.outcome = CallOutcome::of_status(received.status);
    stats.status = Some(received.status);
    stats.bytes_received = received.wire;
    stats.media_type = received.content_type.clone();
    stats.validators = received.validators.clone();
    let http = HttpResponse {
        status: received.status,
        reason: &received.reason,
        content_type: received.content_type.as_deref(),
        body: &received.body,
        omitted: received.omitted,
    };
    let budget = result_budget(tool, finish.settings);
    let max_bytes = budget.saturating_mul(paging::BYTES_PER_TOKEN);
    // Only an answer longer than the budget can be over it (see `Shape::bound`).
    let paging = (budget > 0 && received.body.len() as u64 > max_bytes)
        .then(|| paging::Paging::of(&tool.route, finish.arguments));
    let shape = response::Shape {
        output: tool.route.output.as_ref(),
        fields: &tool.route.response_fields,
        bare: finish.context.bare_structured,
        bound: paging.as_ref().map(|paging| (max_bytes, paging)),
        from_text: finish.context.structured_from_text,
    };
    let compiled = finish.compiled;
    let mut result = response::to_result(api, &http, &shape, &|tape| compiled.check_answer(tape));
    if let Some(note) = received.note(api) {
        append_note(&mut result, note);
    }
    if finish.followed && result.is_error {
        append_note(
            &mut result,
            "This answer came while following an operation the API had accepted; calling the \
             tool again would start another one."
                .to_string(),
        );
    }
    // Within the budget, a next page the API names in its `Link` header, as the arguments
    // that fetch it (an answer over it says what to call instead).
    if paging.is_none()
        && !result.is_error
        && let Some(next) = next_page_link(tool, finish.called, received)
    {
        result.content.push(Content::Text { text: next });
    }
    if let Some(clamped) = &finish.clamped {
        result.content.push(Content::Text {
            text: clamped.clone(),
        });
    }
    result
}

/// The result of a call that got no answer: why (nothing sent, refused, unreachable,
/// timed out).
fn failure_result(finish: &Finish<'_>, failure: Failure, stats: &mut CallStats) -> ToolResult {
    let tool = finish.tool;
    let (name, api) = (tool.name.as_str(), tool.route.api.as_str());
    let (method, path) = (&tool.route.method, &tool.route.path);
    let (outcome, text) = match failure {
        Failure::Unbuildable(problem) => (
            CallOutcome::ToolError,
            format!("Cannot build the request for tool \"{name}\"; no request was sent: {problem}"),
        ),
        Failure::Unauthenticated(problem) => (
            CallOutcome::ToolError,
            format!("Cannot authenticate tool \"{name}\"; no request was sent: {problem}"),
        ),
        Failure::Refused(problem) => (
            CallOutcome::ToolError,
            format!("upstream API \"{api}\" accepted {method} {path}, then {problem}"),
        ),
        Failure::Unreachable(failure) => (
            CallOutcome::Unreachable,
            format!("upstream API \"{api}\" could not be reached for {method} {path}: {failure}"),
        ),
        Failure::TimedOut => (
            CallOutcome::Timeout,
            format!(
                "upstream API \"{api}\" did not answer {method} {path} within {} s; the call was \
                 abandoned",
                finish.timeout.as_secs_f64()
            ),
        ),
    };
    stats.outcome = outcome;
    ToolResult::error(text)
}

/// The sentence giving the arguments of the next page a `Link: rel="next"` of `received`
/// names, when the tool can ask for it.
fn next_page_link(
    tool: &crate::catalog::Tool,
    called: Option<&str>,
    received: &Received,
) -> Option<String> {
    // Most answers have no Link header: nothing is parsed for them.
    let link = received.link.as_deref()?;
    let called = url::Url::parse(called?).ok()?;
    let next = paging::link_next(link, &called)?;
    let input = tool.input_schema.to_value();
    let arguments = paging::next_from_link(&tool.route, &input, &called, &next)?;
    Some(format!(
        "More results follow (the API's Link: rel=\"next\"): call {} again with the same \
         arguments and {}.",
        tool.name,
        Value::Object(arguments)
    ))
}

/// What becomes of a long-running operation a call starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongRunning {
    /// Waited for within the tool's time limit.
    Wait,
    /// Handed back at once in [`Called::operation`] (the client takes tasks).
    Return,
}

/// What [`Dispatcher::resume`] found.
#[derive(Debug)]
pub enum Resumed {
    /// The operation goes on.
    Running(Pending),
    /// It ended: the call's result.
    Done(Called),
}

/// The most of a failed operation's status answer a result shows, in characters.
const MAX_FAILED_BODY: usize = 2000;

/// What mapping an answer to a result needs to know of the call.
struct Finish<'a> {
    tool: &'a crate::catalog::Tool,
    compiled: &'a super::validate::Compiled,
    settings: &'a UpstreamSettings,
    timeout: Duration,
    /// The arguments the request was built from, for paging a result over its budget.
    arguments: &'a Map<String, Value>,
    /// The URL the request went to, which a `Link: rel="next"` is compared with.
    called: Option<&'a str>,
    /// The answer came while following a long-running operation the API had accepted.
    followed: bool,
    clamped: Option<String>,
    context: &'a CallContext,
}

/// A call after [`Dispatcher::prepare`]: ready to send, or refused before anything was.
pub enum Prepared<'d> {
    Ready(Ready<'d>),
    Refused(Called),
}

/// A call whose arguments passed and whose request is built, not yet sent.
pub struct Ready<'d> {
    tool: &'d crate::catalog::Tool,
    compiled: Arc<super::validate::Compiled>,
    request: request::HttpRequest,
    /// The idempotency key the model gave (see [`Ready::idempotency_key`]).
    idempotency_key: Option<String>,
    /// The arguments the request was built from (defaults and fixed values in), for the
    /// paging arguments of a result over its budget.
    arguments: Map<String, Value>,
    /// What lowering a page size to `max_page_size` did, said in the result.
    clamped: Option<String>,
}

/// A fresh idempotency key: a random (version 4) UUID, the form upstreams expect.
fn generated_key() -> String {
    let mut bytes = crate::digest::random::<16>();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = crate::digest::hex(&bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// What a call is about to do, as a human confirming it is shown: the request as built
/// from the arguments, before credentials are added (so no secret is in it).
#[derive(Debug, Clone)]
pub struct Preview<'a> {
    pub api: &'a str,
    pub tool: &'a str,
    pub method: crate::spec::Method,
    pub url: &'a str,
    /// The headers the request carries from its arguments (header and cookie arguments,
    /// the body's `Content-Type`, an idempotency key the model gave), in order: everything
    /// but what the exchange adds later (credentials, forwarded headers, trace context)
    /// and an idempotency key restmcp made up (a new one each time the call is made).
    pub headers: Vec<(&'a str, &'a str)>,
    /// The body and its media type, when the request has one.
    pub body: Option<(&'a str, &'a [u8])>,
    /// For a workflow tool: the plan shown instead of one request (the steps it may run),
    /// with the arguments as the body.
    pub plan: Option<&'a str>,
}

impl Ready<'_> {
    /// Sets header `name` of the request to `value`, replacing one of that name: a
    /// workflow step's header its operation does not declare.
    pub(super) fn set_header(&mut self, name: &str, value: String) {
        self.request
            .headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        self.request.headers.push((name.to_string(), value));
    }

    /// The tool being called.
    pub fn tool(&self) -> &crate::catalog::Tool {
        self.tool
    }

    /// The idempotency key the model gave, for a tool that takes one: a repeat of the call
    /// with it is answered from the stored result. `None` when the key was generated.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// A digest of the request (method, URL, headers other than the idempotency key, body):
    /// what a repeat under the same idempotency key must match.
    pub fn fingerprint(&self) -> String {
        let skipped = self
            .tool
            .route
            .idempotency
            .as_ref()
            .map(|i| i.header.as_str());
        let mut headers: Vec<(String, &str)> = self
            .request
            .headers
            .iter()
            .filter(|(name, _)| skipped.is_none_or(|skip| !name.eq_ignore_ascii_case(skip)))
            .map(|(name, value)| (name.to_ascii_lowercase(), value.as_str()))
            .collect();
        headers.sort();
        let mut parts: Vec<&[u8]> = vec![
            self.request.method.as_str().as_bytes(),
            self.request.url.as_bytes(),
            self.request.body.as_deref().unwrap_or_default(),
        ];
        for (name, value) in &headers {
            parts.push(name.as_bytes());
            parts.push(value.as_bytes());
        }
        crate::digest::hex(&crate::digest::sha256_parts(&parts))
    }

    /// What the call is about to send.
    pub fn preview(&self) -> Preview<'_> {
        let media_type = self
            .request
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            .map_or("application/octet-stream", |(_, value)| value.as_str());
        let generated_key = self
            .tool
            .route
            .idempotency
            .as_ref()
            .filter(|_| self.idempotency_key.is_none())
            .map(|idempotency| idempotency.header.as_str());
        let headers = self
            .request
            .headers
            .iter()
            .filter(|(name, _)| generated_key.is_none_or(|key| !name.eq_ignore_ascii_case(key)))
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        Preview {
            api: &self.tool.route.api,
            tool: &self.tool.name,
            method: self.request.method,
            url: &self.request.url,
            headers,
            body: self.request.body.as_deref().map(|body| (media_type, body)),
            plan: None,
        }
    }
}

/// The most a result of `tool` may hold, in estimated tokens (0: no limit): its own
/// `max_result_tokens` (an overlay's replaces the API's, a spec's only lowers it), else the
/// API's.
fn result_budget(tool: &crate::catalog::Tool, settings: &UpstreamSettings) -> u64 {
    match tool.route.max_result_tokens {
        None => settings.max_result_tokens,
        Some(ToolLimit::Replace(tokens)) => tokens,
        Some(ToolLimit::AtMost(tokens)) if settings.max_result_tokens == 0 => tokens,
        Some(ToolLimit::AtMost(tokens)) => tokens.min(settings.max_result_tokens),
    }
}

/// Adds a sentence to the first text of an error result.
fn append_note(result: &mut ToolResult, note: String) {
    result.unmark();
    if let Some(Content::Text { text }) = result.content.first_mut() {
        text.push('\n');
        text.push_str(&note);
    }
}
