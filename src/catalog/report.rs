//! What synthesis did with each operation, for `restmcp check`: mapped or skipped (and
//! why), renamed (from what, why), what was dropped, and the size of the result.

use std::fmt::Write as _;

use serde::Serialize;

use super::naming::NameChange;
use super::synthesize::Draft;
use crate::spec::SpecVersion;

/// Characters per token assumed for the estimate: the usual figure for English and JSON
/// with current tokenizers; good enough to compare modes, not to bill by.
const BYTES_PER_TOKEN: usize = 4;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub apis: Vec<ApiReport>,
    /// Size of the whole `tools/list` result in bytes (compact JSON).
    pub list_bytes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ApiReport {
    pub name: String,
    pub source: String,
    pub version: SpecVersion,
    pub title: String,
    pub operations: Vec<OperationReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    Mapped {
        tool: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        renamed: Vec<NameChange>,
        /// The operationId (or `METHOD /path`) the name came from.
        source: String,
    },
    Skipped {
        reason: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct OperationReport {
    /// Document order.
    #[serde(skip)]
    pub(super) index: usize,
    /// `GET /pets`
    pub operation: String,
    /// `file#/paths/~1pets/get`
    pub location: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Keywords removed from its schemas, with counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_keywords: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl OperationReport {
    pub(super) fn skipped(
        index: usize,
        operation: String,
        location: String,
        reason: String,
    ) -> Self {
        OperationReport {
            index,
            operation,
            location,
            outcome: Outcome::Skipped { reason },
            dropped_keywords: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub(super) fn mapped(
        index: usize,
        operation: String,
        location: String,
        tool: String,
        source: String,
        renamed: Vec<NameChange>,
        draft: &Draft,
    ) -> Self {
        let mut notes = draft.notes.clone();
        notes.extend(draft.schema_notes.invalid.iter().cloned());
        OperationReport {
            index,
            operation,
            location,
            outcome: Outcome::Mapped {
                tool,
                renamed,
                source,
            },
            dropped_keywords: draft
                .schema_notes
                .dropped
                .iter()
                .map(|(k, n)| (k.clone(), *n))
                .collect(),
            notes,
        }
    }

    pub fn is_skipped(&self) -> bool {
        matches!(self.outcome, Outcome::Skipped { .. })
    }
}

impl Report {
    pub fn operations(&self) -> usize {
        self.apis.iter().map(|a| a.operations.len()).sum()
    }

    pub fn skipped(&self) -> usize {
        self.apis
            .iter()
            .flat_map(|a| &a.operations)
            .filter(|o| o.is_skipped())
            .count()
    }

    pub fn estimated_tokens(&self) -> usize {
        self.list_bytes.div_ceil(BYTES_PER_TOKEN)
    }

    /// The human-readable form printed by `restmcp check`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for api in &self.apis {
            let mapped = api.operations.iter().filter(|o| !o.is_skipped()).count();
            let _ = writeln!(
                out,
                "{} — {} ({}, {}): {} of {} operations mapped",
                api.name,
                api.source,
                api.version,
                if api.title.is_empty() {
                    "untitled"
                } else {
                    &api.title
                },
                mapped,
                api.operations.len()
            );
            for op in &api.operations {
                match &op.outcome {
                    Outcome::Mapped {
                        tool,
                        renamed,
                        source,
                    } => {
                        let _ = writeln!(out, "  ok       {:<40} → {tool}", op.operation);
                        if !renamed.is_empty() {
                            let why: Vec<&str> = renamed.iter().map(describe_change).collect();
                            let _ = writeln!(
                                out,
                                "           renamed from \"{source}\": {}",
                                why.join("; ")
                            );
                        }
                    }
                    Outcome::Skipped { reason } => {
                        let _ = writeln!(out, "  SKIPPED  {:<40} {}", op.operation, op.location);
                        let _ = writeln!(out, "           {reason}");
                    }
                }
                if !op.dropped_keywords.is_empty() {
                    let list: Vec<String> = op
                        .dropped_keywords
                        .iter()
                        .map(|(k, n)| {
                            if *n > 1 {
                                format!("{k} ×{n}")
                            } else {
                                k.clone()
                            }
                        })
                        .collect();
                    let _ = writeln!(out, "           dropped keywords: {}", list.join(", "));
                }
                for note in &op.notes {
                    let _ = writeln!(out, "           note: {note}");
                }
            }
        }
        let operations = self.operations();
        let skipped = self.skipped();
        let _ = writeln!(
            out,
            "\n{operations} operations: {} mapped, {skipped} skipped; tools/list is {} bytes ≈ {} tokens",
            operations - skipped,
            self.list_bytes,
            self.estimated_tokens()
        );
        out
    }
}

fn describe_change(change: &NameChange) -> &'static str {
    match change {
        NameChange::FromPath => "no operationId, named from method and path",
        NameChange::Sanitized => "characters outside [A-Za-z0-9_-] replaced",
        NameChange::Shortened => "shortened to the maximum length",
        NameChange::Deduplicated => "collided with another tool, hash suffix added",
    }
}
