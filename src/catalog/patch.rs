//! Tool patches: restmcp's own overlay files, small YAML (or JSON) files that reshape the
//! tools a spec produces and add tools of their own, plus the `x-mcp` extension that says
//! the same inside a spec.
//!
//! ```yaml
//! tools:                       # changes, keyed by operationId or "METHOD /path"
//!   getPetById:
//!     name: get_pet
//!     arguments:
//!       petId: {name: id, description: The pet's id}
//!       tenant: {value_env: PETSTORE_TENANT}   # hidden; the server sends it
//!     response: {fields: [id, name, status]}
//! add:                         # hand-written tools, keyed by tool name
//!   ping: {method: GET, path: /ping, description: Checks the service is up}
//! ```
//!
//! An overlay file named in the config is the operator's and may do all of it; the spec's own
//! `x-mcp` is data from elsewhere ([`SPEC_EXTENSION`]): it may not read the environment
//! (`value_env`), and the limits it sets can only lower the API's ([`ToolLimit::AtMost`]).
//!
//! This module owns the file format ([`OverlayFile`]) and applying a [`ToolPatch`] to a
//! synthesized tool. The `add` entries are built by [`super::handwritten`]; `response.fields`
//! is carried out by [`super::projection`]. Every error names the file and the JSON pointer
//! of the entry at fault. OpenAPI Overlay 1.0 documents, which edit the spec itself, are
//! [`crate::spec::overlay`]'s business.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use super::arguments::{FixedValue, Location};
use super::naming::is_valid_tool_name;
use super::projection::{FieldTree, project_output_schema};
use super::{Annotations, Confirmation, SchemaText, Tool, ToolLimit};
use crate::json::escape_token as escape_segment;

/// A map that keeps the order entries were written in (tools/list follows it).
#[derive(Debug, Clone, PartialEq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for OrderedVisitor<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, T)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, T>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom(format!("duplicate key \"{key}\"")));
                    }
                    entries.push((key, value));
                }
                Ok(Ordered(entries))
            }
            // `tools:` with nothing under it is an empty map, not a mistake.
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }
        }
        deserializer.deserialize_any(OrderedVisitor(PhantomData))
    }
}

/// One restmcp overlay file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlayFile {
    /// For editors (`$schema: …/overlay.schema.json`); ignored.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// Not in the file: set by the loader for a `NAME.overlay.yaml` found beside its spec
    /// that the config does not name. Whoever can drop a file there is not the operator,
    /// so it has a spec's powers ([`UNLISTED_OVERLAY`]).
    #[serde(skip)]
    pub unlisted: bool,
    /// Changes to the spec's tools, keyed by operationId or `METHOD /path`.
    #[serde(default)]
    pub tools: Ordered<ToolPatch>,
    /// Hand-written tools, keyed by tool name.
    #[serde(default)]
    pub add: Ordered<NewTool>,
    /// Prompts, keyed by name ([`super::prompt`]).
    #[serde(default)]
    pub prompts: Ordered<crate::config::PromptSettings>,
}

/// Changes to one tool. Absent keys leave the spec's value.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPatch {
    pub name: Option<String>,
    pub title: Option<String>,
    /// Replaces the description.
    pub description: Option<String>,
    /// Added after the description (after `description` when both are given).
    pub append_description: Option<String>,
    pub hidden: Option<bool>,
    pub annotations: Option<AnnotationsPatch>,
    pub timeout_seconds: Option<f64>,
    /// The `Accept` header of the tool's requests (`application/vnd.github+json`).
    pub accept: Option<String>,
    pub response: Option<ResponsePatch>,
    #[serde(default)]
    pub arguments: Ordered<ArgumentPatch>,
    /// A human confirms each call before its request is sent (`true`), or never needs to
    /// (`false`), whatever the API's `confirm` policy says. A spec's `x-mcp` can only ask
    /// for confirmation, never waive it.
    pub confirm: Option<bool>,
    /// Serve the tool as a resource too ([`super::resource`]).
    pub resource: Option<super::resource::ResourcePatch>,
}

/// MCP annotation hints to set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnnotationsPatch {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

