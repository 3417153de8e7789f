//! Arguments checked against the tool's inputSchema before any upstream request, and
//! structured results against its outputSchema. Validators are compiled per tool: those of
//! small tools in the background when a catalog is served ([`Validators::warm`], bounded,
//! so the first call does not pay for it), every other one on its first call (compiling
//! all of GitHub's 2,446 schemas, or Microsoft Graph's 11,000 tools, up front would cost
//! start-up time and memory for tools most sessions never call). What is compiled is kept
//! within [`CACHE_BUDGET_BYTES`], the least recently called tools giving way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::tape::{Tape, TapeJson};
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
    /// Results are checked on a [`Tape`]: an answer read from its text need not become a
    /// tree.
    output: Option<Result<jsonschema::Validator<TapeJson>, String>>,
}

/// Lazily compiled validators, one slot per tool of a catalog, the compiled ones held
/// within a budget.
pub struct Validators {
    slots: Vec<Slot>,
    /// The schema text bytes the compiled validators held may stand for.
    budget: usize,
    /// Which slots hold a compiled tool, and their cost: the eviction's bookkeeping.
    held: Mutex<Held>,
    /// Ticks once per `get`: how recently each slot was used.
    clock: AtomicU64,
}

/// One tool's validators, when compiled. Its lock is held while they compile, so that
/// concurrent first calls of a tool compile it once.
#[derive(Default)]
struct Slot {
    compiled: Mutex<Option<Arc<Compiled>>>,
    last_used: AtomicU64,
}

#[derive(Default)]
struct Held {
    /// (slot, cost) of every compiled tool.
    slots: Vec<(usize, usize)>,
    total: usize,
}

