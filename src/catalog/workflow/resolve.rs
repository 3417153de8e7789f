//! A workflow's steps resolved against the catalog: each target → the tool of a mapped
//! API (or a workflow of the document), each parameter → that tool's argument, the
//! request body → its body arguments; every runtime expression that names a step checked
//! to name an earlier one. Each problem carries the JSON pointer of what it is about.

use std::collections::BTreeMap;

use super::{ArgumentSlot, BodySlot, MAX_RETRY_LIMIT, OperationStep, StepCall, location_of};
use crate::catalog::{Catalog, Location, Tool};
use crate::spec::arazzo::document::{
    ActionKind, Document, In, Parameter, Problem, SourceKind, Step, Target, Workflow,
};
use crate::spec::arazzo::expression::Expression;
use crate::spec::arazzo::template::Template;

/// Resolves one document's workflows.
pub(super) struct Resolver<'a> {
    pub document: &'a Document,
    pub apis: &'a BTreeMap<String, String>,
    pub catalog: &'a Catalog,
}

/// What resolving a workflow gives: its steps' calls, the workflows it depends on, its
/// problems and its warnings.
type Resolved = (Vec<StepCall>, Vec<usize>, Vec<Problem>, Vec<String>);

impl Resolver<'_> {
    pub fn workflow(&self, workflow: &Workflow) -> Resolved {
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        let mut steps = Vec::new();
        for (index, step) in workflow.steps.iter().enumerate() {
            match self.step(workflow, step) {
                Ok(call) => steps.push(call),
                Err(found) => {
                    problems.extend(found);
                    steps.push(StepCall::Workflow {
                        index: usize::MAX,
                        inputs: Vec::new(),
                    });
                }
            }
            problems.extend(step_references(workflow, index));
            self.actions(workflow, step, &mut problems, &mut warnings);
        }
        for action in workflow
            .success_actions
            .iter()
            .chain(&workflow.failure_actions)
        {
            self.action(workflow, action, usize::MAX, &mut problems, &mut warnings);
        }
        for output in &workflow.outputs {
            for expression in output.value.expressions() {
                if let Some(problem) = named_step(workflow, expression, usize::MAX, &output.pointer)
                {
                    problems.push(problem);
                }
            }
        }
        let mut depends_on = Vec::new();
        for (i, id) in workflow.depends_on.iter().enumerate() {
            match self.workflow_index(id) {
                Some(index) => depends_on.push(index),
                None => problems.push(Problem {
                    pointer: format!("{}/dependsOn/{i}", workflow.pointer),
                    message: format!(
                        "dependsOn names \"{id}\", which is not a workflow of this document"
                    ),
                }),
            }
        }
        (steps, depends_on, problems, warnings)
    }

    fn workflow_index(&self, id: &str) -> Option<usize> {
        self.document.workflows.iter().position(|w| w.id == id)
    }

    fn step(&self, workflow: &Workflow, step: &Step) -> Result<StepCall, Vec<Problem>> {
        let problem = |pointer: &str, message: String| Problem {
            pointer: pointer.to_string(),
            message,
        };
        match &step.target {
            Target::Workflow(id) => {
                let Some(index) = self.workflow_index(id) else {
                    return Err(vec![problem(
                        &format!("{}/workflowId", step.pointer),
                        format!("workflowId \"{id}\" is not a workflow of this document"),
                    )]);
                };
                let inputs = workflow
                    .parameters_of(step)
                    .into_iter()
                    .map(|p| (p.name.clone(), p.value.clone()))
                    .collect();
                Ok(StepCall::Workflow { index, inputs })
            }
            target => {
                let tool = self.tool_of(target, &step.pointer)?;
                self.operation(workflow, step, tool)
            }
        }
    }

    /// The tool a step's operation target names.
    fn tool_of(&self, target: &Target, pointer: &str) -> Result<&Tool, Vec<Problem>> {
        let problem = |message: String| {
            vec![Problem {
                pointer: pointer.to_string(),
                message,
            }]
        };
        let (source, wanted) = match target {
            Target::OperationId(source, id) => (source.as_deref(), format!("operationId \"{id}\"")),
            Target::OperationPath(source, fragment) => {
                (source.as_deref(), format!("operationPath \"#{fragment}\""))
            }
            Target::Workflow(_) => return Err(problem("not an operation".into())),
        };
        let apis = self.apis_of(source).map_err(problem)?;
        let found: Vec<&Tool> = self
            .catalog
            .tools()
            .iter()
            .filter(|tool| tool.workflow.is_none() && apis.contains(&tool.route.api.as_str()))
            .filter(|tool| is_target(target, tool))
            .collect();
        match found.as_slice() {
            [tool] => Ok(tool),
            [] => Err(problem(format!(
                "{wanted} is not a tool of API {}: it is not in the description, or the API's \
                 include/exclude leaves it out",
                apis.iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ))),
            _ => Err(problem(format!(
                "{wanted} is in more than one source; qualify it as \
                 $sourceDescriptions.NAME.ID"
            ))),
        }
    }

    /// The APIs a step may call: its source's, or every mapped OpenAPI source's.
    fn apis_of(&self, source: Option<&str>) -> Result<Vec<&str>, String> {
        let sources: Vec<_> = match source {
            Some(name) => {
                let Some(found) = self.document.sources.iter().find(|s| s.name == name) else {
                    return Err(format!("source \"{name}\" is not a sourceDescription"));
                };
                vec![found]
            }
            None => self
                .document
                .sources
                .iter()
                .filter(|s| s.kind == SourceKind::OpenApi)
                .collect(),
        };
        let mut apis = Vec::new();
        for source in sources {
            match source.kind {
                SourceKind::OpenApi => {}
                SourceKind::Arazzo => {
                    return Err(format!(
                        "source \"{}\" is an Arazzo document: arazzo sources are not supported \
                         in this version",
                        source.name
                    ));
                }
                SourceKind::AsyncApi => {
                    return Err(format!(
                        "source \"{}\" is an AsyncAPI description: AsyncAPI steps are not \
                         supported in this version",
                        source.name
                    ));
                }
            }
            match self.apis.get(&source.name) {
                Some(api) => apis.push(api.as_str()),
                None => {
                    return Err(format!(
                        "source \"{}\" ({}) is not mapped to an API: add it to this \
                         [workflows] table's sources, e.g. sources = {{ {} = \"API\" }}",
                        source.name, source.url, source.name
                    ));
                }
            }
        }
        if apis.is_empty() {
            return Err("the document has no OpenAPI source".into());
        }
        Ok(apis)
    }

    /// An operation step: its parameters and body as the tool's arguments.
    fn operation(
        &self,
        workflow: &Workflow,
        step: &Step,
        tool: &Tool,
    ) -> Result<StepCall, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut arguments = Vec::new();
        for parameter in workflow.parameters_of(step) {
            match argument_of(tool, parameter) {
                Ok(slot) => arguments.push(slot),
                Err(message) => problems.push(Problem {
                    pointer: parameter.pointer.clone(),
                    message,
                }),
            }
        }
        for binding in &tool.route.arguments.bindings {
            let on_the_wire = matches!(
                binding.location,
                Location::Path | Location::Query | Location::Header | Location::Cookie
            );
            let supplied = arguments
                .iter()
                .any(|a| a.argument.as_ref() == Some(&binding.argument));
            if on_the_wire
                && binding.required
                && binding.fixed.is_none()
                && binding.default.is_none()
                && !supplied
            {
                problems.push(Problem {
                    pointer: step.pointer.clone(),
                    message: format!(
                        "operation {} {} needs {} parameter \"{}\", which the step never supplies",
                        tool.route.method,
                        tool.route.path,
                        binding.location.as_str(),
                        binding.wire_name
                    ),
                });
            }
        }
        let body = match body_of(tool, step) {
            Ok(body) => body,
            Err(message) => {
                problems.push(Problem {
                    pointer: step.pointer.clone(),
                    message,
                });
                None
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(StepCall::Operation(Box::new(OperationStep {
            tool: tool.name.clone(),
            api: tool.route.api.clone(),
            method: tool.route.method,
            path: tool.route.path.clone(),
            arguments,
            body,
            idempotency: tool.route.idempotency.as_ref().map(|i| i.argument.clone()),
        })))
    }

    fn actions(
        &self,
        workflow: &Workflow,
        step: &Step,
        problems: &mut Vec<Problem>,
        warnings: &mut Vec<String>,
    ) {
        let index = workflow.step_index(&step.id).unwrap_or(usize::MAX);
        for action in step.on_success.iter().chain(&step.on_failure) {
            self.action(workflow, action, index, problems, warnings);
        }
    }

    fn action(
        &self,
        workflow: &Workflow,
        action: &crate::spec::arazzo::document::Action,
        from: usize,
        problems: &mut Vec<Problem>,
        warnings: &mut Vec<String>,
    ) {
        match &action.kind {
            ActionKind::GotoStep(id) => match workflow.step_index(id) {
                None => problems.push(Problem {
                    pointer: action.pointer.clone(),
                    message: format!("goto stepId \"{id}\" is not a step of this workflow"),
                }),
                Some(to) if to <= from => warnings.push(format!(
                    "#{}: goto \"{id}\" runs an earlier step again: the loop stops at max_steps",
                    action.pointer
                )),
                Some(_) => {}
            },
            ActionKind::GotoWorkflow(id) if self.workflow_index(id).is_none() => {
                problems.push(Problem {
                    pointer: action.pointer.clone(),
                    message: format!("goto workflowId \"{id}\" is not a workflow of this document"),
                })
            }
            ActionKind::Retry { limit, .. } if *limit > MAX_RETRY_LIMIT => warnings.push(format!(
                "#{}: retryLimit {limit} is capped at {MAX_RETRY_LIMIT}",
                action.pointer
            )),
            _ => {}
        }
    }
}

