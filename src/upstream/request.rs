//! Arguments → the exact HTTP request, as the OpenAPI description defines it.

use serde_json::{Map, Value};

use crate::catalog::Route;
use crate::spec::Method;

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
}

/// Why a request could not be built from the arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("argument \"{argument}\": {problem}")]
    Argument { argument: String, problem: String },
    #[error("API \"{api}\" has no absolute base URL; set apis.{api}.base_url in the configuration")]
    NoBaseUrl { api: String },
}

/// Builds the request for `route` from validated `arguments`.
pub fn build(route: &Route, arguments: &Map<String, Value>) -> Result<HttpRequest, RequestError> {
    let _ = (route, arguments);
    unimplemented!("request building")
}
