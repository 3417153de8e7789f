//! Arazzo runtime expressions (`$statusCode`, `$response.body#/id`, `$steps.s.outputs.o`):
//! their syntax tree ([`Expression`]), the parser ([`parse`]), the canonical spelling
//! (`Display`), and the contract by which a caller supplies their values ([`Resolve`]).
//!
//! The grammar is the ABNF of Arazzo 1.1.0 ("Runtime Expressions"), used for every
//! document, 1.0.x included: it is a superset of 1.0.1's for everything an HTTP executor
//! reads (1.0.1 allows no `#/pointer` after `$inputs.x` or `$steps.s.outputs.x`, which
//! the official 1.0.0 example `bnpl-arazzo.yaml` nevertheless writes).
//!
//! Choices where the ABNF is silent or real documents go beyond it:
//!
//! * **Dotted body access.** `$response.body.count` (written in 1.1.0's own "Runtime
//!   Expressions in Conditions" and "Simple Conditions" examples, absent from its ABNF)
//!   is read as `$response.body#/count`; each `.name` (letters, digits, `-`, `_`) becomes
//!   one pointer segment. It prints back as `body#/count`.
//! * **Dots in names.** `input-name`, `output-name`, `workflow-field-name` and
//!   `component-name` are the ABNF's `identifier`, which allows dots, so
//!   `$steps.x.outputs.y.z` names the output `y.z` and `$inputs.customer.name` the input
//!   `customer.name`. Whether such a name means a declared key with a dot or a property of
//!   a declared value is for the resolver; [`lookup`] does both (exact key first).
//! * **`$components.inputs.<name>`** is accepted as in 1.0.1 (1.1.0's `component-type`
//!   dropped `inputs`).
//! * **Header names** are `token`s and case-insensitive: they are stored in ASCII lower
//!   case, so `$response.header.X-Rate` prints as `$response.header.x-rate`.
//! * **Empty names.** `name = *CHAR` allows `$request.query.`; an empty query, path or
//!   source-description reference is refused. An empty pointer (`body#`) is kept: it is
//!   RFC 6901's whole document.
//! * **Not supported:** `$message` and the `payload` source (AsyncAPI, 1.1.0) and `$self`
//!   are refused by name.
//! * **Where an expression ends** depends on where it is written ([`Mode`]): a whole value
//!   runs to the end of its text; an embedded `{$…}` stops at `}`; in a simple condition
//!   a query or path name, a pointer or a source-description reference stops at white
//!   space or at one of `( ) [ ] < > = ! & | '`, and a header token at white space or one
//!   of `! & | '` (token characters the condition operators use).

use std::fmt;

use serde_json::{Map, Value};

use crate::json::escape_token;

/// One runtime expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    /// `$url`
    Url,
    /// `$method`
    Method,
    /// `$statusCode`
    StatusCode,
    /// `$request.<source>`
    Request(Source),
    /// `$response.<source>`
    Response(Source),
    /// `$inputs.<name>[#pointer]`
    Inputs {
        name: String,
        pointer: Option<String>,
    },
    /// `$outputs.<name>[#pointer]`
    Outputs {
        name: String,
        pointer: Option<String>,
    },
    /// `$steps.<stepId>.outputs.<name>[#pointer]`
    Steps {
        step: String,
        output: String,
        pointer: Option<String>,
    },
    /// `$workflows.<workflowId>.inputs|outputs.<name>[#pointer]`
    Workflows {
        workflow: String,
        part: Part,
        name: String,
        pointer: Option<String>,
    },
    /// `$sourceDescriptions.<name>.<reference>`
    SourceDescriptions { name: String, reference: String },
    /// `$components.inputs|parameters|successActions|failureActions.<name>`
    Components { kind: String, name: String },
}

/// Where in a request or response a value is read.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A header, its name in ASCII lower case.
    Header(String),
    Query(String),
    Path(String),
    /// The body, or the part an RFC 6901 pointer (escaped text, `""` = whole) selects.
    Body(Option<String>),
}

/// Which half of a workflow `$workflows.<id>.…` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Inputs,
    Outputs,
}

/// A syntax error: a byte offset into the text given to the parser, and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at byte {position})")]
pub struct ExpressionError {
    pub position: usize,
    pub message: String,
}

