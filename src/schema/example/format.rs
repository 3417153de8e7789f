//! String `format`s: a value in each known format (OpenAPI's `byte`, `int64`… included),
//! and whether a text is in a format, as `jsonschema` checks formats when asked to.

use std::cell::RefCell;

use base64::Engine as _;
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::pattern::REGEX_CACHE;
use super::text::with_variant;

pub(super) fn encode_base64(variant: u32) -> String {
    let text = with_variant("example", variant);
    base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
}

/// Text in a known `format`.
pub(super) fn format_text(format: &str, variant: u32) -> Option<String> {
    let n = u64::from(variant) + 1;
    let day = 1 + variant % 28;
    Some(match format {
        "date-time" => format!("2024-01-{day:02}T00:00:00Z"),
        "date" => format!("2024-01-{day:02}"),
        "time" => format!("00:00:{:02}Z", variant % 60),
        "duration" => format!("P{n}D"),
        "email" | "idn-email" => {
            if variant == 0 {
                "user@example.com".into()
            } else {
                format!("user{n}@example.com")
            }
        }
        "hostname" | "idn-hostname" => {
            if variant == 0 {
                "example.com".into()
            } else {
                format!("host{n}.example.com")
            }
        }
        "ipv4" => format!("192.0.2.{}", 1 + variant % 254),
        "ipv6" => format!("2001:db8::{n:x}"),
        "uri" | "url" | "iri" => {
            if variant == 0 {
                "https://example.com".into()
            } else {
                format!("https://example.com/{n}")
            }
        }
        "uri-reference" | "iri-reference" => {
            if variant == 0 {
                "/example".into()
            } else {
                format!("/example/{n}")
            }
        }
        "uri-template" => "https://example.com/{id}".into(),
        "uuid" => format!("00000000-0000-4000-8000-{n:012x}"),
        "byte" | "base64" => encode_base64(variant),
        "binary" => with_variant("example", variant),
        "password" => with_variant("password", variant),
        "int32" | "int64" | "integer" | "uint32" | "uint64" => n.to_string(),
        "number" | "float" | "double" | "decimal" => format!("{n}.5"),
        "json-pointer" => format!(
            "/example{}",
            if variant == 0 {
                String::new()
            } else {
                n.to_string()
            }
        ),
        "relative-json-pointer" => variant.to_string(),
        "regex" => "^example$".into(),
        _ => return None,
    })
}

thread_local! {
    static FORMATS: RefCell<FxHashMap<String, Option<jsonschema::Validator>>> =
        RefCell::new(FxHashMap::default());
}

/// Whether `text` is in `format`, as `jsonschema` checks formats when asked to (and as
/// validating servers such as Prism do): an example or default the spec gives in the wrong
/// format (GitHub's `"format": "uri"` with the example `com/github/bar/libfoo-1.2.3`) is
/// not used. Formats `jsonschema` does not know (OpenAPI's `byte`, `int32`, …) match
/// anything; the values this module builds for them are right by construction.
pub(super) fn format_matches(format: &str, text: &str) -> bool {
    FORMATS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(format) {
            if cache.len() >= REGEX_CACHE {
                cache.clear();
            }
            let compiled = jsonschema::options()
                .should_validate_formats(true)
                .build(&serde_json::json!({"format": format}))
                .ok();
            cache.insert(format.to_string(), compiled);
        }
        cache
            .get(format)
            .and_then(Option::as_ref)
            .is_none_or(|validator| validator.is_valid(&Value::String(text.to_string())))
    })
}