/// The schema text (input, output and full input schemas) whose compiled validators are
/// kept at most: compiled, a validator takes about 17 times its text (1 MiB of GitHub's
/// schemas grew resident memory by 17 MB), so about 70 MB. Every tool of GitHub, Stripe or
/// Kubernetes that a session calls stays compiled far beyond that session's needs;
/// calling all of Microsoft Graph's 11,422 tools, which kept 1.5 GB of validators, keeps
/// this. The least recently called tools give way, and compile again when called again.
pub const CACHE_BUDGET_BYTES: usize = 4 * 1024 * 1024;

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
        Validators::with_budget(tools, CACHE_BUDGET_BYTES)
    }

    /// Validators that keep at most `budget` bytes of schema text compiled (the tool called
    /// last always stays, whatever its size).
    pub fn with_budget(tools: usize, budget: usize) -> Validators {
        Validators {
            slots: (0..tools).map(|_| Slot::default()).collect(),
            budget,
            held: Mutex::new(Held::default()),
            clock: AtomicU64::new(0),
        }
    }

    /// The validators of the tool at `index` in its catalog.
    pub fn get(&self, index: usize, tool: &Tool) -> Option<Arc<Compiled>> {
        let slot = self.slots.get(index)?;
        slot.last_used.store(
            self.clock.fetch_add(1, Ordering::Relaxed),
            Ordering::Relaxed,
        );
        let mut compiled = lock(&slot.compiled);
        if let Some(ready) = &*compiled {
            return Some(Arc::clone(ready));
        }
        let ready = Arc::new(Compiled::new(tool));
        *compiled = Some(Arc::clone(&ready));
        drop(compiled);
        self.hold(index, schema_bytes(tool));
        Some(ready)
    }

    /// Counts the newly compiled slot `index`, and empties the least recently used others
    /// until what is held is within the budget.
    fn hold(&self, index: usize, cost: usize) {
        let mut held = lock(&self.held);
        held.slots.push((index, cost));
        held.total += cost;
        while held.total > self.budget && held.slots.len() > 1 {
            let Some(position) = held
                .slots
                .iter()
                .enumerate()
                .filter(|(_, (slot, _))| *slot != index)
                .min_by_key(|(_, (slot, _))| self.slots[*slot].last_used.load(Ordering::Relaxed))
                .map(|(position, _)| position)
            else {
                break;
            };
            let (victim, cost) = held.slots.swap_remove(position);
            held.total -= cost;
            // A call holding the validators keeps them until it is done.
            *lock(&self.slots[victim].compiled) = None;
        }
    }

    /// Whether the validators of the tool at `index` are compiled (and held) now.
    pub fn is_compiled(&self, index: usize) -> bool {
        self.slots
            .get(index)
            .is_some_and(|slot| lock(&slot.compiled).is_some())
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

/// What compiling tool's validators is charged: the bytes of schema text compiled.
fn schema_bytes(tool: &Tool) -> usize {
    let full = tool.route.full_input.as_ref().map_or(0, |full| {
        let defs: usize = full.defs.iter().map(|(_, text)| text.as_str().len()).sum();
        // Each argument is compiled with all of the definitions.
        full.arguments
            .iter()
            .map(|(_, text)| text.as_str().len() + defs)
            .sum::<usize>()
    });
    tool.input_schema.as_str().len()
        + tool.output_schema.as_ref().map_or(0, |s| s.as_str().len())
        + full
}

/// A lock, whether or not a thread panicked while holding it (what it guards stays
/// consistent: a slot is empty or compiled).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
                jsonschema::options_for::<TapeJson>()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(&schema.to_value())
                    .map_err(|e| e.to_string())
            }),
        }
    }

    /// [`Compiled::check_arguments`] of a map, checked in place: it is moved into a
    /// [`Value`] and back, never copied.
    pub fn check_argument_map(
        &self,
        arguments: &mut serde_json::Map<String, Value>,
    ) -> Vec<String> {
        let value = Value::Object(std::mem::take(arguments));
        let violations = self.check_arguments(&value);
        if let Value::Object(map) = value {
            *arguments = map;
        }
        violations
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
        self.check_answer(&Tape::of(value))
    }

    /// [`Compiled::check_output`] of a value on a tape.
    pub fn check_answer(&self, tape: &Tape<'_>) -> Result<(), String> {
        let Some(validator) = &self.output else {
            return Ok(());
        };
        let validator = validator
            .as_ref()
            .map_err(|e| format!("the outputSchema cannot be used: {e}"))?;
        // The common case answered without gathering errors, which costs more.
        if validator.is_valid(tape.root()) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(tape.root())
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

    /// Three tools of about the same size, and room for two: the least recently called
    /// gives way, the others stay, and the one that gave way compiles again when called.
    #[test]
    fn compiled_validators_stay_within_their_budget_least_recently_called_first() {
        let spec = serde_json::json!({
            "openapi": "3.0.3",
            "info": {"title": "T", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9"}],
            "paths": {
                "/a": {"get": {"operationId": "a", "parameters": [{"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 3}}], "responses": {"204": {"description": "ok"}}}},
                "/b": {"get": {"operationId": "b", "parameters": [{"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 3}}], "responses": {"204": {"description": "ok"}}}},
                "/c": {"get": {"operationId": "c", "parameters": [{"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 3}}], "responses": {"204": {"description": "ok"}}}}
            }
        });
        let url = url::Url::parse("file:///specs/t.json").expect("url");
        let docs = crate::spec::DocumentSet::single(url, "t.json".into(), spec);
        let (catalog, _) = crate::catalog::build(
            &[crate::catalog::ApiInput::new("t", Some(&docs))],
            &crate::config::ToolSettings::default(),
        )
        .expect("builds");
        let tools = catalog.tools();
        let cost = schema_bytes(&tools[0]);
        assert!(tools.iter().all(|tool| schema_bytes(tool) == cost));
        let validators = Validators::with_budget(tools.len(), 2 * cost);
        let check = |index: usize, value: &str| {
            validators
                .get(index, &tools[index])
                .expect("tool")
                .check_arguments(&serde_json::json!({"q": value}))
        };
        assert!(check(0, "abc").is_empty());
        assert!(check(1, "abc").is_empty());
        assert!(check(0, "abc").is_empty()); // 0 is now the more recently called
        assert!(!check(2, "abcd").is_empty());
        let compiled: Vec<bool> = (0..3).map(|i| validators.is_compiled(i)).collect();
        assert_eq!(compiled, [true, false, true]);
        // Called again, it compiles again, and checks as before.
        assert_eq!(check(1, "abcd").len(), 1);
        assert!(validators.is_compiled(1));
        assert_eq!(
            (0..3).filter(|&i| validators.is_compiled(i)).count(),
            2,
            "never more than the budget holds"
        );
    }

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
