//! Arazzo workflows as tools: each workflow of a `[workflows.NAME]` document, checked
//! against the tools its steps call, becomes one [`Tool`] whose inputSchema is the
//! workflow's inputs and whose outputSchema has one property per output. What a call
//! runs is the tool's [`WorkflowPlan`]: the document's workflows compiled into a
//! [`Program`] (each step's tool, its parameters mapped to that tool's arguments), which
//! `upstream::workflow` executes.
//!
//! * `workflow/resolve.rs`: a step's target → the tool of a mapped API, its parameters
//!   and body → that tool's arguments, with every problem located;
//! * [`explain`]: the step graph `restmcp explain` prints;
//! * `workflow/infer.rs`: the outputSchema, typed from the response schemas of the steps
//!   the outputs come from.
//!
//! A workflow publishes only when nothing is wrong with it; [`WorkflowReport`] says what
//! was published and, for every other workflow, why not (`restmcp check`).

pub mod explain;
mod infer;
mod resolve;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use super::{Annotations, Catalog, Confirmation, Origin, Route, SchemaText, Tool};
use crate::config::{ToolSettings, WorkflowSettings};
use crate::spec::Method;
use crate::spec::arazzo::document::{Document, In, Problem, Workflow};

use super::program::reachable_tools;
pub use super::program::{
    ArgumentSlot, BodySlot, Compiled, OperationStep, Program, StepCall, WorkflowPlan,
};

/// How deep workflows may call workflows (a `workflowId` step, `dependsOn`).
pub const MAX_NESTING: usize = 3;
/// The most times a `retry` action retries one step, whatever its `retryLimit` says.
pub const MAX_RETRY_LIMIT: u32 = 5;
/// The name of the argument a workflow tool takes an idempotency key in, when a step
/// sends one.
pub const IDEMPOTENCY_ARGUMENT: &str = "idempotency_key";

/// One `[workflows.NAME]` document, read, with its sources mapped to APIs.
pub struct WorkflowInput<'a> {
    /// The `[workflows.NAME]` key.
    pub set: &'a str,
    pub settings: &'a WorkflowSettings,
    /// The document's file, as shown.
    pub file: String,
    pub document: Document,
    /// Each source name → the API its steps call (`sources`, or matched by URL).
    pub apis: BTreeMap<String, String>,
}

/// What became of one workflow, for `restmcp check`.
#[derive(Debug, Clone, Serialize)]
pub struct WorkflowReport {
    pub set: String,
    pub file: String,
    pub workflow: String,
    /// The tool name, when published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Why it is not published (`#/pointer: problem`), when it is not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// What may surprise (a goto loop bounded by max_steps, a capped retryLimit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Not published by `include`/`exclude` (still callable from other workflows).
    pub excluded: bool,
}

/// Compiles every document's workflows against `catalog` and makes a tool of each one
/// published. The tools come back for the caller to add; the reports say what became of
/// every workflow.
pub fn build(
    inputs: Vec<WorkflowInput<'_>>,
    catalog: &Catalog,
    settings: &ToolSettings,
) -> (Vec<Tool>, Vec<WorkflowReport>) {
    let mut tools = Vec::new();
    let mut reports = Vec::new();
    for input in inputs {
        let (program, problems, warnings) = compile(&input, catalog);
        let program = Arc::new(program);
        for (index, parsed) in input.document.workflows.iter().enumerate() {
            let mut report = WorkflowReport {
                set: input.set.to_string(),
                file: input.file.clone(),
                workflow: parsed.id.clone(),
                tool: None,
                problems: problems[index].iter().map(Problem::to_string).collect(),
                warnings: warnings[index].clone(),
                excluded: !input.settings.publishes(&parsed.id),
            };
            if report.problems.is_empty()
                && !report.excluded
                && let Some(tool) = make_tool(&program, index, &input, catalog, settings)
            {
                report.tool = Some(tool.name.clone());
                tools.push(tool);
            }
            reports.push(report);
        }
    }
    (tools, reports)
}

