//! The mock upstream: answers tool calls from the spec itself.
//!
//! For an API in mock mode, each tool carries a [`crate::catalog::MockAnswer`] made at load
//! time: the spec's response example, or a value generated from the response schema
//! ([`crate::schema::example`]).
//! At call time the dispatcher builds the request exactly as for a real upstream and hands
//! it to [`respond`], which checks it against the operation and answers.

pub mod respond;
