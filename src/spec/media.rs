//! Media-type classification: which request body restmcp sends when an operation offers
//! several, which responses count as JSON, the `Accept` header a tool's requests carry,
//! which media types are text (a model gives them as a string, sent as it is) rather than
//! bytes (given as base64), how a media range such as `image/*` matches a type, and the
//! file-name extension a type suggests.

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

/// A type whose content is text a model can write as a JSON string: `text/*`, JSON and
/// XML (with their `+json`/`+xml` suffixes), YAML, CSV, JavaScript, GraphQL, SQL and form
/// data. Everything else is bytes, given as base64.
pub fn is_textual(media_type: &str) -> bool {
    let essence = essence(media_type);
    let Some((top, sub)) = essence.split_once('/') else {
        return false;
    };
    top == "text"
        || sub.contains("json")
        || sub == "xml"
        || sub.ends_with("+xml")
        || sub == "yaml"
        || sub == "x-yaml"
        || sub.ends_with("+yaml")
        || matches!(
            sub,
            "javascript"
                | "ecmascript"
                | "x-javascript"
                | "graphql"
                | "sql"
                | "csv"
                | "x-www-form-urlencoded"
                | "x-sh"
                | "toml"
        )
}

/// True for the XML types (`application/xml`, `text/xml`, `…+xml`).
pub fn is_xml(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence
        .split_once('/')
        .is_some_and(|(_, sub)| sub == "xml" || sub.ends_with("+xml"))
}

/// True when the essence is a media range (`*/*`, `image/*`) rather than one type.
pub fn is_range(media_type: &str) -> bool {
    essence(media_type).contains('*')
}

/// A media type that can stand in a `Content-Type` header: `type/subtype` made of RFC 9110
/// token characters, then optional parameters without control characters.
pub fn is_sendable(media_type: &str) -> bool {
    let essence = essence(media_type);
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    essence
        .split_once('/')
        .is_some_and(|(top, sub)| token(top) && token(sub))
        && !media_type.bytes().any(|b| b.is_ascii_control())
}

/// Whether `media_type` falls within `range` (`image/png` within `image/*`, `*/*`, or
/// `image/png` itself); parameters are ignored.
pub fn within(media_type: &str, range: &str) -> bool {
    let (actual, range) = (essence(media_type), essence(range));
    if actual == range || range == "*/*" {
        return true;
    }
    match (actual.split_once('/'), range.split_once('/')) {
        (Some((top, _)), Some((range_top, "*"))) => top == range_top,
        _ => false,
    }
}

/// The file-name extension for a media type (`png` for `image/png`, `bin` for unknown
/// bytes, `txt` for unknown text).
pub fn extension(media_type: &str) -> &'static str {
    let essence = essence(media_type);
    const KNOWN: [(&str, &str); 34] = [
        ("image/png", "png"),
        ("image/jpeg", "jpg"),
        ("image/gif", "gif"),
        ("image/webp", "webp"),
        ("image/svg+xml", "svg"),
        ("image/bmp", "bmp"),
        ("image/tiff", "tiff"),
        ("image/x-icon", "ico"),
        ("image/vnd.microsoft.icon", "ico"),
        ("image/heic", "heic"),
        ("image/avif", "avif"),
        ("application/pdf", "pdf"),
        ("application/zip", "zip"),
        ("application/gzip", "gz"),
        ("application/x-gzip", "gz"),
        ("application/x-tar", "tar"),
        ("application/json", "json"),
        ("application/xml", "xml"),
        ("text/xml", "xml"),
        ("application/yaml", "yaml"),
        ("application/x-yaml", "yaml"),
        ("text/yaml", "yaml"),
        ("text/csv", "csv"),
        ("text/plain", "txt"),
        ("text/html", "html"),
        ("text/markdown", "md"),
        ("application/msword", "doc"),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
        ),
        (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "xlsx",
        ),
        ("audio/mpeg", "mp3"),
        ("audio/wav", "wav"),
        ("video/mp4", "mp4"),
        ("audio/ogg", "ogg"),
        ("video/webm", "webm"),
    ];
    if let Some((_, ext)) = KNOWN.iter().find(|(mt, _)| *mt == essence) {
        return ext;
    }
    if is_json(&essence) {
        "json"
    } else if is_xml(&essence) {
        "xml"
    } else if is_textual(&essence) {
        "txt"
    } else {
        "bin"
    }
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

/// Longest `Accept` header built from a description (media types past it are left out,
/// and `*/*;q=0.1` stands for them).
pub const MAX_ACCEPT_LEN: usize = 1024;

