//! The `simple` condition language of Criterion Objects (`$statusCode == 200 &&
//! $response.body#/status == 'available'`): a recursive-descent parser into a small tree,
//! and its evaluation against a [`Resolve`]. Nothing is ever `eval`ed.
//!
//! Syntax (Arazzo 1.1.0 "Literals" and "Operators"; the same table in 1.0.1):
//!
//! * literals: `true`, `false`, `null`, JSON numbers (`-1`, `2.5e3`), strings in single
//!   quotes with `''` for a quote (`'O''Brien'`); double quotes are refused (strings "MUST
//!   use single quotes");
//! * runtime expressions as operands (see [`super::expression`] for where one ends),
//!   optionally followed by `[n]` (0-based index) and `.name` (property) accessors;
//! * `!`, `<`, `<=`, `>`, `>=`, `==`, `!=`, `&&`, `||` and `( )`.
//!
//! The spec gives no precedence; this follows C and JavaScript, tightest first: `!`, then
//! `< <= > >=`, then `== !=`, then `&&`, then `||`; binary operators group left to right.
//! Parentheses and `!` nest at most 64 deep, and a condition has at most 256 binary
//! operators.
//!
//! Evaluation (1.1.0 "Simple Conditions"):
//!
//! * the condition passes only when it evaluates to `true`; `null` and `false` fail;
//! * `==` is loose: strings compare case-insensitively ("String comparisons MUST be case
//!   insensitive"); a number and a numeric string compare as numbers ("Numeric strings
//!   SHOULD be coerced"); `null` equals only `null`; values of other different types are
//!   unequal; arrays and objects compare structurally. `!=` is the negation of `==`, so
//!   `$response.body.data != null` passes when `data` is present and not null;
//! * `< <= > >=` order numbers (numeric strings coerced, with a number or with each
//!   other) and strings (case-insensitively); any other pair is a type error;
//! * `!`, `&&` and `||` take booleans, `null` counting as false; `&&` and `||` short-circuit;
//! * an evaluation error (an expression without a value, an index or property that is
//!   not there, a type error) makes the whole condition fail ("Evaluation Errors"),
//!   unless short-circuiting skipped the operand that would have raised it.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::expression::{self, Expression, ExpressionError, Mode, Resolve};

/// A parsed simple condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    text: String,
    root: Node,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Literal(Value),
    Operand(Expression, Vec<Access>),
    Not(Box<Node>),
    Binary(Op, Box<Node>, Box<Node>),
}

