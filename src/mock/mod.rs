//! The mock upstream: answers tool calls from the spec itself.
//!
//! For an API in mock mode, each tool carries a [`crate::catalog::MockAnswer`] made at load
//! time: the spec's response example, or a value generated from the response schema
//! ([`crate::schema::example`]).
//! At call time the dispatcher builds the request exactly as for a real upstream and hands
//! it to the [`exchange::MockUpstream`] plugged in for the API (by [`plug`], where the
//! dispatcher is built), which has [`respond`] check it against the operation and answer.
//! This module sits above [`crate::upstream`]: it implements the dispatcher's
//! [`crate::upstream::Exchange`] seam, and `upstream` knows nothing of it.
//!
//! * [`respond`]: a request checked against its operation, and the answer.
//! * [`exchange`]: the [`crate::upstream::Exchange`] the dispatcher calls, with its cache of
//!   compiled body validators.

pub mod exchange;
pub mod respond;

pub use exchange::{MockUpstream, plug};
