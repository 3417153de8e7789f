//! The trust boundary: each hostile input an attacker controls (a spec, what it
//! references, an MCP client, a slow or greedy connection) is refused with a clear error or
//! bounded, and the server keeps answering.
//!
//! * [`spec_trust`]: a spec's `x-mcp` cannot read the environment or raise limits; credentials
//!   go only to the origins the operator configured.
//! * [`refs`]: `$ref`s and spec fetching stay in their place; documents are size-capped.
//! * [`limits`]: the HTTP listener, sessions, SSE streams and in-flight calls are bounded, and a
//!   request with two `Host` headers gets 400.
//! * [`echo`]: nothing echoes what it should not (config errors, encoded secrets), and a reload
//!   that hangs is abandoned.
//! * [`clients`]: a repeated request id, a client holding every session, stream or
//!   in-flight slot, and static-token clients reaching each other's records.
//! * [`upstreams`]: an upstream naming an operation's monitor elsewhere, echoing
//!   issued tokens, or filling the idempotency store.

mod clients;
mod echo;
mod limits;
mod refs;
mod spec_trust;
mod upstreams;
