//! A workflow tool's outputSchema: one property per output, none required (an `end` may
//! stop the run before an output exists), each typed by where its value comes from: a
//! response body pointer takes the JSON type the step's tool's outputSchema gives at that
//! place, `$statusCode` is an integer, headers, URLs and text templates are strings, an
//! input has its input's type, each with `null` allowed. Only the `type` is carried: the
//! upstream's own schema may be wrong, and a run checks its outputs against what the
//! listing promised.

use serde_json::{Map, Value, json};

use super::{MAX_NESTING, Program, StepCall};
use crate::catalog::Catalog;
use crate::spec::arazzo::expression::{Expression, Source};
use crate::spec::arazzo::template::Template;

/// The outputSchema of workflow `index`.
pub(super) fn output_schema(program: &Program, index: usize, catalog: &Catalog) -> Value {
    let mut properties = Map::new();
    if let Some(Some(compiled)) = program.workflows.get(index) {
        for output in &compiled.workflow.outputs {
            let typed = Infer {
                program,
                catalog,
                depth: 0,
            }
            .workflow_value(index, &output.value);
            properties.insert(output.name.clone(), nullable(typed));
        }
    }
    json!({"type": "object", "properties": properties})
}

struct Infer<'a> {
    program: &'a Program,
    catalog: &'a Catalog,
    depth: usize,
}

impl Infer<'_> {
    /// The type of a value written at workflow level (its outputs).
    fn workflow_value(&self, workflow: usize, value: &Template) -> Value {
        match value {
            Template::Expression(expression) => self.workflow_expression(workflow, expression),
            other => literal_type(other),
        }
    }

    fn workflow_expression(&self, workflow: usize, expression: &Expression) -> Value {
        let Some(Some(compiled)) = self.program.workflows.get(workflow) else {
            return json!({});
        };
        match expression {
            Expression::Steps {
                step,
                output,
                pointer,
            } => {
                let Some(at) = compiled.workflow.step_index(step) else {
                    return json!({});
                };
                let found = compiled.workflow.steps[at]
                    .outputs
                    .iter()
                    .find(|o| &o.name == output);
                match (found, pointer) {
                    (Some(found), None) => self.step_value(workflow, at, &found.value),
                    _ => json!({}),
                }
            }
            Expression::Inputs { name, pointer } => {
                let schema = compiled
                    .workflow
                    .inputs
                    .pointer(&format!("/properties/{}", crate::json::escape_token(name)));
                match (schema, pointer) {
                    (Some(schema), None) => type_only(schema),
                    _ => json!({}),
                }
            }
            other => scalar_type(other),
        }
    }

    /// The type of a value written in step `step` of `workflow` (its outputs).
    fn step_value(&self, workflow: usize, step: usize, value: &Template) -> Value {
        let Template::Expression(expression) = value else {
            return literal_type(value);
        };
        let Some(Some(compiled)) = self.program.workflows.get(workflow) else {
            return json!({});
        };
        match (expression, compiled.steps.get(step)) {
            (Expression::Response(Source::Body(pointer)), Some(StepCall::Operation(operation))) => {
                self.body_type(&operation.tool, pointer.as_deref().unwrap_or(""))
            }
            (
                Expression::Outputs {
                    name,
                    pointer: None,
                },
                Some(StepCall::Workflow { index, .. }),
            ) if self.depth < MAX_NESTING => {
                let Some(Some(nested)) = self.program.workflows.get(*index) else {
                    return json!({});
                };
                let Some(found) = nested.workflow.outputs.iter().find(|o| &o.name == name) else {
                    return json!({});
                };
                Infer {
                    depth: self.depth + 1,
                    ..*self
                }
                .workflow_value(*index, &found.value)
            }
            (other, _) => self.workflow_expression(workflow, other),
        }
    }

    /// The type at `pointer` in the body tool `tool` answers with.
    fn body_type(&self, tool: &str, pointer: &str) -> Value {
        let Some(tool) = self.catalog.get(tool) else {
            return json!({});
        };
        let (Some(schema), Some(plan)) = (&tool.output_schema, &tool.route.output) else {
            return json!({});
        };
        let root = schema.to_value();
        let mut node = &root;
        if plan.wrapped {
            match node.pointer("/properties/result") {
                Some(inner) => node = inner,
                None => return json!({}),
            }
        }
        for token in pointer.split('/').skip(1) {
            let token = crate::json::unescape_token(token);
            node = resolve_ref(&root, node);
            let next = node
                .get("properties")
                .and_then(|p| p.get(token.as_ref()))
                .or_else(|| token.parse::<usize>().ok().and_then(|_| node.get("items")));
            match next {
                Some(next) => node = next,
                None => return json!({}),
            }
        }
        type_only(resolve_ref(&root, node))
    }
}

/// `node`, or what its local `$ref` names.
fn resolve_ref<'v>(root: &'v Value, node: &'v Value) -> &'v Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(node),
        None => node,
    }
}

/// `schema` with `null` allowed too: an upstream may answer `null` where its description
/// says otherwise, and the output then carries that `null`.
fn nullable(schema: Value) -> Value {
    match schema.get("type") {
        Some(Value::String(kind)) if kind != "null" => json!({ "type": [kind, "null"] }),
        Some(Value::Array(kinds)) if !kinds.contains(&json!("null")) => {
            let mut kinds = kinds.clone();
            kinds.push(json!("null"));
            json!({ "type": kinds })
        }
        _ => schema,
    }
}

/// A schema reduced to its `type`.
fn type_only(schema: &Value) -> Value {
    match schema.get("type") {
        Some(kind) => json!({ "type": kind }),
        None => json!({}),
    }
}

/// The type of an expression that is not a body or another step's output.
fn scalar_type(expression: &Expression) -> Value {
    match expression {
        Expression::StatusCode => json!({"type": "integer"}),
        Expression::Url
        | Expression::Method
        | Expression::Request(Source::Header(_) | Source::Query(_) | Source::Path(_))
        | Expression::Response(Source::Header(_) | Source::Query(_) | Source::Path(_)) => {
            json!({"type": "string"})
        }
        _ => json!({}),
    }
}

/// The type of a value with no expression at its root.
fn literal_type(value: &Template) -> Value {
    match value {
        Template::Text(_) => json!({"type": "string"}),
        Template::Literal(literal) => match literal {
            Value::Null => json!({}),
            other => json!({ "type": crate::json::type_name(other) }),
        },
        Template::Array(_) => json!({"type": "array"}),
        Template::Object(_) => json!({"type": "object"}),
        Template::Expression(_) => json!({}),
    }
}
