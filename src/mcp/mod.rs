//! MCP: the protocol face of restmcp, on the official Rust SDK (`rmcp`). This is the only
//! module that serves with rmcp (only [`crate::cli::selftest`] uses it too, as a client), so the
//! next protocol revision is a contained change.
//!
//! Where to start reading:
//! - `snapshot`: the [`Snapshot`] of the tool set being served and [`ServerState`], which
//!   holds the current one, replaces it at run time (telling clients with
//!   `notifications/tools/list_changed`) and cuts `tools/list` into pages;
//! - the surface besides tools: `resources` (list, templates, read through the tool's
//!   pipeline), `subscriptions` (conditional polling), `prompts`, `completion`, `tables`
//!   (the subscription count and the completion cache), and `ask` (arguments asked of
//!   the user before a call is built);
//! - `request`: one `tools/call` as its JSON-RPC message carries it (id, name, arguments,
//!   `_meta`), read once for every transport, and its answer written once;
//! - `call`: the call pipeline, one `tools/call` from the client's names to the
//!   dispatcher and back, counted and logged once; on the way, [`crate::upstream::idempotency`] answers a
//!   repeat under the same idempotency key from the store, `confirm` asks a human
//!   before a call that needs it, and `operations` gives an operation still going upstream
//!   a sealed handle (the `operation_status` tool) or, for a 2026-07-28 client that takes
//!   them, makes it a task (`tasks/get`, `tasks/cancel`); `workflow` takes a call of an
//!   Arazzo workflow's tool (its key, its one confirmation of the plan) to the dispatcher;
//! - `server`: [`McpServer`], the `ServerHandler` the SDK drives;
//! - [`console`]: what the HTTP console asks of this layer: a tool as one client lists it,
//!   and a call tried from the page through the same pipeline, its request kept;
//! - `revision`: which protocol generation a client speaks and the SDK's finishing
//!   touches per revision; `listed`: a tool as a listing carries it; [`view`]: what one
//!   client sees (dialects, name budgets); `scopes`: which tools an OAuth caller's scopes
//!   open (its listing and its calls);
//! - transports: [`stdio`], [`streamable`] (Streamable HTTP, with `front` in front of the SDK's
//!   service and `direct`, the fast path for `tools/call` and `tools/list`), [`sse`] (the
//!   legacy HTTP+SSE transport);
//! - the session model and bounds: [`session`] holds what each session's handshake settled
//!   (client, agreed revision; stdio's `Negotiation` as it passes) and the one table of
//!   calls running outside the SDK, for stdio and Streamable HTTP alike, and caps Streamable HTTP sessions (evicting the one idle the
//!   longest) and expires idle ones itself, since rmcp's idle timer never sees the calls
//!   answered directly; [`streams`] caps long-lived event streams; [`admission`] caps
//!   requests in flight per client; [`sizes`] keeps every message within what the clients
//!   on each transport accept (`tools/list` pages by bytes, large results cut to fit);
//!   `jsonrpc` is what a well-formed message is, checked before the SDK sees it.
//!
//! # What restmcp adds over rmcp, and why
//!
//! The checklist for an rmcp upgrade: for each item, see whether the SDK now does it (then
//! drop ours) or changed what it works around.
//! 1. **JSON-RPC batches** (`front`, [`stdio`]): accepted from clients of 2025-03-26, the one
//!    revision that allows them, and answered member by member; rmcp refuses them over
//!    HTTP and drops them silently on stdio.
//! 2. **Plain JSON answers in session mode** (`front`): rmcp answers every POST of a
//!    session with an SSE stream; a request that will not stream progress gets
//!    `application/json` (no SSE event limit, nothing to read back).
//! 3. **The direct path** (`direct`): `tools/call` and `tools/list` that want plain JSON
//!    are answered in the connection's task, built from the SDK's own types, instead of
//!    crossing the session worker's channel, a spawned handler and an SSE stream. Proof
//!    that it answers exactly as the SDK: `direct_answers_are_the_answers_the_sdk_gives`
//!    (tests/it/mcp.rs); `a_direct_call_is_cancelled_by_its_notification` for cancelling.
//!    On [`stdio`], `tools/call` after the handshake (no progress, no `logging/setLevel`) is
//!    answered the same way, beside the SDK's pipe: `stdio_direct_calls_answer_as_the_sdk_does`
//!    and `a_stdio_direct_call_is_cancelled_by_its_notification` (tests/it/sizes.rs).
//! 4. **Session bounds** (`session`, [`streamable`]): rmcp's session map has no cap and its idle
//!    timer never sees direct calls, so its keep-alive is off and the table caps sessions
//!    (`server.max_sessions`, and `server.max_sessions_per_client`: the client holding the
//!    most gives up one without a call in flight) and expires idle ones
//!    (`server.session_idle_seconds`); [`streams`] caps event streams, SSE answers to POSTs
//!    included (`server.max_sse_streams`, `server.max_streams_per_client`). rmcp routes the
//!    answers of two requests with one id to the second and never ends the first one's
//!    stream, so a request whose id is in flight in its session is refused (400, -32600), and
//!    every SSE answer ends at its request's deadline (`front`).
//! 5. **Admission** ([`admission`]): at most `server.max_in_flight_per_client` requests in
//!    flight per client (its token's caller, else its address; 429), and graceful shutdown
//!    waits until none is in flight.
//! 6. **Message checks before the SDK** (`jsonrpc`, `front`, [`stdio`]): a body or line
//!    that is not a JSON-RPC message as MCP defines one gets -32700, -32600 or -32602 with
//!    its id (rmcp says 415 in plain text over HTTP, and an error without an id on stdio);
//!    a stdio line over `server.max_request_bytes` is refused without being held.
//! 7. **HTTP details** (`front`): a session DELETE is answered 200, not 202 (the Python SDK
//!    wants 200 or 204); with `server.require_accept` off a request lacking the `Accept`
//!    types is served; a body must arrive within `server.body_read_timeout_seconds` (408).
//! 8. **Legacy HTTP+SSE** ([`sse`]): rmcp removed it in 0.11; older clients still speak
//!    it, so it is written here over the SDK's stdio-style pipe.
//! 9. **Message sizes** ([`sizes`]): pages end by bytes as well as count, results are cut
//!    to the transport's budget, and an answer still too large becomes a JSON-RPC error on
//!    stdio and legacy SSE (the Python SDK ends a session on an SSE event over 1 MiB, the
//!    TypeScript SDK closes stdio past 10 MiB).
//! 10. **Listings from shared schema text** (`listed`, `snapshot`, [`stdio`]): the SDK's
//!     `Tool` holds a copy of every schema (about 35 MB per copy of GitHub's catalog) and
//!     rebuilds a page each time; restmcp writes pages from the catalog's text once per
//!     view and cursor, and answers stdio's `tools/list` from them too. Proof that an entry
//!     is what the SDK reads: `listed_tools_are_the_catalogs_mcp_json` (listed.rs) and
//!     `stdio_tools_list_pages_are_the_pages_http_serves` (tests/it/mcp.rs).
//! 11. **Revision shaping** (`revision`, `snapshot`, `call`): 2024-11-05 listings have no
//!     annotations, 2025-03-26 no `title` and no `outputSchema`; `structuredContent` only
//!     from 2025-06-18; 2026-07-28 results carry `resultType` and cache hints, older ones
//!     neither.
//! 12. **2026-07-28 stateless requests** (`direct`, `call`): a request whose headers and
//!     `_meta` agree on the revision, `clientInfo` and capabilities is answered without a
//!     session; its structured results may be any JSON value, so a wrapped `outputSchema`
//!     is listed unwrapped and the body passed as the API returned it.
//! 13. **Unknown methods** (`server`): rmcp answers `prompts/list`, `resources/list`,
//!     `resources/templates/list` and `completion/complete` with empty lists even when
//!     the capability is not declared; restmcp declares them only when it serves some
//!     (`resources`, `prompts`, `completion`) and answers -32601 otherwise.
//! 14. **Subscriptions** (`server`, `subscriptions`): a 2026-07-28 `subscriptions/listen`
//!     is acknowledged with the part of its filter restmcp honours (list changes of what it
//!     serves, and the resources it serves, polled for as long as it is open), and its
//!     stream takes no admission ticket; REST has no change notifications, so
//!     `resources/subscribe` is served by conditional polling.
//! 15. **Confirmation** (`confirm`, `front`, `direct`, [`stdio`]): rmcp gives the
//!     pieces (`create_elicitation`, `InputRequiredResult`, `RequestStateCodec`); restmcp
//!     decides when to ask, binds the sealed state to the caller and the exact request,
//!     redeems it once in the shared store, and keeps calls that may ask off the direct
//!     paths (and off plain JSON answers) so the question can travel on the call's stream.
//! 16. **Log messages during a call** (`server`, `front`, [`stdio`]): rmcp leaves logging to
//!     the handler; restmcp forwards what the call tells its [`crate::upstream::CallLog`],
//!     and keeps the calls of a session that set a level (or of a request carrying its own
//!     `logLevel`) off the direct paths and plain JSON answers, so the messages can travel.

pub mod admission;
mod ask;
mod call;
mod completion;
mod confirm;
pub mod console;
mod direct;
mod front;
mod jsonrpc;
mod listed;
mod operations;
mod prompts;
mod request;
mod resources;
mod revision;
mod scopes;
mod server;
pub mod session;
pub mod sizes;
mod snapshot;
pub mod sse;
pub mod stdio;
pub mod streamable;
pub mod streams;
mod subscriptions;
mod tables;
pub mod view;
mod workflow;

pub use confirm::ConfirmError;
pub use operations::STATUS_TOOL_TITLE;
pub use server::McpServer;
pub use snapshot::{LISTING_REVISIONS, ServerState, Snapshot};
