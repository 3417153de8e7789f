//! restmcp turns REST APIs described by OpenAPI into Model Context Protocol tools.
//!
//! # The floors
//!
//! Data flows one way, and each module imports only modules on floors below its own
//! (`tests/it/layers.rs` reads this table and fails on an import that runs up, on a circle
//! between the files of a folder, and on a new top-level module that has no floor yet; a
//! line starting with a number opens a floor, its modules are the words before the gap):
//!
//! ```text
//!  0  config   json   secret   http_client      settings, and helpers any floor may use
//!     digest   rate   parallel   alloc
//!  1  telemetry   identity   store              logs, metrics, trace context; who calls;
//!                                                keys replicas share
//!  2  spec                                       bytes → documents → one operation model
//!  3  schema                                     OpenAPI schemas → JSON Schema 2020-12
//!  4  catalog                                    operations → tools (an immutable snapshot)
//!  5  upstream                                   a tool call → the HTTP request → a result
//!  6  mock   discovery                           the spec-derived upstream; search/meta modes
//!  7  load                                       a whole Config → a Catalog
//!  8  mcp                                        the protocol, on the official SDK (rmcp)
//!  9  http   reload                              the sidecar's server; change detection
//! 10  cli                                        the commands
//! ```
//!
//! # The components
//!
//! * [`config`] layers `config.toml`, `RESTMCP_*` environment variables and flags into raw
//!   settings and validates them into a [`config::Config`]; it owns its own types and imports
//!   nothing else of the crate.
//! * [`json`] (value kinds, number-aware equality, pointer escaping, compact length), [`secret`] (values that
//!   never print), [`digest`] (hex, SHA-256 of parts, random tokens), [`rate`] (token
//!   buckets, and a bounded table of them per key), [`parallel`] (a map over a slice on all
//!   cores) and [`http_client`] (the rustls provider, the pooled client that watches spec
//!   URLs, how a transport error is worded) are small and cross-cutting; [`alloc`] is the
//!   allocator (mimalloc) the binary and the benchmarks install.
//! * [`telemetry`] writes logs to stderr, keeps the Prometheus metrics and W3C trace context,
//!   and feeds the console the calls as they happen ([`telemetry::feed`]).
//! * [`identity`] is who a request acts for: the [`identity::Caller`] an OAuth access token
//!   named (issuer, subject, scopes), made by the HTTP guard and read by the floors above.
//! * [`store`] keeps short-lived keys that replicas share (set-if-absent with expiry):
//!   results stored under idempotency keys and redeemed confirmations, in-process or in a
//!   Redis/Valkey server.
//! * [`spec`] reads Swagger 2.0 and OpenAPI 3.0/3.1 documents (JSON or YAML, files or URLs),
//!   resolves `$ref`s across documents within their place, applies OpenAPI Overlays (with the
//!   RFC 9535 engine in [`spec::jsonpath`]) and normalizes every operation into one model;
//!   [`spec::arazzo`] reads Arazzo documents (workflows, runtime expressions, criteria).
//! * [`schema`] translates OpenAPI schemas into self-contained JSON Schema 2020-12 (repeats
//!   hoisted into `$defs`, [`schema::hoist()`]), shapes them for client dialects
//!   ([`schema::dialect`]) and generates example values from a schema ([`schema::example`]).
//! * [`catalog`] synthesizes one MCP tool per operation (name, description, schemas,
//!   annotations, the argument map that says where each argument goes on the wire), applies
//!   the operator's tool patches ([`catalog::patch`]) and hand-written tools, marks tools
//!   served as resources too ([`catalog::resource`]), gathers the prompts
//!   ([`catalog::prompt`]), makes one tool of each Arazzo workflow whose steps resolve to
//!   its tools ([`catalog::workflow`]), and reports what it did (`restmcp check`).
//! * [`upstream`] validates a call's arguments, builds the exact HTTP request (an
//!   idempotency key included), adds credentials, sends it through an
//!   [`upstream::Exchange`] and maps the answer to a result, a long list bounded by whole
//!   items ([`upstream::paging`]) and a long-running operation followed to its result
//!   ([`upstream::operation`]); it also runs a workflow tool's steps, each through that same
//!   pipeline ([`upstream::Dispatcher::run_workflow`]).
//! * [`mock`] is the other [`upstream::Exchange`]: it answers from the spec itself; `load`'s
//!   callers plug it in with [`mock::plug`].
//! * [`discovery`] serves huge APIs through a search or meta tool instead of one tool each.
//! * [`load`] runs config → spec → catalog for a whole configuration and says which files and
//!   URLs the result depends on.
//! * [`mcp`] serves the tools over stdio, Streamable HTTP and legacy SSE with the official
//!   SDK, and the resources, prompts and completions the operator made of them (reads run
//!   the tool's own pipeline; subscriptions poll conditionally), asks a human before calls
//!   that need confirmation (and for arguments the model left out), answers repeats of idempotent
//!   calls from the store, and hands operations still going upstream over as a handle (the
//!   `operation_status` tool) or a 2026-07-28 task; its module doc lists every behaviour
//!   restmcp adds over rmcp, and why.
//! * [`http`] is the sidecar: the listener, the guard (Host, Origin, tokens), the OAuth
//!   resource server ([`http::oauth`]), health, metrics, the operators' console
//!   ([`http::console`]), TLS and graceful shutdown;
//!   [`reload`] notices changed files (or SIGHUP) and swaps the snapshot atomically.
//! * [`cli`] is the command line: `serve`, `stdio`, `init`, `tools`, `check`, `call`,
//!   `explain`, `selftest`, `schema`.
//!
//! Start reading at [`load::load`], then [`catalog::build`], then [`upstream::Dispatcher`]
//! and [`mcp`].

pub mod alloc;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod digest;
pub mod discovery;
pub mod http;
pub mod http_client;
pub mod identity;
pub mod json;
pub mod load;
pub mod mcp;
pub mod mock;
pub mod parallel;
pub mod rate;
pub mod reload;
pub mod schema;
pub mod secret;
pub mod spec;
pub mod store;
pub mod telemetry;
pub mod upstream;
