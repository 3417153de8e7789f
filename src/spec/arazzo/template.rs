//! Values written in an Arazzo document (parameter `value`s, request `payload`s,
//! `outputs`): compiled once into a [`Template`], rendered against a [`Resolve`] per run.
//!
//! A JSON value is, recursively:
//!
//! * a **whole expression**: a string that parses entirely as a runtime expression
//!   (`"$inputs.count"`); it renders to the resolved value with its type ("Runtime
//!   expressions preserve the type of the referenced value");
//! * a **text** with embedded pieces: a string holding `{$…}` (`"Bearer
//!   {$steps.login.outputs.token}"`); it renders to a string, each piece converted as 1.1.0
//!   says: a string as is, any other scalar as its JSON text, an object or array
//!   "serialized as JSON per RFC 8259" (compact);
//! * an array or object holding either of these, rendered member by member;
//! * anything else is a literal, kept as written.
//!
//! Decisions (the spec does not say):
//!
//! * `{` starts an embedded expression only when `$` follows it, so JSON written in a
//!   string (`"{\"id\": \"{$inputs.id}\"}"`, as `bnpl-arazzo.yaml` does) keeps its
//!   braces. A `{$` whose expression does not parse, or is not closed by `}`, is an error.
//! * A string starting with `$` that does not parse as an expression is an error when
//!   its first word is one of the expression roots (`$inputs.`, `$statusCode`, …,
//!   `$message`, `$self`): `"$input.x"` aside, it was meant as one. Otherwise (`"$5 off"`,
//!   `"$USD"`) it is a literal string, since a Parameter Object's `value` "can be a
//!   constant or a Runtime Expression" and nothing escapes a `$`.

use std::fmt;

use serde_json::Value;

use super::expression::{self, Expression, ExpressionError, Mode, ROOT_NAMES, Resolve};

/// A compiled value.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// Nothing to resolve inside.
    Literal(Value),
    /// A whole expression: renders to the resolved value, type kept.
    Expression(Expression),
    /// A string with embedded expressions: renders to a string.
    Text(Vec<Piece>),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

/// Part of a [`Template::Text`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Expression(Expression),
}

/// A string in the value that does not compile: where (a JSON pointer relative to the
/// value compiled, `""` for the value itself) and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{pointer}: {error}")]
pub struct TemplateError {
    pub pointer: String,
    pub error: ExpressionError,
}

