//! The calls a selftest makes: a report row for every tool either transport listed, the
//! outcomes known before calling (a tool listed differently or not at all, an outputSchema
//! that does not compile, no arguments to generate), and a [`Job`] for every call left,
//! with arguments generated from the tool's inputSchema.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::reason::truncate;
use super::report::{ToolReport, Verdict};
use super::transports::{FullInputs, Transport};

/// One call to make.
pub(super) struct Job {
    /// Index into the reports.
    pub(super) row: usize,
    pub(super) transport: Transport,
    pub(super) arguments: Map<String, Value>,
    pub(super) output: Option<Arc<OutputCheck>>,
}

/// A tool's outputSchema, compiled when the first answer is judged against it and shared
/// by both transports' calls when they list the same one. It goes with the last of those
/// calls, so only the calls in flight hold a compiled schema: Microsoft Graph's 11,422,
/// compiled before calling, took about 2 GB.
pub(super) struct OutputCheck {
    schema: Arc<Map<String, Value>>,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

impl OutputCheck {
    fn new(schema: Arc<Map<String, Value>>) -> OutputCheck {
        OutputCheck {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// The validator, or why the outputSchema does not compile.
    pub(super) fn validator(&self) -> Result<&jsonschema::Validator, String> {
        self.compiled
            .get_or_init(|| {
                jsonschema::validator_for(&Value::Object(self.schema.as_ref().clone()))
                    .map_err(|e| format!("the outputSchema does not compile: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// A report row for every tool either transport listed, with the outcomes known without
/// calling (listing differences, no arguments, a broken outputSchema) filled in, and the
/// calls still to make. A transport without a listing (`None`: left out by `--transport`)
/// is skipped for every tool.
pub(super) fn plan(
    http: Option<&[Tool]>,
    stdio: Option<&[Tool]>,
    full_inputs: &FullInputs,
) -> (Vec<ToolReport>, Vec<Job>) {
    let not_called = |t: Transport| {
        Verdict::Skipped(format!(
            "not called (--transport {})",
            Transport::ALL
                .into_iter()
                .find(|other| *other != t)
                .map_or("", Transport::key)
        ))
    };
    let (http, http_skipped) = (http.unwrap_or_default(), http.is_none());
    let (stdio, stdio_skipped) = (stdio.unwrap_or_default(), stdio.is_none());
    let (http_index, stdio_index) = (by_name(http), by_name(stdio));
    let mut names: Vec<&str> = http.iter().map(|t| t.name.as_ref()).collect();
    names.extend(
        stdio
            .iter()
            .map(|t| t.name.as_ref())
            .filter(|n| !http_index.contains_key(*n)),
    );
    let mut reports = Vec::with_capacity(names.len());
    let mut jobs = Vec::with_capacity(names.len() * 2);
    for (row, name) in names.into_iter().enumerate() {
        let on_http = http_index.get(name).map(|&i| &http[i]);
        let on_stdio = stdio_index.get(name).map(|&i| &stdio[i]);
        let http_output = on_http.and_then(output_check);
        // Compiled once when both transports list the same outputSchema.
        let stdio_output = match (on_http, on_stdio, &http_output) {
            (Some(h), Some(s), Some(check)) if h.output_schema == s.output_schema => {
                Some(check.clone())
            }
            _ => on_stdio.and_then(output_check),
        };
        let mut report = ToolReport {
            name: name.to_string(),
            http: Verdict::Ok,
            stdio: Verdict::Ok,
        };
        let legs = [
            (Transport::Http, http_skipped, on_http, None, http_output),
            (
                Transport::Stdio,
                stdio_skipped,
                on_stdio,
                on_http,
                stdio_output,
            ),
        ];
        for (transport, skipped, tool, reference, output) in legs {
            if skipped {
                *report.outcome_mut(transport) = not_called(transport);
                continue;
            }
            match prepare(row, transport, tool, reference, output, full_inputs) {
                Ok(job) => jobs.push(job),
                Err(outcome) => *report.outcome_mut(transport) = outcome,
            }
        }
        reports.push(report);
    }
    (reports, jobs)
}

fn by_name(tools: &[Tool]) -> HashMap<&str, usize> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_ref(), i))
        .collect()
}

/// The call of `tool` over `transport` (report row `row`), or its outcome when there is no
/// call to make: not listed, listed unlike `reference` (the Streamable HTTP
/// listing, which this process serves straight from the catalog), or no arguments. (An
/// outputSchema that does not compile fails the call when its answer is judged.)
fn prepare(
    row: usize,
    transport: Transport,
    tool: Option<&Tool>,
    reference: Option<&Tool>,
    output: Option<Arc<OutputCheck>>,
    full_inputs: &FullInputs,
) -> Result<Job, Verdict> {
    let Some(tool) = tool else {
        return Err(Verdict::Failed(format!(
            "not in tools/list over {transport}"
        )));
    };
    if let Some(reference) = reference {
        let differences = differences(reference, tool);
        if !differences.is_empty() {
            return Err(Verdict::Failed(format!(
                "listed differently over {transport} than over {}: {} differ",
                Transport::Http,
                differences.join(", ")
            )));
        }
    }
    // restmcp's own status tool takes a handle only a call's result gives.
    if tool.title.as_deref() == Some(crate::mcp::STATUS_TOOL_TITLE) {
        return Err(Verdict::Skipped(
            "restmcp's operation status tool: it takes the handle a call's result gives".into(),
        ));
    }
    Ok(Job {
        row,
        transport,
        arguments: arguments(tool, full_inputs)?,
        output,
    })
}

/// The top-level fields in which two listings of a tool differ (`inputSchema`, …).
fn differences(a: &Tool, b: &Tool) -> Vec<String> {
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return vec!["the tool".into()];
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| a.get(*key) != b.get(*key))
        .cloned()
        .collect()
}

/// The tool's outputSchema, to be compiled when needed; `None` when it has none.
fn output_check(tool: &Tool) -> Option<Arc<OutputCheck>> {
    tool.output_schema
        .as_ref()
        .map(|schema| Arc::new(OutputCheck::new(schema.clone())))
}

/// Arguments for the tool from its inputSchema, or the outcome when there are none.
fn arguments(tool: &Tool, full_inputs: &FullInputs) -> Result<Map<String, Value>, Verdict> {
    let schema = match full_inputs.get(tool.name.as_ref()) {
        Some(full) => full,
        None => Value::Object(tool.input_schema.as_ref().clone()),
    };
    match crate::schema::example::example(&schema) {
        Some(Value::Object(arguments)) => Ok(arguments),
        Some(other) => Err(Verdict::Failed(format!(
            "the arguments generated from the inputSchema are not an object: {}",
            truncate(&other.to_string())
        ))),
        None => Err(Verdict::Skipped(
            "no arguments could be generated from the inputSchema".into(),
        )),
    }
}
