//! An Arazzo document (1.0.x or 1.1.x) read into restmcp's model: its sources, its
//! workflows with their steps, parameters, request bodies, criteria, actions and outputs,
//! every runtime expression parsed and every reusable component (`$components.…`, inputs
//! `$ref`s) put in place. A workflow that cannot be read keeps its problems, each with the
//! JSON pointer of what it is about; the others are read all the same.

use serde_json::{Map, Value};

use super::criterion::{self, Criterion};
use super::expression;
use super::template::{self, Template};
use crate::json::escape_token as escape_pointer_token;

/// How deep `$ref`s between component inputs may nest.
const MAX_REF_DEPTH: usize = 16;

/// One problem of a document, with the JSON pointer of what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}: {}", self.pointer, self.message)
    }
}

/// A whole Arazzo document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The `arazzo` version it declares.
    pub version: String,
    pub title: String,
    pub sources: Vec<SourceDescription>,
    /// Every workflow, in document order: read, or the problems that kept it from being read.
    pub workflows: Vec<Parsed>,
    /// Problems of the document as a whole (its version, a source): they keep every
    /// workflow from being published.
    pub problems: Vec<Problem>,
}

/// One workflow as read, or why not.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub id: String,
    /// `/workflows/N`.
    pub pointer: String,
    pub workflow: Result<Workflow, Vec<Problem>>,
}

/// A `sourceDescription`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDescription {
    pub name: String,
    pub url: String,
    pub kind: SourceKind,
}

/// What a source describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    OpenApi,
    Arazzo,
    AsyncApi,
}

/// A workflow.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub id: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// The inputs' JSON Schema, component `$ref`s inlined (`{"type":"object"}` when none).
    pub inputs: Value,
    pub depends_on: Vec<String>,
    pub steps: Vec<Step>,
    pub success_actions: Vec<Action>,
    pub failure_actions: Vec<Action>,
    pub outputs: Vec<Output>,
    /// Parameters every operation step gets (a step's own of the same name and place win).
    pub parameters: Vec<Parameter>,
    pub pointer: String,
}

/// A step.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    pub description: Option<String>,
    pub target: Target,
    pub parameters: Vec<Parameter>,
    pub request_body: Option<RequestBody>,
    pub success_criteria: Vec<Criterion>,
    pub on_success: Vec<Action>,
    pub on_failure: Vec<Action>,
    pub outputs: Vec<Output>,
    /// Arazzo 1.1's step `timeout`, in milliseconds.
    pub timeout_ms: Option<u64>,
    pub pointer: String,
}

/// What a step calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `operationId`, maybe qualified: `(source, operationId)`.
    OperationId(Option<String>, String),
    /// `operationPath`: the source named in `{$sourceDescriptions.NAME.url}` and the JSON
    /// pointer after `#` (`/paths/~1pets/get`).
    OperationPath(Option<String>, String),
    /// `workflowId` of this document.
    Workflow(String),
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    Path,
    Query,
    Header,
    Cookie,
}

impl In {
    pub fn as_str(self) -> &'static str {
        match self {
            In::Path => "path",
            In::Query => "query",
            In::Header => "header",
            In::Cookie => "cookie",
        }
    }
}

/// A parameter: `in` is absent for a step that calls a workflow (the name is an input).
#[derive(Debug, Clone)]
pub struct Parameter {
    pub name: String,
    pub place: Option<In>,
    pub value: Template,
    pub pointer: String,
}

/// A request body.
#[derive(Debug, Clone)]
pub struct RequestBody {
    pub content_type: Option<String>,
    pub payload: Option<Template>,
    /// (JSON pointer target, value).
    pub replacements: Vec<(String, Template)>,
    pub pointer: String,
}

/// A named output: a runtime expression (or a template).
#[derive(Debug, Clone)]
pub struct Output {
    pub name: String,
    pub value: Template,
    pub pointer: String,
}

/// A success or failure action.
#[derive(Debug, Clone)]
pub struct Action {
    pub name: String,
    pub kind: ActionKind,
    pub criteria: Vec<Criterion>,
    pub pointer: String,
}

/// What an action does.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind {
    End,
    GotoStep(String),
    GotoWorkflow(String),
    /// Seconds to wait (`retryAfter`) and how many times (`retryLimit`, 1 when absent).
    Retry {
        after: Option<f64>,
        limit: u32,
    },
}

