//! What a workflow's runtime expressions read while it runs: the workflow's inputs, the
//! outputs of the steps that ran, the workflows it depends on, and, inside one step, that
//! step's request and answer ([`Exchanged`]).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::spec::arazzo::expression::{Expression, Part, Resolve, Source, apply_pointer, lookup};
use crate::spec::arazzo::template::Template;

/// One running workflow: its inputs and each finished step's outputs.
#[derive(Debug, Default)]
pub(super) struct Frame {
    pub inputs: Map<String, Value>,
    pub steps: HashMap<String, Map<String, Value>>,
}

/// A finished workflow of this run (a dependency, a nested one), for `$workflows.…`.
#[derive(Debug, Default, Clone)]
pub(super) struct Finished {
    pub inputs: Map<String, Value>,
    pub outputs: Map<String, Value>,
}

/// One step's request and answer, as expressions read them.
#[derive(Debug, Default, Clone)]
pub(super) struct Exchanged {
    pub url: String,
    pub method: String,
    /// The values the step gave its path parameters, by name.
    pub path: Map<String, Value>,
    pub request_headers: Vec<(String, String)>,
    pub request_body: Option<Value>,
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
    /// A nested workflow's outputs, for a step that ran one (`$outputs.x`).
    pub outputs: Option<Map<String, Value>>,
}

/// Everything an expression may read at one point of a run.
pub(super) struct Scope<'a> {
    pub frame: &'a Frame,
    pub finished: &'a HashMap<String, Finished>,
    pub exchanged: Option<&'a Exchanged>,
}

impl Resolve for Scope<'_> {
    fn resolve(&self, expression: &Expression) -> Option<Value> {
        match expression {
            Expression::Url => Some(Value::String(self.exchanged?.url.clone())),
            Expression::Method => Some(Value::String(self.exchanged?.method.clone())),
            Expression::StatusCode => Some(Value::from(self.exchanged?.status?)),
            Expression::Request(source) => self.request(source),
            Expression::Response(source) => self.response(source),
            Expression::Inputs { name, pointer } => {
                pointed(lookup(&self.frame.inputs, name)?, pointer)
            }
            // The outputs of the nested workflow a step ran.
            Expression::Outputs { name, pointer } => {
                let outputs = self.exchanged?.outputs.as_ref()?;
                pointed(lookup(outputs, name)?, pointer)
            }
            Expression::Steps {
                step,
                output,
                pointer,
            } => pointed(lookup(self.frame.steps.get(step)?, output)?, pointer),
            Expression::Workflows {
                workflow,
                part,
                name,
                pointer,
            } => {
                let finished = self.finished.get(workflow)?;
                let map = match part {
                    Part::Inputs => &finished.inputs,
                    Part::Outputs => &finished.outputs,
                };
                pointed(lookup(map, name)?, pointer)
            }
            Expression::SourceDescriptions { .. } | Expression::Components { .. } => None,
        }
    }
}

impl Scope<'_> {
    fn request(&self, source: &Source) -> Option<Value> {
        let exchanged = self.exchanged?;
        match source {
            Source::Header(name) => header(&exchanged.request_headers, name),
            Source::Query(name) => query(&exchanged.url, name),
            Source::Path(name) => exchanged.path.get(name).cloned(),
            Source::Body(pointer) => pointed(exchanged.request_body.as_ref()?, pointer),
        }
    }

    fn response(&self, source: &Source) -> Option<Value> {
        let exchanged = self.exchanged?;
        match source {
            Source::Header(name) => header(&exchanged.headers, name),
            Source::Body(pointer) => pointed(exchanged.body.as_ref()?, pointer),
            // An answer has no query or path of its own: the request's.
            Source::Query(name) => query(&exchanged.url, name),
            Source::Path(name) => exchanged.path.get(name).cloned(),
        }
    }
}

/// `value`, or the part `pointer` selects.
fn pointed(value: &Value, pointer: &Option<String>) -> Option<Value> {
    match pointer {
        None => Some(value.clone()),
        Some(pointer) => apply_pointer(value, pointer).cloned(),
    }
}

/// A header's value (the first of that name, compared case-insensitively).
fn header(headers: &[(String, String)], name: &str) -> Option<Value> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| Value::String(value.clone()))
}

/// A query parameter of `url`, decoded.
fn query(url: &str, name: &str) -> Option<Value> {
    let parsed = url::Url::parse(url).ok()?;
    parsed
        .query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| Value::String(value.into_owned()))
}

/// A body as expressions read it: JSON when it parses, else its text.
pub(super) fn body_value(body: &[u8], content_type: Option<&str>) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    let json_like = content_type.is_none_or(|t| {
        let t = t.to_ascii_lowercase();
        t.contains("json") || t.starts_with("text/plain")
    });
    if json_like && let Ok(value) = serde_json::from_slice::<Value>(body) {
        return Some(value);
    }
    if content_type.is_some_and(|t| t.contains("x-www-form-urlencoded")) {
        let map: Map<String, Value> = url::form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
            .collect();
        return Some(Value::Object(map));
    }
    Some(Value::String(String::from_utf8_lossy(body).into_owned()))
}

/// A payload rendered with what resolves: a member or item whose expression does not
/// resolve (an input not given) is left out, as other executors leave it out of a body.
pub(super) fn render_lenient(template: &Template, scope: &dyn Resolve) -> Option<Value> {
    match template {
        Template::Object(members) => Some(Value::Object(
            members
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), render_lenient(value, scope)?)))
                .collect(),
        )),
        Template::Array(items) => Some(Value::Array(
            items
                .iter()
                .filter_map(|item| render_lenient(item, scope))
                .collect(),
        )),
        other => other.render(scope).ok(),
    }
}
