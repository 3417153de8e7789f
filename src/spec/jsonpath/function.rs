//! Function extensions (RFC 9535 §2.4): `length()`, `count()`, `match()`, `search()` and
//! `value()`; their calls parsed and checked for well-typedness (§2.4.3), their results
//! computed, and the I-Regexp patterns (RFC 9485) of `match()` and `search()` translated for
//! the `regex` crate.

use std::borrow::Cow;

use regex::Regex;
use serde_json::Value;

use super::eval::Eval;
use super::syntax::{Comparable, Function, Parser, PathError, Pattern, Query};

/// Function calls (§2.4), read where an operand starts with a function name.
impl Parser<'_> {
    /// §2.4 function expressions, from the `(` after the name; §2.4.3 well-typedness.
    pub(super) fn function(&mut self, name: &str, start: usize) -> Result<Function, PathError> {
        self.expect('(')?;
        self.enter()?;
        let mut args = Vec::new();
        self.skip_blank();
        if !self.eat(')') {
            loop {
                let arg_start = self.pos;
                args.push((self.operand()?, arg_start));
                self.skip_blank();
                if self.eat(',') {
                    self.skip_blank();
                    continue;
                }
                if self.eat(')') {
                    break;
                }
                return Err(self.expected("',' or ')'"));
            }
        }
        self.leave();
        let given = args.len();
        let arity = |n: usize| -> Result<(), PathError> {
            if given == n {
                Ok(())
            } else {
                Err(PathError {
                    byte: start,
                    message: format!(
                        "{name}() takes {n} argument{}, not {}",
                        if n == 1 { "" } else { "s" },
                        given
                    ),
                })
            }
        };
        let mut args = args.into_iter();
        match name {
            "length" => {
                arity(1)?;
                let (arg, at) = next_arg(&mut args, start)?;
                Ok(Function::Length(Box::new(value_arg(arg, at, name)?)))
            }
            "count" | "value" => {
                arity(1)?;
                let (arg, at) = next_arg(&mut args, start)?;
                let query = nodes_arg(arg, at, name)?;
                Ok(if name == "count" {
                    Function::Count(query)
                } else {
                    Function::Value(query)
                })
            }
            "match" | "search" => {
                arity(2)?;
                let whole = name == "match";
                let (subject, at) = next_arg(&mut args, start)?;
                let subject = value_arg(subject, at, name)?;
                let (pattern, at) = next_arg(&mut args, start)?;
                let pattern = match value_arg(pattern, at, name)? {
                    Comparable::Literal(Value::String(text)) => {
                        Pattern::Fixed(compile_iregexp(&text, whole))
                    }
                    other => Pattern::Dynamic(Box::new(other)),
                };
                Ok(Function::Regex {
                    whole,
                    subject: Box::new(subject),
                    pattern,
                })
            }
            _ => Err(PathError {
                byte: start,
                message: format!(
                    "unsupported function {name}() (supported: length, count, match, search, value)"
                ),
            }),
        }
    }
}

fn next_arg(
    args: &mut impl Iterator<Item = (Comparable, usize)>,
    start: usize,
) -> Result<(Comparable, usize), PathError> {
    args.next().ok_or(PathError {
        byte: start,
        message: "missing argument".into(),
    })
}

/// §2.4.3: a ValueType parameter takes a literal, a singular query or a ValueType function.
fn value_arg(arg: Comparable, at: usize, name: &str) -> Result<Comparable, PathError> {
    match arg {
        Comparable::Query(ref query) if !query.is_singular() => Err(PathError {
            byte: at,
            message: format!(
                "{name}() needs a single value here; this query can select several nodes"
            ),
        }),
        Comparable::Function(ref function) if function.returns_logical() => Err(PathError {
            byte: at,
            message: format!(
                "{name}() needs a value here, but {}() returns a logical result",
                function.name()
            ),
        }),
        arg => Ok(arg),
    }
}

/// §2.4.3: a NodesType parameter takes a query.
fn nodes_arg(arg: Comparable, at: usize, name: &str) -> Result<Query, PathError> {
    match arg {
        Comparable::Query(query) => Ok(query),
        _ => Err(PathError {
            byte: at,
            message: format!("{name}() needs a query ('@…' or '$…') as its argument"),
        }),
    }
}

/// RFC 9485 I-Regexp on the `regex` crate: `.` becomes `[^\n\r]` outside classes (§5.4),
/// `&` and `~` are escaped inside classes (the crate gives `&&` and `~~` meanings I-Regexp
/// lacks), and `match()` anchors the whole string. `None` for a pattern that does not
/// compile.
fn compile_iregexp(pattern: &str, whole: bool) -> Option<Regex> {
    let mut translated = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                translated.push('\\');
                translated.push(chars.next()?);
            }
            '[' if !in_class => {
                in_class = true;
                translated.push('[');
            }
            ']' if in_class => {
                in_class = false;
                translated.push(']');
            }
            '.' if !in_class => translated.push_str("[^\\n\\r]"),
            '&' | '~' if in_class => {
                translated.push('\\');
                translated.push(c);
            }
            c => translated.push(c),
        }
    }
    let source = if whole {
        format!("\\A(?:{translated})\\z")
    } else {
        translated
    };
    regex::RegexBuilder::new(&source)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// Function results (§2.4.4–§2.4.8).
impl<'a> Eval<'a> {
    pub(super) fn value_function(
        &self,
        function: &'a Function,
        current: &'a Value,
    ) -> Option<Cow<'a, Value>> {
        match function {
            // §2.4.4: characters of a string (Unicode scalar values), items of an array,
            // members of an object; Nothing otherwise.
            Function::Length(arg) => {
                let length = match self.comparable(arg, current)?.as_ref() {
                    Value::String(text) => text.chars().count(),
                    Value::Array(items) => items.len(),
                    Value::Object(map) => map.len(),
                    _ => return None,
                };
                Some(Cow::Owned(Value::from(length)))
            }
            // §2.4.5: the number of nodes.
            Function::Count(query) => Some(Cow::Owned(Value::from(
                self.query(query, current, false).len(),
            ))),
            // §2.4.8: the node's value when there is exactly one node, else Nothing.
            Function::Value(query) => match self.query(query, current, false).as_slice() {
                [only] => Some(Cow::Borrowed(only.value)),
                _ => None,
            },
            Function::Regex { .. } => None,
        }
    }

    /// §2.4.6 `match()` and §2.4.7 `search()`: false unless both arguments are strings and
    /// the pattern is valid.
    pub(super) fn logical_function(&self, function: &'a Function, current: &'a Value) -> bool {
        let Function::Regex {
            whole,
            subject,
            pattern,
        } = function
        else {
            return false;
        };
        let Some(subject) = self.comparable(subject, current) else {
            return false;
        };
        let Value::String(subject) = subject.as_ref() else {
            return false;
        };
        match pattern {
            Pattern::Fixed(Some(regex)) => regex.is_match(subject),
            Pattern::Fixed(None) => false,
            Pattern::Dynamic(pattern) => match self.comparable(pattern, current).as_deref() {
                Some(Value::String(text)) => {
                    compile_iregexp(text, *whole).is_some_and(|regex| regex.is_match(subject))
                }
                _ => false,
            },
        }
    }
}