/// The components a document's workflows refer to.
#[derive(Default)]
struct Components<'a> {
    inputs: Option<&'a Map<String, Value>>,
    parameters: Option<&'a Map<String, Value>>,
    success_actions: Option<&'a Map<String, Value>>,
    failure_actions: Option<&'a Map<String, Value>>,
}

/// Reads an Arazzo document.
pub fn read(value: &Value) -> Document {
    let mut problems = Vec::new();
    let version = value
        .get("arazzo")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !(version.starts_with("1.0.") || version.starts_with("1.1.")) {
        problems.push(problem(
            "/arazzo",
            format!("arazzo version \"{version}\" is not one restmcp reads (1.0.x and 1.1.x are)"),
        ));
    }
    let title = value
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(own) = value.get("$self").and_then(Value::as_str)
        && own.contains('#')
    {
        problems.push(problem(
            "/$self",
            format!("$self \"{own}\" must be a URI without a fragment"),
        ));
    }
    let sources = read_sources(value.get("sourceDescriptions"), &mut problems);
    let components = components(value.get("components"));
    let workflows = match value.get("workflows").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list
            .iter()
            .enumerate()
            .map(|(i, workflow)| read_workflow(workflow, &format!("/workflows/{i}"), &components))
            .collect(),
        _ => {
            problems.push(problem(
                "/workflows",
                "the document has no workflows".into(),
            ));
            Vec::new()
        }
    };
    Document {
        version,
        title,
        sources,
        workflows,
        problems,
    }
}

fn problem(pointer: &str, message: String) -> Problem {
    Problem {
        pointer: pointer.to_string(),
        message,
    }
}

fn components(value: Option<&Value>) -> Components<'_> {
    let Some(value) = value else {
        return Components::default();
    };
    Components {
        inputs: value.get("inputs").and_then(Value::as_object),
        parameters: value.get("parameters").and_then(Value::as_object),
        success_actions: value.get("successActions").and_then(Value::as_object),
        failure_actions: value.get("failureActions").and_then(Value::as_object),
    }
}

fn read_sources(value: Option<&Value>, problems: &mut Vec<Problem>) -> Vec<SourceDescription> {
    let Some(list) = value.and_then(Value::as_array) else {
        problems.push(problem(
            "/sourceDescriptions",
            "the document has no sourceDescriptions".into(),
        ));
        return Vec::new();
    };
    let mut sources = Vec::new();
    for (i, source) in list.iter().enumerate() {
        let pointer = format!("/sourceDescriptions/{i}");
        let name = source.get("name").and_then(Value::as_str);
        let url = source.get("url").and_then(Value::as_str);
        let (Some(name), Some(url)) = (name, url) else {
            problems.push(problem(&pointer, "a source needs a name and a url".into()));
            continue;
        };
        let kind = match source.get("type").and_then(Value::as_str) {
            None | Some("openapi") => SourceKind::OpenApi,
            Some("arazzo") => SourceKind::Arazzo,
            Some("asyncapi") => SourceKind::AsyncApi,
            Some(other) => {
                problems.push(problem(
                    &format!("{pointer}/type"),
                    format!("source type \"{other}\" is not openapi, arazzo or asyncapi"),
                ));
                continue;
            }
        };
        sources.push(SourceDescription {
            name: name.to_string(),
            url: url.to_string(),
            kind,
        });
    }
    sources
}

/// Collects the problems of one workflow as it is read.
struct Reader<'c> {
    components: &'c Components<'c>,
    problems: Vec<Problem>,
}

impl<'c> Reader<'c> {
    fn fail(&mut self, pointer: &str, message: impl Into<String>) {
        self.problems.push(problem(pointer, message.into()));
    }

    fn template(&mut self, value: &Value, pointer: &str) -> Template {
        match template::compile(value) {
            Ok(template) => template,
            Err(error) => {
                self.fail(pointer, error.to_string());
                Template::Literal(Value::Null)
            }
        }
    }

