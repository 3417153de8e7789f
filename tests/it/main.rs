//! Integration tests: one binary, a module per feature (see DEVELOPERS.md).

mod cli;
mod dispatch;
mod real_specs;
mod remote;
mod snapshots;
mod support;
mod upstream;