impl AnnotationsPatch {
    pub fn apply_to(&self, annotations: &mut Annotations) {
        let set = |target: &mut bool, value: Option<bool>| {
            if let Some(value) = value {
                *target = value;
            }
        };
        set(&mut annotations.read_only_hint, self.read_only_hint);
        set(&mut annotations.destructive_hint, self.destructive_hint);
        set(&mut annotations.idempotent_hint, self.idempotent_hint);
        set(&mut annotations.open_world_hint, self.open_world_hint);
    }
}

/// Response shaping.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponsePatch {
    /// Keep only these fields of a JSON response (`id`, `owner.login`); applied to each
    /// item of an array.
    #[serde(default)]
    pub fields: Vec<String>,
    /// Read at most this many bytes of the response.
    pub max_bytes: Option<u64>,
    /// The most a JSON result may hold, in estimated tokens (replaces the API's
    /// `max_result_tokens`; a spec's `x-mcp` can only lower it).
    pub max_tokens: Option<u64>,
}

/// Changes to one argument.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub required: Option<bool>,
    #[serde(rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    pub default: Option<Value>,
    /// Hidden from the model; the server always sends this value.
    pub value: Option<Value>,
    /// Hidden from the model; the server sends this environment variable's value.
    pub value_env: Option<String>,
    /// The user gives it: every call asks for it with a form (the model's value, if any,
    /// as the default), through elicitation or 2026-07-28's `input_required`.
    pub ask: Option<bool>,
}

/// A hand-written tool: one endpoint on the API's base URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTool {
    pub title: Option<String>,
    pub description: String,
    pub method: String,
    /// A path template on the API's base URL, `/items/{id}`.
    pub path: String,
    #[serde(default)]
    pub arguments: Ordered<NewArgument>,
    /// Media type of the body the `in: body` arguments make (default `application/json`).
    pub body_media_type: Option<String>,
    /// JSON Schema of the JSON response, published as the outputSchema.
    pub output_schema: Option<Value>,
    pub annotations: Option<AnnotationsPatch>,
    pub timeout_seconds: Option<f64>,
    /// The `Accept` header of the tool's requests; by default `application/json` when it
    /// has an `output_schema`, else `*/*`.
    pub accept: Option<String>,
    pub response: Option<ResponsePatch>,
    /// A human confirms each call first (`true`) or never (`false`), whatever the API's
    /// `confirm` policy says.
    pub confirm: Option<bool>,
    /// Serve the tool as a resource too ([`super::resource`]).
    pub resource: Option<super::resource::ResourcePatch>,
}

/// One argument of a hand-written tool: where it goes, and its JSON Schema.
#[derive(Debug, Clone, Deserialize)]
pub struct NewArgument {
    /// `path`, `query`, `header`, `cookie` or `body`; by default `path` when the path
    /// template names it, else `query` for GET, HEAD, DELETE and OPTIONS and `body` for the rest.
    #[serde(rename = "in")]
    pub location: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// The argument's JSON Schema (`type`, `description`, `enum`, …).
    #[serde(flatten)]
    pub schema: Map<String, Value>,
}

/// Where a patch came from, for errors and `restmcp explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchSource {
    /// `overlay` or `x-mcp`.
    pub kind: &'static str,
    /// `specs/petstore.overlay.yaml#/tools/getPetById`
    pub location: String,
}

/// [`PatchSource::kind`] of a spec's own `x-mcp` extension: data from elsewhere, so it may
/// rename, describe, hide and annotate, but never read the environment or raise a limit.
pub const SPEC_EXTENSION: &str = "x-mcp";

/// [`PatchSource::kind`] of an overlay file found beside its spec that the config does not
/// name: data from elsewhere too, with a spec's powers (unless
/// `loading.trust_conventional_overlays`).
pub const UNLISTED_OVERLAY: &str = "unlisted overlay";

/// [`PatchSource::kind`] of an overlay the operator named.
pub const OVERLAY: &str = "overlay";

impl PatchSource {
    /// The source of an entry of `overlay`: the operator's, or (unlisted) a spec's.
    pub fn of_overlay(overlay: &OverlayFile, location: String) -> PatchSource {
        PatchSource {
            kind: if overlay.unlisted {
                UNLISTED_OVERLAY
            } else {
                OVERLAY
            },
            location,
        }
    }

    /// The patch is data from elsewhere (a spec's `x-mcp`, an unlisted overlay), not the
    /// operator's word: it may not read the environment, raise a limit or waive a
    /// confirmation.
    pub fn is_spec(&self) -> bool {
        self.kind == SPEC_EXTENSION || self.kind == UNLISTED_OVERLAY
    }

