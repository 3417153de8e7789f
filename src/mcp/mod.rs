//! MCP: the protocol face of restmcp, on the official Rust SDK (`rmcp`). This is the only
//! module that serves with rmcp (only [`crate::selftest`] uses it too, as a client), so the
//! next protocol revision is a contained change.
//!
//! [`McpServer`] is the `ServerHandler`: it lists the catalog's tools shaped for the
//! client's protocol version, and calls them through the [`Dispatcher`]. The tool set
//! lives in a [`Shared`] snapshot that can be replaced at run time; connected clients are
//! told with `notifications/tools/list_changed`. [`stdio`], [`http`] (Streamable HTTP) and
//! [`sse`] (the legacy HTTP+SSE transport) are the transports. [`sessions`] bounds what
//! rmcp leaves unbounded: it caps Streamable HTTP sessions (evicting the one idle the
//! longest) and expires idle ones itself, since rmcp's idle timer never sees the calls
//! answered directly, and caps long-lived event streams. [`sizes`] keeps every message
//! within what the clients on each transport accept (`tools/list` pages by bytes, large
//! results cut to fit).

pub mod admission;
mod direct;
mod front;
pub mod http;
mod jsonrpc;
mod listed;
pub mod sessions;
pub mod sizes;
pub mod sse;
pub mod stdio;
pub mod view;

use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, RequestId,
    ServerCapabilities, ServerConfig, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};

use crate::catalog::{Catalog, SchemaText};
use crate::discovery::{Action, Discovery};
use crate::telemetry::metrics::{CallRecord, Metrics};
use crate::telemetry::trace::{self, TraceContext};
use crate::upstream::{CallContext, CallOutcome, CallStats, Content, Dispatcher, ToolResult};
use listed::{ListedTool, Page};
use sizes::{Budget, Framing, Limits, Transport};

/// 0 for 2024-11-05, 1 for 2025-03-26, 3 for 2026-07-28, else (2025-06-18, 2025-11-25) 2.
fn version_index(version: Option<&ProtocolVersion>) -> usize {
    match version {
        Some(v) if *v == ProtocolVersion::V_2024_11_05 => 0,
        Some(v) if *v == ProtocolVersion::V_2025_03_26 => 1,
        Some(v) if *v == ProtocolVersion::V_2026_07_28 => 3,
        _ => 2,
    }
}

/// The SDK's finishing touches for a result in `version`: 2026-07-28 results carry
/// `resultType` and caching hints, older ones neither.
pub(super) fn finish(mut result: ServerResult, version: &ProtocolVersion) -> ServerResult {
    if *version == ProtocolVersion::V_2026_07_28 {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
    }
    result
}

/// Views by client rule and protocol version.
type ViewCache = std::collections::HashMap<(Option<usize>, u8), Arc<view::View>>;

/// One tool set and everything derived from it, replaced as a whole.
pub struct Snapshot {
    dispatcher: Dispatcher,
    /// Dialects and name budgets per API and client.
    presentation: view::Presentation,
    /// Views made so far, by client rule and protocol version.
    views: Mutex<ViewCache>,
    /// The view of a client no rule matches when nothing is adapted, per protocol version
    /// (by [`version_index`]): the common case, served without a lock once made.
    plain: [OnceLock<Arc<view::View>>; 4],
    /// The search or meta tools of APIs too large to list.
    discovery: Discovery,
    /// `tools/list` entries per protocol version (by [`version_index`]), each made when a
    /// client of that version first lists: 2024-11-05 has no annotations, 2025-03-26 no
    /// `title` and no `outputSchema`, and 2026-07-28, where structured results may be any
    /// JSON value, gets a wrapped (`{"result": …}`) outputSchema unwrapped.
    listed: [OnceLock<Arc<Vec<ListedTool>>>; 4],
}

impl Snapshot {
    pub fn new(dispatcher: Dispatcher) -> Snapshot {
        let discovery = Discovery::new(dispatcher.catalog());
        Snapshot {
            dispatcher,
            discovery,
            presentation: view::Presentation::default(),
            views: Mutex::default(),
            plain: Default::default(),
            listed: Default::default(),
        }
    }