#[derive(Debug, Clone, PartialEq)]
enum Access {
    Index(usize),
    Property(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

const MAX_DEPTH: usize = 64;

/// Most binary operators in one condition: evaluation recurses along them.
const MAX_OPERATORS: usize = 256;

/// Parses a simple condition.
pub fn parse(text: &str) -> Result<Condition, ExpressionError> {
    let mut parser = Parser {
        text,
        pos: 0,
        depth: 0,
        operators: 0,
    };
    let root = parser.or()?;
    parser.blank();
    if parser.pos < text.len() {
        return Err(parser.error(format!(
            "expected an operator or the end of the condition, found {}",
            parser.found()
        )));
    }
    Ok(Condition {
        text: text.to_string(),
        root,
    })
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    depth: usize,
    operators: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn blank(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn error(&self, message: impl Into<String>) -> ExpressionError {
        ExpressionError::new(self.pos, message)
    }

    fn found(&self) -> String {
        match self.rest().chars().next() {
            Some(c) => format!("{c:?}"),
            None => "the end".into(),
        }
    }

    /// Eats `token` after blanks, unless `not_before` follows it (`!` of `!=`).
    fn eat(&mut self, token: &str, not_before: Option<char>) -> bool {
        self.blank();
        let rest = self.rest();
        let found = rest.starts_with(token)
            && not_before.is_none_or(|c| !rest[token.len()..].starts_with(c));
        if found {
            self.pos += token.len();
        }
        found
    }

    fn binary(
        &mut self,
        ops: &[(&str, Op)],
        next: fn(&mut Self) -> Result<Node, ExpressionError>,
    ) -> Result<Node, ExpressionError> {
        let mut left = next(self)?;
        'more: loop {
            for &(token, op) in ops {
                // `<` must not eat the `<` of `<=`, nor `>` that of `>=`.
                let guard = if token.len() == 1 { Some('=') } else { None };
                if self.eat(token, guard) {
                    self.operators += 1;
                    if self.operators > MAX_OPERATORS {
                        return Err(self.error(format!("more than {MAX_OPERATORS} operators")));
                    }
                    let right = next(self)?;
                    left = Node::Binary(op, Box::new(left), Box::new(right));
                    continue 'more;
                }
            }
            return Ok(left);
        }
    }

    fn or(&mut self) -> Result<Node, ExpressionError> {
        self.binary(&[("||", Op::Or)], Self::and)
    }

    fn and(&mut self) -> Result<Node, ExpressionError> {
        self.binary(&[("&&", Op::And)], Self::equality)
    }

    fn equality(&mut self) -> Result<Node, ExpressionError> {
        self.binary(&[("==", Op::Eq), ("!=", Op::Ne)], Self::relational)
    }

    fn relational(&mut self) -> Result<Node, ExpressionError> {
        let ops = [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)];
        self.binary(&ops, Self::unary)
    }

    fn unary(&mut self) -> Result<Node, ExpressionError> {
        if self.eat("!", Some('=')) {
            self.nest(|p| Ok(Node::Not(Box::new(p.unary()?))))
        } else {
            self.primary()
        }
    }

    fn nest(
        &mut self,
        inner: impl FnOnce(&mut Self) -> Result<Node, ExpressionError>,
    ) -> Result<Node, ExpressionError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nested more than {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let node = inner(self);
        self.depth -= 1;
        node
    }

    fn primary(&mut self) -> Result<Node, ExpressionError> {
        self.blank();
        let Some(c) = self.rest().chars().next() else {
            return Err(self.error("expected a value, found the end of the condition"));
        };
        match c {
            '(' => {
                let open = self.pos;
                self.pos += 1;
                let inner = self.nest(Self::or)?;
                if !self.eat(")", None) {
                    return Err(ExpressionError::new(
                        self.pos,
                        format!(
                            "expected ')' to close the '(' at byte {open}, found {}",
                            self.found()
                        ),
                    ));
                }
                Ok(inner)
            }
            '$' => self.operand(),
            '\'' => self.string(),
            '"' => Err(self.error("strings are written in single quotes ('…')")),
            '-' | '0'..='9' => self.number(),
            c if c.is_ascii_alphabetic() => self.word(),
            _ => Err(self.error(format!("expected a value, found {c:?}"))),
        }
    }

    fn operand(&mut self) -> Result<Node, ExpressionError> {
        let (expression, end) = expression::parse_at(self.text, self.pos, Mode::Condition)?;
        self.pos = end;
        let mut accesses = Vec::new();
        loop {
            if self.rest().starts_with('[') {
                self.pos += 1;
                let digits = self.rest().len()
                    - self
                        .rest()
                        .trim_start_matches(|c: char| c.is_ascii_digit())
                        .len();
                let index = self.rest()[..digits].parse::<usize>().map_err(|_| {
                    self.error(format!(
                        "expected an index (0, 1, …), found {}",
                        self.found()
                    ))
                })?;
                self.pos += digits;
                if !self.rest().starts_with(']') {
                    return Err(self.error(format!("expected ']', found {}", self.found())));
                }
                self.pos += 1;
                accesses.push(Access::Index(index));
            } else if self.rest().starts_with('.') {
                self.pos += 1;
                let len = self.rest().len()
                    - self
                        .rest()
                        .trim_start_matches(|c: char| {
                            c.is_ascii_alphanumeric() || c == '_' || c == '-'
                        })
                        .len();
                if len == 0 {
                    return Err(
                        self.error(format!("expected a property name, found {}", self.found()))
                    );
                }
                accesses.push(Access::Property(self.rest()[..len].to_string()));
                self.pos += len;
            } else {
                return Ok(Node::Operand(expression, accesses));
            }
        }
    }

    fn string(&mut self) -> Result<Node, ExpressionError> {
        let open = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(end) = self.rest().find('\'') else {
                return Err(ExpressionError::new(open, "unterminated string"));
            };
            value.push_str(&self.rest()[..end]);
            self.pos += end + 1;
            if self.rest().starts_with('\'') {
                value.push('\'');
                self.pos += 1;
            } else {
                return Ok(Node::Literal(Value::String(value)));
            }
        }
    }