    /// A value that is meant as a runtime expression: one that looks like one (`$word.`,
    /// `$statusCode`) must parse; `"$5 off"` stays a constant.
    fn expression_template(&mut self, value: &Value, pointer: &str) -> Template {
        if value.get("selector").is_some() {
            self.fail(
                pointer,
                "Selector Objects are not supported in this version",
            );
            return Template::Literal(Value::Null);
        }
        if let Some(text) = value.as_str()
            && looks_like_expression(text)
            && let Err(error) = expression::parse(text)
        {
            self.fail(
                pointer,
                format!(
                    "runtime expression \"{text}\" does not parse at {}: {}",
                    error.position, error.message
                ),
            );
            return Template::Literal(Value::Null);
        }
        self.template(value, pointer)
    }

    fn criteria(&mut self, value: Option<&Value>, pointer: &str) -> Vec<Criterion> {
        let Some(value) = value else {
            return Vec::new();
        };
        let Some(list) = value.as_array() else {
            self.fail(pointer, "criteria must be a list");
            return Vec::new();
        };
        let mut criteria = Vec::new();
        for (i, item) in list.iter().enumerate() {
            match criterion::parse(item) {
                Ok(criterion) => criteria.push(criterion),
                Err(error) => self.fail(&format!("{pointer}/{i}"), error.to_string()),
            }
        }
        criteria
    }
}

fn read_workflow(value: &Value, pointer: &str, components: &Components<'_>) -> Parsed {
    let id = value
        .get("workflowId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut reader = Reader {
        components,
        problems: Vec::new(),
    };
    if id.is_empty() {
        reader.fail(pointer, "a workflow needs a workflowId");
    }
    let workflow = reader.workflow(value, pointer, id.clone());
    let workflow = match reader.problems.is_empty() {
        true => Ok(workflow),
        false => Err(reader.problems),
    };
    Parsed {
        id,
        pointer: pointer.to_string(),
        workflow,
    }
}

impl<'c> Reader<'c> {
    fn workflow(&mut self, value: &Value, pointer: &str, id: String) -> Workflow {
        let inputs = match value.get("inputs") {
            Some(inputs) => self.inline_inputs(inputs, &format!("{pointer}/inputs"), 0),
            None => serde_json::json!({"type": "object"}),
        };
        let depends_on = strings(value.get("dependsOn"));
        let unique: std::collections::BTreeSet<&String> = depends_on.iter().collect();
        if unique.len() != depends_on.len() {
            self.fail(
                &format!("{pointer}/dependsOn"),
                "dependsOn names a workflow twice",
            );
        }
        let steps = match value.get("steps").and_then(Value::as_array) {
            Some(steps) if !steps.is_empty() => steps
                .iter()
                .enumerate()
                .map(|(i, step)| self.step(step, &format!("{pointer}/steps/{i}")))
                .collect(),
            _ => {
                self.fail(pointer, "a workflow needs at least one step");
                Vec::new()
            }
        };
        let mut seen = std::collections::BTreeSet::new();
        for step in &steps {
            if !seen.insert(step.id.clone()) {
                self.fail(
                    &step.pointer,
                    format!("stepId \"{}\" is used twice in this workflow", step.id),
                );
            }
        }
        Workflow {
            id,
            summary: text(value, "summary"),
            description: text(value, "description"),
            inputs,
            depends_on,
            steps,
            success_actions: self.actions(value.get("successActions"), pointer, true),
            failure_actions: self.actions(value.get("failureActions"), pointer, false),
            outputs: self.outputs(value.get("outputs"), &format!("{pointer}/outputs")),
            parameters: self.parameters(value.get("parameters"), &format!("{pointer}/parameters")),
            pointer: pointer.to_string(),
        }
    }

