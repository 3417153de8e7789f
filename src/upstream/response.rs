//! An upstream HTTP response → a [`ToolResult`].

use serde_json::Value;

use super::ToolResult;
use crate::catalog::OutputPlan;

/// What came back from the upstream, already read (up to the size cap).
#[derive(Debug, Clone, Copy)]
pub struct HttpResponse<'a> {
    pub status: u16,
    /// The status line's reason, or the canonical one (`Not Found`).
    pub reason: &'a str,
    pub content_type: Option<&'a str>,
    /// The body as read: at most the configured cap.
    pub body: &'a [u8],
    /// Bytes not read because the body was larger than the cap (0 if it was all read).
    pub omitted: u64,
}

/// Maps a response to a tool result. `output` is the tool's output plan (None when the
/// tool has no outputSchema); `check_output` validates a structured result against the
/// published outputSchema and returns every violation as text.
pub fn to_result(
    api: &str,
    response: &HttpResponse<'_>,
    output: Option<&OutputPlan>,
    check_output: &dyn Fn(&Value) -> Result<(), String>,
) -> ToolResult {
    let _ = (api, response, output, check_output);
    unimplemented!("response mapping")
}
