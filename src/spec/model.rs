//! restmcp's own small model of an API: the operations, each with its parameters, chosen
//! request body and responses. Swagger 2.0, OpenAPI 3.0 and 3.1 all normalize to this.
//!
//! Schemas are not parsed into types: they stay JSON values (borrowed from the document
//! where possible) tagged with the document they came from, so `$ref`s inside them can be
//! resolved later relative to the right file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::document::DocId;

/// The description's dialect, which decides how schemas are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SpecVersion {
    #[serde(rename = "2.0")]
    Swagger2,
    #[serde(rename = "3.0")]
    OpenApi30,
    #[serde(rename = "3.1")]
    OpenApi31,
}

impl fmt::Display for SpecVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecVersion::Swagger2 => "Swagger 2.0",
            SpecVersion::OpenApi30 => "OpenAPI 3.0",
            SpecVersion::OpenApi31 => "OpenAPI 3.1",
        })
    }
}

/// HTTP methods an OpenAPI path item can hold, in the order the specification lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Put,
    Post,
    Delete,
    Options,
    Head,
    Patch,
    Trace,
}

impl Method {
    pub const ALL: [Method; 8] = [
        Method::Get,
        Method::Put,
        Method::Post,
        Method::Delete,
        Method::Options,
        Method::Head,
        Method::Patch,
        Method::Trace,
    ];

    /// The path-item key (`get`).
    pub fn key(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Put => "put",
            Method::Post => "post",
            Method::Delete => "delete",
            Method::Options => "options",
            Method::Head => "head",
            Method::Patch => "patch",
            Method::Trace => "trace",
        }
    }

    /// The wire form (`GET`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Head => "HEAD",
            Method::Patch => "PATCH",
            Method::Trace => "TRACE",
        }
    }

    /// RFC 9110 §9.2.1: safe methods do not change server state.
    pub fn is_safe(self) -> bool {
        matches!(
            self,
            Method::Get | Method::Head | Method::Options | Method::Trace
        )
    }

    /// RFC 9110 §9.2.2.
    pub fn is_idempotent(self) -> bool {
        self.is_safe() || matches!(self, Method::Put | Method::Delete)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A schema together with the document its `$ref`s are relative to.
#[derive(Debug, Clone)]
pub struct SchemaRef<'a> {
    pub doc: DocId,
    pub schema: Cow<'a, Value>,
    /// Where it stands, `#/…`, for messages.
    pub pointer: String,
}

/// Where a parameter travels (OpenAPI 3.1 §4.8.12.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamLocation {
    Path,
    Query,
    Header,
    Cookie,
}

impl ParamLocation {
    pub fn parse(text: &str) -> Option<ParamLocation> {
        match text {
            "path" => Some(ParamLocation::Path),
            "query" => Some(ParamLocation::Query),
            "header" => Some(ParamLocation::Header),
            "cookie" => Some(ParamLocation::Cookie),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ParamLocation::Path => "path",
            ParamLocation::Query => "query",
            ParamLocation::Header => "header",
            ParamLocation::Cookie => "cookie",
        }
    }
}

/// Serialization styles (OpenAPI 3.1 §4.8.12.4), plus Swagger 2.0's `tsv`, which 3.x dropped
/// but which 2.0 upstreams still expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Style {
    Matrix,
    Label,
    Simple,
    Form,
    SpaceDelimited,
    PipeDelimited,
    TabDelimited,
    DeepObject,
}

impl Style {
    pub fn parse(text: &str) -> Option<Style> {
        match text {
            "matrix" => Some(Style::Matrix),
            "label" => Some(Style::Label),
            "simple" => Some(Style::Simple),
            "form" => Some(Style::Form),
            "spaceDelimited" => Some(Style::SpaceDelimited),
            "pipeDelimited" => Some(Style::PipeDelimited),
            "deepObject" => Some(Style::DeepObject),
            _ => None,
        }
    }