    fn number(&mut self) -> Result<Node, ExpressionError> {
        let start = self.pos;
        let len = self.rest().len()
            - self
                .rest()
                .trim_start_matches(|c: char| c.is_ascii_digit() || "+-.eE".contains(c))
                .len();
        let text = &self.rest()[..len];
        match text.parse::<Number>() {
            Ok(number) => {
                self.pos += len;
                Ok(Node::Literal(Value::Number(number)))
            }
            Err(_) => Err(ExpressionError::new(
                start,
                format!("invalid number {text:?}"),
            )),
        }
    }

    fn word(&mut self) -> Result<Node, ExpressionError> {
        let start = self.pos;
        let len = self.rest().len()
            - self
                .rest()
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .len();
        let word = &self.rest()[..len];
        let value = match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            _ => {
                return Err(ExpressionError::new(
                    start,
                    format!(
                        "unexpected word {word:?}: a value is true, false, null, a number, \
                         a 'string' or a $expression"
                    ),
                ));
            }
        };
        self.pos += len;
        Ok(Node::Literal(value))
    }
}

/// Why an evaluation failed (the condition then fails).
#[derive(Debug)]
enum Failure {
    Unresolved,
    Type,
}

impl Condition {
    /// Whether the condition passes in `scope`; any evaluation error fails it.
    pub fn evaluate(&self, scope: &dyn Resolve) -> bool {
        matches!(value(&self.root, scope), Ok(Value::Bool(true)))
    }

    /// Every runtime expression in the condition, left to right.
    pub fn expressions(&self) -> Vec<&Expression> {
        let mut out = Vec::new();
        collect(&self.root, &mut out);
        out
    }

    /// The condition as written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn collect<'a>(node: &'a Node, out: &mut Vec<&'a Expression>) {
    match node {
        Node::Literal(_) => {}
        Node::Operand(expression, _) => out.push(expression),
        Node::Not(inner) => collect(inner, out),
        Node::Binary(_, left, right) => {
            collect(left, out);
            collect(right, out);
        }
    }
}

fn value(node: &Node, scope: &dyn Resolve) -> Result<Value, Failure> {
    match node {
        Node::Literal(value) => Ok(value.clone()),
        Node::Operand(expression, accesses) => {
            let mut value = scope.resolve(expression).ok_or(Failure::Unresolved)?;
            for access in accesses {
                value = match (access, value) {
                    (Access::Index(i), Value::Array(mut items)) if *i < items.len() => {
                        items.swap_remove(*i)
                    }
                    (Access::Property(name), Value::Object(mut members)) => {
                        members.remove(name).ok_or(Failure::Unresolved)?
                    }
                    _ => return Err(Failure::Unresolved),
                };
            }
            Ok(value)
        }
        Node::Not(inner) => Ok(Value::Bool(!truth(&value(inner, scope)?)?)),
        Node::Binary(Op::And, left, right) => Ok(Value::Bool(
            truth(&value(left, scope)?)? && truth(&value(right, scope)?)?,
        )),
        Node::Binary(Op::Or, left, right) => Ok(Value::Bool(
            truth(&value(left, scope)?)? || truth(&value(right, scope)?)?,
        )),
        Node::Binary(op, left, right) => {
            let (left, right) = (value(left, scope)?, value(right, scope)?);
            compare(*op, &left, &right).map(Value::Bool)
        }
    }
}