/// Whether `tool` is the operation `target` names.
fn is_target(target: &Target, tool: &Tool) -> bool {
    match target {
        Target::OperationId(_, id) => tool.origin.operation_id.as_deref() == Some(id),
        Target::OperationPath(_, fragment) => tool
            .origin
            .location
            .rsplit_once('#')
            .is_some_and(|(_, at)| at == fragment),
        Target::Workflow(_) => false,
    }
}

/// The argument of `tool` a step parameter sets.
fn argument_of(tool: &Tool, parameter: &Parameter) -> Result<ArgumentSlot, String> {
    let Some(place) = parameter.place else {
        return Err(format!(
            "parameter \"{}\" of an operation step needs `in` (path, query, header or cookie)",
            parameter.name
        ));
    };
    let location = location_of(place);
    let binding = tool.route.arguments.bindings.iter().find(|b| {
        b.location == location
            && match location {
                Location::Header => b.wire_name.eq_ignore_ascii_case(&parameter.name),
                _ => b.wire_name == parameter.name,
            }
    });
    let Some(binding) = binding else {
        if place == In::Header
            && !UNSETTABLE_HEADERS.contains(&parameter.name.to_ascii_lowercase().as_str())
        {
            return Ok(ArgumentSlot {
                argument: None,
                expects: None,
                name: parameter.name.clone(),
                place,
                value: parameter.value.clone(),
            });
        }
        let known: Vec<String> = tool
            .route
            .arguments
            .bindings
            .iter()
            .filter(|b| b.location == location)
            .map(|b| format!("\"{}\"", b.wire_name))
            .collect();
        return Err(format!(
            "operation {} {} has no {} parameter \"{}\"{}",
            tool.route.method,
            tool.route.path,
            place.as_str(),
            parameter.name,
            match known.is_empty() {
                true => String::new(),
                false => format!(" (it has {})", known.join(", ")),
            }
        ));
    };
    if binding.fixed.is_some() {
        return Err(format!(
            "parameter \"{}\" is set by the operator's configuration; a workflow cannot set it",
            parameter.name
        ));
    }
    let expects = tool
        .input_schema
        .to_value()
        .pointer(&format!(
            "/properties/{}/type",
            crate::json::escape_token(&binding.argument)
        ))
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    Ok(ArgumentSlot {
        argument: Some(binding.argument.clone()),
        expects,
        name: parameter.name.clone(),
        place,
        value: parameter.value.clone(),
    })
}

