//! What fitting a tool into its budgets did, as `restmcp check` reports it: an inputSchema
//! relaxed below some depth ([`Relaxation`]) and repeated subtrees hoisted into `$defs`
//! ([`Hoisting`]), with the byte and token counts they are reported in. Synthesis makes
//! them; the report renders them.

use serde::Serialize;

/// Characters per token assumed for the estimate: the usual figure for English and JSON
/// with current tokenizers; good enough to compare modes, not to bill by.
pub const BYTES_PER_TOKEN: usize = 4;

/// How a tool's inputSchema was relaxed to fit `tools.max_input_schema_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Relaxation {
    /// Levels deeper than this were published as their type and a description.
    pub below_depth: usize,
    pub budget: usize,
    /// The full inputSchema's size, and the published one's (compact JSON bytes).
    pub full_bytes: usize,
    pub published_bytes: usize,
    /// The arguments whose published schema lost something (still checked in full).
    pub arguments: Vec<String>,
}

impl Relaxation {
    pub(super) fn render(&self) -> String {
        format!(
            "inputSchema relaxed below depth {} to fit {} bytes: {} → {} bytes (≈ {} tokens saved); checked in full: {}",
            self.below_depth,
            thousands(self.budget),
            thousands(self.full_bytes),
            thousands(self.published_bytes),
            thousands(
                self.full_bytes
                    .saturating_sub(self.published_bytes)
                    .div_ceil(BYTES_PER_TOKEN)
            ),
            self.arguments.join(", ")
        )
    }
}

/// What hoisting repeated subtrees into `$defs` (see [`crate::schema::hoist`]) did to a
/// tool's schemas: their sizes before and after, compact JSON bytes (0 for no schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Hoisting {
    pub input_before: usize,
    pub input_after: usize,
    pub output_before: usize,
    pub output_after: usize,
}

impl Hoisting {
    /// Bytes fewer in `tools/list`, both schemas together.
    pub fn saved(&self) -> usize {
        self.input_before.saturating_sub(self.input_after)
            + self.output_before.saturating_sub(self.output_after)
    }

    pub(super) fn render(&self) -> String {
        let mut parts = Vec::new();
        for (which, before, after) in [
            ("inputSchema", self.input_before, self.input_after),
            ("outputSchema", self.output_before, self.output_after),
        ] {
            if after < before {
                parts.push(format!(
                    "{which} {} → {} bytes",
                    thousands(before),
                    thousands(after)
                ));
            }
        }
        format!(
            "repeated subtrees hoisted into $defs: {} (≈ {} tokens saved)",
            parts.join(", "),
            thousands(self.saved().div_ceil(BYTES_PER_TOKEN))
        )
    }
}

/// `1388246` → `1,388,246`.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