    /// This snapshot with the configured dialects and client rules.
    pub fn with_presentation(mut self, presentation: view::Presentation) -> Snapshot {
        self.presentation = presentation;
        self.views = Mutex::default();
        self
    }

    /// What a client calling itself `client` sees with protocol `version`.
    fn view(&self, client: Option<&str>, version: Option<&ProtocolVersion>) -> Arc<view::View> {
        let rule = self.presentation.rule_for(client);
        let version_key = version_index(version);
        if rule.is_none() && self.presentation.is_plain() {
            return self.plain[version_key]
                .get_or_init(|| Arc::new(view::View::plain(self.tools_for(version).clone())))
                .clone();
        }
        let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        views
            .entry((rule, version_key as u8))
            .or_insert_with(|| {
                let base = self.tools_for(version);
                Arc::new(view::View::build(
                    base,
                    self.catalog(),
                    &self.presentation,
                    rule,
                ))
            })
            .clone()
    }

    /// The catalog this snapshot serves.
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.dispatcher.catalog()
    }

    fn tools_for(&self, version: Option<&ProtocolVersion>) -> &Arc<Vec<ListedTool>> {
        let index = version_index(version);
        self.listed[index].get_or_init(|| Arc::new(self.listing(index)))
    }

    /// The `tools/list` entries for protocol versions of [`version_index`] `index`: the
    /// discovery tools first (with a large API they are what the model should see), then
    /// the catalog's listed tools.
    fn listing(&self, index: usize) -> Vec<ListedTool> {
        let catalog = self.catalog();
        let meta = self
            .discovery
            .definitions()
            .iter()
            .filter_map(|definition| match ListedTool::from_definition(definition) {
                Ok(tool) => Some((tool, false)),
                Err(e) => {
                    tracing::error!("discovery tool left out of tools/list: {e}");
                    None
                }
            });
        let tools = catalog
            .tools()
            .iter()
            .filter(|tool| catalog.is_listed(tool))
            .filter_map(|tool| {
                // Cannot happen for what the catalog builds; if it ever does, say so rather
                // than serve a tool list that silently lacks a tool.
                let Some(listed) = ListedTool::from_catalog(tool) else {
                    tracing::error!(tool = %tool.name, "tool left out of tools/list: a schema is not an object");
                    return None;
                };
                let wrapped = tool.route.output.as_ref().is_some_and(|o| o.wrapped);
                Some((listed, wrapped))
            });
        meta.chain(tools)
            .map(|(mut tool, wrapped)| {
                match index {
                    0 => {
                        tool.title = None;
                        tool.output_schema = None;
                        tool.annotations = None;
                    }
                    1 => {
                        tool.title = None;
                        tool.output_schema = None;
                    }
                    3 if wrapped => {
                        tool.output_schema = tool
                            .output_schema
                            .and_then(|schema| unwrap_output_schema(&schema.to_object()?))
                            .map(|schema| SchemaText::new(&serde_json::Value::Object(schema)));
                    }
                    _ => {}
                }
                tool
            })
            .collect()
    }
}

/// `{"type": "object", "properties": {"result": S}, "$defs": D}` → `S` with `$defs` `D`.
fn unwrap_output_schema(
    wrapped: &serde_json::Map<String, serde_json::Value>,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut inner = match wrapped.get("properties")?.get("result")? {
        serde_json::Value::Object(schema) => schema.clone(),
        serde_json::Value::Bool(true) => serde_json::Map::new(),
        _ => return None,
    };
    if let Some(defs) = wrapped.get("$defs") {
        inner.insert("$defs".into(), defs.clone());
    }
    Some(inner)
}

/// State shared by every connection: the current snapshot and the clients to notify.
pub struct Shared {
    current: RwLock<Arc<Snapshot>>,
    /// Initialize-based sessions (they get `notifications/tools/list_changed` directly).
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// 2026-07-28 clients listening with `subscriptions/listen` for tool-list changes.
    subscribers: Mutex<Vec<SubscriptionSink>>,
    /// Page sizes and message budgets.
    limits: Limits,
    metrics: Arc<Metrics>,
}

impl Shared {
    /// `snapshot` served with `page_size` tools a page and the default message budgets.
    pub fn new(snapshot: Snapshot, page_size: usize) -> Arc<Shared> {
        let settings = crate::config::ServerSettings {
            page_size,
            ..Default::default()
        };
        Shared::with_settings(snapshot, &settings)
    }

