//! What a selftest found: a [`Verdict`] per tool (and per resource, template and prompt)
//! and transport, each transport's [`Totals`], and the [`Summary`] of the run with its two
//! forms, the table `restmcp selftest` prints and the `--json` document.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::reason::cut;
use super::transports::Transport;

/// Longest reason shown in a row of the table.
pub(super) const MAX_TABLE_REASON_CHARS: usize = 200;

/// What became of one tool on one transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Failed(String),
    Skipped(String),
}

impl Verdict {
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Failed(_) => "failed",
            Verdict::Skipped(_) => "skipped",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Ok => None,
            Verdict::Failed(reason) | Verdict::Skipped(reason) => Some(reason),
        }
    }

    fn to_json(&self) -> Value {
        json!({"outcome": self.word(), "reason": self.reason()})
    }
}

/// One tool's outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReport {
    pub name: String,
    pub http: Verdict,
    pub stdio: Verdict,
}

impl ToolReport {
    pub fn outcome(&self, transport: Transport) -> &Verdict {
        match transport {
            Transport::Http => &self.http,
            Transport::Stdio => &self.stdio,
        }
    }

    pub(super) fn outcome_mut(&mut self, transport: Transport) -> &mut Verdict {
        match transport {
            Transport::Http => &mut self.http,
            Transport::Stdio => &mut self.stdio,
        }
    }
}

/// What a row of the surface is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Resource,
    Template,
    Prompt,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Resource => "resource",
            Kind::Template => "template",
            Kind::Prompt => "prompt",
        }
    }
}

/// One resource, template or prompt's outcomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceReport {
    pub kind: Kind,
    /// The URI, the template, or the prompt's name.
    pub name: String,
    /// What was asked: the URI read for a template, the arguments given for a prompt.
    pub asked: Option<String>,
    pub http: Verdict,
    pub stdio: Verdict,
}

impl SurfaceReport {
    pub fn outcome(&self, transport: Transport) -> &Verdict {
        match transport {
            Transport::Http => &self.http,
            Transport::Stdio => &self.stdio,
        }
    }

    pub(super) fn outcome_mut(&mut self, transport: Transport) -> &mut Verdict {
        match transport {
            Transport::Http => &mut self.http,
            Transport::Stdio => &mut self.stdio,
        }
    }
}

/// Counts for one transport.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub tools: usize,
    pub ok: usize,
    pub failed: usize,
    pub skipped: usize,
    /// From the first call to the last answer on this transport.
    pub elapsed: Duration,
}

/// The result of a selftest run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// In `tools/list` order (Streamable HTTP's, then any tool only stdio listed).
    pub tools: Vec<ToolReport>,
    /// Resources and templates in catalog order, then prompts.
    pub surface: Vec<SurfaceReport>,
    /// How long each transport took to answer all its calls.
    pub call_time: HashMap<Transport, Duration>,
    /// The whole run: loading, both servers, listing and calling.
    pub elapsed: Duration,
}

impl Summary {
    pub fn totals(&self, transport: Transport) -> Totals {
        let mut totals = Totals {
            tools: self.tools.len(),
            elapsed: self.call_time.get(&transport).copied().unwrap_or_default(),
            ..Totals::default()
        };
        for tool in &self.tools {
            match tool.outcome(transport) {
                Verdict::Ok => totals.ok += 1,
                Verdict::Failed(_) => totals.failed += 1,
                Verdict::Skipped(_) => totals.skipped += 1,
            }
        }
        totals
    }

    /// Counts of the resources, templates and prompts for one transport (`tools` counts
    /// them; no `elapsed`).
    pub fn surface_totals(&self, transport: Transport) -> Totals {
        let mut totals = Totals {
            tools: self.surface.len(),
            ..Totals::default()
        };
        for item in &self.surface {
            match item.outcome(transport) {
                Verdict::Ok => totals.ok += 1,
                Verdict::Failed(_) => totals.failed += 1,
                Verdict::Skipped(_) => totals.skipped += 1,
            }
        }
        totals
    }

    /// True when any tool, resource or prompt failed on any transport (the exit code is 1
    /// then).
    pub fn failed(&self) -> bool {
        Transport::ALL
            .iter()
            .any(|t| self.totals(*t).failed > 0 || self.surface_totals(*t).failed > 0)
    }

