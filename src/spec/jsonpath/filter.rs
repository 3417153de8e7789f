//! Filter expressions (RFC 9535 §2.3.5): the `?` selector's logical expressions (`||`,
//! `&&`, `!`, parentheses), existence tests and comparisons. Their grammar extends the
//! [`Parser`] and their semantics the [`Eval`]uator; function calls inside them belong to
//! [`super::function`].

use std::borrow::Cow;

use serde_json::{Number, Value};

use super::eval::Eval;
use super::syntax::{CmpOp, Comparable, Logical, Parser, PathError, Query};
use crate::json::{equal as json_equal, number_cmp};

/// Filter expressions (§2.3.5.1), read after the `?` of a filter selector.
impl Parser<'_> {
    /// §2.3.5.1 `logical-or-expr = logical-and-expr *(S "||" S logical-and-expr)`.
    pub(super) fn logical_or(&mut self) -> Result<Logical, PathError> {
        self.chain("||", Self::logical_and, Logical::Or)
    }

    /// §2.3.5.1 `logical-and-expr = basic-expr *(S "&&" S basic-expr)`.
    fn logical_and(&mut self) -> Result<Logical, PathError> {
        self.chain("&&", Self::basic, Logical::And)
    }

    /// `item *(S operator S item)`: one item as it is, several joined by `join`.
    fn chain(
        &mut self,
        operator: &str,
        item: fn(&mut Self) -> Result<Logical, PathError>,
        join: fn(Vec<Logical>) -> Logical,
    ) -> Result<Logical, PathError> {
        let mut items = vec![item(self)?];
        loop {
            let save = self.pos;
            self.skip_blank();
            if self.eat_str(operator) {
                self.skip_blank();
                items.push(item(self)?);
            } else {
                self.pos = save;
                break;
            }
        }
        Ok(if items.len() == 1 {
            items.swap_remove(0)
        } else {
            join(items)
        })
    }

    /// §2.3.5.1 `basic-expr = paren-expr / comparison-expr / test-expr`.
    fn basic(&mut self) -> Result<Logical, PathError> {
        if self.peek() == Some('!') && self.peek_second() != Some('=') {
            self.pos += 1;
            self.skip_blank();
            let negated = if self.peek() == Some('(') {
                self.parenthesized()?
            } else {
                let start = self.pos;
                let operand = self.operand()?;
                let test = self.test(operand, start)?;
                let save = self.pos;
                self.skip_blank();
                if self.comparison_op().is_some() {
                    return Err(PathError {
                        byte: start,
                        message: "'!' cannot negate a comparison without parentheses; \
                                  write !(… == …)"
                            .into(),
                    });
                }
                self.pos = save;
                test
            };
            return Ok(Logical::Not(Box::new(negated)));
        }
        if self.peek() == Some('(') {
            return self.parenthesized();
        }
        let left_start = self.pos;
        let left = self.operand()?;
        let save = self.pos;
        self.skip_blank();
        if let Some(op) = self.comparison_op() {
            self.skip_blank();
            let right_start = self.pos;
            let right = self.operand()?;
            let left = comparable(left, left_start)?;
            let right = comparable(right, right_start)?;
            return Ok(Logical::Compare(Box::new(left), op, Box::new(right)));
        }
        self.pos = save;
        self.test(left, left_start)
    }

    /// §2.3.5.1 `paren-expr`, from its `(`.
    fn parenthesized(&mut self) -> Result<Logical, PathError> {
        self.expect('(')?;
        self.enter()?;
        self.skip_blank();
        let inner = self.logical_or()?;
        self.skip_blank();
        self.expect(')')?;
        self.leave();
        Ok(inner)
    }

    /// §2.3.5.1 `test-expr`: an existence test or a LogicalType function (§2.4.3).
    fn test(&self, operand: Comparable, start: usize) -> Result<Logical, PathError> {
        match operand {
            Comparable::Query(query) => Ok(Logical::Exists(query)),
            Comparable::Function(function) if function.returns_logical() => {
                Ok(Logical::Test(function))
            }
            Comparable::Function(function) => Err(PathError {
                byte: start,
                message: format!(
                    "{}() returns a value, which must be compared (e.g. {}(…) > 0)",
                    function.name(),
                    function.name()
                ),
            }),
            Comparable::Literal(_) => Err(PathError {
                byte: start,
                message: "a literal on its own is not a test; compare it with something".into(),
            }),
        }
    }

    fn comparison_op(&mut self) -> Option<CmpOp> {
        for (text, op) in [
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ] {
            if self.eat_str(text) {
                return Some(op);
            }
        }
        None
    }

    /// A query, a literal or a function call; what it may be is checked by the caller.
    pub(super) fn operand(&mut self) -> Result<Comparable, PathError> {
        match self.peek() {
            Some('@') => {
                self.pos += 1;
                let segments = self.segments()?;
                Ok(Comparable::Query(Query {
                    absolute: false,
                    segments,
                }))
            }
            Some('$') => {
                self.pos += 1;
                let segments = self.segments()?;
                Ok(Comparable::Query(Query {
                    absolute: true,
                    segments,
                }))
            }
            Some(quote @ ('\'' | '"')) => {
                self.pos += 1;
                Ok(Comparable::Literal(Value::String(
                    self.string_literal(quote)?,
                )))
            }
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_lowercase() => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                {
                    self.pos += 1;
                }
                let name = self.source.get(start..self.pos).unwrap_or("");
                if self.peek() == Some('(') {
                    return self.function(name, start).map(Comparable::Function);
                }
                match name {
                    "true" => Ok(Comparable::Literal(Value::Bool(true))),
                    "false" => Ok(Comparable::Literal(Value::Bool(false))),
                    "null" => Ok(Comparable::Literal(Value::Null)),
                    _ => Err(PathError {
                        byte: start,
                        message: format!(
                            "unknown name `{name}` (expected true, false, null or a function call)"
                        ),
                    }),
                }
            }
            _ => Err(self.expected("a query ('@' or '$'), a literal or a function")),
        }
    }

    /// §2.3.5.1 `number = (int / "-0") [ frac ] [ exp ]`.
    fn number(&mut self) -> Result<Comparable, PathError> {
        let start = self.pos;
        self.eat('-');
        let int_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let int = self.source.get(int_start..self.pos).unwrap_or("");
        if int.is_empty() {
            return Err(self.expected("a digit"));
        }
        if int.len() > 1 && int.starts_with('0') {
            return Err(PathError {
                byte: start,
                message: "a number must not have leading zeros".into(),
            });
        }
        if self.eat('.') {
            let frac_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == frac_start {
                return Err(self.expected("a digit after '.'"));
            }
        }
        if self.eat('e') || self.eat('E') {
            if !self.eat('+') {
                self.eat('-');
            }
            let exp_start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == exp_start {
                return Err(self.expected("a digit in the exponent"));
            }
        }
        let text = self.source.get(start..self.pos).unwrap_or("");
        match serde_json::from_str::<Number>(text) {
            Ok(number) => Ok(Comparable::Literal(Value::Number(number))),
            Err(_) => Err(PathError {
                byte: start,
                message: format!("number {text} is out of range"),
            }),
        }
    }
}

