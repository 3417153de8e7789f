//! The mock upstream's side of a call: the request restmcp built (exactly as it would go on
//! the wire) is checked against the operation, parsed back from its URL, headers and body,
//! and answered with the operation's [`MockAnswer`], or with a 400 that says what is wrong.
//! A mock run thus exercises request building as well as validation and result mapping.

use serde_json::{Map, Value, json};

use jsonschema::Validator;

use crate::catalog::{Location, MockAnswer, Tool};
use crate::spec::media::{self, MediaKind};
use crate::upstream::request::HttpRequest;

/// What the mock upstream sends back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockResponse {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// The compiled [`body_schema`] of a tool, made once per tool by the caller.
pub type BodyValidator<'a> = Option<&'a Result<Validator, String>>;

/// Answers `request`, made for `tool`.
pub fn answer(
    tool: &Tool,
    answer: &MockAnswer,
    request: &HttpRequest,
    body: BodyValidator<'_>,
) -> MockResponse {
    let problems = check(tool, request, body);
    if !problems.is_empty() {
        let body = json!({
            "error": format!(
                "restmcp mock: the request does not match {}",
                tool.origin.operation
            ),
            "problems": problems,
        });
        return MockResponse {
            status: 400,
            content_type: Some("application/json".into()),
            body: serde_json::to_vec(&body).unwrap_or_default(),
        };
    }
    MockResponse {
        status: answer.status,
        content_type: answer.media_type.clone(),
        body: answer.body.clone(),
    }
}