    /// The inputs schema with every `$ref` to `#/components/inputs/NAME` replaced by the
    /// component.
    fn inline_inputs(&mut self, schema: &Value, pointer: &str, depth: usize) -> Value {
        match schema {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    return self.input_component(reference, pointer, depth);
                }
                Value::Object(
                    map.iter()
                        .map(|(key, value)| {
                            let inner = format!("{pointer}/{}", escape_pointer_token(key));
                            (key.clone(), self.inline_inputs(value, &inner, depth))
                        })
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.inline_inputs(item, &format!("{pointer}/{i}"), depth))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn input_component(&mut self, reference: &str, pointer: &str, depth: usize) -> Value {
        let name = reference.strip_prefix("#/components/inputs/");
        let found = name.and_then(|name| self.components.inputs?.get(name));
        match found {
            Some(component) if depth < MAX_REF_DEPTH => {
                self.inline_inputs(component, pointer, depth + 1)
            }
            Some(_) => {
                self.fail(pointer, format!("$ref \"{reference}\" nests too deep"));
                Value::Bool(true)
            }
            None => {
                self.fail(
                    pointer,
                    format!(
                        "$ref \"{reference}\" is not a #/components/inputs/NAME of this document"
                    ),
                );
                Value::Bool(true)
            }
        }
    }

    fn step(&mut self, value: &Value, pointer: &str) -> Step {
        let id = value
            .get("stepId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if id.is_empty() {
            self.fail(pointer, "a step needs a stepId");
        }
        let target = self.target(value, pointer);
        if value
            .get("successCriteria")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            self.fail(
                &format!("{pointer}/successCriteria"),
                "successCriteria, when given, lists at least one criterion",
            );
        }
        if value.get("action").is_some() {
            self.fail(
                &format!("{pointer}/action"),
                "AsyncAPI steps (action) are not supported in this version",
            );
        }
        if value.get("dependsOn").is_some() {
            self.fail(
                &format!("{pointer}/dependsOn"),
                "step-level dependsOn (Arazzo 1.1) is not supported in this version",
            );
        }
        let request_body = value
            .get("requestBody")
            .map(|body| self.request_body(body, &format!("{pointer}/requestBody")));
        let timeout_ms = value.get("timeout").and_then(Value::as_u64);
        let parameters = self.parameters(value.get("parameters"), &format!("{pointer}/parameters"));
        if !matches!(target, Target::Workflow(_)) {
            for parameter in parameters.iter().filter(|p| p.place.is_none()) {
                self.fail(
                    &parameter.pointer,
                    format!(
                        "parameter \"{}\" of an operation step needs `in` (path, query, header \
                         or cookie)",
                        parameter.name
                    ),
                );
            }
        }
        Step {
            id,
            description: text(value, "description"),
            target,
            parameters,
            request_body,
            success_criteria: self.criteria(
                value.get("successCriteria"),
                &format!("{pointer}/successCriteria"),
            ),
            on_success: self.actions(value.get("onSuccess"), pointer, true),
            on_failure: self.actions(value.get("onFailure"), pointer, false),
            outputs: self.outputs(value.get("outputs"), &format!("{pointer}/outputs")),
            timeout_ms,
            pointer: pointer.to_string(),
        }
    }

    fn target(&mut self, value: &Value, pointer: &str) -> Target {
        if value.get("channelPath").is_some() || value.get("correlationId").is_some() {
            self.fail(
                pointer,
                "AsyncAPI steps (channelPath) are not supported in this version",
            );
        }
        let operation_id = value.get("operationId").and_then(Value::as_str);
        let operation_path = value.get("operationPath").and_then(Value::as_str);
        let workflow_id = value.get("workflowId").and_then(Value::as_str);
        match (operation_id, operation_path, workflow_id) {
            (Some(id), None, None) => match id.strip_prefix("$sourceDescriptions.") {
                Some(qualified) => match qualified.split_once('.') {
                    Some((source, id)) => Target::OperationId(Some(source.into()), id.into()),
                    None => {
                        self.fail(
                            &format!("{pointer}/operationId"),
                            format!("operationId \"{id}\" names a source but no operation"),
                        );
                        Target::OperationId(None, id.into())
                    }
                },
                None => Target::OperationId(None, id.into()),
            },
            (None, Some(path), None) => self.operation_path(path, pointer),
            (None, None, Some(id)) => {
                if id.starts_with("$sourceDescriptions.") {
                    self.fail(
                        &format!("{pointer}/workflowId"),
                        format!(
                            "workflowId \"{id}\" names a workflow of another Arazzo document: \
                             arazzo sources are not supported in this version"
                        ),
                    );
                }
                Target::Workflow(id.into())
            }
            _ => {
                self.fail(
                    pointer,
                    "a step needs exactly one of operationId, operationPath and workflowId",
                );
                Target::Workflow(String::new())
            }
        }
    }

