//! MCP over stdio: newline-delimited JSON-RPC on stdin/stdout and nothing else on stdout
//! (logs go to stderr), for desktop clients that start restmcp as a child process.

use std::sync::Arc;

use rmcp::ServiceExt as _;

use super::{McpServer, Shared};

/// Serves until stdin closes or the client disconnects.
pub async fn serve(shared: Arc<Shared>) -> Result<(), String> {
    let running = McpServer::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("stdio session failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("stdio session ended with an error: {e}"))
}
