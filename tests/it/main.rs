//! Integration tests: one binary, a module per feature (README, "Development"); `support` holds what they share.

mod bad_input;
mod bodies;
mod cli;
mod deploy;
mod dialects;
mod discovery;
mod dispatch;
mod faults;
mod fuzz;
mod layers;
mod mcp;
mod mock;
mod negotiation;
mod overlays;
mod prism;
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