    /// The default style for a location (§4.8.12.4: form for query and cookie, simple else).
    pub fn default_for(location: ParamLocation) -> Style {
        match location {
            ParamLocation::Query | ParamLocation::Cookie => Style::Form,
            ParamLocation::Path | ParamLocation::Header => Style::Simple,
        }
    }
}

/// One parameter after `$ref` resolution and path/operation merging.
#[derive(Debug, Clone)]
pub struct Parameter<'a> {
    pub name: String,
    pub location: ParamLocation,
    pub required: bool,
    pub description: Option<String>,
    pub deprecated: bool,
    pub style: Style,
    pub explode: bool,
    pub allow_reserved: bool,
    pub schema: SchemaRef<'a>,
    /// Set when the parameter uses `content` instead of `schema`: the value is serialized
    /// in this media type (usually JSON) rather than by style.
    pub content_type: Option<String>,
    /// A single example value from `example` or the first of `examples`.
    pub example: Option<Value>,
}

/// How one property of a form or multipart body is encoded (OpenAPI 3.1 §4.8.15).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Encoding {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    pub style: Style,
    pub explode: bool,
    pub allow_reserved: bool,
}

/// The request body in the one media type restmcp will send.
#[derive(Debug, Clone)]
pub struct RequestBody<'a> {
    pub required: bool,
    pub description: Option<String>,
    pub media_type: String,
    pub schema: Option<SchemaRef<'a>>,
    pub encoding: BTreeMap<String, Encoding>,
    /// Media types the operation also accepts that were not chosen.
    pub alternatives: Vec<String>,
}

/// One documented response.
#[derive(Debug, Clone)]
pub struct Response<'a> {
    /// `200`, `2XX`, `default`…
    pub status: String,
    pub description: Option<String>,
    /// Every media type the response declares.
    pub media_types: Vec<String>,
    /// The JSON media type and its schema, when the response has one.
    pub json: Option<(String, Option<SchemaRef<'a>>)>,
    /// An example body of the JSON media type (`example`, or the first of `examples`), for
    /// the mock upstream.
    pub example: Option<Value>,
}

/// One callable operation.
#[derive(Debug, Clone)]
pub struct Operation<'a> {
    /// Position in the document's `paths` walk: operations and skipped entries together
    /// are numbered in document order.
    pub index: usize,
    pub method: Method,
    /// The path key as written, `/pets/{id}` (or `/tags/{resourceArn}#tagKeys`): what the
    /// operation is called by. [`Operation::http_path`] is what is requested.
    pub path: String,
    /// The part of the path key from `#` on, when there is one.
    pub suffix: Option<PathSuffix>,
    /// `#/paths/~1pets/get`
    pub pointer: String,
    pub operation_id: Option<String>,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub deprecated: bool,
    pub tags: Vec<String>,
    pub parameters: Vec<Parameter<'a>>,
    pub request_body: Option<RequestBody<'a>>,
    /// Sorted: numeric codes ascending, then ranges (`2XX`), then `default`.
    pub responses: Vec<Response<'a>>,
    /// Swagger 2.0's `produces` (the operation's, else the document's): the media types the
    /// operation answers in, whether or not a response has a schema. Empty for OpenAPI 3.x,
    /// where each response lists its own.
    pub produces: Vec<String>,
    /// Candidate base URLs, most specific level first (operation, path item, document).
    pub servers: Vec<String>,
    /// The effective security requirements: the operation's own `security`, else the
    /// document's. Alternatives, any one of which suffices; empty when no authentication
    /// is required. An empty alternative (`{}`) means anonymous access is allowed.
    pub security: Vec<SecurityRequirement>,
    /// The operation's `x-mcp` extension, as written (the catalog reads it).
    pub x_mcp: Option<Value>,
    /// Set when the operation is marked `x-ms-long-running-operation: true`: where its
    /// final result is read (`x-ms-long-running-operation-options.final-state-via`).
    pub long_running: Option<FinalState>,
    /// Things the normalizer changed or ignored, for `restmcp check`.
    pub notes: Vec<String>,
}

