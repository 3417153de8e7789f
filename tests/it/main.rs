//! Integration tests: one binary, a module per feature (see DEVELOPERS.md).

mod bad_input;
mod bodies;
mod cli;
mod deploy;
mod dialects;
mod discovery;
mod dispatch;
mod faults;
mod fuzz;
mod mcp;
mod mock;
mod negotiation;
mod overlays;
mod properties;
mod real_specs;
mod reload;
mod remote;
mod security;
mod selftest;
mod sidecar;
mod sizes;
mod snapshots;
mod support;
mod upstream;