    /// `snapshot` served with the page size and message budgets of `settings`.
    pub fn with_settings(
        snapshot: Snapshot,
        settings: &crate::config::ServerSettings,
    ) -> Arc<Shared> {
        let metrics = Metrics::new();
        metrics.set_tools(snapshot.catalog().len());
        Arc::new(Shared {
            current: RwLock::new(Arc::new(snapshot)),
            peers: Mutex::new(Vec::new()),
            subscribers: Mutex::new(Vec::new()),
            limits: Limits::from_settings(settings),
            metrics,
        })
    }

    /// Page sizes and message budgets.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The process's metrics: tool calls here, HTTP and reload counts by their owners.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The snapshot calls start on; a call in flight keeps the one it started with.
    pub fn current(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Serves `snapshot` from now on without telling clients: for a reload that changed
    /// how tools are called (credentials, timeouts) but not the tools themselves.
    pub fn swap(&self, snapshot: Snapshot) {
        self.metrics.set_tools(snapshot.catalog().len());
        let mut guard = match self.current.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = Arc::new(snapshot);
    }

    /// Serves `snapshot` from now on and tells every connected client its tools changed.
    pub async fn replace(&self, snapshot: Snapshot) {
        self.swap(snapshot);
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
        let subscribers: Vec<SubscriptionSink> = self
            .subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut open = Vec::with_capacity(subscribers.len());
        for sink in subscribers {
            if sink.notify_tool_list_changed().await.is_ok() {
                open.push(sink);
            }
        }
        *self.subscribers.lock().unwrap_or_else(|p| p.into_inner()) = open;
    }
}

/// One `tools/call` as a client made it, whichever transport it came by.
pub(crate) struct CallRequest<'a> {
    /// The tool name as the client knows it (an alias, a discovery tool or the tool).
    pub name: &'a str,
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The client's `clientInfo.name`, which picks its dialect and names.
    pub client: Option<&'a str>,
    pub version: Option<&'a ProtocolVersion>,
    /// Incoming headers and trace context.
    pub incoming: CallContext,
    /// The budget of the answer's message, when the transport limits it: the result is cut
    /// to fit ([`sizes::fit`]).
    pub budget: Option<AnswerBudget>,
}

/// The budget of one answer, for [`Shared::call`].
pub(crate) struct AnswerBudget {
    pub budget: Budget,
    /// The request's id, which the answer carries.
    pub id: RequestId,
    /// The budget applies only when a progress notification went out before the answer
    /// ([`Framing::JsonUnlessNotified`]): otherwise the answer is plain JSON.
    pub only_after_progress: bool,
}

/// Where a long call reports how long it has waited, for a client that asked.
pub(crate) struct Progress {
    token: rmcp::model::ProgressToken,
    peer: Peer<RoleServer>,
}