impl ExpressionError {
    pub(crate) fn new(position: usize, message: impl Into<String>) -> Self {
        ExpressionError {
            position,
            message: message.into(),
        }
    }
}

/// Supplies the value of an expression, `None` when it has none (an absent header, a step
/// not run yet, a pointer that selects nothing). The value returned is the one the whole
/// expression denotes: pointers included ([`apply_pointer`] applies one).
pub trait Resolve {
    fn resolve(&self, expression: &Expression) -> Option<Value>;
}

/// The part of `value` an RFC 6901 pointer (escaped text, `""` = all of it) selects.
pub fn apply_pointer<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    value.pointer(pointer)
}

/// A name from an expression looked up in a map of declared names: the exact key first;
/// otherwise the longest declared key that is a dot-separated prefix of `name`, the rest
/// read as property names (and array indices) into its value. So `customer.name` finds
/// a key `customer.name`, else the member `name` of the key `customer`.
pub fn lookup<'m>(map: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    if let Some(value) = map.get(name) {
        return Some(value);
    }
    let dots = name
        .char_indices()
        .filter(|&(_, c)| c == '.')
        .map(|(i, _)| i);
    let mut cuts: Vec<usize> = dots.collect();
    cuts.reverse();
    cuts.into_iter().find_map(|cut| {
        let mut value = map.get(&name[..cut])?;
        for segment in name[cut + 1..].split('.') {
            value = match value {
                Value::Object(members) => members.get(segment)?,
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(value)
    })
}

/// Parses `text` as exactly one runtime expression.
pub fn parse(text: &str) -> Result<Expression, ExpressionError> {
    let (expression, end) = parse_at(text, 0, Mode::Whole)?;
    match text[end..].chars().next() {
        None => Ok(expression),
        Some(c) => Err(ExpressionError::new(
            end,
            format!("unexpected {c:?} after the expression `{expression}`"),
        )),
    }
}

/// Where an expression is written, which decides where it ends (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The whole of a value.
    Whole,
    /// Inside `{…}` in a string.
    Embedded,
    /// An operand of a simple condition.
    Condition,
}

/// Parses the expression starting at byte `start` of `text` (which must hold `$`),
/// returning it and the byte offset where it ends.
pub(crate) fn parse_at(
    text: &str,
    start: usize,
    mode: Mode,
) -> Result<(Expression, usize), ExpressionError> {
    let mut cursor = Cursor {
        text,
        pos: start,
        mode,
    };
    let expression = cursor.expression()?;
    Ok((expression, cursor.pos))
}

const ROOTS: &str = "$url, $method, $statusCode, $request., $response., $inputs., $outputs., \
                     $steps., $workflows., $sourceDescriptions. or $components.";

/// Root names that mark a string as meant to be an expression (see `template`).
pub(crate) const ROOT_NAMES: [&str; 13] = [
    "url",
    "method",
    "statusCode",
    "request",
    "response",
    "inputs",
    "outputs",
    "steps",
    "workflows",
    "sourceDescriptions",
    "components",
    "message",
    "self",
];

struct Cursor<'t> {
    text: &'t str,
    pos: usize,
    mode: Mode,
}