fn truth(value: &Value) -> Result<bool, Failure> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(Failure::Type),
    }
}

fn compare(op: Op, left: &Value, right: &Value) -> Result<bool, Failure> {
    Ok(match op {
        Op::Eq => equal(left, right),
        Op::Ne => !equal(left, right),
        Op::Lt => order(left, right)? == Ordering::Less,
        Op::Le => order(left, right)? != Ordering::Greater,
        Op::Gt => order(left, right)? == Ordering::Greater,
        Op::Ge => order(left, right)? != Ordering::Less,
        Op::And | Op::Or => return Err(Failure::Type),
    })
}

/// A string that holds a JSON number (surrounding blanks allowed).
fn numeric(text: &str) -> Option<Number> {
    text.trim().parse::<Number>().ok()
}

fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::String(a), Value::String(b)) => a.to_lowercase() == b.to_lowercase(),
        (Value::Number(a), Value::Number(b)) => numbers(a, b) == Ordering::Equal,
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            numeric(s).is_some_and(|s| numbers(n, &s) == Ordering::Equal)
        }
        _ => crate::json::equal(left, right),
    }
}

fn order(left: &Value, right: &Value) -> Result<Ordering, Failure> {
    let number = |value: &Value| match value {
        Value::Number(n) => Some(n.clone()),
        Value::String(s) => numeric(s),
        _ => None,
    };
    if let (Some(a), Some(b)) = (number(left), number(right)) {
        return Ok(numbers(&a, &b));
    }
    match (left, right) {
        (Value::String(a), Value::String(b)) => Ok(a.to_lowercase().cmp(&b.to_lowercase())),
        _ => Err(Failure::Type),
    }
}