/// Headers a step may not set as headers of their own: they frame the message or name
/// the host, and are the exchange's to write.
const UNSETTABLE_HEADERS: [&str; 11] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "te",
    "upgrade",
    "trailer",
    "keep-alive",
    "expect",
    "proxy-authorization",
];

/// The step's body as the tool's body arguments.
fn body_of(tool: &Tool, step: &Step) -> Result<Option<BodySlot>, String> {
    let plan = tool.route.body.as_ref();
    let Some(body) = &step.request_body else {
        return match plan {
            Some(plan) if plan.required => Err(format!(
                "operation {} {} needs a request body, which the step never supplies",
                tool.route.method, tool.route.path
            )),
            _ => Ok(None),
        };
    };
    let Some(plan) = plan else {
        return Err(format!(
            "operation {} {} takes no request body, but the step has one",
            tool.route.method, tool.route.path
        ));
    };
    let bindings = &tool.route.arguments.bindings;
    let whole = bindings
        .iter()
        .find(|b| b.location == Location::Body)
        .map(|b| b.argument.clone());
    let fields = bindings
        .iter()
        .filter(|b| b.location == Location::BodyField)
        .map(|b| (b.wire_name.clone(), b.argument.clone()))
        .collect();
    if !plan.flattened && whole.is_none() {
        return Err(format!(
            "operation {} {}'s body is not one the tool takes as an argument",
            tool.route.method, tool.route.path
        ));
    }
    Ok(Some(BodySlot {
        body: body.clone(),
        media_type: plan.media_type.clone(),
        whole,
        fields,
    }))
}

