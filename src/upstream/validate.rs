//! Arguments checked against the tool's inputSchema before any upstream request, and
//! structured results against its outputSchema. Validators are compiled once per tool,
//! on first use (compiling all of GitHub's 2,446 schemas up front would slow start-up for
//! tools most sessions never call).

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

use crate::catalog::Tool;
use crate::catalog::naming::closest;

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

impl Validators {
    pub fn new(tools: usize) -> Validators {
        Validators {
            slots: (0..tools).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The validators of the tool at `index` in its catalog.
    pub fn get(&self, index: usize, tool: &Tool) -> Option<&Compiled> {
        let slot = self.slots.get(index)?;
        Some(slot.get_or_init(|| {
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
        }))
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
    /// Every violation of the arguments, one line each, with the closest valid name for an
    /// unknown argument. Empty when the arguments are valid.
    pub fn check_arguments(&self, arguments: &Map<String, Value>) -> Vec<String> {
        let validator = match &self.input {
            Ok(validator) => validator,
            // The schema restmcp published cannot be compiled: say so rather than send an
            // unchecked request.
            Err(problem) => {
                return vec![format!("the tool's inputSchema cannot be used: {problem}")];
            }
        };
        let instance = Value::Object(arguments.clone());
        let known: Vec<&str> = self.arguments.iter().map(String::as_str).collect();
        let mut violations = Vec::new();
        for error in validator.iter_errors(&instance) {
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