fn is_strict(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn error(&self, message: impl Into<String>) -> ExpressionError {
        ExpressionError::new(self.pos, message)
    }

    /// What is at the cursor, for messages.
    fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("{c:?}"),
            None => "the end".into(),
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        let found = self.rest().starts_with(literal);
        if found {
            self.pos += literal.len();
        }
        found
    }

    fn expect(&mut self, literal: &str) -> Result<(), ExpressionError> {
        if self.eat(literal) {
            Ok(())
        } else {
            Err(self.error(format!("expected {literal:?}, found {}", self.found())))
        }
    }

    /// The longest run of characters satisfying `keep` (possibly empty).
    fn take(&mut self, keep: impl Fn(char) -> bool) -> &str {
        let start = self.pos;
        let len = self
            .rest()
            .find(|c: char| !keep(c))
            .unwrap_or(self.rest().len());
        self.pos += len;
        &self.text[start..self.pos]
    }

    fn nonempty(
        &mut self,
        what: &str,
        keep: impl Fn(char) -> bool,
    ) -> Result<String, ExpressionError> {
        let at = self.pos;
        let taken = self.take(keep).to_string();
        if taken.is_empty() {
            return Err(ExpressionError::new(
                at,
                format!("expected {what}, found {}", self.found()),
            ));
        }
        Ok(taken)
    }

    /// `identifier-strict`: step and workflow ids, source names.
    fn strict(&mut self, what: &str) -> Result<String, ExpressionError> {
        self.nonempty(what, is_strict)
    }

    /// `identifier`: strict segments joined by single dots (a trailing dot is not taken).
    fn identifier(&mut self, what: &str) -> Result<String, ExpressionError> {
        let mut name = self.strict(what)?;
        while self.rest().starts_with('.') && self.rest()[1..].starts_with(is_strict) {
            self.pos += 1;
            name.push('.');
            name.push_str(self.take(is_strict));
        }
        Ok(name)
    }

    /// Whether `c` ends a free-form name or pointer in the current mode.
    fn ends_free(&self, c: char) -> bool {
        match self.mode {
            Mode::Whole | Mode::Embedded => c == '{' || c == '}',
            Mode::Condition => c.is_whitespace() || "()[]<>=!&|'{}".contains(c),
        }
    }

    /// `name = *CHAR` (query and path names, source references), required non-empty.
    fn free(&mut self, what: &str) -> Result<String, ExpressionError> {
        let at = self.pos;
        let end = self
            .rest()
            .find(|c| self.ends_free(c))
            .unwrap_or(self.rest().len());
        if end == 0 {
            return Err(ExpressionError::new(
                at,
                format!("expected {what}, found {}", self.found()),
            ));
        }
        self.pos += end;
        Ok(self.text[at..self.pos].to_string())
    }

    fn expression(&mut self) -> Result<Expression, ExpressionError> {
        let start = self.pos;
        self.expect("$")?;
        let root = self.take(|c| c.is_ascii_alphabetic()).to_string();
        let unknown = || {
            let hint = ROOT_NAMES
                .iter()
                .find(|name| name.eq_ignore_ascii_case(&root))
                .map(|name| format!(" (did you mean ${name}?)"))
                .unwrap_or_default();
            ExpressionError::new(
                start,
                format!("unknown runtime expression `${root}`{hint}: expected {ROOTS}"),
            )
        };
        let unsupported = |what: &str| {
            ExpressionError::new(start, format!("`${root}` ({what}) is not supported"))
        };
        match root.as_str() {
            "url" => Ok(Expression::Url),
            "method" => Ok(Expression::Method),
            "statusCode" => Ok(Expression::StatusCode),
            "request" => Ok(Expression::Request(self.dot_then(Self::source)?)),
            "response" => Ok(Expression::Response(self.dot_then(Self::source)?)),
            "inputs" | "outputs" => self.dot_then(|c| c.named(&root)),
            "steps" => self.dot_then(Self::steps),
            "workflows" => self.dot_then(Self::workflows),
            "sourceDescriptions" => self.dot_then(Self::source_description),
            "components" => self.dot_then(Self::components),
            "message" => Err(unsupported("AsyncAPI messages")),
            "self" => Err(unsupported("the document's own URI")),
            _ => Err(unknown()),
        }
    }

    fn dot_then<T>(
        &mut self,
        then: impl FnOnce(&mut Self) -> Result<T, ExpressionError>,
    ) -> Result<T, ExpressionError> {
        self.expect(".")?;
        then(self)
    }

    /// `#pointer`, if there is one.
    fn pointer(&mut self) -> Result<Option<String>, ExpressionError> {
        if !self.eat("#") {
            return Ok(None);
        }
        let start = self.pos;
        let end = self
            .rest()
            .find(|c| self.ends_free(c))
            .unwrap_or(self.rest().len());
        let pointer = &self.text[start..start + end];
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(self.error("a JSON pointer after '#' starts with '/'"));
        }
        let mut chars = pointer.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '~' && !matches!(chars.peek(), Some((_, '0' | '1'))) {
                return Err(ExpressionError::new(
                    start + i,
                    "'~' in a JSON pointer must be followed by 0 or 1",
                ));
            }
        }
        self.pos += end;
        Ok(Some(pointer.to_string()))
    }

    fn source(&mut self) -> Result<Source, ExpressionError> {
        let at = self.pos;
        let kind = self.take(|c| c.is_ascii_alphabetic()).to_string();
        match kind.as_str() {
            "header" => {
                self.expect(".")?;
                let condition = self.mode == Mode::Condition;
                let token = self.nonempty("a header name", |c| {
                    is_tchar(c) && !(condition && "!&|'".contains(c))
                })?;
                Ok(Source::Header(token.to_ascii_lowercase()))
            }
            "query" => Ok(Source::Query(self.dot_then(|c| c.free("a query name"))?)),
            "path" => Ok(Source::Path(self.dot_then(|c| c.free("a path name"))?)),
            "body" => self.body(),
            "payload" => Err(ExpressionError::new(
                at,
                "the `payload` source (AsyncAPI messages) is not supported",
            )),
            _ => Err(ExpressionError::new(
                at,
                format!("expected header., query., path. or body, found {kind:?}"),
            )),
        }
    }

    /// `body[#pointer]`, or the dotted form `body.a.b` read as `body#/a/b`.
    fn body(&mut self) -> Result<Source, ExpressionError> {
        let mut dotted = String::new();
        while self.rest().starts_with('.') && self.rest()[1..].starts_with(is_strict) {
            self.pos += 1;
            dotted.push('/');
            dotted.push_str(&escape_token(self.take(is_strict)));
        }
        if !dotted.is_empty() {
            return Ok(Source::Body(Some(dotted)));
        }
        Ok(Source::Body(self.pointer()?))
    }

    fn named(&mut self, root: &str) -> Result<Expression, ExpressionError> {
        let name = self.identifier(if root == "inputs" {
            "an input name"
        } else {
            "an output name"
        })?;
        let pointer = self.pointer()?;
        Ok(if root == "inputs" {
            Expression::Inputs { name, pointer }
        } else {
            Expression::Outputs { name, pointer }
        })
    }

    fn steps(&mut self) -> Result<Expression, ExpressionError> {
        let step = self.strict("a step id")?;
        self.expect(".outputs.")?;
        let output = self.identifier("an output name")?;
        let pointer = self.pointer()?;
        Ok(Expression::Steps {
            step,
            output,
            pointer,
        })
    }

    fn workflows(&mut self) -> Result<Expression, ExpressionError> {
        let workflow = self.strict("a workflow id")?;
        self.expect(".")?;
        let part = if self.eat("inputs") {
            Part::Inputs
        } else if self.eat("outputs") {
            Part::Outputs
        } else {
            return Err(self.error(format!(
                "expected inputs or outputs, found {}",
                self.found()
            )));
        };
        self.expect(".")?;
        let name = self.identifier("a name")?;
        let pointer = self.pointer()?;
        Ok(Expression::Workflows {
            workflow,
            part,
            name,
            pointer,
        })
    }

    fn source_description(&mut self) -> Result<Expression, ExpressionError> {
        let name = self.strict("a source description name")?;
        self.expect(".")?;
        let reference = self.free("an operationId, workflowId or field name")?;
        Ok(Expression::SourceDescriptions { name, reference })
    }

    fn components(&mut self) -> Result<Expression, ExpressionError> {
        let at = self.pos;
        let kind = self.take(|c| c.is_ascii_alphabetic()).to_string();
        if !matches!(
            kind.as_str(),
            "inputs" | "parameters" | "successActions" | "failureActions"
        ) {
            return Err(ExpressionError::new(
                at,
                format!(
                    "expected inputs, parameters, successActions or failureActions, found {kind:?}"
                ),
            ));
        }
        self.expect(".")?;
        let name = self.identifier("a component name")?;
        Ok(Expression::Components { kind, name })
    }
}

