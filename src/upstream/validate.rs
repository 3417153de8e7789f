//! Arguments checked against the tool's inputSchema before any upstream request, and
//! structured results against its outputSchema. Validators are compiled once per tool:
//! those of small tools in the background when a catalog is served ([`Validators::warm`],
//! bounded, so the first call does not pay for it), every other one on its first call
//! (compiling all of GitHub's 2,446 schemas, or Microsoft Graph's 11,000 tools, up front
//! would cost start-up time and memory for tools most sessions never call).

use std::sync::{Arc, OnceLock, Weak};

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::catalog::naming::closest;
use crate::catalog::{Catalog, Tool};

/// The compiled schemas of one tool.
pub struct Compiled {
    /// The tool's argument names, for suggestions.
    arguments: Vec<String>,
    input: Result<jsonschema::Validator, String>,
    /// Arguments whose published schema was relaxed to fit its budget, checked against
    /// their full schema as well: (argument name, validator).
    full: Vec<(String, Result<jsonschema::Validator, String>)>,
    output: Option<Result<jsonschema::Validator, String>>,
}

/// Lazily compiled validators, one slot per tool of a catalog.
pub struct Validators {
    slots: Vec<OnceLock<Compiled>>,
}

/// A tool is compiled ahead of its first call only when its input and output schemas
/// together are at most this many bytes of JSON text: most tools of most APIs (Petstore's
/// largest is about 1.5 KB), never the huge request bodies that are rarely called.
pub const WARM_TOOL_BYTES: usize = 8 * 1024;

/// At most this many bytes of schema text are compiled ahead of calls per catalog, which
/// bounds the time and memory warming takes whatever the API's size. Compiled validators
/// take many times their text: with 1 MiB, GitHub's resident memory after start-up grew
/// from 43 to 60 MB; with 256 KiB, by about 5 MB (GitHub 44 → 49 MB, Stripe 38 → 43 MB).
/// Tools beyond it compile on their first call.
pub const WARM_BUDGET_BYTES: usize = 256 * 1024;

/// The tools [`Validators::warm`] compiles, in catalog order: those within
/// [`WARM_TOOL_BYTES`] and not relaxed to fit their budget, until [`WARM_BUDGET_BYTES`] is
/// spent.
pub fn warm_plan(tools: &[Tool]) -> Vec<usize> {
    let mut spent = 0;
    let mut plan = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let bytes = tool.input_schema.as_str().len()
            + tool.output_schema.as_ref().map_or(0, |s| s.as_str().len());
        // A relaxed tool's published schema is small, its full one (also compiled) is not.
        if bytes > WARM_TOOL_BYTES || tool.route.full_input.is_some() {
            continue;
        }
        if spent + bytes > WARM_BUDGET_BYTES {
            break;
        }
        spent += bytes;
        plan.push(index);
    }
    plan
}

