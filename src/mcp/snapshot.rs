//! The tool set being served and the listings made from it.
//!
//! A [`Snapshot`] is one tool set and everything derived from it (the dispatcher, the
//! discovery tools, the per-revision `tools/list` entries, the per-client [`View`]s), replaced
//! as a whole; [`Snapshot::from_loaded`] makes the one every server serves. [`ServerState`] holds the current snapshot for every connection, swaps it on a
//! reload and tells connected clients with `notifications/tools/list_changed`; it also
//! cuts listings into pages (by count and bytes, [`super::sizes::page_end`]) behind opaque
//! cursors and keeps each page's JSON once serialized.
//!
//! [`View`]: super::view::View

use std::sync::{Arc, Mutex, OnceLock, RwLock};

use base64::Engine as _;
use rmcp::model::ProtocolVersion;
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData, Peer, RoleServer};

use super::confirm::{ConfirmError, Confirmer};
use super::listed::{ListedTool, Page};
use super::revision::version_index;
use super::scopes::ScopePolicy;
use super::sizes::{self, Limits};
use super::view;
use crate::catalog::{Catalog, SchemaText};
use crate::config::Config;
use crate::discovery::Discovery;
use crate::identity::Caller;
use crate::store::Store;
use crate::telemetry::metrics::Metrics;
use crate::upstream::Dispatcher;

/// The protocol revisions [`Snapshot::tools_list`] shows a listing in.
pub const LISTING_REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Views by client rule and protocol version.
type ViewCache = std::collections::HashMap<(Option<usize>, u8), Arc<view::View>>;

/// Listings cut to what a set of OAuth scopes opens, by client rule, protocol version and
/// the scopes that decide ([`ScopePolicy::key`]).
type ScopedViews = std::collections::HashMap<(Option<usize>, u8, Vec<String>), Arc<view::View>>;

/// Scoped listings kept per snapshot; at the cap they are all dropped and made again on
/// demand (a listing is a filter over the view's tools, cheap to redo).
const MAX_SCOPED_VIEWS: usize = 64;

/// One tool set and everything derived from it, replaced as a whole.
pub struct Snapshot {
    pub(super) dispatcher: Dispatcher,
    /// Dialects and name budgets per API and client.
    pub(super) presentation: view::Presentation,
    /// Views made so far, by client rule and protocol version.
    views: Mutex<ViewCache>,
    /// The view of a client no rule matches when nothing is adapted, per protocol version
    /// (by [`version_index`]): the common case, served without a lock once made.
    plain: [OnceLock<Arc<view::View>>; 4],
    /// What a call of a client no rule matches resolves through when nothing is adapted,
    /// before that client's listing is made: the catalog's own names and arguments.
    unlisted: OnceLock<Arc<view::View>>,
    /// The search or meta tools of APIs too large to list.
    pub(super) discovery: Discovery,
    /// `tools/list` entries per protocol version (by [`version_index`]), each made when a
    /// client of that version first lists: 2024-11-05 has no annotations, 2025-03-26 no
    /// `title` and no `outputSchema`, and 2026-07-28, where structured results may be any
    /// JSON value, gets a wrapped (`{"result": …}`) outputSchema unwrapped.
    listed: [OnceLock<Arc<Vec<ListedTool>>>; 4],
    /// Which tools which OAuth scopes open; worked out when an OAuth caller first asks.
    scopes: OnceLock<ScopePolicy>,
    scoped: Mutex<ScopedViews>,
    /// Whether some tool needs confirmation (see [`Snapshot::may_confirm`]).
    confirming: OnceLock<bool>,
    /// The status tool's name: answered whenever called (any 202 can leave an operation
    /// going), listed when a listed tool is marked long-running.
    pub(super) status_tool: String,
    lists_status_tool: bool,
    /// Some tool is served as a resource too (worked out once: every `initialize` and
    /// resource request asks).
    pub(super) serves_resources: bool,
    /// `[resources]`: subscriptions' polling and caps, reads' cache hints.
    pub(super) resource_settings: crate::config::ResourceSettings,
    /// Each API's configuration, for what the console explains.
    api_configs: std::collections::HashMap<String, crate::config::ApiConfig>,
}

