//! Test support: a [`Resolve`] over one JSON document laid out like the expressions
//! (`{"statusCode": 200, "response": {"body": …, "header": {…}}, "inputs": {…},
//! "steps": {"s": {"outputs": {…}}}, …}`), and a deterministic no-panic sweep of every
//! parser in this module over short strings built from a fixed alphabet.

use serde_json::{Map, Value};

use super::expression::{self, Expression, Part, Resolve, Source, apply_pointer, lookup};
use super::{condition, criterion, template};

pub(crate) struct Scope(pub Value);

fn map(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

impl Scope {
    fn source(&self, message: &str, source: &Source) -> Option<(Value, Option<String>)> {
        let message = self.0.get(message)?;
        let (found, pointer) = match source {
            Source::Header(name) => (
                map(message.get("header"))?
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, value)| value),
                None,
            ),
            Source::Query(name) => (message.get("query").and_then(|q| q.get(name)), None),
            Source::Path(name) => (message.get("path").and_then(|q| q.get(name)), None),
            Source::Body(pointer) => (message.get("body"), pointer.clone()),
        };
        Some((found?.clone(), pointer))
    }
}

impl Resolve for Scope {
    fn resolve(&self, expression: &Expression) -> Option<Value> {
        let root = &self.0;
        let named = |section: Option<&Value>, name: &str, pointer: &Option<String>| {
            lookup(map(section)?, name).map(|value| (value.clone(), pointer.clone()))
        };
        let (value, pointer) = match expression {
            Expression::Url => (root.get("url")?.clone(), None),
            Expression::Method => (root.get("method")?.clone(), None),
            Expression::StatusCode => (root.get("statusCode")?.clone(), None),
            Expression::Request(source) => self.source("request", source)?,
            Expression::Response(source) => self.source("response", source)?,
            Expression::Inputs { name, pointer } => named(root.get("inputs"), name, pointer)?,
            Expression::Outputs { name, pointer } => named(root.get("outputs"), name, pointer)?,
            Expression::Steps {
                step,
                output,
                pointer,
            } => named(
                root.pointer(&format!("/steps/{step}/outputs")),
                output,
                pointer,
            )?,
            Expression::Workflows {
                workflow,
                part,
                name,
                pointer,
            } => {
                let part = if *part == Part::Inputs {
                    "inputs"
                } else {
                    "outputs"
                };
                named(
                    root.pointer(&format!("/workflows/{workflow}/{part}")),
                    name,
                    pointer,
                )?
            }
            Expression::SourceDescriptions { name, reference } => (
                root.get("sourceDescriptions")?
                    .get(name)?
                    .get(reference)?
                    .clone(),
                None,
            ),
            Expression::Components { kind, name } => {
                (root.get("components")?.get(kind)?.get(name)?.clone(), None)
            }
        };
        match pointer {
            Some(pointer) => apply_pointer(&value, &pointer).cloned(),
            None => Some(value),
        }
    }
}

/// Pieces the sweep strings are made of: syntax that matters to the parsers, and
/// fragments that get a parse far enough to reach the deeper branches.
const ALPHABET: [&str; 40] = [
    "$",
    ".",
    "#",
    "/",
    "~",
    "~0",
    "{",
    "}",
    "{$",
    "'",
    "''",
    "\"",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "=",
    "==",
    "!",
    "&&",
    "||",
    " ",
    "0",
    "7",
    "-",
    "1.5e3",
    "a",
    "é",
    "$inputs.",
    "$response.body",
    "$response.header.",
    "$statusCode",
    "$steps.s.outputs.",
    "query.",
    "true",
    "null",
    "?",
    "@",
];

/// Deterministic pseudo-random numbers (a 64-bit LCG, Knuth's constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

#[test]
fn no_parser_panics_on_short_strings_and_parses_round_trip() {
    let mut random = Lcg(0x5eed);
    let scope = Scope(serde_json::json!({"statusCode": 200, "inputs": {"a": "x"}}));
    for _ in 0..20_000 {
        let text: String = (0..random.next(9))
            .map(|_| ALPHABET[random.next(ALPHABET.len())])
            .collect();
        if let Ok(parsed) = expression::parse(&text) {
            assert_eq!(
                expression::parse(&parsed.to_string()),
                Ok(parsed),
                "{text:?}"
            );
        }
        if let Ok(parsed) = condition::parse(&text) {
            parsed.evaluate(&scope);
        }
        if let Ok(compiled) = template::compile(&Value::String(text.clone())) {
            let _ = compiled.render(&scope);
        }
        for kind in ["simple", "regex", "jsonpath"] {
            let object =
                serde_json::json!({"context": "$inputs.a", "condition": text, "type": kind});
            if let Ok(parsed) = criterion::parse(&object) {
                parsed.evaluate(&scope);
            }
        }
    }
}