/// The document's workflows compiled, with each one's problems and warnings (by index).
/// A workflow that calls one with problems has a problem of its own.
fn compile(
    input: &WorkflowInput<'_>,
    catalog: &Catalog,
) -> (Program, Vec<Vec<Problem>>, Vec<Vec<String>>) {
    let document = &input.document;
    let count = document.workflows.len();
    let mut problems: Vec<Vec<Problem>> = vec![document.problems.clone(); count];
    let mut warnings = vec![Vec::new(); count];
    let mut compiled = Vec::with_capacity(count);
    for (index, parsed) in document.workflows.iter().enumerate() {
        match &parsed.workflow {
            Ok(workflow) => {
                let resolver = resolve::Resolver {
                    document,
                    apis: &input.apis,
                    catalog,
                };
                let (steps, depends_on, found, noted) = resolver.workflow(workflow);
                problems[index].extend(found);
                warnings[index].extend(noted);
                compiled.push(Some(Compiled {
                    workflow: workflow.clone(),
                    steps,
                    depends_on,
                }));
            }
            Err(found) => {
                problems[index].extend(found.iter().cloned());
                compiled.push(None);
            }
        }
    }
    // A workflow reaching one that cannot run cannot run either.
    let broken: Vec<bool> = problems.iter().map(|p| !p.is_empty()).collect();
    for (index, found) in problems.iter_mut().enumerate() {
        for callee in callees(&compiled, index) {
            if broken.get(callee).copied().unwrap_or(true) && callee != index {
                let id = &document.workflows[callee].id;
                found.push(Problem {
                    pointer: document.workflows[index].pointer.clone(),
                    message: format!("it runs workflow \"{id}\", which cannot be published"),
                });
            }
        }
    }
    for (index, found) in problems.iter().enumerate() {
        if !found.is_empty() {
            compiled[index] = None;
        }
    }
    let program = Program {
        set: input.set.to_string(),
        file: input.file.clone(),
        workflows: compiled,
        max_steps: input.settings.max_steps,
        timeout: Duration::from_secs(input.settings.timeout_seconds),
    };
    (program, problems, warnings)
}

/// The workflows workflow `index` runs: its `dependsOn`, its workflow steps, its goto
/// actions to workflows.
fn callees(compiled: &[Option<Compiled>], index: usize) -> Vec<usize> {
    let Some(Some(workflow)) = compiled.get(index) else {
        return Vec::new();
    };
    let mut found = workflow.depends_on.clone();
    for step in &workflow.steps {
        if let StepCall::Workflow { index, .. } = step {
            found.push(*index);
        }
    }
    // A step that did not resolve stands as a workflow step to nowhere.
    found.retain(|&index| index < compiled.len());
    found
}

/// The tool of workflow `index`, or `None` when it did not compile.
fn make_tool(
    program: &Arc<Program>,
    index: usize,
    input: &WorkflowInput<'_>,
    catalog: &Catalog,
    settings: &ToolSettings,
) -> Option<Tool> {
    let compiled = program.workflows.get(index)?.as_ref()?;
    let workflow = &compiled.workflow;
    let steps: Vec<&Tool> = reachable_tools(program, index, &mut Vec::new())
        .into_iter()
        .filter_map(|name| catalog.get(name))
        .collect();
    let annotations = Annotations {
        read_only_hint: steps.iter().all(|t| t.annotations.read_only_hint),
        destructive_hint: steps.iter().any(|t| t.annotations.destructive_hint),
        idempotent_hint: steps.iter().all(|t| t.annotations.idempotent_hint),
        open_world_hint: true,
    };
    let confirm = input.settings.confirm || steps.iter().any(|t| t.route.needs_confirmation());
    let takes_key = steps.iter().any(|t| t.route.idempotency.is_some());
    let idempotency = takes_key.then(|| IDEMPOTENCY_ARGUMENT.to_string());
    let name = tool_name(
        &input.settings.prefix,
        &workflow.id,
        settings.max_name_length,
    );
    let mut route = Route::new(input.set, Method::Post, format!("workflow {}", workflow.id));
    route.timeout = Some(super::ToolLimit::Replace(program.timeout));
    route.confirm = match confirm {
        true => Confirmation::Always,
        false => Confirmation::Never,
    };
    let plan = WorkflowPlan {
        program: program.clone(),
        index,
        idempotency: idempotency.clone(),
        reachable: steps
            .iter()
            .map(|t| {
                format!(
                    "{} {} (API \"{}\", tool {})",
                    t.route.method, t.route.path, t.route.api, t.name
                )
            })
            .collect(),
    };
    Some(Tool {
        title: workflow.summary.clone(),
        description: description(compiled, catalog, settings.max_description_length),
        input_schema: SchemaText::new(&input_schema(workflow, idempotency.as_deref())),
        output_schema: Some(SchemaText::new(&infer::output_schema(
            program, index, catalog,
        ))),
        annotations,
        route,
        origin: Origin {
            api: input.set.to_string(),
            operation_id: Some(workflow.id.clone()),
            operation: format!("workflow {}", workflow.id),
            location: format!("{}#{}", input.file, workflow.pointer),
            tags: Vec::new(),
        },
        provenance: provenance(input, workflow),
        resource: None,
        workflow: Some(Arc::new(plan)),
        name,
    })
}