impl Snapshot {
    pub fn new(dispatcher: Dispatcher) -> Snapshot {
        dispatcher.warm();
        let mut discovery = Discovery::new(dispatcher.catalog());
        let catalog = dispatcher.catalog();
        let status_tool = super::operations::status_tool_name(|name| {
            catalog.get(name).is_some() || discovery.handles(name)
        });
        // In search and meta modes the status tool is reached through `call_tool` too.
        discovery.pass_on(status_tool.clone());
        let serves_resources = catalog.resources().next().is_some();
        let lists_status_tool = catalog
            .tools()
            .iter()
            .any(|tool| tool.route.long_running.is_some() && catalog.is_listed(tool));
        Snapshot {
            status_tool,
            lists_status_tool,
            serves_resources,
            dispatcher,
            discovery,
            presentation: view::Presentation::default(),
            views: Mutex::default(),
            plain: Default::default(),
            unlisted: OnceLock::new(),
            listed: Default::default(),
            scopes: OnceLock::new(),
            scoped: Mutex::default(),
            confirming: OnceLock::new(),
            resource_settings: Default::default(),
            api_configs: Default::default(),
        }
    }

    /// The snapshot served for `catalog` loaded under `config`: its dispatcher (the mock
    /// upstream plugged in for mocked APIs) and the configured dialects and client rules.
    /// Every server makes its snapshot here (`serve`, `stdio`, a reload, the selftest's
    /// Streamable HTTP leg), so no two of them can show one tool set differently.
    pub fn from_loaded(catalog: Arc<Catalog>, config: &Config) -> Result<Snapshot, String> {
        let dispatcher = crate::mock::plug(Dispatcher::new(catalog, config)?);
        let mut snapshot =
            Snapshot::new(dispatcher).with_presentation(view::Presentation::from_config(config));
        snapshot.resource_settings = config.resources.clone();
        snapshot.api_configs = config
            .apis
            .iter()
            .map(|(name, api)| (name.clone(), api.clone()))
            .collect();
        Ok(snapshot)
    }

    /// Whether a `tools/call` of `name` (as a client names it) may ask its user for
    /// confirmation: a tool that needs it, or, when some tool does, a discovery tool or a
    /// name the catalog does not know (an alias of one of the client's dialect).
    pub(super) fn may_confirm(&self, name: &str) -> bool {
        let catalog = self.catalog();
        if !*self
            .confirming
            .get_or_init(|| catalog.tools().iter().any(|t| t.route.needs_confirmation()))
        {
            return false;
        }
        catalog
            .get(name)
            .is_none_or(|tool| tool.route.needs_confirmation())
    }

    /// Whether the `tools/call` `message` may ask its user something: for confirmation
    /// ([`Snapshot::may_confirm`]) or for an argument it lacks ([`super::ask::may_ask`]).
    /// Such a call needs the SDK's peer (or a 2026-07-28 round), not a direct answer.
    pub(super) fn may_ask_user(&self, message: &serde_json::Value) -> bool {
        let member = crate::json::member;
        let params = member(message, "params");
        let Some(name) = params
            .and_then(|p| member(p, "name"))
            .and_then(serde_json::Value::as_str)
        else {
            return false;
        };
        let empty = serde_json::Map::new();
        let arguments = match params.and_then(|p| member(p, "arguments")) {
            None => &empty,
            Some(serde_json::Value::Object(arguments)) => arguments,
            // Not arguments at all: refused before anyone could be asked, unless the
            // tool asks for confirmation whatever its arguments.
            Some(_) => return self.may_confirm(name),
        };
        self.may_ask(name, arguments)
    }