/// An expression with no value when a template was rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct Unresolved(pub Expression);

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` has no value", self.0)
    }
}

/// Compiles a value from a document.
pub fn compile(value: &Value) -> Result<Template, TemplateError> {
    let mut pointer = String::new();
    compile_at(value, &mut pointer)
}

fn compile_at(value: &Value, pointer: &mut String) -> Result<Template, TemplateError> {
    let fail = |error, pointer: &String| TemplateError {
        pointer: pointer.clone(),
        error,
    };
    let template = match value {
        Value::String(text) => compile_string(text).map_err(|e| fail(e, pointer))?,
        Value::Array(items) => {
            let mut compiled = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{index}"));
                compiled.push(compile_at(item, pointer)?);
                pointer.truncate(len);
            }
            Template::Array(compiled)
        }
        Value::Object(members) => {
            let mut compiled = Vec::with_capacity(members.len());
            for (key, member) in members {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&crate::json::escape_token(key));
                compiled.push((key.clone(), compile_at(member, pointer)?));
                pointer.truncate(len);
            }
            Template::Object(compiled)
        }
        _ => return Ok(Template::Literal(value.clone())),
    };
    Ok(collapse(template, value))
}

/// A container with nothing to resolve inside is the literal it was compiled from.
fn collapse(template: Template, value: &Value) -> Template {
    let literal = match &template {
        Template::Array(items) => items.iter().all(|t| matches!(t, Template::Literal(_))),
        Template::Object(members) => members
            .iter()
            .all(|(_, t)| matches!(t, Template::Literal(_))),
        _ => false,
    };
    if literal {
        Template::Literal(value.clone())
    } else {
        template
    }
}

fn compile_string(text: &str) -> Result<Template, ExpressionError> {
    if text.starts_with('$') {
        match expression::parse(text) {
            Ok(expression) => return Ok(Template::Expression(expression)),
            Err(error) if meant_as_expression(text) => return Err(error),
            Err(_) => {}
        }
    }
    let pieces = pieces(text)?;
    Ok(match pieces.as_slice() {
        [] | [Piece::Text(_)] => Template::Literal(Value::String(text.to_string())),
        _ => Template::Text(pieces),
    })
}

/// Whether a `$` string's first word is an expression root.
fn meant_as_expression(text: &str) -> bool {
    let word = text[1..]
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default();
    ROOT_NAMES.contains(&word)
}

/// Splits a string into literal text and embedded `{$…}` expressions (a text without any
/// gives one piece, or none when empty).
pub fn pieces(text: &str) -> Result<Vec<Piece>, ExpressionError> {
    let mut pieces = Vec::new();
    let mut literal_start = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("{$") {
        let open = search + found;
        let (expression, end) = expression::parse_at(text, open + 1, Mode::Embedded)?;
        if !text[end..].starts_with('}') {
            let found = text[end..]
                .chars()
                .next()
                .map_or("the end".to_string(), |c| format!("{c:?}"));
            return Err(ExpressionError::new(
                end,
                format!(
                    "expected '}}' to close the embedded expression `{expression}`, found {found}"
                ),
            ));
        }
        if open > literal_start {
            pieces.push(Piece::Text(text[literal_start..open].to_string()));
        }
        pieces.push(Piece::Expression(expression));
        literal_start = end + 1;
        search = literal_start;
    }
    if literal_start < text.len() {
        pieces.push(Piece::Text(text[literal_start..].to_string()));
    }
    Ok(pieces)
}

/// The text of pieces rendered against `scope`.
pub fn render_pieces(pieces: &[Piece], scope: &dyn Resolve) -> Result<String, Unresolved> {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Expression(expression) => {
                let value = resolve(expression, scope)?;
                out.push_str(&text_of(&value));
            }
        }
    }
    Ok(out)
}

/// A value written into a string: strings as they are, anything else as compact JSON.
pub fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn resolve(expression: &Expression, scope: &dyn Resolve) -> Result<Value, Unresolved> {
    scope
        .resolve(expression)
        .ok_or_else(|| Unresolved(expression.clone()))
}

impl Template {
    /// The value this template stands for in `scope`.
    pub fn render(&self, scope: &dyn Resolve) -> Result<Value, Unresolved> {
        Ok(match self {
            Template::Literal(value) => value.clone(),
            Template::Expression(expression) => resolve(expression, scope)?,
            Template::Text(pieces) => Value::String(render_pieces(pieces, scope)?),
            Template::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| item.render(scope))
                    .collect::<Result<_, _>>()?,
            ),
            Template::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, member)| Ok((key.clone(), member.render(scope)?)))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }

    /// Every expression inside, in document order (for static checks).
    pub fn expressions(&self) -> Vec<&Expression> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a Expression>) {
        match self {
            Template::Literal(_) => {}
            Template::Expression(expression) => out.push(expression),
            Template::Text(pieces) => out.extend(pieces.iter().filter_map(|piece| match piece {
                Piece::Expression(expression) => Some(expression),
                Piece::Text(_) => None,
            })),
            Template::Array(items) => items.iter().for_each(|item| item.collect(out)),
            Template::Object(members) => members.iter().for_each(|(_, m)| m.collect(out)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::arazzo::testing::Scope;
    use serde_json::json;

    fn scope() -> Scope {
        Scope(json!({
            "statusCode": 201,
            "inputs": {"count": 3, "name": "Rex", "customer": {"firstName": "Ada"}, "none": null},
            "response": {"body": {"a": 1, "b": [1, 2]}},
            "steps": {"login": {"outputs": {"token": "t0k"}}}
        }))
    }

    fn render(value: Value) -> Result<Value, Unresolved> {
        compile(&value).unwrap().render(&scope())
    }

    #[test]
    fn a_whole_expression_keeps_the_type_of_its_value() {
        assert_eq!(render(json!("$inputs.count")), Ok(json!(3)));
        assert_eq!(render(json!("$statusCode")), Ok(json!(201)));
        assert_eq!(
            render(json!("$response.body")),
            Ok(json!({"a": 1, "b": [1, 2]}))
        );
        assert_eq!(render(json!("$inputs.none")), Ok(Value::Null));
    }

    #[test]
    fn embedded_expressions_make_a_string_with_objects_as_compact_json() {
        assert_eq!(render(json!("{$inputs.count}")), Ok(json!("3")));
        assert_eq!(
            render(json!("Bearer {$steps.login.outputs.token}")),
            Ok(json!("Bearer t0k"))
        );
        assert_eq!(
            render(json!("data={$response.body}&n={$inputs.none}")),
            Ok(json!(r#"data={"a":1,"b":[1,2]}&n=null"#))
        );
    }

    #[test]
    fn json_written_in_a_string_keeps_its_braces() {
        // As bnpl-arazzo.yaml writes its payload.
        let payload =
            json!("{\"firstName\": \"{$inputs.customer#/firstName}\", \"n\": {$inputs.count}}");
        assert_eq!(
            render(payload),
            Ok(json!("{\"firstName\": \"Ada\", \"n\": 3}"))
        );
        // 1.1.0's own form-body example leaves a `}` unopened: it is text.
        let typo = json!("code={$inputs.name}&scope=$inputs.scope}");
        assert_eq!(render(typo), Ok(json!("code=Rex&scope=$inputs.scope}")));
    }

    #[test]
    fn containers_render_member_by_member_and_literals_stay_literal() {
        let value =
            json!({"pet": {"name": "$inputs.name", "tags": ["x", "$inputs.count"]}, "n": 1});
        assert_eq!(
            render(value),
            Ok(json!({"pet": {"name": "Rex", "tags": ["x", 3]}, "n": 1}))
        );
        let literal = json!({"a": [1, "x", {"b": null}], "price": "$5 off"});
        assert_eq!(compile(&literal), Ok(Template::Literal(literal.clone())));
    }

    #[test]
    fn a_dollar_string_is_an_expression_only_when_it_names_a_root() {
        for literal in ["$5 off", "$USD", "$", "$input.x", "US$ 5"] {
            assert_eq!(
                compile(&json!(literal)),
                Ok(Template::Literal(json!(literal))),
                "{literal}"
            );
        }
        let error = compile(&json!("$inputs")).unwrap_err();
        assert_eq!((error.pointer.as_str(), error.error.position), ("", 7));
        let error = compile(&json!("$inputs.a b")).unwrap_err();
        assert_eq!(error.error.position, 9);
        let error = compile(&json!("$self")).unwrap_err();
        assert!(error.error.message.contains("not supported"));
    }

    #[test]
    fn a_bad_string_is_located_by_pointer_and_byte() {
        let error = compile(&json!({"a": [0, {"b/c": "x {$inputs.n"}]})).unwrap_err();
        assert_eq!(error.pointer, "/a/1/b~1c");
        assert_eq!(error.error.position, 12);
        assert!(error.error.message.contains("expected '}'"), "{error}");
        let error = compile(&json!(["ok", "see {$foo.bar}"])).unwrap_err();
        assert_eq!((error.pointer.as_str(), error.error.position), ("/1", 5));
        assert!(
            error
                .to_string()
                .starts_with("/1: unknown runtime expression")
        );
    }

    #[test]
    fn an_unresolved_expression_is_named() {
        let missing = render(json!({"x": "id={$inputs.missing#/a}"})).unwrap_err();
        assert_eq!(missing.to_string(), "`$inputs.missing#/a` has no value");
    }

    #[test]
    fn expressions_are_listed_in_document_order() {
        let template = compile(&json!({"a": "$statusCode", "b": ["{$inputs.x}-{$url}"]})).unwrap();
        let listed: Vec<String> = template
            .expressions()
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(listed, ["$statusCode", "$inputs.x", "$url"]);
    }
}