impl Shared {
    /// The `tools/list` result for `cursor` (from an earlier page) in `view`, as JSON for
    /// protocol `version`: serialized once per view and cursor, then copied.
    fn list_result(
        &self,
        view: &view::View,
        cursor: Option<&str>,
        version: &ProtocolVersion,
    ) -> Result<axum::body::Bytes, ErrorData> {
        let key = cursor.unwrap_or("");
        let cached = view
            .wire_pages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        if let Some(page) = cached {
            return Ok(page);
        }
        let page = axum::body::Bytes::from(self.list_page(view, cursor)?.to_json(version));
        view.wire_pages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), page.clone());
        Ok(page)
    }

    /// The page of `view`'s tools that `cursor` (from an earlier page) points at: at most
    /// `server.page_size` tools and [`sizes::PAGE_BYTES`] (see [`sizes::page_end`]).
    fn list_page<'v>(
        &self,
        view: &'v view::View,
        cursor: Option<&str>,
    ) -> Result<Page<'v>, ErrorData> {
        let tools = &view.tools;
        let start = match cursor {
            Some(cursor) => decode_cursor(cursor).ok_or_else(|| {
                ErrorData::invalid_params(format!("invalid cursor {cursor:?}"), None)
            })?,
            None => 0,
        };
        let end = sizes::page_end(
            view.wire_sizes(),
            start,
            self.limits.page_size,
            self.limits.page_bytes,
        );
        Ok(Page {
            tools: tools.get(start..end).unwrap_or_default(),
            next_cursor: (end < tools.len()).then(|| encode_cursor(end)),
        })
    }

    /// Calls a tool for a client: the view of the client's dialect and protocol version
    /// turns its names and arguments into the catalog's, discovery tools are answered or
    /// unwrapped, then the dispatcher calls the upstream. Records the call's metrics and log
    /// line. Returns the result in the client's protocol version and the tool's catalog
    /// name; an unknown tool is a protocol error (-32602). With a budget, the result is cut
    /// to fit it ([`sizes::fit`]).
    pub(crate) async fn call(
        &self,
        mut request: CallRequest<'_>,
        cancelled: &tokio_util::sync::CancellationToken,
        progress: Option<Progress>,
    ) -> Result<(CallToolResult, String), ErrorData> {
        let Some(answer) = request.budget.take() else {
            let (result, tool, _) = self.call_unbounded(request, cancelled, progress).await?;
            return Ok((result, tool));
        };
        let (name, client, version) = (request.name, request.client, request.version);
        let (result, tool, progressed) = self.call_unbounded(request, cancelled, progress).await?;
        if answer.only_after_progress && !progressed {
            return Ok((result, tool));
        }
        let AnswerBudget { budget, id, .. } = answer;
        // Whether the client's listing promised structured content for this tool (looked up
        // only for a result that does not fit).
        let shows_output_schema = || {
            let view = self.current().view(client, version);
            view.tools
                .iter()
                .find(|listed| listed.name == name)
                .is_some_and(|listed| listed.output_schema.is_some())
        };
        let (result, cut_from) = sizes::fit(result, &budget, &id, shows_output_schema);
        if let Some(bytes) = cut_from {
            tracing::info!(
                tool = %tool,
                bytes,
                limit = budget.bytes,
                "tool result cut to fit one message of the transport ({})",
                budget.key
            );
        }
        Ok((result, tool))
    }

    /// [`Shared::call`] without a budget; also says whether a progress notification went
    /// out.
    async fn call_unbounded(
        &self,
        request: CallRequest<'_>,
        cancelled: &tokio_util::sync::CancellationToken,
        progress: Option<Progress>,
    ) -> Result<(CallToolResult, String, bool), ErrorData> {
        let snapshot = self.current();
        let started = std::time::Instant::now();
        let metrics = self.metrics();
        let _in_flight = metrics.call_started();
        let CallRequest {
            name,
            mut arguments,
            client,
            version,
            mut incoming,
            budget: _,
        } = request;
        // 2026-07-28 allows any JSON value as structured content: the body as the API
        // returned it, and a text that is exactly that value.
        incoming.bare_structured = version == Some(&ProtocolVersion::V_2026_07_28);
        let view = snapshot.view(client, version);
        let mut name = view.catalog_name(name).to_string();
        if snapshot.discovery.handles(&name) {
            let catalog = snapshot.catalog().clone();
            // Definitions as this client sees listed tools: its dialect, its names.
            let describe = |tool: &crate::catalog::Tool| {
                let dialect = snapshot
                    .presentation
                    .dialect(view.rule, Some(&tool.route.api));
                view.describe(tool, dialect)
            };
            match snapshot
                .discovery
                .handle(&catalog, &name, &arguments, &describe)
            {
                Action::Answer(result) => {
                    return Ok((to_call_result(result, version), name, false));
                }
                // Dispatched exactly as a call of the tool by its own name.
                Action::Dispatch {
                    tool,
                    arguments: inner,
                } => {
                    name = tool;
                    arguments = inner;
                }
            }
        }
        if let Some(tool) = snapshot.catalog().get(&name) {
            let dialect = snapshot
                .presentation
                .dialect(view.rule, Some(&tool.route.api));
            arguments = view.restore(tool, dialect, arguments);
        }
        let request_id = trace::request_id();
        let trace_id = incoming.trace.as_ref().map(TraceContext::trace_id);
        let call = snapshot
            .dispatcher
            .call_with_stats(&name, arguments, &incoming);
        tokio::pin!(call);
        let mut ticks = tokio::time::interval_at(
            tokio::time::Instant::now() + PROGRESS_INTERVAL,
            PROGRESS_INTERVAL,
        );
        let mut waited: f64 = 0.0;
        // Recorded as cancelled unless the call ends: by the client's notification, or by
        // this future being dropped when the client closes its connection.
        let mut unfinished = Unfinished {
            metrics,
            api: snapshot.catalog().get(&name).map(|t| t.route.api.as_str()),
            tool: &name,
            started,
            request_id: &request_id,
            trace_id: trace_id.as_deref(),
            why: Some("tool call abandoned: the client went away"),
        };
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                // Dropping `call` here drops the upstream request with it.
                _ = cancelled.cancelled() => {
                    unfinished.why = Some("tool call cancelled by the client");
                    return Err(ErrorData::internal_error("request cancelled", None));
                }
                _ = ticks.tick(), if progress.is_some() => {
                    waited += PROGRESS_INTERVAL.as_secs_f64();
                    if let Some(Progress { token, peer }) = &progress {
                        let update = ProgressNotificationParam::new(token.clone(), waited)
                            .with_message(format!("waiting for the upstream API ({waited:.0} s)"));
                        let _ = peer.notify_progress(update).await;
                    }
                }
            }
        };
        unfinished.why = None;
        drop(unfinished);
        match outcome {
            Ok(called) => {
                record_call(
                    metrics,
                    &name,
                    &called.stats,
                    started.elapsed(),
                    &request_id,
                    trace_id.as_deref(),
                );
                let progressed = progress.is_some() && waited > 0.0;
                Ok((
                    to_call_result(called.result, version),
                    name.clone(),
                    progressed,
                ))
            }
            // MCP: an unknown tool is a protocol error with code -32602.
            Err(unknown) => {
                tracing::info!(
                    target: crate::telemetry::writer::CALL_TARGET,
                    request_id = %request_id,
                    tool = %name,
                    outcome = "unknown_tool",
                    "tool call for a tool that does not exist"
                );
                Err(ErrorData::invalid_params(unknown.to_string(), None))
            }
        }
    }
}

