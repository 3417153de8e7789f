//! Media-type classification: which request body restmcp sends when an operation offers
//! several, and which responses count as JSON.

/// What restmcp can do with a media type, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MediaKind {
    Json,
    FormUrlEncoded,
    Multipart,
    /// `*/*`, `application/*`: anything goes, so restmcp sends JSON.
    Wildcard,
    Other,
}

/// The essence of a media type: lower-case, parameters (`; charset=…`) removed.
pub fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

pub fn classify(media_type: &str) -> MediaKind {
    let essence = essence(media_type);
    if is_json_essence(&essence) {
        MediaKind::Json
    } else if essence == "application/x-www-form-urlencoded" {
        MediaKind::FormUrlEncoded
    } else if essence.starts_with("multipart/") {
        MediaKind::Multipart
    } else if essence == "*/*" || essence == "application/*" {
        MediaKind::Wildcard
    } else {
        MediaKind::Other
    }
}

/// `application/json`, `application/problem+json`, `text/json`… (RFC 6839 suffixes).
pub fn is_json(media_type: &str) -> bool {
    is_json_essence(&essence(media_type))
}

fn is_json_essence(essence: &str) -> bool {
    essence == "application/json" || essence == "text/json" || essence.ends_with("+json")
}

/// Index of the preferred request media type: JSON, form, multipart, wildcard, then the
/// first other one; ties go to the order the document lists them in.
pub fn choose<'a>(media_types: impl IntoIterator<Item = &'a str>) -> Option<usize> {
    media_types
        .into_iter()
        .enumerate()
        .min_by_key(|(i, mt)| (classify(mt), *i))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_wins_then_form_then_multipart() {
        assert_eq!(choose(["application/xml", "application/json"]), Some(1));
        assert_eq!(
            choose(["multipart/form-data", "application/x-www-form-urlencoded"]),
            Some(1)
        );
        assert_eq!(choose(["text/plain", "multipart/form-data"]), Some(1));
        assert_eq!(choose(["*/*", "application/yaml"]), Some(0));
        assert_eq!(
            choose([
                "application/apply-patch+yaml",
                "application/merge-patch+json"
            ]),
            Some(1)
        );
        assert_eq!(choose(std::iter::empty()), None);
    }

    #[test]
    fn json_detection_ignores_parameters_and_case() {
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/vnd.github+json"));
        assert!(!is_json("application/jsonl"));
        assert!(!is_json("*/*"));
    }
}