    /// Whether a call of tool `name` (as the client knows it) with `arguments` may ask its
    /// user something ([`Snapshot::may_ask_user`]).
    pub(super) fn may_ask(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> bool {
        self.may_confirm(name)
            || self
                .catalog()
                .get(name)
                .is_some_and(|tool| super::ask::may_ask(tool, arguments))
    }

    /// This snapshot with the configured dialects and client rules.
    pub fn with_presentation(mut self, presentation: view::Presentation) -> Snapshot {
        self.presentation = presentation;
        self.views = Mutex::default();
        self.plain = Default::default();
        self.unlisted = OnceLock::new();
        self
    }

    /// What a client calling itself `client` sees with protocol `version`.
    pub(super) fn view(
        &self,
        client: Option<&str>,
        version: Option<&ProtocolVersion>,
    ) -> Arc<view::View> {
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

    /// The view a call of `client` resolves its tool's name and arguments through: its
    /// [`Snapshot::view`], except that a client no rule matches, when nothing is adapted,
    /// does not wait for its listing to be made (for 11,000 tools and protocol 2026-07-28
    /// that took 0.3 s): such a view calls tools by their catalog names and passes
    /// arguments as they are, whatever it lists.
    pub(super) fn calling_view(
        &self,
        client: Option<&str>,
        version: Option<&ProtocolVersion>,
    ) -> Arc<view::View> {
        if self.presentation.rule_for(client).is_some() || !self.presentation.is_plain() {
            return self.view(client, version);
        }
        if let Some(view) = self.plain[version_index(version)].get() {
            return view.clone();
        }
        self.unlisted
            .get_or_init(|| Arc::new(view::View::plain(Arc::default())))
            .clone()
    }

    /// The tools' scope requirements.
    pub(super) fn scopes(&self) -> &ScopePolicy {
        self.scopes.get_or_init(|| ScopePolicy::new(self.catalog()))
    }

    /// What [`Snapshot::view`] lists for `caller`: with an OAuth caller, only the tools
    /// its token's scopes open (the discovery tools always).
    pub(super) fn listing_view(
        &self,
        client: Option<&str>,
        version: Option<&ProtocolVersion>,
        caller: Option<&Caller>,
    ) -> Arc<view::View> {
        let base = self.view(client, version);
        let Some(caller) = caller else {
            return base;
        };
        let policy = self.scopes();
        if policy.is_open() {
            return base;
        }
        let key = (
            base.rule,
            version_index(version) as u8,
            policy.key(&caller.scopes),
        );
        let mut scoped = self.scoped.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(view) = scoped.get(&key) {
            return view.clone();
        }
        if scoped.len() >= MAX_SCOPED_VIEWS {
            scoped.clear();
        }
        let tools: Vec<ListedTool> = base
            .tools
            .iter()
            .filter(|tool| {
                policy
                    .missing(base.catalog_name(&tool.name), &caller.scopes)
                    .is_none()
            })
            .cloned()
            .collect();
        let mut view = view::View::plain(Arc::new(tools));
        view.rule = base.rule;
        let view = Arc::new(view);
        scoped.insert(key, view.clone());
        view
    }

    /// The whole `tools/list` result a client calling itself `client` (its
    /// `clientInfo.name`; `None` for one no `[[clients]]` rule names) gets on protocol
    /// `revision`, with no OAuth caller: the listing a server of this snapshot serves, every
    /// page gathered into one result (the pages are consecutive slices of it, so this is
    /// their concatenation). What `restmcp tools --json` prints. `Err` names the revisions
    /// there are when `revision` is none of [`LISTING_REVISIONS`].
    pub fn tools_list(&self, client: Option<&str>, revision: &str) -> Result<Vec<u8>, String> {
        let Some(version) = super::revision::named(revision) else {
            return Err(format!(
                "unknown protocol revision {revision:?} (one of {})",
                LISTING_REVISIONS.join(", ")
            ));
        };
        let view = self.listing_view(client, Some(&version), None);
        let all = Page {
            tools: &view.tools,
            next_cursor: None,
        };
        Ok(all.to_json(&version))
    }

    /// The catalog this snapshot serves.
    pub fn catalog(&self) -> &Arc<Catalog> {
        self.dispatcher.catalog()
    }

    /// API `api`'s configuration (`None` for a snapshot not made from a configuration).
    pub fn api_config(&self, api: &str) -> Option<&crate::config::ApiConfig> {
        self.api_configs.get(api)
    }

    /// The context of a call that came with the HTTP `headers` ([`Dispatcher::context_of`]).
    pub fn context_of(&self, headers: &axum::http::HeaderMap) -> crate::upstream::CallContext {
        self.dispatcher.context_of(headers)
    }

    /// `text` with every secret the dispatcher knows replaced ([`Dispatcher::redact`]).
    pub fn redact(&self, text: &str) -> String {
        self.dispatcher.redact(text)
    }

    pub(super) fn tools_for(&self, version: Option<&ProtocolVersion>) -> &Arc<Vec<ListedTool>> {
        let index = version_index(version);
        self.listed[index].get_or_init(|| Arc::new(self.listing(index)))
    }

    /// The `tools/list` entries for protocol versions of [`version_index`] `index`: the
    /// discovery tools first (with a large API they are what the model should see), then
    /// the catalog's listed tools.
    fn listing(&self, index: usize) -> Vec<ListedTool> {
        let catalog = self.catalog();
        let status = self
            .lists_status_tool
            .then(|| super::operations::status_tool_definition(&self.status_tool));
        let meta = self
            .discovery
            .definitions()
            .iter()
            .chain(status.as_ref())
            .filter_map(|definition| match ListedTool::from_definition(definition) {
                Ok(tool) => Some((tool, false)),
                Err(e) => {
                    tracing::error!("restmcp's own tool left out of tools/list: {e}");
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

/// The MCP server's state, shared by every connection and transport: the current snapshot
/// (swapped on reload), the clients to notify when it changes, the message budgets, the
/// metrics, and what calls keep between requests (confirmations, the store, operations).
/// Its methods are the protocol's work on tool lists (here) and the call pipeline
/// (`call.rs`).
pub struct ServerState {
    /// The tool set being served.
    current: RwLock<Arc<Snapshot>>,
    /// Initialize-based sessions (they get `notifications/tools/list_changed` directly).
    pub(super) peers: Mutex<Vec<Peer<RoleServer>>>,
    /// 2026-07-28 clients listening with `subscriptions/listen` for tool-list changes.
    pub(super) subscribers: Mutex<Vec<SubscriptionSink>>,
    /// How many snapshots [`ServerState::swap`] has put in place (a reload's changed tools,
    /// resources or prompts among them): a listen acknowledged before a reload but not yet
    /// among `subscribers` compares it (`McpServer::listen`).
    pub(super) swaps: std::sync::atomic::AtomicU64,
    /// Page sizes and message budgets.
    pub(super) limits: Limits,
    /// Counters and histograms for `/metrics`.
    metrics: Arc<Metrics>,
    /// Asks users to confirm the calls that need it.
    pub(super) confirmer: Confirmer,
    /// Stored results of calls made with an idempotency key (and, through the confirmer,
    /// redeemed confirmations): shared by replicas with `[server.store]`.
    pub(super) store: Arc<Store>,
    /// How long a result stays under its idempotency key.
    pub(super) idempotency_ttl: std::time::Duration,
    /// Handles of long-running operations, the status tool and tasks.
    pub(super) operations: super::operations::Operations,
    /// Resource subscriptions held, over all sessions.
    pub(super) subscriptions: super::tables::Subscriptions,
    /// List tools' values for completions, kept briefly.
    pub(super) completions: super::tables::Completions,
}

impl ServerState {
    /// `snapshot` served with `page_size` tools a page and the default message budgets.
    pub fn new(snapshot: Snapshot, page_size: usize) -> Arc<ServerState> {
        let settings = crate::config::ServerSettings {
            page_size,
            ..Default::default()
        };
        let store = Arc::new(Store::memory());
        let confirmer = Confirmer::unkeyed(&settings.confirm, store.clone());
        ServerState::build(snapshot, &settings, confirmer, store)
    }

    /// `snapshot` served with the page size, message budgets and confirmation settings of
    /// `settings` and an in-process store; the confirmation key is read from the
    /// environment.
    pub fn with_settings(
        snapshot: Snapshot,
        settings: &crate::config::ServerSettings,
    ) -> Result<Arc<ServerState>, ConfirmError> {
        ServerState::with_store(
            snapshot,
            settings,
            Arc::new(Store::memory_with(&settings.store)),
        )
    }

    /// [`ServerState::with_settings`] with the store replicas share ([`Store::open`]).
    pub fn with_store(
        snapshot: Snapshot,
        settings: &crate::config::ServerSettings,
        store: Arc<Store>,
    ) -> Result<Arc<ServerState>, ConfirmError> {
        let confirmer = Confirmer::new(&settings.confirm, store.clone(), |name| {
            std::env::var(name).ok()
        })?;
        Ok(ServerState::build(snapshot, settings, confirmer, store))
    }

    fn build(
        snapshot: Snapshot,
        settings: &crate::config::ServerSettings,
        confirmer: Confirmer,
        store: Arc<Store>,
    ) -> Arc<ServerState> {
        let metrics = Metrics::new();
        metrics.set_tools(snapshot.catalog().len());
        Arc::new(ServerState {
            current: RwLock::new(Arc::new(snapshot)),
            peers: Mutex::new(Vec::new()),
            subscribers: Mutex::new(Vec::new()),
            swaps: std::sync::atomic::AtomicU64::new(0),
            limits: Limits::from_settings(settings),
            metrics,
            operations: super::operations::Operations::new(
                confirmer.codec().clone(),
                store.clone(),
            ),
            confirmer,
            store,
            subscriptions: Default::default(),
            completions: Default::default(),
            idempotency_ttl: std::time::Duration::from_secs(settings.store.idempotency_ttl_seconds),
        })
    }

    /// How long the answer to a request may take, past which an SSE answer is ended with an
    /// error: for a `tools/call` of a tool of the catalog, its time limit (and a human's
    /// time to confirm it, when it needs that); for anything else (a discovery tool, an
    /// alias, `tasks/get`), the longest of them. Plus a few seconds for the store.
    pub(super) fn answer_deadline(&self, method: &str, tool: Option<&str>) -> std::time::Duration {
        /// Room for the shared store's commands and the answer's own way out.
        const GRACE: std::time::Duration = std::time::Duration::from_secs(10);
        let snapshot = self.current();
        let dispatcher = &snapshot.dispatcher;
        let known = tool
            .filter(|_| method == "tools/call")
            .and_then(|name| snapshot.catalog().get(name));
        let (limit, confirms) = match known {
            Some(tool) => (dispatcher.time_limit(tool), tool.route.needs_confirmation()),
            None => (
                dispatcher.longest_time_limit(),
                tool.is_some_and(|name| snapshot.may_confirm(name)),
            ),
        };
        let asking = if confirms {
            self.confirmer.ttl()
        } else {
            std::time::Duration::ZERO
        };
        limit + asking + self.store.timeout() * 4 + GRACE
    }

    /// Every OAuth scope some tool of the current tool set asks for (sorted): what a
    /// token may be granted here, beside `[server.oauth] scopes`.
    pub fn tool_scopes(&self) -> Vec<String> {
        self.current().scopes().scopes().to_vec()
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
        drop(guard);
        self.swaps.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
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

impl ServerState {
    /// The `tools/list` result for `cursor` (from an earlier page) in `view`, as JSON for
    /// protocol `version`: serialized once per view and cursor, then copied.
    pub(super) fn list_result(
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
    pub(super) fn list_page<'v>(
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