/// The problems of step `index`'s expressions that name a step: it must be an earlier
/// one, and have the output named.
fn step_references(workflow: &Workflow, index: usize) -> Vec<Problem> {
    let step = &workflow.steps[index];
    let mut found = Vec::new();
    let mut check = |template: &Template, pointer: &str| {
        for expression in template.expressions() {
            if let Some(problem) = named_step(workflow, expression, index, pointer) {
                found.push(problem);
            }
        }
    };
    for parameter in &step.parameters {
        check(&parameter.value, &parameter.pointer);
    }
    if let Some(body) = &step.request_body {
        if let Some(payload) = &body.payload {
            check(payload, &body.pointer);
        }
        for (_, value) in &body.replacements {
            check(value, &body.pointer);
        }
    }
    for output in &step.outputs {
        check(&output.value, &output.pointer);
    }
    found
}

/// A problem when `expression` names a step that is not before step `before` (any step
/// when `before` is `usize::MAX`: the workflow's outputs), or an output it does not have.
fn named_step(
    workflow: &Workflow,
    expression: &Expression,
    before: usize,
    pointer: &str,
) -> Option<Problem> {
    let Expression::Steps { step, output, .. } = expression else {
        return None;
    };
    let problem = |message: String| {
        Some(Problem {
            pointer: pointer.to_string(),
            message,
        })
    };
    match workflow.step_index(step) {
        None => problem(format!(
            "\"{expression}\" names step \"{step}\", which is not a step of this workflow"
        )),
        Some(at) if before != usize::MAX && at >= before => problem(format!(
            "\"{expression}\" names step \"{step}\", which does not run before this one \
             (a forward reference)"
        )),
        Some(at) if !workflow.steps[at].outputs.iter().any(|o| &o.name == output) => {
            problem(format!(
                "\"{expression}\" names output \"{output}\", which step \"{step}\" does not have"
            ))
        }
        Some(_) => None,
    }
}
