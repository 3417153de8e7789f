//! [`McpServer`], the rmcp `ServerHandler`: the protocol face the SDK drives on every
//! transport (stdio, Streamable HTTP, legacy SSE). It lists the current snapshot's tools
//! for the client's revision, calls them through [`super::call`], serves resources
//! ([`super::resources`], subscriptions in [`super::subscriptions`]), prompts
//! ([`super::prompts`]) and completions ([`super::completion`]), and keeps the peers and
//! 2026-07-28 subscribers to tell of list changes. A server with no resources (or no
//! prompts) does not declare them and answers their methods as unknown (-32601).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};

use super::ServerState;
use super::call::{AnswerBudget, CallRequest, Progress};
use super::confirm::Asker;
use super::listed::ListedTool;
use super::prompts::PromptRequest;
use super::request::CallMeta;
use super::sizes::{Framing, Transport};
use super::subscriptions::{Notifier, SessionSubscriptions, Subscriber};
use crate::identity::{Caller, Principal};
use crate::upstream::{CallContext, CallLog, Severity};

/// The MCP server handler; cheap to create (one per session or stateless request).
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<ServerState>,
    /// What the answers travel on, for their size budget.
    transport: Transport,
    /// The session's `logging/setLevel` (as a severity rank); no messages until it is set.
    log_level: Arc<Mutex<Option<u8>>>,
    /// Who every request of this session comes from, when its transport carries no
    /// request of its own to say (a legacy SSE session a static token opened).
    principal: Option<Principal>,
    /// The session's resource subscriptions; their polling stops when it is dropped.
    subscriptions: Arc<SessionSubscriptions>,
    /// `ServerState::swaps` when this server last acknowledged a listen.
    acknowledged_at: Arc<AtomicU64>,
}

impl McpServer {
    pub fn new(shared: Arc<ServerState>, transport: Transport) -> McpServer {
        McpServer {
            shared,
            transport,
            log_level: Arc::new(Mutex::new(None)),
            principal: None,
            subscriptions: Arc::default(),
            acknowledged_at: Arc::default(),
        }
    }

