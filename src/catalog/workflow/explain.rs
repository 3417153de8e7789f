//! A workflow tool's step graph as `restmcp explain` prints it: each step with the
//! operation it calls, every parameter and body with the expression behind it, its
//! criteria, actions and outputs, each located in the Arazzo document.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{StepCall, WorkflowPlan};
use crate::spec::arazzo::document::{Action, ActionKind, Workflow};
use crate::spec::arazzo::template::{Piece, Template};

/// The step graph of `plan`'s workflow.
pub fn render(plan: &WorkflowPlan) -> String {
    let mut out = String::new();
    let Some(compiled) = plan.compiled() else {
        return out;
    };
    let workflow = &compiled.workflow;
    let file = &plan.program.file;
    let _ = writeln!(
        out,
        "\nWorkflow \"{}\" ({file}#{}): at most {} requests, {} s in all",
        workflow.id,
        workflow.pointer,
        plan.program.max_steps,
        plan.program.timeout.as_secs()
    );
    for id in &workflow.depends_on {
        let _ = writeln!(out, "  runs workflow \"{id}\" first (dependsOn)");
    }
    for (i, (step, call)) in workflow.steps.iter().zip(&compiled.steps).enumerate() {
        let what = match call {
            StepCall::Operation(operation) => format!(
                "{} {} (API \"{}\", tool {})",
                operation.method, operation.path, operation.api, operation.tool
            ),
            StepCall::Workflow { index, .. } => format!(
                "workflow \"{}\"",
                plan.program
                    .workflows
                    .get(*index)
                    .and_then(Option::as_ref)
                    .map_or("?", |w| w.workflow.id.as_str())
            ),
        };
        let _ = writeln!(out, "  {}. {}: {what}   #{}", i + 1, step.id, step.pointer);
        for parameter in workflow.parameters_of(step) {
            let place = parameter.place.map_or("input", |p| p.as_str());
            let _ = writeln!(
                out,
                "       {} ({place}) = {}   #{}",
                parameter.name,
                text(&parameter.value),
                parameter.pointer
            );
        }
        if let Some(body) = &step.request_body {
            let media = body
                .content_type
                .as_deref()
                .unwrap_or("as the operation takes");
            let payload = body.payload.as_ref().map_or("{}".to_string(), text);
            let _ = writeln!(out, "       body ({media}) = {payload}   #{}", body.pointer);
            for (target, value) in &body.replacements {
                let _ = writeln!(out, "         with {target} = {}", text(value));
            }
        }
        match step.success_criteria.is_empty() {
            true => {
                let _ = writeln!(out, "       succeeds when it answers below 400");
            }
            false => {
                for criterion in &step.success_criteria {
                    let _ = writeln!(out, "       succeeds when {}", criterion.describe());
                }
            }
        }
        actions(&mut out, "on success", &step.on_success);
        actions(&mut out, "on failure", &step.on_failure);
        for output in &step.outputs {
            let _ = writeln!(
                out,
                "       output {} = {}   #{}",
                output.name,
                text(&output.value),
                output.pointer
            );
        }
    }
    shared(&mut out, workflow);
    out
}

/// The step graph as data, for `restmcp explain --json`: each step with what it calls,
/// its values as written and where each is written.
pub fn json(plan: &WorkflowPlan) -> Value {
    let Some(compiled) = plan.compiled() else {
        return Value::Null;
    };
    let workflow = &compiled.workflow;
    let steps: Vec<Value> = workflow
        .steps
        .iter()
        .zip(&compiled.steps)
        .map(|(step, call)| {
            let calls = match call {
                StepCall::Operation(operation) => json!({
                    "tool": operation.tool, "api": operation.api,
                    "method": operation.method.as_str(), "path": operation.path,
                }),
                StepCall::Workflow { index, .. } => json!({"workflow": index}),
            };
            let parameters: Vec<Value> = workflow
                .parameters_of(step)
                .into_iter()
                .map(|p| {
                    json!({"name": p.name, "in": p.place.map(|p| p.as_str()),
                           "value": text(&p.value), "at": p.pointer})
                })
                .collect();
            json!({
                "id": step.id,
                "at": step.pointer,
                "calls": calls,
                "parameters": parameters,
                "body": step.request_body.as_ref().map(|b| json!({
                    "contentType": b.content_type,
                    "payload": b.payload.as_ref().map(text),
                    "at": b.pointer,
                })),
                "successCriteria": step.success_criteria.iter().map(|c| c.describe()).collect::<Vec<_>>(),
                "outputs": step.outputs.iter().map(|o| json!({"name": o.name, "value": text(&o.value), "at": o.pointer})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "workflowId": workflow.id,
        "file": plan.program.file,
        "at": workflow.pointer,
        "maxSteps": plan.program.max_steps,
        "timeoutSeconds": plan.program.timeout.as_secs(),
        "dependsOn": workflow.depends_on,
        "steps": steps,
        "outputs": workflow.outputs.iter().map(|o| json!({"name": o.name, "value": text(&o.value), "at": o.pointer})).collect::<Vec<_>>(),
    })
}

/// The workflow's own actions and outputs.
fn shared(out: &mut String, workflow: &Workflow) {
    actions(out, "every step, on success", &workflow.success_actions);
    actions(out, "every step, on failure", &workflow.failure_actions);
    if !workflow.outputs.is_empty() {
        let _ = writeln!(out, "  outputs (structuredContent):");
    }
    for output in &workflow.outputs {
        let _ = writeln!(
            out,
            "       {} = {}   #{}",
            output.name,
            text(&output.value),
            output.pointer
        );
    }
}

fn actions(out: &mut String, when: &str, actions: &[Action]) {
    for action in actions {
        let what = match &action.kind {
            ActionKind::End => "end".to_string(),
            ActionKind::GotoStep(step) => format!("goto step {step}"),
            ActionKind::GotoWorkflow(workflow) => format!("goto workflow {workflow}"),
            ActionKind::Retry { after, limit } => format!(
                "retry up to {limit} time(s){}",
                after.map(|s| format!(" after {s} s")).unwrap_or_default()
            ),
        };
        let criteria: Vec<String> = action.criteria.iter().map(|c| c.describe()).collect();
        let condition = match criteria.is_empty() {
            true => String::new(),
            false => format!(" if {}", criteria.join(" and ")),
        };
        let _ = writeln!(
            out,
            "       {when}: {what}{condition}   #{}",
            action.pointer
        );
    }
}

/// A value as written: JSON, with expressions shown as they were written.
pub fn text(template: &Template) -> String {
    match template {
        Template::Literal(value) => value.to_string(),
        Template::Expression(expression) => expression.to_string(),
        Template::Text(pieces) => {
            let inner: String = pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => text.clone(),
                    Piece::Expression(expression) => format!("{{{expression}}}"),
                })
                .collect();
            format!("\"{inner}\"")
        }
        Template::Array(items) => format!(
            "[{}]",
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        ),
        Template::Object(members) => format!(
            "{{{}}}",
            members
                .iter()
                .map(|(key, value)| format!("\"{key}\": {}", text(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