/// The MCP server handler; cheap to create (one per session or stateless request).
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    /// What the answers travel on, for their size budget.
    transport: Transport,
    /// The session's `logging/setLevel` (as a severity rank); no messages until it is set.
    log_level: Arc<Mutex<Option<u8>>>,
}

impl McpServer {
    pub fn new(shared: Arc<Shared>, transport: Transport) -> McpServer {
        McpServer {
            shared,
            transport,
            log_level: Arc::new(Mutex::new(None)),
        }
    }

    /// Tells the client about a finished call with `notifications/message`, when it asked
    /// for messages of that severity.
    #[allow(deprecated)] // logging: see set_level
    async fn log_call(
        &self,
        peer: &Peer<RoleServer>,
        tool: &str,
        is_error: bool,
        elapsed: Duration,
    ) {
        use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
        let level = if is_error {
            LoggingLevel::Warning
        } else {
            LoggingLevel::Info
        };
        let wanted = *self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        if wanted.is_none_or(|minimum| (level as u8) < minimum) {
            return;
        }
        let data = serde_json::json!({
            "tool": tool,
            "isError": is_error,
            "durationMs": elapsed.as_millis() as u64,
        });
        let message = LoggingMessageNotificationParam::new(level, data).with_logger("restmcp");
        let _ = peer.notify_logging_message(message).await;
    }
}