    /// This server with every request of its session coming from `principal`.
    pub fn for_principal(mut self, principal: Option<Principal>) -> McpServer {
        self.principal = principal;
        self
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

impl McpServer {
    /// The least severity of the log messages this request's client asked for: the
    /// session's `logging/setLevel`, or a 2026-07-28 request's own `_meta` level.
    #[allow(deprecated)] // logging: see set_level
    fn wanted_level(&self, context: &RequestContext<RoleServer>) -> Option<u8> {
        let meta = context
            .meta
            .get(super::request::META_LOG_LEVEL)
            .and_then(|level| {
                serde_json::from_value::<rmcp::model::LoggingLevel>(level.clone()).ok()
            })
            .map(|level| level as u8);
        meta.or(*self.log_level.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Where a call tells what it does, when the client asked for log messages: a
    /// [`CallLog`] whose messages at or above the wanted level go to the client as
    /// `notifications/message` (logger `restmcp`), in order, and the task sending them,
    /// which ends once the call has dropped the log.
    #[allow(deprecated)] // logging: see set_level
    fn call_log(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<(CallLog, tokio::task::JoinHandle<()>)> {
        use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
        let minimum = self.wanted_level(context)?;
        // Bounded: a call tells a handful of things; past this, messages are dropped.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(LoggingLevel, String)>(64);
        let log = CallLog::new(move |severity, text| {
            let level = match severity {
                Severity::Debug => LoggingLevel::Debug,
                Severity::Info => LoggingLevel::Info,
                Severity::Notice => LoggingLevel::Notice,
                Severity::Warning => LoggingLevel::Warning,
            };
            if level as u8 >= minimum {
                let _ = tx.try_send((level, text));
            }
        });
        let peer = context.peer.clone();
        let forwarding = tokio::spawn(async move {
            while let Some((level, text)) = rx.recv().await {
                let message = LoggingMessageNotificationParam::new(level, serde_json::json!(text))
                    .with_logger("restmcp");
                let _ = peer.notify_logging_message(message).await;
            }
        });
        Some((log, forwarding))
    }

    /// The context of a request: over HTTP, its headers (forwarded only where an API's
    /// forward_headers allows it) and the user the guard validated an OAuth token of.
    fn incoming(&self, context: &RequestContext<RoleServer>) -> CallContext {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let mut incoming = parts
            .map(|parts| self.shared.current().dispatcher.context_of(&parts.headers))
            .unwrap_or_default();
        incoming.caller = parts.and_then(|parts| parts.extensions.get::<Arc<Caller>>().cloned());
        incoming.principal = parts
            .and_then(|parts| parts.extensions.get::<Principal>().cloned())
            .or_else(|| self.principal.clone());
        incoming
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let snapshot = self.shared.current();
        #[allow(deprecated)] // logging is deprecated in 2026-07-28 but served to older clients
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        let (resources, prompts) = (snapshot.has_resources(), snapshot.has_prompts());
        if resources {
            let mut served = rmcp::model::ResourcesCapability::default();
            served.subscribe = Some(true);
            served.list_changed = Some(true);
            capabilities.resources = Some(served);
        }
        if prompts {
            let mut served = rmcp::model::PromptsCapability::default();
            served.list_changed = Some(true);
            capabilities.prompts = Some(served);
        }
        if resources || prompts {
            capabilities.completions = Some(Default::default());
        }
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
        let user = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Arc<Caller>>().cloned());
        let view = snapshot.listing_view(
            client_name(&context).as_deref(),
            version.as_ref(),
            user.as_deref(),
        );
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
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let mut incoming = self.incoming(&context);
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
        if let Some(trace) = CallMeta::read(Some(&context.meta)).trace {
            incoming.trace = Some(trace);
        }
        let client = client_name(&context);
        let version = context.protocol_version();
        let progress = context.meta.get_progress_token().map(|token| Progress {
            token,
            peer: context.peer.clone(),
        });
        // A session's client is asked on the session; a 2026-07-28 request carries the
        // answers of an earlier round itself.
        let asker = if version.as_ref() == Some(&ProtocolVersion::V_2026_07_28) {
            let capabilities = context
                .meta
                .get("io.modelcontextprotocol/clientCapabilities");
            Asker::rounds(request.input_responses, request.request_state, capabilities)
        } else if context.peer.peer_info().is_some() {
            Asker::Session(context.peer.clone())
        } else {
            Asker::Unable
        };
        let tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        let forwarding = self.call_log(&context).map(|(log, forwarding)| {
            incoming.log = Some(log);
            forwarding
        });
        let call = CallRequest {
            tasks,
            name: &request.name,
            arguments: request.arguments.unwrap_or_default(),
            client: client.as_deref(),
            version: version.as_ref(),
            incoming,
            budget,
            asker,
        };
        let called = self.shared.call(call, Some(&context.ct), progress).await;
        // Every message the call told goes out before its answer.
        if let Some(forwarding) = forwarding {
            let _ = tokio::time::timeout(Duration::from_secs(2), forwarding).await;
        }
        let super::call::Answered {
            response: result,
            tool,
            ..
        } = called?;
        if let CallToolResponse::Complete(result) = &result {
            let is_error = result.is_error == Some(true);
            self.log_call(&context.peer, &tool, is_error, started.elapsed())
                .await;
        }
        Ok(result)
    }

    /// `tasks/get`: a task is an operation going on upstream; each look asks the
    /// upstream's status monitor (at most as often as it asks), and a finished one gives
    /// the call's result in the client's revision.
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let snapshot = self.shared.current();
        let incoming = self.incoming(&context);
        let version = context.protocol_version();
        let finish = |result| {
            let result = super::call::to_call_result(result, version.as_ref(), false);
            serde_json::to_value(result).unwrap_or_default()
        };
        self.shared
            .operations
            .get_task(&snapshot.dispatcher, &request.task_id, &incoming, finish)
            .await
    }

    /// `tasks/cancel`: restmcp stops following the operation (it may go on upstream).
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let incoming = self.incoming(&context);
        let caller = incoming.pseudonym();
        self.shared
            .operations
            .cancel_task(&request.task_id, caller)
            .await
    }

    /// `tasks/update`: restmcp's tasks never ask for input.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let incoming = self.incoming(&context);
        let caller = incoming.pseudonym();
        self.shared.operations.update_task(&request.task_id, caller)
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

    /// 2026-07-28: every listen is acknowledged with the part of its filter restmcp honours:
    /// list changes of what it serves, and the resources it serves (at most
    /// `resources.max_subscriptions_per_session` of them).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.acknowledged_at
            .store(self.shared.swaps.load(Ordering::SeqCst), Ordering::SeqCst);
        let snapshot = self.shared.current();
        let mut accepted = SubscriptionFilter::default();
        if requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        if snapshot.has_prompts() && requested.prompts_list_changed == Some(true) {
            accepted.prompts_list_changed = Some(true);
        }
        if snapshot.has_resources() {
            if requested.resources_list_changed == Some(true) {
                accepted.resources_list_changed = Some(true);
            }
            let uris: Vec<String> = requested
                .resource_subscriptions
                .iter()
                .flatten()
                .filter(|uri| snapshot.resource_of(uri).is_some())
                .take(snapshot.resource_settings.max_subscriptions_per_session)
                .cloned()
                .collect();
            if !uris.is_empty() {
                accepted.resource_subscriptions = Some(uris);
            }
        }
        Some(accepted)
    }

    /// A 2026-07-28 listen: told of list changes, and of changes to the resources it
    /// subscribed to (polled for as long as it stays open).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.shared
            .subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(context.sink().clone());
        // rmcp sends the acknowledgement before calling this: a reload in between did
        // not find this listen among the subscribers, so it hears of it now.
        if self.shared.swaps.load(Ordering::SeqCst) != self.acknowledged_at.load(Ordering::SeqCst) {
            tell_lists_changed(context.sink()).await;
        }
        let polling = SessionSubscriptions::default();
        let request = context.request_context();
        let version = request.protocol_version();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let subscriber = Subscriber {
                session: &polling,
                notifier: Notifier::Listen(context.sink().clone()),
                incoming: self.incoming(request),
                version: version.as_ref(),
            };
            if let Err(error) = self.shared.subscribe(uri, subscriber) {
                tracing::warn!(
                    "subscriptions/listen: {uri} is not polled: {}",
                    error.message
                );
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        let snapshot = self.shared.current();
        if !snapshot.has_prompts() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListPromptsRequestMethod,
            >());
        }
        Ok(snapshot.list_prompts())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        if !self.shared.current().has_prompts() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::GetPromptRequestMethod,
            >());
        }
        let version = context.protocol_version();
        let request = PromptRequest {
            params: request,
            incoming: self.incoming(&context),
            version: version.as_ref(),
            cancelled: &context.ct,
        };
        self.shared.get_prompt(request).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        let snapshot = self.shared.current();
        if !snapshot.has_resources() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListResourcesRequestMethod,
            >());
        }
        Ok(snapshot.list_resources(self.incoming(&context).caller.as_deref()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        let snapshot = self.shared.current();
        if !snapshot.has_resources() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListResourceTemplatesRequestMethod,
            >());
        }
        Ok(snapshot.list_templates(self.incoming(&context).caller.as_deref()))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        let version = context.protocol_version();
        let incoming = self.incoming(&context);
        let result = self
            .shared
            .read_resource(&request.uri, incoming, version.as_ref(), &context.ct)
            .await?;
        Ok(result.into())
    }

    #[allow(deprecated)] // legacy-only: 2026-07-28 subscribes through subscriptions/listen
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let version = context.protocol_version();
        let subscriber = Subscriber {
            session: &self.subscriptions,
            notifier: Notifier::Session(context.peer.clone()),
            incoming: self.incoming(&context),
            version: version.as_ref(),
        };
        self.shared.subscribe(&request.uri, subscriber)
    }

    #[allow(deprecated)] // legacy-only, as subscribe
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        let snapshot = self.shared.current();
        if !snapshot.has_prompts() && !snapshot.has_resources() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::CompleteRequestMethod,
            >());
        }
        let incoming = self.incoming(&context);
        self.shared.complete(request, incoming, &context.ct).await
    }
}

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

/// Tells `sink` that every list it listens for changed.
async fn tell_lists_changed(sink: &rmcp::service::SubscriptionSink) {
    let accepted = sink.accepted();
    if accepted.tools_list_changed == Some(true) {
        let _ = sink.notify_tool_list_changed().await;
    }
    if accepted.prompts_list_changed == Some(true) {
        let _ = sink.notify_prompt_list_changed().await;
    }
    if accepted.resources_list_changed == Some(true) {
        let _ = sink.notify_resource_list_changed().await;
    }
}
