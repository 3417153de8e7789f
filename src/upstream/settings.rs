//! How one API is called: time limits, the response size cap, retries, rate limits,
//! redirects and compression, as the dispatcher and the HTTP exchange read them.

use std::collections::HashMap;
use std::time::Duration;

use crate::config::RateLimit;

/// How one API is called.
#[derive(Debug, Clone)]
pub struct UpstreamSettings {
    pub timeout: Duration,
    pub tool_timeouts: HashMap<String, Duration>,
    pub max_response_bytes: u64,
    pub max_retries: u32,
    /// Calls per second for each tool of the API.
    pub rate_limit: Option<RateLimit>,
    pub tool_rate_limits: HashMap<String, RateLimit>,
    /// Origins besides the API's own that redirects may lead to, as
    /// [`crate::config::parse_origin`] writes them.
    pub follow_redirects: Vec<String>,
    /// Origins credentials (and forwarded headers) may go to besides the API's own: the
    /// configured `base_url`'s and `credential_origins`.
    pub credential_origins: Vec<String>,
    /// Send `Accept-Encoding: gzip, deflate, br`.
    pub compression: bool,
    /// The most a JSON result may hold, in estimated tokens; 0 = no limit.
    pub max_result_tokens: u64,
    /// Page-size arguments above this are lowered to it.
    pub max_page_size: Option<u64>,
}

impl Default for UpstreamSettings {
    fn default() -> Self {
        UpstreamSettings {
            timeout: Duration::from_secs(30),
            tool_timeouts: HashMap::new(),
            max_response_bytes: 4 * 1024 * 1024,
            max_retries: 2,
            rate_limit: None,
            tool_rate_limits: HashMap::new(),
            follow_redirects: Vec::new(),
            credential_origins: Vec::new(),
            compression: true,
            max_result_tokens: crate::config::DEFAULT_MAX_RESULT_TOKENS,
            max_page_size: None,
        }
    }
}
