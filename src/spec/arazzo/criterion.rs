//! Criterion Objects (`successCriteria`, action `criteria`): `simple`, `regex` and
//! `jsonpath` criteria parsed from their JSON form and evaluated against a [`Resolve`].
//!
//! Semantics (Arazzo 1.1.0 "Criterion Object" and "Condition Evaluation"; 1.0.1 says the
//! same with fewer words):
//!
//! * **simple**: see [`super::condition`]. Its `context` is parsed and kept (a document may
//!   give one) but not used: a simple condition names its values itself.
//! * **regex**: the `regex` crate's syntax (the spec names no dialect; patterns it cannot
//!   compile, such as lookaround and backreferences, are refused when the criterion is
//!   parsed). It passes when the pattern matches anywhere in the context value ("the
//!   regex pattern matches the `context` value"; anchor with `^…$`): a string as it is,
//!   any other value as its compact JSON text (`200` for a status code). A context without
//!   a value, or `null`, fails ("MUST evaluate to fail").
//! * **jsonpath**: RFC 9535 through [`crate::spec::jsonpath`], the context value as the
//!   query's root. It passes on a non-empty nodelist; a context without a value, or
//!   `null`, fails. As RFC 9535 says, `$[?count(@.pets) > 0]` tests the root's *children*,
//!   so on `{"pets": [1]}` it fails (Redocly Respect differs).
//! * **embedded expressions** (1.1.0): a regex or JSONPath condition holding `{$…}` is
//!   compiled at each evaluation, after its expressions are written in as text (strings
//!   as they are, other values as compact JSON, nothing escaped); an unresolved
//!   expression or a result that does not compile fails the criterion.
//! * `context` is required for `regex` and `jsonpath` ("If `type` is specified, then the
//!   `context` MUST be provided"); for an explicit `type: simple` it stays optional.
//! * Refused by name ([`CriterionError::Unsupported`]): `xpath` criteria, and an Expression
//!   Type Object selecting anything but JSONPath `rfc9535`.

use std::sync::Arc;

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use super::condition::{self, Condition};
use super::expression::{self, Expression, Resolve};
use super::template::{self, Piece};
use crate::spec::jsonpath::{self, Query};

/// Largest compiled regex (bytes): patterns come from documents others write.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One parsed Criterion Object.
#[derive(Debug, Clone)]
pub enum Criterion {
    Simple {
        context: Option<Expression>,
        condition: Condition,
    },
    Regex {
        context: Expression,
        pattern: Regex,
    },
    JsonPath {
        context: Expression,
        query: Arc<Query>,
        text: String,
    },
    /// A regex or JSONPath condition with embedded `{$…}` expressions, compiled per
    /// evaluation.
    Embedded {
        context: Expression,
        kind: Kind,
        condition: Vec<Piece>,
        text: String,
    },
}

/// The language of an [`Criterion::Embedded`] condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Regex,
    JsonPath,
}

/// Why a Criterion Object cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CriterionError {
    #[error("a criterion must be an object")]
    NotAnObject,
    #[error("`{field}` is required")]
    Missing { field: &'static str },
    #[error("`{field}` must be {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
    /// A syntax error in a field, `position` a byte offset into its text.
    #[error("`{field}` at byte {position}: {message}")]
    Syntax {
        field: &'static str,
        position: usize,
        message: String,
    },
    #[error("`condition`: the regex {pattern:?} does not compile: {message}")]
    Regex { pattern: String, message: String },
    #[error("`type`: unknown criterion type {0:?} (simple, regex, jsonpath or xpath)")]
    UnknownType(String),
    #[error("`context` is required for {0} criteria")]
    MissingContext(&'static str),
    /// A feature of the specification restmcp does not implement, named.
    #[error("{0}")]
    Unsupported(String),
}

enum Type {
    Simple,
    Of(Kind),
}

/// Parses a Criterion Object.
pub fn parse(object: &Value) -> Result<Criterion, CriterionError> {
    let Value::Object(fields) = object else {
        return Err(CriterionError::NotAnObject);
    };
    let condition = match fields.get("condition") {
        Some(Value::String(text)) => text.as_str(),
        Some(_) => return Err(wrong("condition", "a string")),
        None => return Err(CriterionError::Missing { field: "condition" }),
    };
    let context = match fields.get("context") {
        Some(Value::String(text)) => {
            Some(expression::parse(text).map_err(|e| CriterionError::Syntax {
                field: "context",
                position: e.position,
                message: e.message,
            })?)
        }
        Some(_) => return Err(wrong("context", "a runtime expression string")),
        None => None,
    };
    let kind = match criterion_type(fields.get("type"))? {
        Type::Simple => {
            let condition = condition::parse(condition).map_err(|e| syntax("condition", e))?;
            return Ok(Criterion::Simple { context, condition });
        }
        Type::Of(kind) => kind,
    };
    let name = match kind {
        Kind::Regex => "regex",
        Kind::JsonPath => "jsonpath",
    };
    let context = context.ok_or(CriterionError::MissingContext(name))?;
    let pieces = template::pieces(condition).map_err(|e| syntax("condition", e))?;
    if pieces
        .iter()
        .any(|piece| matches!(piece, Piece::Expression(_)))
    {
        return Ok(Criterion::Embedded {
            context,
            kind,
            condition: pieces,
            text: condition.to_string(),
        });
    }
    Ok(match kind {
        Kind::Regex => Criterion::Regex {
            context,
            pattern: compile_regex(condition)?,
        },
        Kind::JsonPath => Criterion::JsonPath {
            context,
            query: Arc::new(compile_jsonpath(condition)?),
            text: condition.to_string(),
        },
    })
}

fn wrong(field: &'static str, expected: &'static str) -> CriterionError {
    CriterionError::WrongType { field, expected }
}

fn syntax(field: &'static str, error: expression::ExpressionError) -> CriterionError {
    CriterionError::Syntax {
        field,
        position: error.position,
        message: error.message,
    }
}

fn compile_regex(pattern: &str) -> Result<Regex, CriterionError> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| CriterionError::Regex {
            pattern: pattern.to_string(),
            message: e.to_string(),
        })
}

