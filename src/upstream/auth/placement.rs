//! Credentials placed onto a built request: a header (replacing one of the same name), a
//! query parameter (percent-encoded, replacing one of the same name) or a cookie (merged
//! into the one `Cookie` header, RFC 6265 §5.4); the checks of what a request already
//! carries; and whether its URL is on an origin the credentials may go to.

use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use url::form_urlencoded;

/// RFC 3986 unreserved characters stay; everything else is percent-encoded.
pub(super) const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// RFC 6265 §4.1.1 cookie-octet excludes controls, space, `"`, `,`, `;` and `\`.
pub(super) const COOKIE_VALUE: &AsciiSet =
    &CONTROLS.add(b' ').add(b'"').add(b',').add(b';').add(b'\\');

pub(super) fn has_header(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

pub(super) fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    headers.push((name.to_string(), value.to_string()));
}

/// The URL split into (before the query, the query without `?`, the fragment with `#`).
fn split_url(url: &str) -> (&str, Option<&str>, &str) {
    let (rest, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    match rest.split_once('?') {
        Some((base, query)) => (base, Some(query), fragment),
        None => (rest, None, fragment),
    }
}

fn query_key(pair: &str) -> String {
    let key = pair.split('=').next().unwrap_or("");
    form_urlencoded::parse(key.as_bytes())
        .next()
        .map(|(k, _)| k.into_owned())
        .unwrap_or_default()
}

pub(super) fn has_query(url: &str, name: &str) -> bool {
    let (_, query, _) = split_url(url);
    query.is_some_and(|q| q.split('&').any(|pair| query_key(pair) == name))
}

/// Appends `name=value` to the query, replacing any parameter of that name.
pub(super) fn set_query(url: &mut String, name: &str, value: &str) {
    let (base, query, fragment) = split_url(url);
    let mut pairs: Vec<String> = query
        .map(|q| {
            q.split('&')
                .filter(|pair| !pair.is_empty() && query_key(pair) != name)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    pairs.push(format!(
        "{}={}",
        utf8_percent_encode(name, QUERY_VALUE),
        utf8_percent_encode(value, QUERY_VALUE)
    ));
    *url = format!("{base}?{}{fragment}", pairs.join("&"));
}

fn cookie_pairs(value: &str) -> impl Iterator<Item = &str> {
    value.split(';').map(str::trim).filter(|c| !c.is_empty())
}

pub(super) fn has_cookie(headers: &[(String, String)], name: &str) -> bool {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        .flat_map(|(_, v)| cookie_pairs(v))
        .any(|c| c.split('=').next() == Some(name))
}

/// Merges `name=value` into the Cookie header (one header, RFC 6265 §5.4), replacing any
/// cookie of that name.
pub(super) fn set_cookie(headers: &mut Vec<(String, String)>, name: &str, value: &str) {
    let mut cookies: Vec<String> = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
        .flat_map(|(_, v)| cookie_pairs(v))
        .filter(|c| c.split('=').next() != Some(name))
        .map(str::to_string)
        .collect();
    cookies.push(format!(
        "{name}={}",
        utf8_percent_encode(value, COOKIE_VALUE)
    ));
    match headers
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case("cookie"))
    {
        Some(first) => {
            headers[first].1 = cookies.join("; ");
            let mut index = 0;
            headers.retain(|(n, _)| {
                let keep = index <= first || !n.eq_ignore_ascii_case("cookie");
                index += 1;
                keep
            });
        }
        None => headers.push(("Cookie".to_string(), cookies.join("; "))),
    }
}

/// True when `url` is on one of `origins` (as `credentials::credential_origins` writes them).
pub(super) fn origin_allowed(url: &str, origins: &[String]) -> bool {
    origins.iter().any(|origin| {
        url.starts_with(origin.as_str())
            && matches!(
                url.as_bytes().get(origin.len()),
                None | Some(b'/' | b'?' | b'#')
            )
    })
}

/// The origin of a request URL, for messages.
pub(super) fn origin_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| "an unparsable URL".into())
}