fn write_pointer(f: &mut fmt::Formatter<'_>, pointer: &Option<String>) -> fmt::Result {
    match pointer {
        Some(pointer) => write!(f, "#{pointer}"),
        None => Ok(()),
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Header(name) => write!(f, "header.{name}"),
            Source::Query(name) => write!(f, "query.{name}"),
            Source::Path(name) => write!(f, "path.{name}"),
            Source::Body(pointer) => {
                f.write_str("body")?;
                write_pointer(f, pointer)
            }
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Inputs => "inputs",
            Part::Outputs => "outputs",
        })
    }
}

/// The canonical spelling, which [`parse`] reads back to the same expression.
impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::Url => f.write_str("$url"),
            Expression::Method => f.write_str("$method"),
            Expression::StatusCode => f.write_str("$statusCode"),
            Expression::Request(source) => write!(f, "$request.{source}"),
            Expression::Response(source) => write!(f, "$response.{source}"),
            Expression::Inputs { name, pointer } => {
                write!(f, "$inputs.{name}")?;
                write_pointer(f, pointer)
            }
            Expression::Outputs { name, pointer } => {
                write!(f, "$outputs.{name}")?;
                write_pointer(f, pointer)
            }
            Expression::Steps {
                step,
                output,
                pointer,
            } => {
                write!(f, "$steps.{step}.outputs.{output}")?;
                write_pointer(f, pointer)
            }
            Expression::Workflows {
                workflow,
                part,
                name,
                pointer,
            } => {
                write!(f, "$workflows.{workflow}.{part}.{name}")?;
                write_pointer(f, pointer)
            }
            Expression::SourceDescriptions { name, reference } => {
                write!(f, "$sourceDescriptions.{name}.{reference}")
            }
            Expression::Components { kind, name } => write!(f, "$components.{kind}.{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(text: &str) -> ExpressionError {
        match parse(text) {
            Err(error) => error,
            Ok(parsed) => panic!("{text:?} parsed as {parsed:?}"),
        }
    }

    /// Every runtime expression written in versions/1.1.0.md (fc140d2) that an HTTP
    /// executor reads, embedded ones taken out of their braces.
    const SPEC_1_1_0: &[&str] = &[
        "$components.failureActions.baz",
        "$components.parameters.foo",
        "$components.parameters.page",
        "$components.successActions.bar",
        "$components.successActions.notify",
        "$inputs.category",
        "$inputs.clientId",
        "$inputs.coupon_code",
        "$inputs.expectedStatus",
        "$inputs.host",
        "$inputs.petOrderRequest",
        "$inputs.productDetails.productId",
        "$inputs.statusPattern",
        "$inputs.threshold",
        "$inputs.username",
        "$inputs.x-api-key",
        "$method",
        "$outputs.bar",
        "$request.body#/user/uuid",
        "$request.header.accept",
        "$request.path.id",
        "$response.body",
        "$response.body#/0",
        "$response.body#/items/0/id",
        "$response.body#/status",
        "$response.body.count",
        "$response.body.data",
        "$response.header.Server",
        "$response.header.X-Expires-After",
        "$response.header.X-Rate-Limit",
        "$sourceDescriptions.asyncOrderApi.confirmOrder",
        "$sourceDescriptions.petstore.getPetById",
        "$sourceDescriptions.petstore.type",
        "$sourceDescriptions.petstore.url",
        "$statusCode",
        "$steps.browser-authorize.outputs.code",
        "$steps.create.outputs.id",
        "$steps.getPricing.outputs.minPrice",
        "$steps.loginStep.outputs.sessionToken",
        "$steps.someStepId.outputs.pets",
        "$steps.someStepId.outputs.pets#/0/id",
        "$url",
        "$workflows.foo.inputs.username",
        "$workflows.foo.outputs.bar",
        "$workflows.foo.outputs.mappedResponse#/name",
    ];

    #[test]
    fn every_example_of_the_1_1_0_text_parses_and_prints_back() {
        for text in SPEC_1_1_0 {
            let parsed = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let printed = parsed.to_string();
            assert_eq!(parse(&printed).as_ref(), Ok(&parsed), "{text} → {printed}");
        }
        // 1.0.1's examples are a subset; its `$components.inputs` is kept.
        assert_eq!(
            parse("$components.inputs.pet_id"),
            Ok(Expression::Components {
                kind: "inputs".into(),
                name: "pet_id".into()
            })
        );
    }

    #[test]
    fn pointers_follow_inputs_and_step_outputs_in_every_version() {
        assert_eq!(
            parse("$inputs.customer#/firstName"),
            Ok(Expression::Inputs {
                name: "customer".into(),
                pointer: Some("/firstName".into())
            })
        );
        assert_eq!(
            parse("$steps.s.outputs.pets#/0/id").map(|e| e.to_string()),
            Ok("$steps.s.outputs.pets#/0/id".into())
        );
        assert_eq!(
            parse("$response.body#"),
            Ok(Expression::Response(Source::Body(Some(String::new()))))
        );
        assert_eq!(
            parse("$response.body#/a~1b/~0c"),
            Ok(Expression::Response(Source::Body(Some("/a~1b/~0c".into()))))
        );
    }

    #[test]
    fn dotted_body_access_is_a_pointer_and_dotted_names_are_names() {
        let count = parse("$response.body.count").unwrap();
        assert_eq!(
            count,
            Expression::Response(Source::Body(Some("/count".into())))
        );
        assert_eq!(count.to_string(), "$response.body#/count");
        assert_eq!(
            parse("$steps.x.outputs.y.z"),
            Ok(Expression::Steps {
                step: "x".into(),
                output: "y.z".into(),
                pointer: None
            })
        );
        assert_eq!(
            parse("$workflows.w.inputs.a.b#/c"),
            Ok(Expression::Workflows {
                workflow: "w".into(),
                part: Part::Inputs,
                name: "a.b".into(),
                pointer: Some("/c".into())
            })
        );
    }

    #[test]
    fn header_names_are_case_insensitive_tokens() {
        let upper = parse("$response.header.X-Rate-Limit").unwrap();
        assert_eq!(upper, parse("$response.header.x-rate-limit").unwrap());
        assert_eq!(upper.to_string(), "$response.header.x-rate-limit");
        assert_eq!(error("$response.header.").position, 17);
        assert_eq!(error("$request.header.a b").position, 17);
    }

    #[test]
    fn query_path_and_source_names_are_free_text() {
        assert_eq!(
            parse("$request.query.page[size]"),
            Ok(Expression::Request(Source::Query("page[size]".into())))
        );
        assert_eq!(
            parse("$sourceDescriptions.petstore.find pets by status"),
            Ok(Expression::SourceDescriptions {
                name: "petstore".into(),
                reference: "find pets by status".into()
            })
        );
        assert_eq!(error("$request.query.").position, 15);
    }

    #[test]
    fn garbage_is_refused_where_it_starts() {
        let unknown = error("$foo.bar");
        assert_eq!(unknown.position, 0);
        assert!(
            unknown
                .message
                .contains("unknown runtime expression `$foo`")
        );
        let typo = error("$statuscode");
        assert!(typo.message.contains("did you mean $statusCode?"), "{typo}");
        assert_eq!(error("").position, 0);
        assert_eq!(error("statusCode").position, 0);
        assert_eq!(error("$url.x").position, 4);
        assert_eq!(error("$request.cookie.a").position, 9);
        assert_eq!(error("$steps.s.output.x").position, 8);
        assert_eq!(error("$steps..outputs.x").position, 7);
        assert_eq!(error("$workflows.w.steps.x").position, 13);
        assert_eq!(error("$components.schemas.x").position, 12);
        let pointer = error("$response.body#status");
        assert_eq!(pointer.position, 15);
        assert!(pointer.message.contains("starts with '/'"));
        assert_eq!(error("$inputs.x#/a~2").position, 12);
        assert_eq!(error("$inputs.x#/a{b}").position, 12);
    }

    #[test]
    fn asyncapi_and_self_expressions_are_refused_by_name() {
        for text in [
            "$message.payload#/status",
            "$message.header.Server",
            "$self",
        ] {
            let refused = error(text);
            assert_eq!(refused.position, 0, "{text}");
            assert!(refused.message.contains("not supported"), "{refused}");
        }
        let payload = error("$response.payload#/status");
        assert_eq!(payload.position, 10);
        assert!(payload.message.contains("not supported"));
    }

    #[test]
    fn the_error_names_its_position() {
        assert_eq!(
            error("$foo").to_string(),
            "unknown runtime expression `$foo`: expected $url, $method, $statusCode, $request., \
             $response., $inputs., $outputs., $steps., $workflows., $sourceDescriptions. or \
             $components. (at byte 0)"
        );
    }

    #[test]
    fn lookup_prefers_the_exact_name_then_walks_properties() {
        let inputs = json!({
            "customer": {"firstName": "Ada", "tags": ["a", "b"]},
            "customer.firstName": "exact"
        });
        let inputs = inputs.as_object().unwrap();
        assert_eq!(lookup(inputs, "customer.firstName"), Some(&json!("exact")));
        assert_eq!(lookup(inputs, "customer.tags.1"), Some(&json!("b")));
        assert_eq!(lookup(inputs, "customer.nope"), None);
        assert_eq!(lookup(inputs, "nobody"), None);
        assert_eq!(apply_pointer(&json!({"a/b": 1}), "/a~1b"), Some(&json!(1)));
    }
}
