//! restmcp turns REST APIs described by OpenAPI into Model Context Protocol tools.
//!
//! Data flows one way through one module per stage:
//!
//! ```text
//! config.toml + env + flags ─► config ─► spec ─► catalog ─► (dispatch, MCP transports)
//! ```
//!
//! * [`config`] layers the TOML file, `RESTMCP_*` environment variables and flags into a
//!   validated [`config::Config`].
//! * [`spec`] reads Swagger 2.0 and OpenAPI 3.0/3.1 documents (JSON or YAML, files or URLs),
//!   resolves `$ref`s across documents and normalizes every operation into one small model.
//! * [`schema`] translates OpenAPI schemas into self-contained JSON Schema 2020-12.
//! * [`catalog`] synthesizes one MCP tool per operation (name, description, input and output
//!   schemas, annotations) and the argument map that says where each argument goes on the
//!   wire.
//! * [`upstream`] turns a tool call into the exact HTTP request and the response into a
//!   tool result.
//! * [`mcp`] serves the tools over MCP (stdio and Streamable HTTP) with the official SDK.
//! * [`mock`] is the mock upstream: it answers tool calls from the spec itself, with
//!   deterministic example values generated from the tools' JSON Schemas.
//! * [`schemas`] holds the JSON Schemas editors use for `config.toml` and overlay files.
//! * [`load`] runs the stages above for a whole configuration; [`cli`] is the command line.
//! * [`selftest`] calls every tool over both transports against the mock upstream, for CI
//!   (or, with `--live`, against the configured upstreams).
//! * [`reload`] notices when the configuration or a spec changed (or SIGHUP arrived), and
//!   what a reload changed in the tool set.
//!
//! Lower stages never import higher ones: `spec` knows nothing of tools, `catalog` nothing
//! of transports. Start reading at [`load::load`], then [`catalog::build`].

pub mod catalog;
pub mod cli;
pub mod config;
pub mod discovery;
pub mod http;
pub mod http_client;
pub mod json;
pub mod load;
pub mod mcp;
pub mod mock;
pub mod reload;
pub mod schema;
pub mod secret;
pub mod spec;
pub mod telemetry;
pub mod upstream;