impl Validators {
    pub fn new(tools: usize) -> Validators {
        Validators {
            slots: (0..tools).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The validators of the tool at `index` in its catalog.
    pub fn get(&self, index: usize, tool: &Tool) -> Option<&Compiled> {
        let slot = self.slots.get(index)?;
        Some(slot.get_or_init(|| Compiled::new(tool)))
    }

    /// Whether the validators of the tool at `index` are compiled already.
    pub fn is_compiled(&self, index: usize) -> bool {
        self.slots
            .get(index)
            .is_some_and(|slot| slot.get().is_some())
    }

    /// Compiles the validators of the tools [`warm_plan`] picks, one after the other on a
    /// background thread, so their first calls find them ready. Start-up and calls never
    /// wait for it: a call of a tool being compiled at that moment waits only for that
    /// tool, as it would have compiled it anyway. The thread holds the validators weakly
    /// and stops once they are dropped (a snapshot replaced by a reload).
    pub fn warm(self: &Arc<Self>, catalog: Arc<Catalog>) {
        let plan = warm_plan(catalog.tools());
        if plan.is_empty() {
            return;
        }
        let validators: Weak<Validators> = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("restmcp-validators".into())
            .spawn(move || {
                for index in plan {
                    let Some(validators) = validators.upgrade() else {
                        return;
                    };
                    if let Some(tool) = catalog.tools().get(index) {
                        validators.get(index, tool);
                    }
                }
            });
        // Without a thread (none left), validators still compile on first call.
        if let Err(e) = spawned {
            tracing::debug!("validators are compiled on first call: {e}");
        }
    }
}

/// The validators of a relaxed tool's arguments' full schemas (none for most tools). An
/// argument an overlay fixed is not the client's to send, so it has none.
fn full_validators(tool: &Tool) -> Vec<(String, Result<jsonschema::Validator, String>)> {
    let Some(full) = &tool.route.full_input else {
        return Vec::new();
    };
    full.arguments
        .iter()
        .filter_map(|(index, _)| {
            let binding = tool.route.arguments.bindings.get(*index)?;
            if binding.fixed.is_some() {
                return None;
            }
            let schema = full.argument_schema(*index)?;
            let validator = jsonschema::draft202012::new(&schema).map_err(|e| e.to_string());
            Some((binding.argument.clone(), validator))
        })
        .collect()
}

impl Compiled {
    fn new(tool: &Tool) -> Compiled {
        let input = tool.input_schema.to_value();
        Compiled {
            arguments: input["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default(),
            input: jsonschema::draft202012::new(&input).map_err(|e| e.to_string()),
            full: full_validators(tool),
            output: tool.output_schema.as_ref().map(|schema| {
                jsonschema::draft202012::new(&schema.to_value()).map_err(|e| e.to_string())
            }),
        }
    }

    /// Every violation of the arguments (an object, or whatever the client sent), one line
    /// each, with the closest valid name for an unknown argument. Empty when the arguments
    /// are valid. The arguments are borrowed as they came: a caller holding a map wraps it
    /// in [`Value::Object`] by moving it, not by cloning it.
    pub fn check_arguments(&self, arguments: &Value) -> Vec<String> {
        let validator = match &self.input {
            Ok(validator) => validator,
            // The schema restmcp published cannot be compiled: say so rather than send an
            // unchecked request.
            Err(problem) => {
                return vec![format!("the tool's inputSchema cannot be used: {problem}")];
            }
        };
        // Valid arguments, the common case, are checked without collecting errors.
        let full_valid = self
            .full
            .iter()
            .all(|(name, full)| match (arguments.get(name), full) {
                (None, _) => true,
                (Some(value), Ok(full)) => full.is_valid(value),
                (Some(_), Err(_)) => false,
            });
        if full_valid && validator.is_valid(arguments) {
            return Vec::new();
        }
        let instance = arguments;
        let known: Vec<&str> = self.arguments.iter().map(String::as_str).collect();
        let mut violations = Vec::new();
        for error in validator.iter_errors(instance) {
            let path = error.instance_path().to_string();
            let at = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } if path.is_empty() => {
                    for name in unexpected {
                        violations.push(match closest(name, &known) {
                            Some(suggestion) => format!(
                                "unknown argument \"{name}\" (did you mean \"{suggestion}\"?)"
                            ),
                            None => format!(
                                "unknown argument \"{name}\" (valid arguments: {})",
                                known.join(", ")
                            ),
                        });
                    }
                }
                ValidationErrorKind::Required { property } if path.is_empty() => {
                    let name = property.as_str().unwrap_or_default();
                    violations.push(format!("missing required argument \"{name}\""));
                }
                _ => violations.push(format!("{at}{error}")),
            }
        }
        for (name, validator) in &self.full {
            let Some(value) = arguments.get(name) else {
                continue;
            };
            let validator = match validator {
                Ok(validator) => validator,
                Err(problem) => {
                    violations.push(format!(
                        "the full schema of argument \"{name}\" cannot be used: {problem}"
                    ));
                    continue;
                }
            };
            let root = format!("/{}", crate::json::escape_token(name));
            for error in validator.iter_errors(value) {
                let violation = format!("{root}{}: {error}", error.instance_path());
                // The published schema keeps the argument's own type, so a value of the
                // wrong type is reported by both.
                if !violations.contains(&violation) {
                    violations.push(violation);
                }
            }
        }
        violations
    }

    /// Checks a structured result against the published outputSchema.
    pub fn check_output(&self, value: &Value) -> Result<(), String> {
        let Some(validator) = &self.output else {
            return Ok(());
        };
        let validator = validator
            .as_ref()
            .map_err(|e| format!("the outputSchema cannot be used: {e}"))?;
        let problems: Vec<String> = validator
            .iter_errors(value)
            .take(10)
            .map(|e| {
                let path = e.instance_path().to_string();
                if path.is_empty() {
                    e.to_string()
                } else {
                    format!("{path}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::naming::edit_distance;

    #[test]
    fn suggestions_prefer_same_letters_then_small_edits() {
        let known = ["petId", "status", "limit", "X-Request-Id"];
        assert_eq!(closest("pet_id", &known), Some("petId"));
        assert_eq!(closest("x_request_id", &known), Some("X-Request-Id"));
        assert_eq!(closest("lmit", &known), Some("limit"));
        assert_eq!(closest("statsu", &known), Some("status"));
        assert_eq!(closest("colour", &known), None);
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_substitutions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