fn compile_jsonpath(text: &str) -> Result<Query, CriterionError> {
    jsonpath::parse_query(text).map_err(|e| CriterionError::Syntax {
        field: "condition",
        position: e.byte(),
        message: format!("invalid JSONPath: {}", e.message()),
    })
}

/// The `type` field: a name, or an Expression Type Object (1.1.0; 1.0.1's "Criterion
/// Expression Type Object").
fn criterion_type(field: Option<&Value>) -> Result<Type, CriterionError> {
    let xpath = || CriterionError::Unsupported("xpath criteria are not supported".into());
    match field {
        None => Ok(Type::Simple),
        Some(Value::String(name)) => match name.as_str() {
            "simple" => Ok(Type::Simple),
            "regex" => Ok(Type::Of(Kind::Regex)),
            "jsonpath" => Ok(Type::Of(Kind::JsonPath)),
            "xpath" => Err(xpath()),
            other => Err(CriterionError::UnknownType(other.to_string())),
        },
        Some(Value::Object(object)) => {
            let version = object.get("version").and_then(Value::as_str);
            match object.get("type").and_then(Value::as_str) {
                Some("jsonpath") => match version {
                    None | Some("rfc9535") => Ok(Type::Of(Kind::JsonPath)),
                    Some(other) => Err(CriterionError::Unsupported(format!(
                        "JSONPath version {other:?} is not supported (only rfc9535)"
                    ))),
                },
                Some("xpath") => Err(xpath()),
                Some(other) => Err(CriterionError::UnknownType(other.to_string())),
                None => Err(CriterionError::Missing { field: "type.type" }),
            }
        }
        Some(_) => Err(wrong("type", "a string or an Expression Type Object")),
    }
}

/// The context's value, `None` when it has none or is `null` (the criterion then fails).
fn context_value(context: &Expression, scope: &dyn Resolve) -> Option<Value> {
    scope.resolve(context).filter(|value| !value.is_null())
}

fn regex_passes(pattern: &Regex, value: &Value) -> bool {
    pattern.is_match(&template::text_of(value))
}

fn jsonpath_passes(query: &Query, value: &Value) -> bool {
    !jsonpath::select(value, query).is_empty()
}

impl Criterion {
    /// Whether the criterion passes in `scope`; evaluation errors fail it.
    pub fn evaluate(&self, scope: &dyn Resolve) -> bool {
        match self {
            Criterion::Simple { condition, .. } => condition.evaluate(scope),
            Criterion::Regex { context, pattern } => {
                context_value(context, scope).is_some_and(|value| regex_passes(pattern, &value))
            }
            Criterion::JsonPath { context, query, .. } => {
                context_value(context, scope).is_some_and(|value| jsonpath_passes(query, &value))
            }
            Criterion::Embedded {
                context,
                kind,
                condition,
                ..
            } => {
                let Some(value) = context_value(context, scope) else {
                    return false;
                };
                let Ok(text) = template::render_pieces(condition, scope) else {
                    return false;
                };
                match kind {
                    Kind::Regex => compile_regex(&text).is_ok_and(|p| regex_passes(&p, &value)),
                    Kind::JsonPath => {
                        compile_jsonpath(&text).is_ok_and(|q| jsonpath_passes(&q, &value))
                    }
                }
            }
        }
    }