/// The `Accept` header for an operation that documents `media_types` for its answers (its
/// 2xx and `default` responses' media types, in order): JSON types first, every other type
/// at `q=0.5` (`application/json, application/xml;q=0.5`), each once, parameters dropped.
/// Without a JSON type the others are listed as they are; with nothing usable documented,
/// `*/*`. Entries that are not media ranges (spec data is untrusted: no commas, quotes or
/// line breaks get through) are skipped, and the header stays within [`MAX_ACCEPT_LEN`].
pub fn accept<'a>(media_types: impl IntoIterator<Item = &'a str>) -> String {
    let mut json: Vec<String> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    for media_type in media_types {
        let essence = essence(media_type);
        if !is_media_range(&essence) || json.contains(&essence) || other.contains(&essence) {
            continue;
        }
        if is_json_essence(&essence) {
            json.push(essence);
        } else {
            other.push(essence);
        }
    }
    let q = if json.is_empty() { "" } else { ";q=0.5" };
    let mut header = String::new();
    let mut left_out = false;
    let entries = json
        .iter()
        .map(|t| (t.as_str(), ""))
        .chain(other.iter().map(|t| (t.as_str(), q)));
    for (media_type, q) in entries {
        // Room is kept for the `, */*;q=0.1` that stands for what is left out.
        if header.len() + media_type.len() + q.len() + 2 > MAX_ACCEPT_LEN - 12 {
            left_out = true;
            break;
        }
        if !header.is_empty() {
            header.push_str(", ");
        }
        header.push_str(media_type);
        header.push_str(q);
    }
    if header.is_empty() {
        return "*/*".to_string();
    }
    if left_out {
        header.push_str(", */*;q=0.1");
    }
    header
}

/// `type/subtype` (either may be `*`, but not `*/subtype`) made of RFC 9110 token
/// characters.
pub fn is_media_range(essence: &str) -> bool {
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    token(kind) && token(subtype) && !(kind == "*" && subtype != "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_puts_json_first_and_weighs_the_rest() {
        // Petstore: XML documented first.
        assert_eq!(
            accept(["application/xml", "application/json"]),
            "application/json, application/xml;q=0.5"
        );
        assert_eq!(
            accept([
                "Application/JSON; charset=utf-8",
                "application/problem+json",
                "text/plain",
                "application/json",
                "*/*",
            ]),
            "application/json, application/problem+json, text/plain;q=0.5, */*;q=0.5"
        );
        // Without JSON, the documented types as they are.
        assert_eq!(accept(["image/png", "image/jpeg"]), "image/png, image/jpeg");
        assert_eq!(
            accept(["application/vnd.github+json"]),
            "application/vnd.github+json"
        );
        // Nothing (usable) documented.
        assert_eq!(accept([]), "*/*");
        assert_eq!(
            accept(["", "json", "*/json", "a b/c", "text/plain\r\nX: 1"]),
            "*/*"
        );
        assert_eq!(
            accept(["text/html, evil/x", "application/json"]),
            "application/json"
        );
    }

    #[test]
    fn accept_stays_within_its_length() {
        let many: Vec<String> = (0..200)
            .map(|i| format!("application/x-type-{i}"))
            .collect();
        let header =
            accept(std::iter::once("application/json").chain(many.iter().map(String::as_str)));
        assert!(header.len() <= MAX_ACCEPT_LEN, "{}", header.len());
        assert!(header.starts_with("application/json, application/x-type-0;q=0.5, "));
        assert!(header.ends_with(", */*;q=0.1"), "{header}");
    }

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
    fn text_and_bytes_are_told_apart() {
        for text in [
            "text/plain",
            "Text/CSV; charset=utf-8",
            "application/xml",
            "application/atom+xml",
            "application/x-ndjson",
            "application/yaml",
            "application/graphql",
        ] {
            assert!(is_textual(text), "{text}");
        }
        for bytes in [
            "application/octet-stream",
            "image/png",
            "image/svg",
            "application/pdf",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "nonsense",
        ] {
            assert!(!is_textual(bytes), "{bytes}");
        }
        assert!(is_xml("text/xml") && is_xml("application/soap+xml") && !is_xml("text/plain"));
    }

    #[test]
    fn ranges_match_and_only_real_types_are_sendable() {
        assert!(within("image/png", "image/*"));
        assert!(within("image/png; q=1", "IMAGE/PNG"));
        assert!(within("text/plain", "*/*"));
        assert!(!within("text/plain", "image/*"));
        assert!(!within("image/png", "image/gif"));
        assert!(is_range("image/*") && !is_range("image/png"));
        assert!(is_sendable("application/vnd.api+json; charset=utf-8"));
        for bad in ["xml", "text/", "a b/c", "text/plain\r\nX: y", ""] {
            assert!(!is_sendable(bad), "{bad:?}");
        }
    }

    #[test]
    fn extensions_follow_the_media_type() {
        assert_eq!(extension("image/png"), "png");
        assert_eq!(extension("image/jpeg"), "jpg");
        assert_eq!(extension("application/octet-stream"), "bin");
        assert_eq!(extension("application/vnd.github+json"), "json");
        assert_eq!(extension("text/x-python"), "txt");
        assert_eq!(extension("application/x-unknown"), "bin");
    }

    #[test]
    fn json_detection_ignores_parameters_and_case() {
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/vnd.github+json"));
        assert!(!is_json("application/jsonl"));
        assert!(!is_json("*/*"));
    }
}
