//! MCP: the protocol face of restmcp, on the official Rust SDK (`rmcp`). This is the only
//! module that serves with rmcp (only [`crate::selftest`] uses it too, as a client), so the
//! next protocol revision is a contained change.
//!
//! Where to start reading:
//! - `snapshot`: the [`Snapshot`] of the tool set being served and [`Shared`], which
//!   holds the current one, replaces it at run time (telling clients with
//!   `notifications/tools/list_changed`) and cuts `tools/list` into pages;
//! - `call`: the call pipeline, one `tools/call` from the client's names to the
//!   dispatcher and back, counted and logged once;
//! - `server`: [`McpServer`], the `ServerHandler` the SDK drives;
//! - `revision`: which protocol generation a client speaks and the SDK's finishing
//!   touches per revision; `listed`: a tool as a listing carries it; [`view`]: what one
//!   client sees (dialects, name budgets);
//! - transports: [`stdio`], [`http`] (Streamable HTTP, with `front` in front of the SDK's
//!   service and `direct`, the fast path for `tools/call` and `tools/list`), [`sse`] (the
//!   legacy HTTP+SSE transport);
//! - bounds: [`session`] caps Streamable HTTP sessions (evicting the one idle the longest)
//!   and expires idle ones itself, since rmcp's idle timer never sees the calls answered
//!   directly, and caps long-lived event streams; [`admission`] caps requests in flight
//!   per client; [`sizes`] keeps every message within what the clients on each transport
//!   accept (`tools/list` pages by bytes, large results cut to fit); `jsonrpc` is what
//!   a well-formed message is, checked before the SDK sees it.

pub mod admission;
mod call;
mod direct;
mod front;
pub mod http;
mod jsonrpc;
mod listed;
mod revision;
mod server;
pub mod session;
pub mod sizes;
mod snapshot;
pub mod sse;
pub mod stdio;
pub mod streams;
pub mod view;

pub use server::McpServer;
pub use snapshot::{Shared, Snapshot};