    /// How a limit this patch sets applies: an overlay's replaces the API's, a spec's can
    /// only lower it.
    pub(super) fn limit<T>(&self, value: T) -> ToolLimit<T> {
        if self.is_spec() {
            ToolLimit::AtMost(value)
        } else {
            ToolLimit::Replace(value)
        }
    }

    pub fn at(&self, path: &[&str]) -> String {
        let mut location = self.location.clone();
        for segment in path {
            location.push('/');
            location.push_str(&escape_segment(segment));
        }
        location
    }

    pub(super) fn describe(&self, path: &[&str]) -> String {
        format!("{} {}", self.kind, self.at(path))
    }

    /// [`describe`](Self::describe) for a limit, saying when it can only lower the API's.
    fn describe_limit(&self, path: &[&str]) -> String {
        if self.is_spec() {
            format!("{} (can only lower the config's)", self.describe(path))
        } else {
            self.describe(path)
        }
    }
}

/// A patch that cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct PatchError {
    pub location: String,
    pub problem: String,
}

impl PatchError {
    pub fn new(location: String, problem: impl Into<String>) -> PatchError {
        PatchError {
            location,
            problem: problem.into(),
        }
    }
}

/// Parses an overlay file's text (YAML or JSON); errors give line and column.
pub fn parse_file(name: &str, bytes: &[u8]) -> Result<OverlayFile, crate::spec::SpecError> {
    crate::spec::parse::parse_typed(name, bytes)
}

/// Reads an `x-mcp` extension value as a patch.
pub fn parse_extension(value: &Value, location: &str) -> Result<ToolPatch, PatchError> {
    deserialize_value(value).map_err(|e| PatchError::new(location.to_string(), e))
}

fn deserialize_value<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).map_err(|e| e.to_string())
}

/// Settings a patch may need.
pub struct PatchLimits {
    pub max_name_length: usize,
    /// The config sets the API's `accept`, which a spec's `x-mcp` does not override.
    pub config_accept: bool,
}

/// Applies `patch` to `tool`, recording what it changed in the tool's provenance.
pub fn apply(
    tool: &mut Tool,
    patch: &ToolPatch,
    source: &PatchSource,
    limits: &PatchLimits,
) -> Result<(), PatchError> {
    if let Some(name) = &patch.name {
        if !is_valid_tool_name(name, limits.max_name_length) {
            return Err(PatchError::new(
                source.at(&["name"]),
                format!(
                    "\"{name}\" is not a valid tool name: use A-Z, a-z, 0-9, _ and -, at most {} characters",
                    limits.max_name_length
                ),
            ));
        }
        tool.name = name.clone();
        tool.note("name", source.describe(&["name"]));
    }
    if let Some(title) = &patch.title {
        tool.title = Some(title.clone());
        tool.note("title", source.describe(&["title"]));
    }
    if let Some(description) = &patch.description {
        tool.description = description.clone();
        tool.note("description", source.describe(&["description"]));
    }
    if let Some(extra) = &patch.append_description {
        if tool.description.is_empty() {
            tool.description = extra.clone();
        } else {
            tool.description = format!("{}\n\n{extra}", tool.description.trim_end());
        }
        tool.note(
            "description",
            format!("appended by {}", source.describe(&["append_description"])),
        );
    }
    if let Some(annotations) = &patch.annotations {
        annotations.apply_to(&mut tool.annotations);
        tool.note("annotations", source.describe(&["annotations"]));
    }
    if let Some(seconds) = patch.timeout_seconds {
        let seconds = timeout(seconds, source.at(&["timeout_seconds"]))?;
        tool.route.timeout = Some(source.limit(seconds));
        tool.note("timeout", source.describe_limit(&["timeout_seconds"]));
    }
    if let Some(accept) = &patch.accept
        && !(source.is_spec() && limits.config_accept)
    {
        tool.route.accept = checked_accept(accept, source)?;
        tool.note("accept", source.describe(&["accept"]));
    }
    if let Some(response) = &patch.response {
        apply_response(tool, response, source)?;
    }
    if let Some(confirm) = patch.confirm {
        set_confirmation(tool, confirm, source);
    }
    for (argument, change) in &patch.arguments.0 {
        apply_argument(tool, argument, change, source)?;
    }
    // Last: its variables are the arguments as renamed above.
    if let Some(resource) = &patch.resource {
        super::resource::apply(tool, resource, source)?;
    }
    Ok(())
}