    /// Every runtime expression: the context first, then the condition's.
    pub fn expressions(&self) -> Vec<&Expression> {
        match self {
            Criterion::Simple { context, condition } => {
                context.iter().chain(condition.expressions()).collect()
            }
            Criterion::Regex { context, .. } | Criterion::JsonPath { context, .. } => {
                vec![context]
            }
            Criterion::Embedded {
                context, condition, ..
            } => std::iter::once(context)
                .chain(condition.iter().filter_map(|piece| match piece {
                    Piece::Expression(expression) => Some(expression),
                    Piece::Text(_) => None,
                }))
                .collect(),
        }
    }

    /// The criterion in one line, for messages: `$statusCode == 200`,
    /// `regex '^2\d{2}$' on $statusCode`, `jsonpath $.pets[*] on $response.body`.
    pub fn describe(&self) -> String {
        match self {
            Criterion::Simple { condition, .. } => condition.text().to_string(),
            Criterion::Regex { context, pattern } => {
                format!("regex '{}' on {context}", pattern.as_str())
            }
            Criterion::JsonPath { context, text, .. } => format!("jsonpath {text} on {context}"),
            Criterion::Embedded {
                context,
                kind: Kind::Regex,
                text,
                ..
            } => format!("regex '{text}' on {context}"),
            Criterion::Embedded {
                context,
                kind: Kind::JsonPath,
                text,
                ..
            } => format!("jsonpath {text} on {context}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::arazzo::testing::Scope;
    use serde_json::json;

    fn scope(body: Value) -> Scope {
        Scope(json!({
            "statusCode": 201,
            "inputs": {"expectedStatus": "ok", "statusPattern": "ok|fine", "nothing": null},
            "response": {"body": body}
        }))
    }

    fn criterion(object: Value) -> Criterion {
        parse(&object).unwrap_or_else(|e| panic!("{object}: {e}"))
    }

    fn passes(object: Value, body: Value) -> bool {
        criterion(object).evaluate(&scope(body))
    }

    fn jsonpath(condition: &str) -> Value {
        json!({"context": "$response.body", "condition": condition, "type": "jsonpath"})
    }

    fn refused(object: Value) -> CriterionError {
        parse(&object).expect_err(&object.to_string())
    }

    #[test]
    fn the_spec_examples_parse_and_evaluate() {
        assert!(passes(
            json!({"condition": "$statusCode == 201"}),
            json!({})
        ));
        let exact = json!({"context": "$statusCode", "condition": "^200$", "type": "regex"});
        assert!(!passes(exact, json!({})));
        let any_2xx = json!({"context": "$statusCode", "condition": "^2\\d{2}$", "type": "regex"});
        assert!(passes(any_2xx, json!({})));
        assert!(passes(jsonpath("$.pets[*]"), json!({"pets": [1]})));
        assert!(!passes(jsonpath("$.pets[*]"), json!({"pets": []})));
        assert!(passes(jsonpath("$.data[*]"), json!({"data": [{}]})));
    }

    #[test]
    fn jsonpath_follows_rfc_9535_where_the_spec_examples_mislead() {
        // The filter tests the root's children: the array, whose `pets` is nothing.
        let pets = "$[?count(@.pets) > 0]";
        assert!(!passes(jsonpath(pets), json!({"pets": [1, 2]})));
        assert!(passes(jsonpath(pets), json!([{"pets": [1]}])));
        // An absent member is not null, so the error response passes.
        let token = "$[?@.access_token != null]";
        assert!(passes(jsonpath(token), json!({"error": "invalid_grant"})));
    }

    #[test]
    fn a_regex_matches_anywhere_in_the_text_of_the_context() {
        let regex = |pattern: &str| json!({"context": "$response.body", "condition": pattern, "type": "regex"});
        assert!(passes(regex("ok"), json!("status: ok!")));
        assert!(!passes(regex("^ok$"), json!("status: ok!")));
        assert!(passes(regex(r#""id":7"#), json!({"id": 7})));
        assert!(passes(regex("^true$"), json!(true)));
    }

    #[test]
    fn a_null_or_missing_context_fails() {
        for condition in [
            jsonpath("$"),
            json!({"context": "$response.body", "condition": ".*", "type": "regex"}),
        ] {
            assert!(!passes(condition.clone(), Value::Null), "{condition}");
            let missing = json!({"statusCode": 200});
            assert!(!criterion(condition).evaluate(&Scope(missing)));
        }
    }

    #[test]
    fn embedded_expressions_are_written_in_before_compiling() {
        let status = jsonpath("$[?(@.status == \"{$inputs.expectedStatus}\")]");
        assert!(matches!(
            criterion(status.clone()),
            Criterion::Embedded {
                kind: Kind::JsonPath,
                ..
            }
        ));
        assert!(passes(status.clone(), json!([{"status": "ok"}])));
        assert!(!passes(status, json!([{"status": "bad"}])));
        let pattern = json!({
            "context": "$response.body.status",
            "condition": "^({$inputs.statusPattern})$",
            "type": "regex"
        });
        assert!(passes(pattern.clone(), json!({"status": "fine"})));
        assert!(!passes(pattern, json!({"status": "fine!"})));
        // unresolved, or not compiling once written in: fail
        let unresolved =
            json!({"context": "$response.body", "condition": "{$inputs.nope}", "type": "regex"});
        assert!(!passes(unresolved, json!("x")));
        let broken = json!({"context": "$response.body", "condition": "({$inputs.nothing}", "type": "regex"});
        assert!(!passes(broken, json!("x")));
    }

    #[test]
    fn a_simple_criterion_keeps_its_context_but_does_not_use_it() {
        let object = json!({"context": "$response.body#/missing", "condition": "$statusCode == 201", "type": "simple"});
        let parsed = criterion(object);
        assert!(parsed.evaluate(&scope(json!({}))));
        let listed: Vec<String> = parsed.expressions().iter().map(|e| e.to_string()).collect();
        assert_eq!(listed, ["$response.body#/missing", "$statusCode"]);
    }

    #[test]
    fn unsupported_kinds_are_refused_by_name() {
        let xpath =
            refused(json!({"context": "$response.body", "condition": "/a", "type": "xpath"}));
        assert_eq!(
            xpath,
            CriterionError::Unsupported("xpath criteria are not supported".into())
        );
        let typed_xpath = json!({"type": "xpath", "version": "xpath-30"});
        let typed =
            refused(json!({"context": "$response.body", "condition": "/a", "type": typed_xpath}));
        assert_eq!(typed.to_string(), "xpath criteria are not supported");
        let goessner =
            json!({"type": "jsonpath", "version": "draft-goessner-dispatch-jsonpath-00"});
        let old =
            refused(json!({"context": "$response.body", "condition": "$.a", "type": goessner}));
        assert!(
            matches!(&old, CriterionError::Unsupported(m) if m.contains("draft-goessner-dispatch-jsonpath-00")),
            "{old}"
        );
        let rfc = json!({"type": "jsonpath", "version": "rfc9535"});
        assert!(
            parse(&json!({"context": "$response.body", "condition": "$.a", "type": rfc})).is_ok()
        );
    }

    #[test]
    fn regexes_the_crate_cannot_compile_are_named() {
        for pattern in ["(?=a)b", "(a)\\1", "("] {
            let object = json!({"context": "$statusCode", "condition": pattern, "type": "regex"});
            match refused(object) {
                CriterionError::Regex {
                    pattern: named,
                    message,
                } => {
                    assert_eq!(named, pattern);
                    assert!(!message.is_empty());
                }
                other => panic!("{pattern}: {other}"),
            }
        }
    }

    #[test]
    fn field_errors_name_the_field_and_position() {
        assert_eq!(refused(json!("x")), CriterionError::NotAnObject);
        assert_eq!(
            refused(json!({})),
            CriterionError::Missing { field: "condition" }
        );
        assert_eq!(
            refused(json!({"condition": "$.a", "type": "jsonpath"})),
            CriterionError::MissingContext("jsonpath")
        );
        assert_eq!(
            refused(json!({"condition": "x", "type": "glob"})),
            CriterionError::UnknownType("glob".into())
        );
        assert!(matches!(
            refused(json!({"condition": "$statusCode == ", "context": "$statusCode"})),
            CriterionError::Syntax {
                field: "condition",
                position: 15,
                ..
            }
        ));
        assert!(matches!(
            refused(json!({"condition": "true", "context": "$foo"})),
            CriterionError::Syntax {
                field: "context",
                position: 0,
                ..
            }
        ));
        let path = refused(jsonpath("$.a["));
        assert!(
            matches!(
                path,
                CriterionError::Syntax {
                    field: "condition",
                    position: 4,
                    ..
                }
            ),
            "{path}"
        );
        assert!(
            path.to_string()
                .starts_with("`condition` at byte 4: invalid JSONPath")
        );
    }

    #[test]
    fn describe_spells_the_criterion_for_messages() {
        assert_eq!(
            criterion(json!({"condition": "$statusCode == 200"})).describe(),
            "$statusCode == 200"
        );
        let regex = json!({"context": "$statusCode", "condition": "^2\\d{2}$", "type": "regex"});
        assert_eq!(
            criterion(regex).describe(),
            "regex '^2\\d{2}$' on $statusCode"
        );
        assert_eq!(
            criterion(jsonpath("$.pets[*]")).describe(),
            "jsonpath $.pets[*] on $response.body"
        );
    }
}
