//! What a selftest found: a [`Verdict`] per tool and transport, each transport's
//! [`Totals`], and the [`Summary`] of the run with its two forms, the table `restmcp
//! selftest` prints and the `--json` document.

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

    /// True when any tool failed on any transport (the exit code is 1 then).
    pub fn failed(&self) -> bool {
        Transport::ALL.iter().any(|t| self.totals(*t).failed > 0)
    }

    /// The `--json` document.
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
        let totals: Map<String, Value> = Transport::ALL
            .iter()
            .map(|transport| {
                let t = self.totals(*transport);
                let counts = json!({
                    "tools": t.tools,
                    "ok": t.ok,
                    "failed": t.failed,
                    "skipped": t.skipped,
                    "elapsed_ms": t.elapsed.as_millis() as u64,
                });
                (transport.key().to_string(), counts)
            })
            .collect();
        json!({
            "tools": tools,
            "totals": totals,
            "elapsed_ms": self.elapsed.as_millis() as u64,
        })
    }

    /// The table: a row for every call that was not ok, then each transport's totals.
    pub fn render(&self) -> String {
        let rows: Vec<[String; 4]> = self
            .tools
            .iter()
            .flat_map(|tool| {
                Transport::ALL.into_iter().filter_map(move |transport| {
                    let outcome = tool.outcome(transport);
                    let reason = outcome.reason()?;
                    Some([
                        tool.name.clone(),
                        transport.key().to_string(),
                        outcome.word().to_string(),
                        cut(reason, MAX_TABLE_REASON_CHARS),
                    ])
                })
            })
            .collect();
        let mut out = String::new();
        if !rows.is_empty() {
            let header = ["tool", "transport", "outcome", "reason"].map(String::from);
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
        out.push_str(&format!(
            "selftest {} in {:.2} s\n",
            if self.failed() { "failed" } else { "passed" },
            self.elapsed.as_secs_f64()
        ));
        out
    }
}