/// Where a long-running operation's final result is read once its status monitor says it
/// is done (AutoRest's `final-state-via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinalState {
    /// The method's usual place: the original URL for PUT and PATCH, the `Location` of the
    /// first answer for POST (when it had one), else the status monitor's own answer (or
    /// its `resourceLocation`).
    #[default]
    Default,
    /// A GET of the URL the operation was called on.
    OriginalUri,
    /// A GET of the first answer's `Location`.
    Location,
    /// The status monitor's final answer itself (`azure-async-operation`,
    /// `operation-location`).
    StatusMonitor,
}

impl FinalState {
    /// The value of `final-state-via`; `None` for one AutoRest does not define.
    pub fn parse(via: &str) -> Option<FinalState> {
        Some(match via {
            "original-uri" => FinalState::OriginalUri,
            "location" => FinalState::Location,
            "azure-async-operation" | "operation-location" => FinalState::StatusMonitor,
            _ => return None,
        })
    }
}

impl Operation<'_> {
    /// `GET /pets/{id}`
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The path template requested: the path key without its `#` suffix.
    pub fn http_path(&self) -> &str {
        split_path_key(&self.path).0
    }
}

/// What follows `#` in a path key. AWS descriptions (and Box's) key operations that share
/// an HTTP path as `/tags/{resourceArn}#tagKeys` or
/// `/#Action=DescribeLoadBalancers&Version=2015-12-01`. A fragment is never part of an
/// HTTP request: the suffix names the operation, and the `name=value` pairs in it are
/// query parameters every call of the operation carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSuffix {
    /// As written, without the `#`: `tagKeys`, `Action=DescribeLoadBalancers&Version=…`.
    pub text: String,
    /// Its `name=value` pairs, percent-decoded, in order; empty for a bare name.
    pub pairs: Vec<(String, String)>,
}

impl PathSuffix {
    /// The suffix of a path key, if it has one.
    pub fn of(path_key: &str) -> Option<PathSuffix> {
        let text = split_path_key(path_key).1?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let pairs = text
            .split('&')
            .filter_map(|piece| piece.split_once('='))
            .filter(|(name, _)| !name.is_empty())
            .map(|(name, value)| (decode(name), decode(value)))
            .collect();
        Some(PathSuffix {
            text: text.to_string(),
            pairs,
        })
    }
}

/// A path key split at its first `#`: the path template, and the suffix after the `#`.
pub fn split_path_key(path_key: &str) -> (&str, Option<&str>) {
    match path_key.split_once('#') {
        Some((path, suffix)) => (path, Some(suffix)),
        None => (path_key, None),
    }
}

/// An operation that could not be turned into a tool, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Position in the document's `paths` walk, shared with [`Operation::index`].
    #[serde(skip)]
    pub index: usize,
    /// `GET /pets`, or just the path when the whole path item is unusable.
    pub operation: String,
    pub pointer: String,
    pub reason: String,
}

/// A whole API description, normalized.
#[derive(Debug)]
pub struct Api<'a> {
    pub version: SpecVersion,
    pub title: String,
    pub operations: Vec<Operation<'a>>,
    pub skipped: Vec<Skipped>,
    /// The declared security schemes by name (3.x `components.securitySchemes`, 2.0
    /// `securityDefinitions`).
    pub security_schemes: BTreeMap<String, SecurityScheme>,
}

/// One alternative of a `security` list: every named scheme (with the scopes it needs)
/// must be satisfied together. Empty means anonymous access.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

/// Where an API key travels. The config's own type, since `apis.NAME.auth.SCHEME.in`
/// names it too; part of this model through [`SecurityScheme`].
pub use crate::config::ApiKeyLocation;

