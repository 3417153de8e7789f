//! Making the calls: every [`Job`] of the plan over its transport's client, a few at a time
//! ([`Pace`]), each result judged (not an error, and a `structuredContent` that matches the
//! outputSchema where the tool has one), with a progress line on a terminal.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};

use super::plan::{Job, OutputCheck};
use super::reason::{error_reason, truncate};
use super::report::{ToolReport, Verdict};
use super::transports::{Client, Transport};

/// The clients of the transports being called (a job is planned only for those).
pub(super) struct Clients<'a> {
    pub(super) http: Option<&'a Client>,
    pub(super) stdio: Option<&'a Client>,
}

/// How many calls are in flight at once, and how long one may take.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pace {
    pub(super) concurrency: usize,
    pub(super) timeout: Duration,
}

/// Makes every call, `pace.concurrency` at a time, and records the outcomes; returns how
/// long each transport took.
pub(super) async fn call_all(
    clients: &Clients<'_>,
    jobs: Vec<Job>,
    reports: &mut [ToolReport],
    pace: Pace,
    progress: bool,
) -> HashMap<Transport, Duration> {
    let started = Instant::now();
    let mut call_time: HashMap<Transport, Duration> = Transport::ALL
        .iter()
        .map(|t| (*t, Duration::ZERO))
        .collect();
    let mut counter = Progress::new(progress, jobs.len());
    let names: Vec<String> = reports.iter().map(|r| r.name.clone()).collect();
    let mut calls = futures_util::stream::iter(jobs)
        .map(|job| {
            let client = match job.transport {
                Transport::Http => clients.http,
                Transport::Stdio => clients.stdio,
            };
            let name = names[job.row].clone();
            async move {
                let outcome = match client {
                    Some(client) => {
                        call(
                            client,
                            name,
                            job.arguments,
                            job.output.as_deref(),
                            pace.timeout,
                        )
                        .await
                    }
                    None => Verdict::Skipped(format!("not called over {}", job.transport)),
                };
                (job.row, job.transport, outcome)
            }
        })
        .buffer_unordered(pace.concurrency);
    while let Some((row, transport, outcome)) = calls.next().await {
        *reports[row].outcome_mut(transport) = outcome;
        call_time.insert(transport, started.elapsed());
        counter.tick();
    }
    counter.finish();
    call_time
}

async fn call(
    client: &Client,
    name: String,
    arguments: Map<String, Value>,
    output: Option<&OutputCheck>,
    timeout: Duration,
) -> Verdict {
    let request = CallToolRequestParams::new(name).with_arguments(arguments);
    match tokio::time::timeout(timeout, client.call_tool(request)).await {
        Ok(Ok(result)) => match output.map(OutputCheck::validator).transpose() {
            Ok(validator) => judge(&result, validator),
            Err(reason) => Verdict::Failed(reason),
        },
        Ok(Err(ServiceError::McpError(error))) => Verdict::Failed(truncate(&format!(
            "JSON-RPC error {}: {}",
            error.code.0, error.message
        ))),
        Ok(Err(error)) => Verdict::Failed(truncate(&format!("the call failed: {error}"))),
        Err(_) => Verdict::Failed(format!("no answer within {} s", timeout.as_secs())),
    }
}

/// Whether a result passes: not an error, and a valid `structuredContent` where the tool
/// has an outputSchema.
pub(super) fn judge(result: &CallToolResult, output: Option<&jsonschema::Validator>) -> Verdict {
    if result.is_error == Some(true) {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .map(|t| t.text.as_str())
            .collect();
        return Verdict::Failed(error_reason(&text.join("\n")));
    }
    let Some(validator) = output else {
        return Verdict::Ok;
    };
    let Some(structured) = &result.structured_content else {
        return Verdict::Failed("no structuredContent, though the tool has an outputSchema".into());
    };
    match validator.iter_errors(structured).next() {
        None => Verdict::Ok,
        Some(error) => {
            let at = error.instance_path().to_string();
            Verdict::Failed(truncate(&format!(
                "structuredContent{} does not match the outputSchema: {error}",
                if at.is_empty() {
                    String::new()
                } else {
                    format!(" at {at}")
                }
            )))
        }
    }
}

/// `selftest: 412/2446 calls` on one updating stderr line, for a terminal only: a CI log
/// would get a line per update.
struct Progress {
    enabled: bool,
    total: usize,
    done: usize,
    shown: Option<Instant>,
}

/// Redraws at most this often.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

impl Progress {
    fn new(enabled: bool, total: usize) -> Progress {
        Progress {
            enabled,
            total,
            done: 0,
            shown: None,
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        let due = self
            .shown
            .is_none_or(|at| at.elapsed() >= PROGRESS_INTERVAL);
        if self.enabled && (due || self.done == self.total) {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\rselftest: {}/{} calls", self.done, self.total);
            let _ = stderr.flush();
            self.shown = Some(Instant::now());
        }
    }

    /// Clears the line, so the report starts on a clean one.
    fn finish(&self) {
        if self.enabled && self.shown.is_some() {
            let width = format!("selftest: {}/{} calls", self.total, self.total).len();
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r{}\r", " ".repeat(width));
            let _ = stderr.flush();
        }
    }
}
