//! Arguments → the exact HTTP request, as the OpenAPI description defines it.
//!
//! Parameters are serialized per OpenAPI 3.1 §4.8.12.4 ("Style Values") and its style
//! examples table, which follow RFC 6570. Where the 3.1.0 table and RFC 6570 disagree
//! (label style with `explode: false`: the 3.1.0 table prints `.blue.black.brown`, RFC 6570
//! and the corrected table of 3.1.1 print `.blue,black,brown`), RFC 6570 is followed.
//!
//! Encoding rules, chosen so that no argument can change where the request goes:
//!
//! * Path values: everything but `ALPHA / DIGIT / - _ ~` is percent-encoded, `.` included
//!   (`%2E`), so a value never adds a segment, a query or a fragment. Values that would
//!   still form a dot segment (`.`, `..` in any spelling the WHATWG URL parser collapses)
//!   or an empty `simple` segment are refused. The finished URL is parsed again and must
//!   keep the base URL's scheme, host, port and exactly the built path.
//! * Query, cookie and form-body names and values: everything but the RFC 3986 unreserved
//!   characters is percent-encoded, space as `%20` (never `+`, which only form decoders
//!   read as a space; `%20` means a space to every decoder). The delimiters a style adds
//!   (`,` `|` `=` `&` `[` `]`) stay literal.
//! * `allowReserved: true` leaves the reserved characters `:/?[]@!$'()*,;` and existing
//!   percent-encoded triples in values as they are, but still encodes `&`, `=`, `#` and `+`:
//!   those would end the parameter, start another, cut the query short or read as a space.
//! * Header values are sent as text; any control character but HTAB (CR, LF and NUL among
//!   them) is refused, as are the hop-by-hop and framing headers. A `Content-Type` (or
//!   `Accept`) header argument, which Swagger 2.0 descriptions declare, wins over the one
//!   restmcp computes ([`set_default_header`]).
//! * Bodies go out only in the media type the tool was built for: JSON, form-urlencoded,
//!   multipart, or the raw string (text types) or decoded base64 (bytes) of the `body`
//!   argument; a range (`image/*`) takes the type a `data:` URI names within it.
//! * Multipart file properties are file parts (`filename` and `Content-Type`, RFC 7578).
//!   A file name the model gives keeps only its last path segment and loses its control
//!   characters; `"` is escaped as `%22`, so a name can neither end the header nor add one.
//!
//! This file holds the request, its error and [`build`]; the parts are built in
//! `address` (base URL, path, query), `headers` (headers, cookies, `Content-Type`) and
//! `body` (JSON, form, multipart, raw and base64 bodies), with the encoding sets, value
//! text and RFC 6570 shapes they share in `encode`.

use serde_json::{Map, Value};

use crate::catalog::Route;
use crate::spec::Method;

mod address;
mod body;
mod encode;
mod headers;

use address::*;
use body::*;
use headers::*;

pub use headers::{has_header, set_default_header};

/// An HTTP request ready to send, independent of any HTTP client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: Method,
    /// Absolute URL: base URL + encoded path + query string.
    pub url: String,
    /// Header names as the spec spells them; includes `Cookie` for cookie parameters and
    /// `Content-Type` when there is a body.
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// `url` as [`build`] parsed it, so the HTTP client need not parse it again. Only a
    /// hint: it is used while it still spells `url` exactly ([`HttpRequest::parsed_url`]),
    /// so changing `url` (a query credential) never sends the old one.
    pub parsed: Option<url::Url>,
}

impl HttpRequest {
    /// The parsed `url`, when the one [`build`] kept still spells it.
    pub fn parsed_url(&self) -> Option<&url::Url> {
        self.parsed
            .as_ref()
            .filter(|parsed| parsed.as_str() == self.url)
    }
}

/// Why a request could not be built from the arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("argument \"{argument}\": {problem}")]
    Argument { argument: String, problem: String },
    #[error("API \"{api}\" has no absolute base URL; set apis.{api}.base_url in the configuration")]
    NoBaseUrl { api: String },
    #[error(
        "API \"{api}\": base URL \"{url}\" {problem}; set apis.{api}.base_url in the configuration"
    )]
    BadBaseUrl {
        api: String,
        url: String,
        problem: String,
    },
    /// Body fields make a JSON object, and the body's media type is not one that can
    /// carry it.
    #[error(
        "the body fields cannot be sent as {media_type}, the only media type the operation accepts"
    )]
    Body { media_type: String },
    /// The assembled URL did not keep the base URL's origin or the built path (a
    /// defence-in-depth check; the encoding rules should make it unreachable).
    #[error("the request URL \"{url}\" {problem}")]
    Url { url: String, problem: String },
}

/// Builds the request for `route` from validated `arguments`.
pub fn build(route: &Route, arguments: &Map<String, Value>) -> Result<HttpRequest, RequestError> {
    let base = base_url(route)?;
    let path = build_path(route, arguments)?;
    let query = build_query(route, arguments)?;
    let mut headers = build_headers(route, arguments)?;
    let body = match &route.body {
        Some(plan) => build_body(route, plan, arguments)?,
        None => None,
    };
    let parsed = assemble_url(base, &path, &query)?;
    let body = body.map(|(content_type, bytes)| {
        set_body_type(&mut headers, content_type);
        bytes
    });
    Ok(HttpRequest {
        method: route.method,
        url: parsed.as_str().to_owned(),
        headers,
        body,
        parsed: Some(parsed),
    })
}

#[cfg(test)]
mod tests;
