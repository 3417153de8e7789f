//! The shapes of values settings hold, checked where they are read: header and cookie names
//! (RFC 9110 tokens), OAuth scopes, http(s) URLs, origins and `Accept` header values.

/// RFC 9110 `token`: what a header (or cookie) name may hold.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// RFC 6749 §3.3 `scope-token`.
pub(super) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// An origin as `follow_redirects` and `credential_origins` list it: `scheme://host[:port]`,
/// nothing else; returned in its normal form (`https://api.example.com`).
pub fn parse_origin(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https origin".to_string());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not hold credentials".to_string());
    }
    if url.query().is_some() || url.fragment().is_some() || url.path() != "/" {
        return Err("must be an origin (scheme://host:port), without query or fragment".into());
    }
    Ok(url.origin().ascii_serialization())
}

pub(super) fn is_http_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// Checks an `Accept` header value given by the operator (`apis.NAME.accept`) or an
/// overlay: comma-separated media ranges (`type/subtype`, `type/*` or `*/*`) with optional
/// `;name=value` parameters, visible ASCII, at most 1024 bytes.
pub fn check_accept(value: &str) -> Result<(), String> {
    if value.len() > 1024 {
        return Err("is longer than 1024 bytes".to_string());
    }
    if let Some(c) = value
        .chars()
        .find(|&c| !(c == ' ' || c == '\t' || c.is_ascii_graphic()))
    {
        return Err(format!(
            "holds {c:?}, which an HTTP header value cannot (visible ASCII only)"
        ));
    }
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    for range in value.split(',') {
        let mut parts = range.split(';');
        let essence = parts.next().unwrap_or_default().trim();
        let shaped = essence
            .split_once('/')
            .is_some_and(|(t, s)| token(t) && token(s) && !(t == "*" && s != "*"));
        if !shaped {
            return Err(format!(
                "\"{}\" is not a media range (type/subtype, type/* or */*)",
                range.trim()
            ));
        }
        for parameter in parts {
            let ok = parameter.split_once('=').is_some_and(|(name, value)| {
                let value = value.trim();
                token(name.trim())
                    && (token(value)
                        || (value.len() >= 2 && value.starts_with('"') && value.ends_with('"')))
            });
            if !ok {
                return Err(format!(
                    "\"{}\" is not a media type parameter (name=value)",
                    parameter.trim()
                ));
            }
        }
    }
    Ok(())
}
