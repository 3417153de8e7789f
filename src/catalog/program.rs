//! What a workflow's tool runs: an Arazzo document's workflows compiled against the tools
//! their steps call ([`Program`]), each step resolved to a tool and the arguments its
//! parameters and body become ([`StepCall`]), and the [`WorkflowPlan`] a [`super::Tool`]
//! carries. [`super::workflow`] makes them; `upstream::workflow` runs them. The plan knows
//! tools by name only, so tools and plans name each other one way.

use std::sync::Arc;
use std::time::Duration;

use crate::spec::Method;
use crate::spec::arazzo::document::{ActionKind, RequestBody, Workflow};
use crate::spec::arazzo::template::Template;

/// A document's workflows compiled against the tools they call: what calls run.
#[derive(Debug)]
pub struct Program {
    pub set: String,
    pub file: String,
    /// By document index; `None` for a workflow that did not compile.
    pub workflows: Vec<Option<Compiled>>,
    pub max_steps: u32,
    pub timeout: Duration,
}

impl Program {
    /// The index of workflow `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.workflows
            .iter()
            .position(|w| w.as_ref().is_some_and(|w| w.workflow.id == id))
    }
}

/// One workflow, its steps resolved.
#[derive(Debug)]
pub struct Compiled {
    pub workflow: Workflow,
    /// By step index.
    pub steps: Vec<StepCall>,
    /// Document indexes of the workflows `dependsOn` names.
    pub depends_on: Vec<usize>,
}

/// What a step calls, resolved.
#[derive(Debug, Clone)]
pub enum StepCall {
    /// A tool of a mapped API, with the step's parameters as the tool's arguments.
    Operation(Box<OperationStep>),
    /// Another workflow of the document; the step's parameters are its inputs.
    Workflow {
        index: usize,
        inputs: Vec<(String, Template)>,
    },
}

/// An operation step: the tool it calls and what it gives the tool.
#[derive(Debug, Clone)]
pub struct OperationStep {
    pub tool: String,
    pub api: String,
    pub method: Method,
    pub path: String,
    pub arguments: Vec<ArgumentSlot>,
    pub body: Option<BodySlot>,
    /// The tool's idempotency argument, when its operation takes a key.
    pub idempotency: Option<String>,
}

/// What a workflow tool runs (see [`super::Tool::workflow`]).
#[derive(Debug)]
pub struct WorkflowPlan {
    pub program: Arc<Program>,
    /// The workflow's index in the document.
    pub index: usize,
    /// The argument the caller's idempotency key comes in, when a step sends one.
    pub idempotency: Option<String>,
    /// Every step a run may reach, in order, as a confirmation shows them.
    pub reachable: Vec<String>,
}

impl WorkflowPlan {
    /// The tools of every operation step a run may reach (nested workflows included).
    pub fn step_tools(&self) -> impl Iterator<Item = &str> {
        reachable_tools(&self.program, self.index, &mut Vec::new()).into_iter()
    }

    /// The workflow this tool runs.
    pub fn compiled(&self) -> Option<&Compiled> {
        self.program.workflows.get(self.index)?.as_ref()
    }
}

/// A step parameter as the argument of the tool it calls.
#[derive(Debug, Clone)]
pub struct ArgumentSlot {
    /// The tool's argument name; `None` for a header the operation does not declare
    /// (`Authorization`, which OpenAPI describes as a security scheme rather than a
    /// parameter), sent as written (the API's configured credentials still replace it).
    pub argument: Option<String>,
    /// The JSON type the argument's schema names, when it is a scalar one: a value of
    /// another scalar type is converted when nothing is lost (`3` for a string, `"3"` for
    /// an integer), as the request would carry either the same.
    pub expects: Option<String>,
    /// The parameter's name and place, as the step wrote them.
    pub name: String,
    pub place: crate::spec::arazzo::document::In,
    pub value: Template,
}

/// A step's request body as the body arguments of the tool it calls.
#[derive(Debug, Clone)]
pub struct BodySlot {
    pub body: RequestBody,
    /// The media type the tool sends its body as.
    pub media_type: String,
    /// The argument holding the whole body (when the tool does not flatten it).
    pub whole: Option<String>,
    /// Wire name → argument, for a flattened body.
    pub fields: Vec<(String, String)>,
}

/// Every operation step workflow `index` may reach, nested workflows included (each
/// once), as `(step pointer, tool)`.
pub(super) fn reachable_tools<'p>(
    program: &'p Program,
    index: usize,
    seen: &mut Vec<usize>,
) -> Vec<&'p str> {
    if seen.contains(&index) {
        return Vec::new();
    }
    seen.push(index);
    let Some(Some(compiled)) = program.workflows.get(index) else {
        return Vec::new();
    };
    let mut tools = Vec::new();
    for &dependency in &compiled.depends_on {
        tools.extend(reachable_tools(program, dependency, seen));
    }
    for step in &compiled.steps {
        match step {
            StepCall::Operation(step) => tools.push(step.tool.as_str()),
            StepCall::Workflow { index, .. } => {
                tools.extend(reachable_tools(program, *index, seen));
            }
        }
    }
    for action in compiled
        .workflow
        .steps
        .iter()
        .flat_map(|s| s.on_success.iter().chain(&s.on_failure))
        .chain(&compiled.workflow.success_actions)
        .chain(&compiled.workflow.failure_actions)
    {
        if let ActionKind::GotoWorkflow(id) = &action.kind
            && let Some(target) = program.index_of(id)
        {
            tools.extend(reachable_tools(program, target, seen));
        }
    }
    tools
}
