//! The JSONPath query grammar (RFC 9535 §2.1–§2.3, §2.5): a query is `$` followed by
//! segments, a segment holds selectors (names, `*`, indices, slices, filters), read with
//! their string and integer literals. Filter expressions are read by [`super::filter`],
//! function calls by [`super::function`]; the tree they build is [`super::syntax`].

use super::syntax::{Parser, PathError, Query, Segment, Selector};

/// Largest magnitude of an index or slice bound: the I-JSON range of §2.1 ("integers MUST be
/// within the range [-(2^53)+1, (2^53)-1]").
const MAX_INT: i64 = (1 << 53) - 1;

pub fn parse_query(source: &str) -> Result<Query, PathError> {
    let mut parser = Parser {
        source,
        pos: 0,
        depth: 0,
    };
    if !parser.eat('$') {
        return Err(parser.error_here("a JSONPath query starts with '$'"));
    }
    let segments = parser.segments()?;
    if parser.pos < source.len() {
        let blank_at = parser.pos;
        parser.skip_blank();
        if parser.pos == source.len() {
            return Err(PathError {
                byte: blank_at,
                message: "whitespace is not allowed at the end of a query".into(),
            });
        }
        return Err(parser.expected("'.', '[' or the end of the query"));
    }
    Ok(Query {
        absolute: true,
        segments,
    })
}

/// §2.5.1.1 `name-first`, extended with `$` (see the module documentation).
fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || !c.is_ascii()
}

/// §2.5.1.1 `name-char`, extended with `-` (see the module documentation).
fn is_name_char(c: char) -> bool {
    is_name_first(c) || c.is_ascii_digit() || c == '-'
}