/// Numeric order, exact for integers.
fn numbers(a: &Number, b: &Number) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::arazzo::testing::Scope;
    use serde_json::json;

    fn scope() -> Scope {
        Scope(json!({
            "statusCode": 200,
            "inputs": {"threshold": 2, "flag": true, "none": null, "name": "O'Brien"},
            "response": {
                "header": {"X-Count": "5", "X-Rate-Limit": "10"},
                "body": {
                    "status": "placed", "count": 3, "data": [1], "nothing": null,
                    "items": [{"id": 7, "name": "Rex"}, {"id": 8, "name": "Fido"}]
                }
            }
        }))
    }

    fn passes(text: &str) -> bool {
        parse(text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .evaluate(&scope())
    }

    fn error(text: &str) -> ExpressionError {
        parse(text).expect_err(text)
    }

    #[test]
    fn the_examples_of_both_versions_parse_and_hold() {
        // versions/1.1.0.md and 1.0.1.md, every simple condition they write.
        assert!(passes("$statusCode == 200"));
        assert!(passes("$response.body.count > $inputs.threshold"));
        assert!(passes("$statusCode == 200 && $response.body.data != null"));
        assert!(!passes("$statusCode == 401"));
        assert!(!passes("$statusCode == 503"));
        assert!(!passes("$response.body#/0 == null"));
    }

    #[test]
    fn string_comparison_is_case_insensitive() {
        assert!(passes("$response.body#/status == 'PLACED'"));
        assert!(!passes("$response.body#/status != 'Placed'"));
        assert!(passes("'b' > 'A'"));
        assert!(passes("'ÉTÉ' == 'été'"));
    }

    #[test]
    fn a_doubled_quote_is_a_quote() {
        assert!(passes("$inputs.name == 'O''Brien'"));
        assert!(passes("'''' == '''' && '' == ''"));
        assert_eq!(error("$inputs.name == 'O''Brien").position, 16);
        assert_eq!(error("$inputs.name == \"x\"").position, 16);
    }

    #[test]
    fn numeric_strings_are_compared_as_numbers() {
        assert!(passes("$response.header.x-count == 5"));
        assert!(passes("$response.header.X-Rate-Limit>=10"));
        assert!(passes("$statusCode == '200'"));
        assert!(passes("'10' > '9'"));
        assert!(passes("200 == 200.0 && -1 < 0 && 2.5e3 > 2000"));
        assert!(!passes("'abc' == 0"));
    }

    #[test]
    fn null_equals_only_null() {
        assert!(passes("null == null"));
        assert!(passes("$response.body#/nothing == null"));
        assert!(!passes("0 == null") && !passes("'' == null") && !passes("false == null"));
        assert!(passes("0 != null"));
        // A null condition fails, a false one too.
        assert!(!passes("$inputs.none") && !passes("false") && passes("$inputs.flag"));
    }

    #[test]
    fn an_evaluation_error_fails_the_whole_condition() {
        assert!(!passes("$inputs.missing == 1"));
        assert!(!passes("$inputs.missing != 1"));
        assert!(
            !passes("!($inputs.missing == 1)"),
            "the error is not negated"
        );
        assert!(!passes("$statusCode < 'abc'"));
        assert!(!passes("$statusCode < true"));
        assert!(!passes("!$statusCode"));
        assert!(!passes("$statusCode && true"));
        assert!(!passes("$response.body#/items[5].id == 7"));
        // unless short-circuiting never reaches it
        assert!(passes("true || $inputs.missing == 1"));
        assert!(!passes("false && $inputs.missing == 1"));
    }

    #[test]
    fn precedence_is_not_then_relational_then_equality_then_and_then_or() {
        assert!(passes("true || false && false"));
        assert!(passes("false && false || true"));
        assert!(!passes("(true || false) && false"));
        assert!(passes("!false == true"));
        assert!(passes("1 < 2 == true"));
        assert!(passes("!!true"));
        assert!(passes("$statusCode==200&&!($inputs.threshold>5)"));
    }

    #[test]
    fn indexes_and_properties_apply_to_expression_values() {
        assert!(passes("$response.body#/items[0].id == 7"));
        assert!(passes("$response.body.items[1].name == 'fido'"));
        assert!(passes("$response.body.items[1] != null"));
        assert!(!passes("$response.body.items[0].nope == 7"));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let end = error("$statusCode == ");
        assert_eq!(end.position, 15);
        assert!(end.message.contains("end"), "{end}");
        assert_eq!(error("$foo.bar == 1").position, 0);
        assert_eq!(error("$statusCode = 200").position, 12);
        assert_eq!(error("$statusCode == 200 200").position, 19);
        assert_eq!(error("($statusCode == 200").position, 19);
        assert_eq!(error("1.2.3 == 1").position, 0);
        assert_eq!(error("status == 1").position, 0);
        assert_eq!(error("$response.body#/a[x] == 1").position, 18);
        assert_eq!(error("").position, 0);
        let deep = format!("{}true{}", "(".repeat(100), ")".repeat(100));
        assert!(error(&deep).message.contains("nested"));
        assert!(passes(&format!("{}true{}", "(".repeat(60), ")".repeat(60))));
        let long = vec!["true"; 300].join(" && ");
        assert!(error(&long).message.contains("operators"));
        assert!(passes(&vec!["true"; 200].join(" && ")));
    }

    #[test]
    fn operators_need_no_blanks_around_expressions() {
        let parsed = parse("$inputs.flag&&$statusCode>=200||!$inputs.flag").unwrap();
        let listed: Vec<String> = parsed.expressions().iter().map(|e| e.to_string()).collect();
        assert_eq!(listed, ["$inputs.flag", "$statusCode", "$inputs.flag"]);
        assert!(parsed.evaluate(&scope()));
        assert_eq!(
            parsed.to_string(),
            "$inputs.flag&&$statusCode>=200||!$inputs.flag"
        );
    }
}