    /// `{$sourceDescriptions.NAME.url}#/paths/~1pets/get`, or a bare `#/paths/…`.
    fn operation_path(&mut self, path: &str, pointer: &str) -> Target {
        let (head, fragment) = path.split_once('#').unwrap_or((path, ""));
        // `{$sourceDescriptions.NAME.url}` as 1.0 writes it; 1.1's examples also write the
        // source without braces or `.url`.
        let bare = head
            .strip_prefix('{')
            .and_then(|h| h.strip_suffix('}'))
            .unwrap_or(head);
        let source = bare
            .strip_prefix("$sourceDescriptions.")
            .map(|rest| rest.strip_suffix(".url").unwrap_or(rest))
            .filter(|name| !name.is_empty() && !name.contains('.'))
            .map(str::to_string);
        if !fragment.starts_with("/paths/") || (!head.is_empty() && source.is_none()) {
            self.fail(
                &format!("{pointer}/operationPath"),
                format!(
                    "operationPath \"{path}\" is not \
                     '{{$sourceDescriptions.NAME.url}}#/paths/…/METHOD'"
                ),
            );
        }
        Target::OperationPath(source, fragment.to_string())
    }

    fn request_body(&mut self, value: &Value, pointer: &str) -> RequestBody {
        let payload = value
            .get("payload")
            .map(|payload| self.template(payload, &format!("{pointer}/payload")));
        let mut replacements = Vec::new();
        for (i, item) in value
            .get("replacements")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{pointer}/replacements/{i}");
            let target = item.get("target").and_then(Value::as_str).unwrap_or("");
            if !(target.is_empty() || target.starts_with('/')) {
                self.fail(
                    &format!("{at}/target"),
                    format!(
                        "replacement target \"{target}\" is not a JSON Pointer (XPath and \
                         JSONPath targets are not supported in this version)"
                    ),
                );
            }
            let value = item.get("value").unwrap_or(&Value::Null);
            let value = self.expression_template(value, &format!("{at}/value"));
            replacements.push((target.to_string(), value));
        }
        RequestBody {
            content_type: text(value, "contentType"),
            payload,
            replacements,
            pointer: pointer.to_string(),
        }
    }

    fn parameters(&mut self, value: Option<&Value>, pointer: &str) -> Vec<Parameter> {
        let mut parameters = Vec::new();
        for (i, item) in value
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{pointer}/{i}");
            if let Some(reference) = item.get("reference").and_then(Value::as_str) {
                let found = reference
                    .strip_prefix("$components.parameters.")
                    .and_then(|name| self.components.parameters?.get(name));
                let Some(component) = found else {
                    self.fail(
                        &format!("{at}/reference"),
                        format!("\"{reference}\" is not a component parameter of this document"),
                    );
                    continue;
                };
                let mut component = component.clone();
                if let (Some(map), Some(value)) = (component.as_object_mut(), item.get("value")) {
                    map.insert("value".into(), value.clone());
                }
                if let Some(parameter) = self.parameter(&component, &at) {
                    parameters.push(parameter);
                }
            } else if let Some(parameter) = self.parameter(item, &at) {
                parameters.push(parameter);
            }
        }
        for (i, parameter) in parameters.iter().enumerate() {
            let twice = parameters[..i]
                .iter()
                .any(|earlier| earlier.name == parameter.name && earlier.place == parameter.place);
            if twice {
                self.problems.push(problem(
                    &parameter.pointer,
                    format!("parameter \"{}\" is given twice", parameter.name),
                ));
            }
        }
        parameters
    }

    fn parameter(&mut self, value: &Value, pointer: &str) -> Option<Parameter> {
        let Some(name) = value.get("name").and_then(Value::as_str) else {
            self.fail(pointer, "a parameter needs a name");
            return None;
        };
        let place = match value.get("in").and_then(Value::as_str) {
            None => None,
            Some("path") => Some(In::Path),
            Some("query") => Some(In::Query),
            Some("header") => Some(In::Header),
            Some("cookie") => Some(In::Cookie),
            Some("querystring") => {
                self.fail(
                    &format!("{pointer}/in"),
                    "querystring parameters are not supported in this version",
                );
                return None;
            }
            Some(other) => {
                self.fail(
                    &format!("{pointer}/in"),
                    format!("parameter place \"{other}\" is not path, query, header or cookie"),
                );
                return None;
            }
        };
        let value = value.get("value").unwrap_or(&Value::Null);
        let value = self.expression_template(value, &format!("{pointer}/value"));
        Some(Parameter {
            name: name.to_string(),
            place,
            value,
            pointer: pointer.to_string(),
        })
    }

    fn outputs(&mut self, value: Option<&Value>, pointer: &str) -> Vec<Output> {
        let Some(map) = value.and_then(Value::as_object) else {
            return Vec::new();
        };
        map.iter()
            .map(|(name, value)| {
                let at = format!("{pointer}/{}", escape_pointer_token(name));
                Output {
                    name: name.clone(),
                    value: self.expression_template(value, &at),
                    pointer: at,
                }
            })
            .collect()
    }

    fn actions(&mut self, value: Option<&Value>, pointer: &str, success: bool) -> Vec<Action> {
        let key = match (success, pointer.contains("/steps/")) {
            (true, true) => "onSuccess",
            (false, true) => "onFailure",
            (true, false) => "successActions",
            (false, false) => "failureActions",
        };
        let mut actions = Vec::new();
        for (i, item) in value
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{pointer}/{key}/{i}");
            let item = match item.get("reference").and_then(Value::as_str) {
                Some(reference) => match self.action_component(reference, success) {
                    Some(component) => component,
                    None => {
                        self.fail(
                            &format!("{at}/reference"),
                            format!("\"{reference}\" is not a component action of this document"),
                        );
                        continue;
                    }
                },
                None => item,
            };
            if let Some(action) = self.action(item, &at, success) {
                actions.push(action);
            }
        }
        actions
    }

    fn action_component(&self, reference: &str, success: bool) -> Option<&'c Value> {
        let (prefix, components) = match success {
            true => (
                "$components.successActions.",
                self.components.success_actions,
            ),
            false => (
                "$components.failureActions.",
                self.components.failure_actions,
            ),
        };
        components?.get(reference.strip_prefix(prefix)?)
    }

    fn action(&mut self, value: &Value, pointer: &str, success: bool) -> Option<Action> {
        let name = text(value, "name").unwrap_or_default();
        let step = text(value, "stepId");
        let workflow = text(value, "workflowId");
        let kind = match (value.get("type").and_then(Value::as_str), success) {
            (Some("end"), _) => ActionKind::End,
            (Some("goto"), _) => match (step, workflow) {
                (Some(step), None) => ActionKind::GotoStep(step),
                (None, Some(workflow)) => ActionKind::GotoWorkflow(workflow),
                _ => {
                    self.fail(
                        pointer,
                        "a goto action needs exactly one of stepId and workflowId",
                    );
                    return None;
                }
            },
            (Some("retry"), false) => {
                if step.is_some() || workflow.is_some() {
                    self.fail(
                        pointer,
                        "a retry action that runs a step or workflow first is not supported in \
                         this version",
                    );
                    return None;
                }
                let limit = value.get("retryLimit").and_then(Value::as_u64).unwrap_or(1);
                ActionKind::Retry {
                    after: value.get("retryAfter").and_then(Value::as_f64),
                    limit: u32::try_from(limit).unwrap_or(u32::MAX),
                }
            }
            (other, _) => {
                self.fail(
                    &format!("{pointer}/type"),
                    format!(
                        "action type {} is not {}",
                        other.map_or("(none)".to_string(), |o| format!("\"{o}\"")),
                        if success {
                            "end or goto"
                        } else {
                            "end, goto or retry"
                        }
                    ),
                );
                return None;
            }
        };
        let criteria = self.criteria(value.get("criteria"), &format!("{pointer}/criteria"));
        Some(Action {
            name,
            kind,
            criteria,
            pointer: pointer.to_string(),
        })
    }
}

/// `$` then letters and a `.`, or one of the expressions without a dot.
fn looks_like_expression(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('$') else {
        return false;
    };
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    !word.is_empty()
        && (rest[word.len()..].starts_with('.')
            || matches!(word.as_str(), "url" | "method" | "statusCode"))
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

impl Workflow {
    /// The index of step `id`.
    pub fn step_index(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|step| step.id == id)
    }

    /// The parameters step `step` sends: the workflow's, each replaced by the step's own
    /// of the same name and place, then the step's others.
    pub fn parameters_of<'a>(&'a self, step: &'a Step) -> Vec<&'a Parameter> {
        let mut merged: Vec<&Parameter> = self
            .parameters
            .iter()
            .filter(|shared| {
                !step
                    .parameters
                    .iter()
                    .any(|own| own.name == shared.name && own.place == shared.place)
            })
            .collect();
        merged.extend(step.parameters.iter());
        merged
    }
}
