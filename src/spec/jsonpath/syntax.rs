//! The query tree a parse produces (RFC 9535 §2.1–§2.5 and §2.3.5, §2.4 as types): a
//! [`Query`] of [`Segment`]s holding [`Selector`]s, filter expressions ([`Logical`],
//! [`Comparable`]) and function calls ([`Function`]); the [`PathError`] a parse fails with;
//! and the [`Parser`]'s reading position with the small steps every grammar file uses.
//!
//! A leaf: the grammar ([`super::parse`], [`super::filter`], [`super::function`]) and the
//! evaluation ([`super::eval`]) build on these types, and this file imports none of them.

use regex::Regex;
use serde_json::Value;

/// A query: `$` or `@` followed by segments (§2.1.1).
#[derive(Debug)]
pub struct Query {
    pub(super) absolute: bool,
    pub(super) segments: Vec<Segment>,
}

impl Query {
    /// True when the nodelist is in document order and free of duplicates by construction:
    /// no descendant segment, no bracket with several selectors, no backwards slice.
    pub(super) fn keeps_document_order(&self) -> bool {
        self.segments.iter().all(|segment| {
            !segment.descendant
                && match segment.selectors.as_slice() {
                    [Selector::Slice { step, .. }] => step.is_none_or(|step| step >= 0),
                    [_] => true,
                    _ => false,
                }
        })
    }

    /// §2.3.5.1: a singular query has only child segments of one name or index selector.
    pub(super) fn is_singular(&self) -> bool {
        self.segments.iter().all(|segment| {
            !segment.descendant
                && matches!(
                    segment.selectors.as_slice(),
                    [Selector::Name(_) | Selector::Index(_)]
                )
        })
    }
}

/// §2.5: a child segment (`.name`, `[…]`) or a descendant segment (`..name`, `..[…]`).
#[derive(Debug)]
pub(super) struct Segment {
    pub(super) descendant: bool,
    pub(super) selectors: Vec<Selector>,
}

/// §2.3 selectors.
#[derive(Debug)]
pub(super) enum Selector {
    Name(String),
    Wildcard,
    Index(i64),
    Slice {
        start: Option<i64>,
        end: Option<i64>,
        step: Option<i64>,
    },
    Filter(Box<Logical>),
}

/// A syntax error at a byte offset of the query.
#[derive(Debug)]
pub struct PathError {
    pub(super) byte: usize,
    pub(super) message: String,
}

impl PathError {
    /// The character at fault, counted from 1.
    pub fn position(&self, source: &str) -> usize {
        source.get(..self.byte).map_or(0, |s| s.chars().count()) + 1
    }

    /// `invalid JSONPath at character N: problem`.
    pub fn describe(&self, source: &str) -> String {
        format!(
            "invalid JSONPath at character {}: {}",
            self.position(source),
            self.message
        )
    }
    /// The byte offset of the character at fault.
    pub fn byte(&self) -> usize {
        self.byte
    }

    /// The problem, without its position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// §2.3.5.1 logical expressions.
#[derive(Debug)]
pub(super) enum Logical {
    Or(Vec<Logical>),
    And(Vec<Logical>),
    Not(Box<Logical>),
    /// §2.3.5.2.1 existence test.
    Exists(Query),
    /// A function returning LogicalType (`match()`, `search()`).
    Test(Function),
    Compare(Box<Comparable>, CmpOp, Box<Comparable>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// §2.3.5.1 comparable: a literal, a singular query or a ValueType function. While parsing
/// it also holds any query or function, checked when its use is known.
#[derive(Debug)]
pub(super) enum Comparable {
    Literal(Value),
    Query(Query),
    Function(Function),
}

/// §2.4 function extensions.
#[derive(Debug)]
pub(super) enum Function {
    /// §2.4.4 `length(ValueType) -> ValueType`.
    Length(Box<Comparable>),
    /// §2.4.5 `count(NodesType) -> ValueType`.
    Count(Query),
    /// §2.4.6 `match()` (`whole`) and §2.4.7 `search()`: `(ValueType, ValueType) ->
    /// LogicalType`.
    Regex {
        whole: bool,
        subject: Box<Comparable>,
        pattern: Pattern,
    },
    /// §2.4.8 `value(NodesType) -> ValueType`.
    Value(Query),
}

impl Function {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Function::Length(_) => "length",
            Function::Count(_) => "count",
            Function::Regex { whole: true, .. } => "match",
            Function::Regex { whole: false, .. } => "search",
            Function::Value(_) => "value",
        }
    }

    pub(super) fn returns_logical(&self) -> bool {
        matches!(self, Function::Regex { .. })
    }
}

#[derive(Debug)]
pub(super) enum Pattern {
    /// A string literal compiled once; `None` when it is not a valid pattern, which makes
    /// the function false for every node (§2.4.6).
    Fixed(Option<Regex>),
    Dynamic(Box<Comparable>),
}

/// Deepest nesting of parentheses, filters and function calls accepted.
const MAX_NESTING: usize = 64;

/// RFC 9535 §2.1.1 `B`: the blank characters.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

pub(super) struct Parser<'s> {
    pub(super) source: &'s str,
    /// Byte offset, always on a character boundary.
    pub(super) pos: usize,
    pub(super) depth: usize,
}

impl Parser<'_> {
    pub(super) fn rest(&self) -> &str {
        self.source.get(self.pos..).unwrap_or("")
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(super) fn peek_second(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    pub(super) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    pub(super) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub(super) fn eat_str(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    pub(super) fn skip_blank(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    pub(super) fn error_here(&self, message: impl Into<String>) -> PathError {
        PathError {
            byte: self.pos,
            message: message.into(),
        }
    }

    pub(super) fn expected_message(&self, what: &str) -> String {
        match self.peek() {
            None => format!("expected {what}"),
            Some(c) => format!("expected {what}, found '{c}'"),
        }
    }

    pub(super) fn expected(&self, what: &str) -> PathError {
        self.error_here(self.expected_message(what))
    }

    pub(super) fn expect(&mut self, c: char) -> Result<(), PathError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{c}'")))
        }
    }

    pub(super) fn enter(&mut self) -> Result<(), PathError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            Err(self.error_here(format!("nested deeper than {MAX_NESTING} levels")))
        } else {
            Ok(())
        }
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}