/// How often a long call reports progress to a client that asked for it.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)] // logging is deprecated in 2026-07-28 but served to older clients
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("restmcp", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let snapshot = self.shared.current();
        let version = context.protocol_version();
        let view = snapshot.view(client_name(&context).as_deref(), version.as_ref());
        let cursor = request.and_then(|r| r.cursor);
        Ok(self.shared.list_page(&view, cursor.as_deref())?.to_sdk())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let snapshot = self.shared.current();
        let listed = snapshot.tools_for(None).iter().find(|t| t.name == name);
        match listed {
            Some(tool) => tool.to_sdk(),
            None => ListedTool::from_catalog(snapshot.catalog().get(name)?)?.to_sdk(),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        // Over HTTP, the incoming request's headers (forwarded only where an API's
        // forward_headers allows it).
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let mut incoming = parts
            .map(|parts| CallContext::from_headers(&parts.headers))
            .unwrap_or_default();
        // Over HTTP, the front says whether the answer goes out as SSE or plain JSON.
        let framing = parts.and_then(|parts| parts.extensions.get::<Framing>().copied());
        let budget = self
            .shared
            .limits
            .budget(self.transport, framing)
            .map(|budget| AnswerBudget {
                budget,
                id: context.id.clone(),
                only_after_progress: framing == Some(Framing::JsonUnlessNotified),
            });
        // Trace context in `_meta` (stdio has no headers) wins over the HTTP header: it is
        // specific to this request.
        let meta_text = |key: &str| context.meta.get(key).and_then(serde_json::Value::as_str);
        if let Some(trace) = meta_text("traceparent")
            .and_then(|traceparent| TraceContext::parse(traceparent, meta_text("tracestate")))
        {
            incoming.trace = Some(trace);
        }
        let client = client_name(&context);
        let version = context.protocol_version();
        let progress = context.meta.get_progress_token().map(|token| Progress {
            token,
            peer: context.peer.clone(),
        });
        let call = CallRequest {
            name: &request.name,
            arguments: request.arguments.unwrap_or_default(),
            client: client.as_deref(),
            version: version.as_ref(),
            incoming,
            budget,
        };
        let (result, tool) = self.shared.call(call, &context.ct, progress).await?;
        let is_error = result.is_error == Some(true);
        self.log_call(&context.peer, &tool, is_error, started.elapsed())
            .await;
        Ok(result.into())
    }

    /// The generations before 2026-07-28 have logging: after `logging/setLevel`, each tool
    /// call is reported with `notifications/message` (warning for errors, info otherwise).
    #[allow(deprecated)] // SEP-2577 deprecates logging, but 2025-x clients still use it
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.level as u8);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = self.shared.peers.lock().unwrap_or_else(|p| p.into_inner());
        peers.retain(|peer| !peer.is_transport_closed());
        peers.push(context.peer);
    }

    /// 2026-07-28: every listen is acknowledged with the part of its filter restmcp honours,
    /// which is at most tool-list changes (it has no prompts or resources).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(if requested.tools_list_changed == Some(true) {
            SubscriptionFilter::builder().tools_list_changed().build()
        } else {
            SubscriptionFilter::default()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.shared
            .subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.sink().clone());
        context.cancelled().await;
        Ok(())
    }

    // rmcp answers these with empty lists even when the capability is not declared;
    // restmcp has no prompts or resources, so they are unknown methods (-32601).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            rmcp::model::ListPromptsRequestMethod,
        >())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            rmcp::model::ListResourcesRequestMethod,
        >())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            rmcp::model::ListResourceTemplatesRequestMethod,
        >())
    }

    async fn complete(
        &self,
        _request: rmcp::model::CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        Err(ErrorData::method_not_found::<
            rmcp::model::CompleteRequestMethod,
        >())
    }
}

/// restmcp's result in the client's protocol version: `structuredContent` exists from
/// 2025-06-18 on.
/// The `clientInfo.name` of the client making this request (from `initialize`, or a
/// 2026-07-28 request's `_meta`).
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    if let Some(info) = context.peer.peer_info() {
        return Some(info.client_info.name.clone());
    }
    context
        .meta
        .get("io.modelcontextprotocol/clientInfo")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// A call that has not ended yet: if it is dropped so (cancelled, or its client gone), it
/// is still counted and logged, as `cancelled`.
struct Unfinished<'a> {
    metrics: &'a Metrics,
    /// None for a tool the catalog does not have (an unknown tool is not a call).
    api: Option<&'a str>,
    tool: &'a str,
    started: std::time::Instant,
    request_id: &'a str,
    trace_id: Option<&'a str>,
    /// The log message, or None once the call has ended.
    why: Option<&'static str>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        let (Some(why), Some(api)) = (self.why, self.api) else {
            return;
        };
        let duration = self.started.elapsed();
        self.metrics.record_call(&CallRecord {
            api,
            tool: self.tool,
            outcome: "cancelled",
            duration,
            upstream: None,
            bytes_sent: 0,
            bytes_received: 0,
        });
        tracing::info!(
            target: crate::telemetry::writer::CALL_TARGET,
            request_id = %self.request_id,
            tool = %self.tool,
            outcome = "cancelled",
            duration_ms = duration.as_secs_f64() * 1e3,
            trace_id = self.trace_id,
            "{why}"
        );
    }
}