impl Parser<'_> {
    /// §2.1.1 `segments = *(S segment)`. Blanks before something that is not a segment are
    /// left unconsumed, for the caller to read.
    pub(super) fn segments(&mut self) -> Result<Vec<Segment>, PathError> {
        let mut segments = Vec::new();
        loop {
            let save = self.pos;
            self.skip_blank();
            match self.peek() {
                Some('.') | Some('[') => segments.push(self.segment()?),
                _ => {
                    self.pos = save;
                    return Ok(segments);
                }
            }
        }
    }

    /// §2.5.1.1 child segment and §2.5.2.1 descendant segment.
    fn segment(&mut self) -> Result<Segment, PathError> {
        if self.eat_str("..") {
            let selectors = match self.peek() {
                Some('[') => self.bracketed()?,
                Some('*') => {
                    self.pos += 1;
                    vec![Selector::Wildcard]
                }
                Some(c) if is_name_first(c) => vec![Selector::Name(self.shorthand_name())],
                _ => return Err(self.expected("a member name, '*' or '[' after '..'")),
            };
            return Ok(Segment {
                descendant: true,
                selectors,
            });
        }
        let selectors = if self.eat('.') {
            match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    vec![Selector::Wildcard]
                }
                Some(c) if is_name_first(c) => vec![Selector::Name(self.shorthand_name())],
                _ => return Err(self.expected("a member name or '*' after '.'")),
            }
        } else {
            self.bracketed()?
        };
        Ok(Segment {
            descendant: false,
            selectors,
        })
    }

    fn shorthand_name(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        self.source.get(start..self.pos).unwrap_or("").to_string()
    }

    /// §2.5.1.1 `bracketed-selection = "[" S selector *(S "," S selector) S "]"`.
    fn bracketed(&mut self) -> Result<Vec<Selector>, PathError> {
        self.expect('[')?;
        let mut selectors = Vec::new();
        loop {
            self.skip_blank();
            selectors.push(self.selector()?);
            self.skip_blank();
            if self.eat(',') {
                continue;
            }
            if self.eat(']') {
                return Ok(selectors);
            }
            return Err(self.expected("']'"));
        }
    }

    /// §2.3 selectors.
    fn selector(&mut self) -> Result<Selector, PathError> {
        match self.peek() {
            Some(quote @ ('\'' | '"')) => {
                self.pos += 1;
                Ok(Selector::Name(self.string_literal(quote)?))
            }
            Some('*') => {
                self.pos += 1;
                Ok(Selector::Wildcard)
            }
            Some('?') => {
                self.pos += 1;
                self.skip_blank();
                self.enter()?;
                let filter = self.logical_or()?;
                self.leave();
                Ok(Selector::Filter(Box::new(filter)))
            }
            Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => self.index_or_slice(),
            _ => Err(self.expected("a selector (a quoted name, '*', an index, a slice or '?')")),
        }
    }

    /// §2.3.3 index selector and §2.3.4 slice selector
    /// (`[start S] ":" S [end S] [":" [S step]]`).
    fn index_or_slice(&mut self) -> Result<Selector, PathError> {
        let start = self.optional_int()?;
        self.skip_blank();
        if !self.eat(':') {
            return match start {
                Some(index) => Ok(Selector::Index(index)),
                None => Err(self.expected("an index")),
            };
        }
        self.skip_blank();
        let end = self.optional_int()?;
        self.skip_blank();
        let step = if self.eat(':') {
            self.skip_blank();
            self.optional_int()?
        } else {
            None
        };
        Ok(Selector::Slice { start, end, step })
    }

    /// §2.3.3.1 `int = "0" / (["-"] DIGIT1 *DIGIT)`, within the I-JSON range.
    fn optional_int(&mut self) -> Result<Option<i64>, PathError> {
        let start = self.pos;
        let negative = self.eat('-');
        let digits_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = self.source.get(digits_start..self.pos).unwrap_or("");
        if digits.is_empty() {
            if negative {
                return Err(self.expected("a digit after '-'"));
            }
            return Ok(None);
        }
        let at_start = |message: &str| PathError {
            byte: start,
            message: message.to_string(),
        };
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(at_start("an integer must not have leading zeros"));
        }
        if negative && digits == "0" {
            return Err(at_start("-0 is not a valid integer here"));
        }
        let magnitude: i64 = match digits.parse() {
            Ok(n) if n <= MAX_INT => n,
            _ => {
                return Err(at_start(
                    "integer out of range (at most 2^53-1 in magnitude)",
                ));
            }
        };
        Ok(Some(if negative { -magnitude } else { magnitude }))
    }

    /// §2.3.1.1 string literals, after the opening quote.
    pub(super) fn string_literal(&mut self, quote: char) -> Result<String, PathError> {
        let mut out = String::new();
        loop {
            let here = self.pos;
            let Some(c) = self.bump() else {
                return Err(self.error_here(format!("unterminated string, expected {quote}")));
            };
            match c {
                c if c == quote => return Ok(out),
                '\\' => out.push(self.escape(quote)?),
                c if (c as u32) < 0x20 => {
                    return Err(PathError {
                        byte: here,
                        message: "control characters in a string must be escaped".into(),
                    });
                }
                c => out.push(c),
            }
        }
    }

    /// §2.3.1.1 `escapable`, after the backslash.
    fn escape(&mut self, quote: char) -> Result<char, PathError> {
        let here = self.pos;
        let invalid = |pos: usize| PathError {
            byte: pos,
            message: "invalid escape sequence".into(),
        };
        match self.bump() {
            Some('b') => Ok('\u{8}'),
            Some('f') => Ok('\u{c}'),
            Some('n') => Ok('\n'),
            Some('r') => Ok('\r'),
            Some('t') => Ok('\t'),
            Some('/') => Ok('/'),
            Some('\\') => Ok('\\'),
            Some(c) if c == quote => Ok(c),
            Some('u') => {
                let first = self.hex4()?;
                let code = match first {
                    0xD800..=0xDBFF => {
                        if !self.eat_str("\\u") {
                            return Err(self.error_here(
                                "a high surrogate must be followed by a \\u low surrogate",
                            ));
                        }
                        let second = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(self.error_here("expected a low surrogate"));
                        }
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        return Err(PathError {
                            byte: here,
                            message: "a low surrogate cannot stand alone".into(),
                        });
                    }
                    code => code,
                };
                char::from_u32(code).ok_or_else(|| invalid(here))
            }
            _ => Err(invalid(here)),
        }
    }

    fn hex4(&mut self) -> Result<u32, PathError> {
        let mut value = 0u32;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.expected("four hexadecimal digits after \\u"))?;
            self.pos += 1;
            value = value * 16 + digit;
        }
        Ok(value)
    }
}