/// Sets whether a human confirms the tool's calls; a spec can only ask for it.
pub(super) fn set_confirmation(tool: &mut Tool, confirm: bool, source: &PatchSource) {
    if source.is_spec() && !confirm {
        return;
    }
    tool.route.confirm = if confirm {
        Confirmation::Always
    } else {
        Confirmation::Never
    };
    tool.note("confirm", source.describe(&["confirm"]));
}

/// An `accept` value as the header to send, or why it cannot be one.
pub(super) fn checked_accept(accept: &str, source: &PatchSource) -> Result<String, PatchError> {
    crate::config::check_accept(accept)
        .map(|()| accept.trim().to_string())
        .map_err(|problem| PatchError::new(source.at(&["accept"]), problem))
}

pub(super) fn timeout(seconds: f64, location: String) -> Result<Duration, PatchError> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(PatchError::new(
            location,
            format!("{seconds} is not between 0 and 3600 seconds"),
        ))
    }
}

pub(super) fn apply_response(
    tool: &mut Tool,
    response: &ResponsePatch,
    source: &PatchSource,
) -> Result<(), PatchError> {
    if let Some(max) = response.max_bytes {
        if max == 0 {
            return Err(PatchError::new(
                source.at(&["response", "max_bytes"]),
                "must be at least 1",
            ));
        }
        tool.route.max_response_bytes = Some(source.limit(max));
        tool.note(
            "response.max_bytes",
            source.describe_limit(&["response", "max_bytes"]),
        );
    }
    if let Some(max) = response.max_tokens {
        if max == 0 {
            return Err(PatchError::new(
                source.at(&["response", "max_tokens"]),
                "must be at least 1",
            ));
        }
        tool.route.max_result_tokens = Some(source.limit(max));
        tool.note(
            "response.max_tokens",
            source.describe_limit(&["response", "max_tokens"]),
        );
    }
    if response.fields.is_empty() {
        return Ok(());
    }
    if let Some(bad) = response
        .fields
        .iter()
        .find(|f| f.is_empty() || f.split('.').any(str::is_empty))
    {
        return Err(PatchError::new(
            source.at(&["response", "fields"]),
            format!("\"{bad}\" is not a field path (names joined with dots)"),
        ));
    }
    tool.route.response_fields = response.fields.clone();
    if let Some(schema) = &mut tool.output_schema {
        let wrapped = tool.route.output.as_ref().is_some_and(|o| o.wrapped);
        let fields = FieldTree::new(&response.fields);
        schema.edit(|schema| project_output_schema(schema, &fields, wrapped));
    }
    tool.note("response.fields", source.describe(&["response", "fields"]));
    Ok(())
}

fn apply_argument(
    tool: &mut Tool,
    argument: &str,
    change: &ArgumentPatch,
    source: &PatchSource,
) -> Result<(), PatchError> {
    let mut input = tool.input_schema.to_value();
    apply_argument_to(tool, &mut input, argument, change, source)?;
    tool.input_schema = SchemaText::new(&input);
    Ok(())
}

/// [`apply_argument`] with the tool's input schema as a tree, `input`: the schema's
/// keywords first, then either a fixed value (which hides the argument) or what the model
/// sees of it (required, default, name).
fn apply_argument_to(
    tool: &mut Tool,
    input: &mut Value,
    argument: &str,
    change: &ArgumentPatch,
    source: &PatchSource,
) -> Result<(), PatchError> {
    let at = |key: &str| {
        if key.is_empty() {
            source.at(&["arguments", argument])
        } else {
            source.at(&["arguments", argument, key])
        }
    };
    let index = patchable_binding(tool, argument, at(""))?;
    let location = tool.route.arguments.bindings[index].location;
    let Some(schema) = properties_mut(input).get_mut(argument) else {
        return Err(PatchError::new(
            at(""),
            "the argument is not in the input schema",
        ));
    };
    set_keywords(schema, change, at)?;
    if let Some(fixed) = fixed_value(change, source, at)? {
        hide_with_value(tool, input, index, fixed, source);
        return Ok(());
    }
    if let Some(required) = change.required {
        if !required && location == Location::Path {
            return Err(PatchError::new(
                at("required"),
                "a path parameter is always required (give it a `value` or a `default` instead)",
            ));
        }
        // Only the model's view changes: the binding keeps what the operation requires,
        // which is what the mock upstream checks requests against.
        set_required(input, argument, required);
    }
    if let Some(default) = &change.default {
        tool.route.arguments.bindings[index].default = Some(default.clone());
    }
    if change.ask == Some(true) && !tool.route.ask.contains(&index) {
        tool.route.ask.push(index);
    }
    let mut current = argument;
    if let Some(new_name) = &change.name {
        rename_argument(tool, input, index, new_name, at("name"))?;
        current = new_name;
    }
    tool.note(
        &format!("arguments.{current}"),
        source.describe(&["arguments", argument]),
    );
    Ok(())
}