/// The call's metrics and its one log line (never arguments, bodies or secrets).
fn record_call(
    metrics: &Metrics,
    tool: &str,
    stats: &CallStats,
    elapsed: Duration,
    request_id: &str,
    trace_id: Option<&str>,
) {
    metrics.record_call(&CallRecord {
        api: &stats.api,
        tool,
        outcome: stats.outcome.as_str(),
        duration: elapsed,
        upstream: stats.upstream,
        bytes_sent: stats.bytes_sent,
        bytes_received: stats.bytes_received,
    });
    let duration_ms = elapsed.as_secs_f64() * 1e3;
    let upstream_ms = stats.upstream.map(|d| d.as_secs_f64() * 1e3);
    macro_rules! line {
        ($level:ident) => {
            tracing::$level!(
                target: crate::telemetry::writer::CALL_TARGET,
                request_id = %request_id,
                tool = %tool,
                api = %stats.api,
                outcome = stats.outcome.as_str(),
                status = stats.status,
                duration_ms,
                upstream_ms,
                attempts = stats.attempts,
                trace_id,
                "tool call"
            )
        };
    }
    match stats.outcome {
        CallOutcome::Upstream5xx | CallOutcome::Timeout | CallOutcome::Unreachable => line!(warn),
        _ => line!(info),
    }
}

fn to_call_result(result: ToolResult, version: Option<&ProtocolVersion>) -> CallToolResult {
    let content: Vec<ContentBlock> = result.content.into_iter().map(to_block).collect();
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let structured_supported = !matches!(
        version,
        Some(v) if *v == ProtocolVersion::V_2024_11_05 || *v == ProtocolVersion::V_2025_03_26
    );
    if structured_supported {
        call.structured_content = result.structured;
    }
    call
}

fn to_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Resource {
            uri,
            mime_type,
            blob,
        } => ContentBlock::resource(rmcp::model::ResourceContents::BlobResourceContents {
            uri,
            mime_type: Some(mime_type),
            blob,
            meta: None,
        }),
    }
}

fn encode_cursor(offset: usize) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("restmcp:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("restmcp:")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(path: &std::path::Path) -> Catalog {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let source = crate::spec::SpecSource::File(path.to_path_buf());
        let docs = runtime.block_on(crate::spec::load(&source)).expect("loads");
        let input = crate::catalog::ApiInput::new("api", Some(&docs));
        let settings = crate::config::ToolSettings::default();
        crate::catalog::build(&[input], &settings)
            .expect("builds")
            .0
    }

    /// A listed tool is written exactly as the catalog's MCP JSON, and the SDK's `Tool`
    /// made from it is what the SDK reads from that JSON, for every tool of the shipped
    /// spec and of the large shared ones that are present.
    #[test]
    fn listed_tools_are_the_catalogs_mcp_json() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut specs = vec![root.join("specs/petstore.yaml")];
        for name in ["github", "stripe", "kubernetes"] {
            let path = root.join(format!("../shared/specs/real/{name}.json"));
            if path.exists() {
                specs.push(path);
            } else {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "{} is missing",
                    path.display()
                );
            }
        }
        for spec in specs {
            let catalog = catalog(&spec);
            assert!(!catalog.is_empty());
            for tool in catalog.tools() {
                let listed = ListedTool::from_catalog(tool).expect("object schemas");
                let json = tool.to_mcp();
                assert_eq!(
                    serde_json::to_value(&listed).expect("serializes"),
                    json,
                    "{} in {}",
                    tool.name,
                    spec.display()
                );
                let round_trip: Tool = serde_json::from_value(json).expect("a Tool");
                assert_eq!(
                    listed.to_sdk(),
                    Some(round_trip),
                    "{} in {}",
                    tool.name,
                    spec.display()
                );
            }
        }
    }
}