/// §2.3.5.1: a comparison's sides are literals, singular queries or ValueType functions.
fn comparable(operand: Comparable, at: usize) -> Result<Comparable, PathError> {
    match operand {
        Comparable::Query(ref query) if !query.is_singular() => Err(PathError {
            byte: at,
            message: "a query in a comparison must be singular (only names and indices)".into(),
        }),
        Comparable::Function(ref function) if function.returns_logical() => Err(PathError {
            byte: at,
            message: format!(
                "{}() returns a logical result, which cannot be compared",
                function.name()
            ),
        }),
        operand => Ok(operand),
    }
}

/// Filter expressions evaluated (§2.3.5.2).
impl<'a> Eval<'a> {
    /// §2.3.5.2 filter expressions, with `current` as `@`.
    pub(super) fn logical(&self, expression: &'a Logical, current: &'a Value) -> bool {
        match expression {
            Logical::Or(items) => items.iter().any(|item| self.logical(item, current)),
            Logical::And(items) => items.iter().all(|item| self.logical(item, current)),
            Logical::Not(inner) => !self.logical(inner, current),
            // §2.3.5.2.1: true when the query selects at least one node, whatever its value.
            Logical::Exists(query) => {
                if query.is_singular() {
                    self.singular(query, current).is_some()
                } else {
                    !self.query(query, current, false).is_empty()
                }
            }
            Logical::Test(function) => self.logical_function(function, current),
            Logical::Compare(left, op, right) => {
                let left = self.comparable(left, current);
                let right = self.comparable(right, current);
                compare(left.as_deref(), *op, right.as_deref())
            }
        }
    }

    /// A comparable's value; `None` is §2.4.1's "Nothing" (an empty nodelist).
    pub(super) fn comparable(
        &self,
        comparable: &'a Comparable,
        current: &'a Value,
    ) -> Option<Cow<'a, Value>> {
        match comparable {
            Comparable::Literal(value) => Some(Cow::Borrowed(value)),
            Comparable::Query(query) => self.singular(query, current).map(Cow::Borrowed),
            Comparable::Function(function) => self.value_function(function, current),
        }
    }
}

/// §2.3.5.2.2 comparisons; `None` is Nothing.
fn compare(left: Option<&Value>, op: CmpOp, right: Option<&Value>) -> bool {
    let equal = || match (left, right) {
        (None, None) => true,
        (Some(a), Some(b)) => json_equal(a, b),
        _ => false,
    };
    let less = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            number_cmp(x, y) == Some(std::cmp::Ordering::Less)
        }
        // Strings compare by Unicode scalar values, which is UTF-8 byte order.
        (Some(Value::String(x)), Some(Value::String(y))) => x < y,
        _ => false,
    };
    match op {
        CmpOp::Eq => equal(),
        CmpOp::Ne => !equal(),
        CmpOp::Lt => less(left, right),
        CmpOp::Le => less(left, right) || equal(),
        CmpOp::Gt => less(right, left),
        CmpOp::Ge => less(right, left) || equal(),
    }
}
