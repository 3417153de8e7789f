//! What `--live` changes about a call: how long it may take. Against the mock every call
//! gets [`CALL_TIMEOUT`]; live, the configured upstream timeouts plus a margin, when that is
//! longer. (The other differences are one line each: `run` no longer forces every API
//! into mock mode, and the stdio child is started without `--mock`.)

use std::time::Duration;

use crate::config::Config;

/// A call that gets no answer in this long is a failure (a stuck server must not hang CI).
/// Live, the longest upstream timeout of the configuration plus [`CALL_TIMEOUT_MARGIN`] is
/// allowed instead, when that is longer.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const CALL_TIMEOUT_MARGIN: Duration = Duration::from_secs(10);

/// A live call's time limit: the longest upstream timeout of the configuration (an API's
/// `timeout_seconds` or one of its `tool_timeouts`) plus a margin for the MCP round trip,
/// and never less than [`CALL_TIMEOUT`]; an upstream error result then arrives before the
/// selftest gives up on the call.
pub(super) fn call_timeout(config: &Config) -> Duration {
    let longest = config
        .apis
        .values()
        .flat_map(|api| {
            std::iter::once(api.timeout_seconds).chain(api.tool_timeouts.values().copied())
        })
        .filter(|s| s.is_finite() && *s > 0.0)
        .fold(0.0_f64, f64::max);
    let limit = Duration::try_from_secs_f64(longest).unwrap_or(CALL_TIMEOUT) + CALL_TIMEOUT_MARGIN;
    limit.max(CALL_TIMEOUT)
}