/// The HTTP authentication schemes restmcp can send (RFC 9110 §11; names are
/// case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpAuthScheme {
    Bearer,
    Basic,
}

/// A security scheme as the description declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SecurityScheme {
    ApiKey {
        name: String,
        location: ApiKeyLocation,
    },
    Http {
        scheme: HttpAuthScheme,
        bearer_format: Option<String>,
    },
    /// OAuth 2.0 with a client credentials flow (3.x `flows.clientCredentials`, 2.0
    /// `flow: application`); the other flows need a user and are not usable here.
    #[serde(rename = "oauth2")]
    OAuth2 {
        /// Absolute when the description's location allowed resolving it.
        token_url: String,
        /// The scopes the flow declares.
        scopes: Vec<String>,
    },
    /// A scheme restmcp cannot satisfy by itself: `openIdConnect`, `mutualTLS`, `oauth2`
    /// without a client credentials flow, `http` with another scheme (`http digest`), or a
    /// declaration missing what it needs (`apiKey`).
    Unsupported { kind: String },
}

impl SecurityScheme {
    /// A short description for messages: `apiKey in header "X-Key"`, `http bearer`…
    pub fn describe(&self) -> String {
        match self {
            SecurityScheme::ApiKey { name, location } => {
                format!("apiKey in {} \"{name}\"", location.as_str())
            }
            SecurityScheme::Http {
                scheme: HttpAuthScheme::Bearer,
                ..
            } => "http bearer".into(),
            SecurityScheme::Http {
                scheme: HttpAuthScheme::Basic,
                ..
            } => "http basic".into(),
            SecurityScheme::OAuth2 { .. } => "oauth2 client credentials".into(),
            SecurityScheme::Unsupported { kind } => kind.clone(),
        }
    }
}

/// Orders response codes as the output-schema rule needs: `200` before `201` before `2XX`
/// before `default`.
pub fn status_order(status: &str) -> (u8, String) {
    if status.len() == 3 && status.bytes().all(|b| b.is_ascii_digit()) {
        (0, status.to_string())
    } else if status.eq_ignore_ascii_case("default") {
        (2, String::new())
    } else {
        (1, status.to_ascii_uppercase())
    }
}

/// True for `200`…`299` and `2XX`.
pub fn is_success(status: &str) -> bool {
    let upper = status.to_ascii_uppercase();
    upper.len() == 3
        && upper.starts_with('2')
        && upper[1..].bytes().all(|b| b.is_ascii_digit() || b == b'X')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_key_splits_at_its_first_hash() {
        assert_eq!(split_path_key("/pets/{id}"), ("/pets/{id}", None));
        assert_eq!(
            split_path_key("/tags/{resourceArn}#tagKeys"),
            ("/tags/{resourceArn}", Some("tagKeys"))
        );
        assert_eq!(split_path_key("/#a#b"), ("/", Some("a#b")));
        assert_eq!(PathSuffix::of("/pets"), None);
    }

    #[test]
    fn a_suffix_holds_its_name_value_pairs_decoded() {
        let bare = PathSuffix::of("/tags/{resourceArn}#tagKeys").expect("suffix");
        assert_eq!(bare.text, "tagKeys");
        assert!(bare.pairs.is_empty());
        let query =
            PathSuffix::of("/#Action=DescribeLoadBalancers&Version=2015-12-01").expect("suffix");
        assert_eq!(
            query.pairs,
            [
                ("Action".to_string(), "DescribeLoadBalancers".to_string()),
                ("Version".to_string(), "2015-12-01".to_string())
            ]
        );
        // Pieces without `=` (or without a name) are names, not parameters.
        let mixed = PathSuffix::of("/x#list&Filter=a%20b&=lost&Empty=").expect("suffix");
        assert_eq!(
            mixed.pairs,
            [
                ("Filter".to_string(), "a b".to_string()),
                ("Empty".to_string(), String::new())
            ]
        );
    }
}