/// Every way the request differs from what the operation requires; empty when it matches.
pub fn check(tool: &Tool, request: &HttpRequest, body: BodyValidator<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    let route = &tool.route;
    if request.method != route.method {
        problems.push(format!(
            "method is {}, the operation is {}",
            request.method, route.method
        ));
    }
    let url = match url::Url::parse(&request.url) {
        Ok(url) => url,
        Err(e) => return vec![format!("the URL {} does not parse: {e}", request.url)],
    };
    let base_path = route
        .base_url
        .as_ref()
        .and_then(|b| b.parsed().ok())
        .map(|b| b.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    match url.path().strip_prefix(base_path.as_str()) {
        Some(path) => check_path(&route.path, path, &mut problems),
        None => problems.push(format!(
            "path {} is not under the base path {base_path}",
            url.path()
        )),
    }
    let query: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let cookies: Vec<String> = header("cookie")
        .map(|c| {
            c.split(';')
                .filter_map(|p| p.split_once('='))
                .map(|(k, _)| k.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    for binding in &route.arguments.bindings {
        if !binding.required {
            continue;
        }
        let wire = binding.wire_name.as_str();
        let present = match binding.location {
            Location::Path | Location::BodyField | Location::Body | Location::FileName => true,
            Location::Query => {
                query
                    .iter()
                    .any(|(k, _)| k == wire || k.starts_with(&format!("{wire}[")))
                    // An exploded object spreads its properties as parameters of their own.
                    || (binding.explode && is_object(tool, &binding.argument) && !query.is_empty())
            }
            Location::Header => header(wire).is_some(),
            Location::Cookie => cookies.iter().any(|c| c == wire),
        };
        if !present {
            problems.push(format!(
                "required {} parameter \"{wire}\" is missing",
                binding.location.as_str()
            ));
        }
    }
    check_body(tool, request, header("content-type"), body, &mut problems);
    problems
}

fn is_object(tool: &Tool, argument: &str) -> bool {
    tool.input_schema
        .to_value()
        .pointer(&format!(
            "/properties/{}/type",
            crate::json::escape_token(argument)
        ))
        .and_then(Value::as_str)
        == Some("object")
}

/// Matches the request path against the template segment by segment; a `{name}` segment
/// must hold a non-empty value.
fn check_path(template: &str, path: &str, problems: &mut Vec<String>) {
    let expected: Vec<&str> = template.trim_matches('/').split('/').collect();
    let actual: Vec<&str> = path.trim_matches('/').split('/').collect();
    if expected.len() != actual.len() {
        problems.push(format!(
            "path {path} does not match {template} ({} segments, expected {})",
            actual.len(),
            expected.len()
        ));
        return;
    }
    for (want, got) in expected.iter().zip(&actual) {
        // Literal characters such as `#` travel percent-encoded.
        let decoded = percent_encoding::percent_decode_str(got).decode_utf8_lossy();
        let got = &decoded.as_ref();
        if want.contains('{') {
            let prefix = want.split('{').next().unwrap_or("");
            let suffix = want.rsplit('}').next().unwrap_or("");
            if got.len() < prefix.len() + suffix.len()
                || !got.starts_with(prefix)
                || !got.ends_with(suffix)
                || got.len() == prefix.len() + suffix.len()
            {
                problems.push(format!("path segment \"{got}\" does not fill \"{want}\""));
            }
        } else if want != got {
            problems.push(format!(
                "path {path} does not match {template} (\"{got}\" where \"{want}\" belongs)"
            ));
            return;
        }
    }
}

fn check_body(
    tool: &Tool,
    request: &HttpRequest,
    content_type: Option<&str>,
    validator: BodyValidator<'_>,
    problems: &mut Vec<String>,
) {
    let Some(plan) = &tool.route.body else {
        return;
    };
    let body = request.body.as_deref().filter(|b| !b.is_empty());
    let Some(body) = body else {
        if plan.required {
            problems.push("the request body is required and missing".into());
        }
        return;
    };
    let media_type = content_type.unwrap_or_default();
    let bindings = &tool.route.arguments.bindings;
    match media::classify(media_type) {
        MediaKind::Json => {
            let value: Value = match serde_json::from_slice(body) {
                Ok(value) => value,
                Err(e) => {
                    problems.push(format!("the body is not valid JSON: {e}"));
                    return;
                }
            };
            match validator {
                None => {}
                Some(Ok(validator)) => {
                    for error in validator.iter_errors(&value).take(10) {
                        problems.push(format!("body{}: {error}", error.instance_path()));
                    }
                }
                Some(Err(e)) => problems.push(format!("the body schema does not compile: {e}")),
            }
        }
        MediaKind::FormUrlEncoded => {
            let names: Vec<String> = url::form_urlencoded::parse(body)
                .map(|(k, _)| k.into_owned())
                .collect();
            for binding in bindings
                .iter()
                .filter(|b| b.location == Location::BodyField && b.required)
            {
                let wire = &binding.wire_name;
                if !names
                    .iter()
                    .any(|n| n == wire || n.starts_with(&format!("{wire}[")))
                {
                    problems.push(format!("required form field \"{wire}\" is missing"));
                }
            }
        }
        MediaKind::Multipart => {
            let text = String::from_utf8_lossy(body);
            for binding in bindings
                .iter()
                .filter(|b| b.location == Location::BodyField && b.required)
            {
                if !text.contains(&format!("name=\"{}\"", binding.wire_name)) {
                    problems.push(format!(
                        "required multipart part \"{}\" is missing",
                        binding.wire_name
                    ));
                }
            }
        }
        MediaKind::Wildcard | MediaKind::Other => {}
    }
}

/// The JSON Schema of the body on the wire, rebuilt from the tool's arguments: the body
/// fields under their wire names, or the whole-body argument; with the tool's `$defs`.
pub fn body_schema(tool: &Tool) -> Option<Value> {
    let input = tool.input_schema.to_value();
    let properties = input.get("properties")?;
    let defs = input.get("$defs");
    let bindings = &tool.route.arguments.bindings;
    let mut schema = if let Some(whole) = bindings.iter().find(|b| b.location == Location::Body) {
        match properties.get(&whole.argument) {
            Some(Value::Object(map)) => Value::Object(map.clone()),
            _ => return None,
        }
    } else {
        let mut fields = Map::new();
        let mut required = Vec::new();
        for binding in bindings
            .iter()
            .filter(|b| b.location == Location::BodyField)
        {
            let schema = properties
                .get(&binding.argument)
                .cloned()
                // A hidden argument with a fixed value has no schema left to check.
                .unwrap_or(json!({}));
            fields.insert(binding.wire_name.clone(), schema);
            if binding.required {
                required.push(json!(binding.wire_name));
            }
        }
        json!({"type": "object", "properties": fields, "required": required})
    };
    if let (Some(defs), Value::Object(map)) = (defs, &mut schema) {
        map.insert("$defs".into(), defs.clone());
    }
    Some(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_problems(template: &str, path: &str) -> Vec<String> {
        let mut problems = Vec::new();
        check_path(template, path, &mut problems);
        problems
    }

    #[test]
    fn paths_match_their_template_segment_by_segment() {
        assert!(path_problems("/pets/{id}", "/pets/7").is_empty());
        assert!(path_problems("/files/{name}.json", "/files/a.json").is_empty());
        assert!(path_problems("/v1/{a}/x/{b}", "/v1/1/x/2").is_empty());
        assert_eq!(
            path_problems("/pets/{id}", "/pets/7/photos"),
            ["path /pets/7/photos does not match /pets/{id} (3 segments, expected 2)"]
        );
        assert_eq!(
            path_problems("/pets/{id}", "/cats/7"),
            ["path /cats/7 does not match /pets/{id} (\"cats\" where \"pets\" belongs)"]
        );
        assert_eq!(
            path_problems("/files/{name}.json", "/files/.json"),
            ["path segment \".json\" does not fill \"{name}.json\""]
        );
    }
}
