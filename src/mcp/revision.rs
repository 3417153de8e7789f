//! Protocol revisions: which generation of MCP a client speaks, and the SDK's finishing
//! touches for a result in it. The per-revision shape of a listing lives with the listing
//! ([`super::snapshot`]), of a call result with the call ([`super::call`]).

use rmcp::model::{ProtocolVersion, ServerResult};

/// The protocol revision `revision` names, when it is one of [`super::LISTING_REVISIONS`].
pub(super) fn named(revision: &str) -> Option<ProtocolVersion> {
    Some(match revision {
        "2024-11-05" => ProtocolVersion::V_2024_11_05,
        "2025-03-26" => ProtocolVersion::V_2025_03_26,
        "2025-06-18" => ProtocolVersion::V_2025_06_18,
        "2025-11-25" => ProtocolVersion::V_2025_11_25,
        "2026-07-28" => ProtocolVersion::V_2026_07_28,
        _ => return None,
    })
}

/// 0 for 2024-11-05, 1 for 2025-03-26, 3 for 2026-07-28, else (2025-06-18, 2025-11-25) 2.
pub(super) fn version_index(version: Option<&ProtocolVersion>) -> usize {
    match version {
        Some(v) if *v == ProtocolVersion::V_2024_11_05 => 0,
        Some(v) if *v == ProtocolVersion::V_2025_03_26 => 1,
        Some(v) if *v == ProtocolVersion::V_2026_07_28 => 3,
        _ => 2,
    }
}

/// The SDK's finishing touches for a result in `version`: 2026-07-28 results carry
/// `resultType` and caching hints, older ones neither.
pub(super) fn finish(mut result: ServerResult, version: &ProtocolVersion) -> ServerResult {
    if *version == ProtocolVersion::V_2026_07_28 {
        result.fill_missing_cache_hints();
    } else {
        result.strip_result_type_for_legacy_peer();
    }
    result
}
