//! Strings that read like data: text derived from the property's name (`email` →
//! `user@example.com`, `id` → `id-1`), canned candidates, variants for values that must
//! differ, and padding or truncating to length bounds.

pub(super) const CANNED: &[&str] = &[
    "example",
    "a",
    "A",
    "0",
    "1",
    "abc",
    "ABC",
    "a1",
    "example.com",
    "2024-01-01",
    "user@example.com",
    "https://example.com",
    "00000000-0000-4000-8000-000000000001",
    "a-b",
    "a_b",
    "a.b",
    "",
];

pub(super) fn with_variant(text: &str, variant: u32) -> String {
    if variant == 0 {
        text.to_string()
    } else {
        format!("{text}-{}", u64::from(variant) + 1)
    }
}

/// Text derived from the property name (`email` → `user@example.com`, `id` → `id-1`).
pub(super) fn name_text(name: Option<&str>, default: &str, variant: u32) -> String {
    let n = u64::from(variant) + 1;
    let Some(name) = name.filter(|n| {
        !n.is_empty() && n.len() <= 64 && !n.chars().any(|c| c.is_whitespace() || c.is_control())
    }) else {
        return with_variant(default, variant);
    };
    let lower = name.to_ascii_lowercase();
    if lower.contains("email") {
        return if variant == 0 {
            "user@example.com".into()
        } else {
            format!("user{n}@example.com")
        };
    }
    if lower == "id" || lower.ends_with("_id") || lower.ends_with("-id") || name.ends_with("Id") {
        return format!("{name}-{n}");
    }
    if matches!(lower.as_str(), "url" | "uri" | "href" | "link" | "website")
        || lower.ends_with("_url")
        || lower.ends_with("_uri")
        || name.ends_with("Url")
    {
        return if variant == 0 {
            "https://example.com".into()
        } else {
            format!("https://example.com/{n}")
        };
    }
    with_variant(name, variant)
}

/// Pads (by repeating the text) or truncates to the length bounds.
pub(super) fn fit_length(text: &str, min_len: usize, max_len: usize, variant: u32) -> String {
    let len = text.chars().count();
    if len < min_len {
        let source: Vec<char> = if text.is_empty() {
            vec!['x']
        } else {
            text.chars().collect()
        };
        source.iter().cycle().take(min_len).collect()
    } else if len > max_len {
        if variant == 0 {
            text.chars().take(max_len).collect()
        } else {
            // Keep the variant's distinguishing tail.
            text.chars().skip(len - max_len).collect()
        }
    } else {
        text.to_string()
    }
}