/// The index of `argument`'s binding, when the tool has that argument and no fixed value
/// for it yet; errors point at `at`.
fn patchable_binding(tool: &Tool, argument: &str, at: String) -> Result<usize, PatchError> {
    let bindings = &tool.route.arguments.bindings;
    let Some(index) = bindings.iter().position(|b| b.argument == argument) else {
        let known: Vec<&str> = bindings.iter().map(|b| b.argument.as_str()).collect();
        return Err(PatchError::new(
            at,
            format!(
                "tool \"{}\" has no argument \"{argument}\"; its arguments are: {}",
                tool.name,
                if known.is_empty() {
                    "(none)".to_string()
                } else {
                    known.join(", ")
                }
            ),
        ));
    };
    if bindings[index].fixed.is_some() {
        return Err(PatchError::new(
            at,
            format!("argument \"{argument}\" already has a fixed value"),
        ));
    }
    Ok(index)
}

/// Sets the argument schema's `description`, `enum` (which may only narrow the spec's)
/// and `default` as the patch gives them.
fn set_keywords(
    schema: &mut Value,
    change: &ArgumentPatch,
    at: impl Fn(&str) -> String,
) -> Result<(), PatchError> {
    if let Some(description) = &change.description {
        set_key(schema, "description", json!(description));
    }
    if let Some(values) = &change.enum_values {
        if values.is_empty() {
            return Err(PatchError::new(at("enum"), "must list at least one value"));
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && let Some(outside) = values.iter().find(|v| !allowed.contains(v))
        {
            return Err(PatchError::new(
                at("enum"),
                format!(
                    "{outside} is not one of the values the spec allows, so it cannot narrow them"
                ),
            ));
        }
        set_key(schema, "enum", Value::Array(values.clone()));
    }
    if let Some(default) = &change.default {
        set_key(schema, "default", default.clone());
    }
    Ok(())
}

/// The value the patch fixes the argument to: its `value`, or its `value_env` read from
/// the environment (which only an overlay file the config names may do); `None` when it
/// fixes none.
fn fixed_value(
    change: &ArgumentPatch,
    source: &PatchSource,
    at: impl Fn(&str) -> String,
) -> Result<Option<FixedValue>, PatchError> {
    if change.value_env.is_some() && source.is_spec() {
        let who = if source.kind == UNLISTED_OVERLAY {
            "an overlay file the config does not name has a spec's powers and cannot read the \
             environment: name it in apis.NAME.overlays (or set \
             loading.trust_conventional_overlays), or give a literal `value`"
        } else {
            "a spec cannot read the environment: set `value_env` in an overlay file named in \
             the config (apis.NAME.overlays), or give a literal `value`"
        };
        return Err(PatchError::new(at("value_env"), who));
    }
    match (&change.value, &change.value_env) {
        (Some(_), Some(_)) => Err(PatchError::new(
            at(""),
            "give either `value` or `value_env`, not both",
        )),
        (Some(value), None) => Ok(Some(FixedValue::Literal(value.clone()))),
        (None, Some(name)) => match std::env::var(name) {
            Ok(text) => Ok(Some(FixedValue::Env {
                name: name.clone(),
                value: text,
            })),
            Err(_) => Err(PatchError::new(
                at("value_env"),
                format!("environment variable {name} is not set"),
            )),
        },
        (None, None) => Ok(None),
    }
}

/// Hides the argument at binding `index` from the model (out of the input schema's
/// properties and `required`) and sends `fixed` in its place, noting where it came from.
fn hide_with_value(
    tool: &mut Tool,
    input: &mut Value,
    index: usize,
    fixed: FixedValue,
    source: &PatchSource,
) {
    let argument = tool.route.arguments.bindings[index].argument.clone();
    let described = match &fixed {
        FixedValue::Literal(_) => source.describe(&["arguments", &argument, "value"]),
        FixedValue::Env { name, .. } => format!(
            "{} (from ${name})",
            source.describe(&["arguments", &argument, "value_env"])
        ),
    };
    properties_mut(input).shift_remove(&argument);
    set_required(input, &argument, false);
    tool.route.arguments.bindings[index].fixed = Some(fixed);
    tool.note(
        &format!("arguments.{argument}"),
        format!("hidden, value fixed by {described}"),
    );
}

/// Renames the argument at binding `index` to `new_name`, in the input schema and its
/// binding, when the name is valid and not another argument's; errors point at `at`.
fn rename_argument(
    tool: &mut Tool,
    input: &mut Value,
    index: usize,
    new_name: &str,
    at: String,
) -> Result<(), PatchError> {
    if !super::naming::is_valid_argument_name(new_name) {
        return Err(PatchError::new(
            at,
            format!(
                "\"{new_name}\" is not a valid argument name: use A-Z, a-z, 0-9, _, . and -, at most 64 characters"
            ),
        ));
    }
    let argument = tool.route.arguments.bindings[index].argument.clone();
    if new_name != argument
        && tool
            .route
            .arguments
            .bindings
            .iter()
            .any(|b| b.argument == new_name)
    {
        return Err(PatchError::new(
            at,
            format!(
                "tool \"{}\" already has an argument \"{new_name}\"",
                tool.name
            ),
        ));
    }
    rename_property(input, &argument, new_name);
    tool.route.arguments.bindings[index].argument = new_name.to_string();
    Ok(())
}

fn properties_mut(schema: &mut Value) -> &mut Map<String, Value> {
    if !schema.is_object() {
        *schema = json!({"type": "object"});
    }
    let Value::Object(map) = schema else {
        unreachable!("made an object above")
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if !properties.is_object() {
        *properties = Value::Object(Map::new());
    }
    match properties {
        Value::Object(properties) => properties,
        _ => unreachable!("made an object above"),
    }
}

fn set_key(schema: &mut Value, key: &str, value: Value) {
    match schema {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        // `true` and `{}` accept anything; a keyword turns them into a real schema.
        other => {
            let mut map = Map::new();
            map.insert(key.to_string(), value);
            *other = Value::Object(map);
        }
    }
}

fn set_required(schema: &mut Value, argument: &str, required: bool) {
    let Value::Object(map) = schema else { return };
    let mut list: Vec<Value> = map
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.retain(|v| v.as_str() != Some(argument));
    if required {
        list.push(json!(argument));
    }
    if list.is_empty() {
        map.shift_remove("required");
    } else {
        map.insert("required".into(), Value::Array(list));
    }
}

/// Renames a property in place, keeping its position.
fn rename_property(schema: &mut Value, from: &str, to: &str) {
    let properties = properties_mut(schema);
    let renamed: Map<String, Value> = std::mem::take(properties)
        .into_iter()
        .map(|(k, v)| {
            if k == from {
                (to.to_string(), v)
            } else {
                (k, v)
            }
        })
        .collect();
    *properties = renamed;
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        for entry in required {
            if entry.as_str() == Some(from) {
                *entry = json!(to);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_files_parse_in_written_order_and_reject_unknown_keys() {
        let file = parse_file(
            "o.yaml",
            b"tools:\n  zeta: {name: z}\n  alpha: {hidden: true}\nadd:\n  b: {method: GET, path: /b, description: B}\n  a: {method: GET, path: /a, description: A}\n",
        )
        .unwrap();
        let keys: Vec<&str> = file.tools.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["zeta", "alpha"]);
        let added: Vec<&str> = file.add.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(added, ["b", "a"]);
        let empty = parse_file("o.yaml", b"tools:\nadd:\n").unwrap();
        assert!(empty.tools.0.is_empty() && empty.add.0.is_empty());
        let error = parse_file("o.yaml", b"tools:\n  x:\n    nmae: y\n")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("o.yaml:3:"), "{error}");
        assert!(error.contains("nmae"), "{error}");
    }
}