/// Where a workflow tool's pieces come from, for `restmcp explain`.
fn provenance(input: &WorkflowInput<'_>, workflow: &Workflow) -> Vec<(String, String)> {
    let at = format!("arazzo {}#{}", input.file, workflow.pointer);
    vec![
        ("workflow".into(), at.clone()),
        (
            "name".into(),
            format!("[workflows.{}] prefix + workflowId ({at})", input.set),
        ),
        ("title".into(), format!("{at}/summary")),
        (
            "description".into(),
            format!("{at} (summary, description and steps)"),
        ),
        (
            "annotations".into(),
            "the steps a run may reach (read-only only if all are, destructive if any is)".into(),
        ),
    ]
}

/// `prefix` + the workflow id, made a valid tool name and cut to `max` characters.
fn tool_name(prefix: &str, id: &str, max: usize) -> String {
    let name: String = format!("{prefix}{id}")
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                true => c,
                false => '_',
            },
        )
        .collect();
    name.chars().take(max).collect()
}

/// The workflow's summary and description, then its steps.
fn description(compiled: &Compiled, catalog: &Catalog, max: usize) -> String {
    let workflow = &compiled.workflow;
    let mut text = [&workflow.summary, &workflow.description]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join("\n\n");
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str("Runs these steps on the server, one tool call in all:");
    for (step, call) in workflow.steps.iter().zip(&compiled.steps) {
        let what = match call {
            StepCall::Operation(step) => catalog
                .get(&step.tool)
                .map(|t| format!("{} {}", t.route.method, t.route.path))
                .unwrap_or_default(),
            StepCall::Workflow { .. } => "a nested workflow".to_string(),
        };
        text.push_str(&format!("\n- {}: {what}", step.id));
        if let Some(description) = &step.description {
            text.push_str(&format!(" ({})", description.trim()));
        }
    }
    if max > 0 {
        text = super::truncate_text(&text, max).to_string();
    }
    text
}

/// The workflow's inputs as an inputSchema (an object), with the idempotency key argument
/// when a step takes one.
fn input_schema(workflow: &Workflow, idempotency: Option<&str>) -> Value {
    let mut schema = match &workflow.inputs {
        Value::Object(map) => Value::Object(map.clone()),
        _ => json!({"type": "object"}),
    };
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert_with(|| json!("object"));
        if let Some(argument) = idempotency {
            let properties = map.entry("properties").or_insert_with(|| json!({}));
            if let Value::Object(properties) = properties {
                properties.entry(argument.to_string()).or_insert_with(|| {
                    json!({
                        "type": "string",
                        "description": "A key of your choice: a repeat of this call with the same key and arguments returns the first run's result instead of running the workflow again."
                    })
                });
            }
        }
    }
    schema
}

/// Where a parameter's place puts its value among a tool's arguments.
pub(crate) fn location_of(place: In) -> super::Location {
    match place {
        In::Path => super::Location::Path,
        In::Query => super::Location::Query,
        In::Header => super::Location::Header,
        In::Cookie => super::Location::Cookie,
    }
}