    /// The `--json` document (`surface`, and each transport's `surface` totals, only when
    /// there are resources or prompts).
    pub fn to_json(&self) -> Value {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "http": tool.http.to_json(),
                    "stdio": tool.stdio.to_json(),
                })
            })
            .collect();
        let surface: Vec<Value> = self
            .surface
            .iter()
            .map(|item| {
                json!({
                    "kind": item.kind.word(),
                    "name": item.name,
                    "asked": item.asked,
                    "http": item.http.to_json(),
                    "stdio": item.stdio.to_json(),
                })
            })
            .collect();
        let totals: Map<String, Value> = Transport::ALL
            .iter()
            .map(|transport| {
                let t = self.totals(*transport);
                let s = self.surface_totals(*transport);
                let mut counts = json!({
                    "tools": t.tools,
                    "ok": t.ok,
                    "failed": t.failed,
                    "skipped": t.skipped,
                    "elapsed_ms": t.elapsed.as_millis() as u64,
                });
                if !self.surface.is_empty() {
                    counts["surface"] = json!({
                        "items": s.tools,
                        "ok": s.ok,
                        "failed": s.failed,
                        "skipped": s.skipped,
                    });
                }
                (transport.key().to_string(), counts)
            })
            .collect();
        let mut report = json!({
            "tools": tools,
            "totals": totals,
            "elapsed_ms": self.elapsed.as_millis() as u64,
        });
        if !surface.is_empty() {
            report["surface"] = Value::Array(surface);
        }
        report
    }

    /// The tables: a row for every call that was not ok (tools, then resources and
    /// prompts), then each transport's totals.
    pub fn render(&self) -> String {
        let tools = self.tools.iter().map(|tool| (tool.name.clone(), tool));
        let surface = self.surface.iter().map(|item| {
            let what = match &item.asked {
                Some(asked) => format!("{} {} ({asked})", item.kind.word(), item.name),
                None => format!("{} {}", item.kind.word(), item.name),
            };
            (what, item)
        });
        let mut out = String::new();
        table("tool", not_ok(tools, ToolReport::outcome), &mut out);
        table(
            "resource or prompt",
            not_ok(surface, SurfaceReport::outcome),
            &mut out,
        );
        for transport in Transport::ALL {
            let t = self.totals(transport);
            out.push_str(&format!(
                "{:<6} {} tools: {} ok, {} failed, {} skipped in {:.2} s\n",
                format!("{}:", transport.key()),
                t.tools,
                t.ok,
                t.failed,
                t.skipped,
                t.elapsed.as_secs_f64()
            ));
        }
        for transport in Transport::ALL
            .into_iter()
            .filter(|_| !self.surface.is_empty())
        {
            let s = self.surface_totals(transport);
            out.push_str(&format!(
                "{:<6} {} resources and prompts: {} ok, {} failed, {} skipped\n",
                format!("{}:", transport.key()),
                s.tools,
                s.ok,
                s.failed,
                s.skipped,
            ));
        }
        out.push_str(&format!(
            "selftest {} in {:.2} s\n",
            if self.failed() { "failed" } else { "passed" },
            self.elapsed.as_secs_f64()
        ));
        out
    }
}

/// A table row (what, transport, outcome, reason) for every outcome that is not ok.
fn not_ok<'a, T: 'a>(
    items: impl Iterator<Item = (String, &'a T)>,
    outcome: fn(&T, Transport) -> &Verdict,
) -> Vec<[String; 4]> {
    items
        .flat_map(|(what, item)| {
            Transport::ALL.into_iter().filter_map(move |transport| {
                let outcome = outcome(item, transport);
                let reason = outcome.reason()?;
                Some([
                    what.clone(),
                    transport.key().to_string(),
                    outcome.word().to_string(),
                    cut(reason, MAX_TABLE_REASON_CHARS),
                ])
            })
        })
        .collect()
}

/// The rows under a header whose first column is `first`, and an empty line; nothing
/// when there are no rows.
fn table(first: &str, rows: Vec<[String; 4]>, out: &mut String) {
    if rows.is_empty() {
        return;
    }
    let header = [first, "transport", "outcome", "reason"].map(String::from);
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .chain([header[column].len()])
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    for row in std::iter::once(&header).chain(&rows) {
        out.push_str(&format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {}\n",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        ));
    }
    out.push('\n');
}
