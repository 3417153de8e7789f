//! How a workflow run ends, as the model reads it: the outputs as `structuredContent`, or
//! an error naming the workflow and step that failed, the status, the criteria that did
//! not hold, and every request already sent (Arazzo has no rollback: the model must know
//! what happened upstream).

use serde_json::Value;

use crate::catalog::Tool;
use crate::catalog::workflow::Program;
use crate::spec::arazzo::document::{Step, Workflow};
use crate::upstream::{Content, ToolResult};

/// One request a run sent.
#[derive(Debug, Clone)]
pub(super) struct SentLine {
    pub step: String,
    pub method: String,
    /// Redacted.
    pub url: String,
    pub status: Option<u16>,
    /// Why there is no status (unreachable, timed out).
    pub note: String,
}

/// Why a run failed.
#[derive(Debug)]
pub(super) struct Failure {
    /// The workflow (innermost first when nested) and step.
    pub workflows: Vec<String>,
    pub step: Option<String>,
    pub status: Option<u16>,
    /// The success criteria that did not hold.
    pub failed: Vec<String>,
    pub why: String,
}

impl Failure {
    pub fn plain(why: String) -> Failure {
        Failure {
            workflows: Vec::new(),
            step: None,
            status: None,
            failed: Vec::new(),
            why,
        }
    }

    pub fn at_step(step: &Step, status: Option<u16>, failed: Vec<String>, why: String) -> Failure {
        Failure {
            step: Some(step.id.clone()),
            status,
            failed,
            ..Failure::plain(why)
        }
    }

    pub fn timed_out(program: &Program) -> Failure {
        Failure::plain(format!(
            "the run took longer than timeout_seconds of [workflows.{}] ({} s) and was stopped",
            program.set,
            program.timeout.as_secs()
        ))
    }

    /// The failure as seen from the workflow that ran it.
    pub fn within(mut self, workflow: &Workflow) -> Failure {
        self.workflows.push(workflow.id.clone());
        self
    }

    /// The error result of tool `tool`.
    pub fn result(&self, tool: &str, sent: &[SentLine]) -> ToolResult {
        let mut text = format!("Workflow tool \"{tool}\" failed");
        let inner: Vec<&str> = self.workflows.iter().map(String::as_str).collect();
        if let Some(step) = &self.step {
            text.push_str(&format!(" at step \"{step}\""));
        }
        if inner.len() > 1 {
            text.push_str(&format!(" of workflow \"{}\"", inner[0]));
        }
        if let Some(status) = self.status {
            text.push_str(&format!(" (the upstream answered {status})"));
        }
        text.push('.');
        if !self.failed.is_empty() {
            text.push_str(&format!(
                " Success criteria not met: {}.",
                self.failed
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.why.is_empty() {
            text.push(' ');
            text.push_str(&capitalized(&self.why));
            if !self.why.ends_with('.') {
                text.push('.');
            }
        }
        text.push_str(&requests_sent(sent));
        ToolResult::error(text)
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The requests a run sent, for a result that is not a success.
fn requests_sent(sent: &[SentLine]) -> String {
    if sent.is_empty() {
        return "\nNo request was sent.".to_string();
    }
    let mut text = format!(
        "\nRequests already sent ({}; Arazzo has no rollback, so their effects remain):",
        sent.len()
    );
    for (i, line) in sent.iter().enumerate() {
        let answer = match line.status {
            Some(status) => status.to_string(),
            None => format!(
                "no answer: {}",
                line.note.lines().next().unwrap_or_default()
            ),
        };
        text.push_str(&format!(
            "\n{}. step {}: {} {} → {answer}",
            i + 1,
            line.step,
            line.method,
            line.url
        ));
    }
    text
}

/// The result of a run that ended well: its outputs.
pub(super) fn success(outputs: Value) -> ToolResult {
    ToolResult::json(outputs)
}

/// The result of a run whose outputs do not match the outputSchema its tool lists.
pub(super) fn mismatch(
    tool: &Tool,
    outputs: Value,
    violations: &str,
    sent: &[SentLine],
) -> ToolResult {
    let text = format!(
        "Workflow tool \"{}\" ran to its end, but its outputs do not match its outputSchema \
         ({violations}); they follow as text.{}",
        tool.name,
        requests_sent(sent)
    );
    ToolResult {
        content: vec![
            Content::Text { text },
            Content::Text {
                text: outputs.to_string(),
            },
        ],
        structured: None,
        is_error: true,
        text_is_structured: None,
    }
}
