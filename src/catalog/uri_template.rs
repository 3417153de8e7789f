//! RFC 6570 URI templates, the part resources need: `{var}` (a value within one path
//! segment), `{+var}` (a value that may hold `/`), and at the end `{?a,b}` or `{&a,b}`
//! (query parameters). A template is read both ways: [`UriTemplate::expand`] fills it
//! from values, [`UriTemplate::match_uri`] reads the values back out of a URI a client
//! gives (`resources/read`), which is what a resource template needs and what the URI
//! template crates do not do.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Characters a `{var}` value keeps as they are: RFC 3986 unreserved.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Characters a `{+var}` value keeps: unreserved and reserved.
const RESERVED: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'#')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'%');

/// The longest URI a client may ask to match (longer ones match nothing).
const MAX_URI: usize = 8 * 1024;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
    /// `{?a,b}` or `{&a,b}` at the end: the query parameters it names.
    query: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// Why a text is not a URI template restmcp serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_var_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
}

impl UriTemplate {
    /// Parses `text`: an absolute URI (`scheme:…`) with `{var}` and `{+var}` expressions,
    /// and at most one `{?…}`/`{&…}` expression, at the end.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let scheme_end = text.find(':').unwrap_or(0);
        let scheme = &text[..scheme_end];
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(TemplateError(format!(
                "\"{text}\" is not an absolute URI: it needs a scheme, as in \"myapi://items/{{id}}\""
            )));
        }
        let mut parts = Vec::new();
        let mut query = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if !query.is_empty() {
                return Err(TemplateError(format!(
                    "\"{text}\": a {{?…}} expression must end the template"
                )));
            }
            let Some(open) = rest.find('{') else {
                if rest.contains('}') {
                    return Err(TemplateError(format!("\"{text}\": an unopened '}}'")));
                }
                parts.push(Part::Literal(rest.to_string()));
                break;
            };
            let literal = &rest[..open];
            if literal.contains('}') {
                return Err(TemplateError(format!("\"{text}\": an unopened '}}'")));
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(literal.to_string()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(TemplateError(format!("\"{text}\": an unclosed '{{'")));
            };
            let expression = &rest[open + 1..open + close];
            rest = &rest[open + close + 1..];
            let (operator, names) = match expression.chars().next() {
                Some(c @ ('+' | '?' | '&')) => (Some(c), &expression[1..]),
                Some(c) if !is_var_name(&c.to_string()) => {
                    return Err(TemplateError(format!(
                        "\"{text}\": the operator '{c}' of {{{expression}}} is not served; \
                         use {{name}}, {{+name}} or {{?a,b}}"
                    )));
                }
                _ => (None, expression),
            };
            let names: Vec<String> = names.split(',').map(str::to_string).collect();
            if let Some(bad) = names.iter().find(|n| !is_var_name(n)) {
                return Err(TemplateError(format!(
                    "\"{text}\": \"{bad}\" is not a variable name (letters, digits, _ . -; no \
                     modifiers such as :3 or *)"
                )));
            }
            match operator {
                Some('?' | '&') => query = names,
                _ if names.len() > 1 => {
                    return Err(TemplateError(format!(
                        "\"{text}\": {{{expression}}} names several variables; give each its own \
                         {{…}} with a separator between them"
                    )));
                }
                reserved => {
                    if matches!(parts.last(), Some(Part::Var { .. })) {
                        return Err(TemplateError(format!(
                            "\"{text}\": two variables with nothing between them cannot be \
                             read back from a URI"
                        )));
                    }
                    parts.push(Part::Var {
                        name: names[0].clone(),
                        reserved: reserved == Some('+'),
                    });
                }
            }
        }
        let template = UriTemplate {
            text: text.to_string(),
            parts,
            query,
        };
        let names: Vec<&str> = template.variables().collect();
        if let Some((_, dup)) = names
            .iter()
            .enumerate()
            .find(|(i, n)| names[..*i].contains(n))
        {
            return Err(TemplateError(format!(
                "\"{text}\": variable \"{dup}\" appears twice"
            )));
        }
        Ok(template)
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it has variables (a resource template) or not (a resource).
    pub fn is_template(&self) -> bool {
        self.variables().next().is_some()
    }

    /// Its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        let path = self.parts.iter().filter_map(|part| match part {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        });
        path.chain(self.query.iter().map(String::as_str))
    }

    /// The URI the template gives with `value(name)` for each variable (a query variable
    /// without a value is left out).
    pub fn expand(&self, value: &dyn Fn(&str) -> Option<String>) -> String {
        let mut uri = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => uri.push_str(text),
                Part::Var { name, reserved } => {
                    let set = if *reserved { RESERVED } else { UNRESERVED };
                    let value = value(name).unwrap_or_default();
                    uri.extend(utf8_percent_encode(&value, set));
                }
            }
        }
        let mut first = !uri.contains('?');
        for name in &self.query {
            if let Some(value) = value(name) {
                uri.push(if first { '?' } else { '&' });
                first = false;
                uri.push_str(name);
                uri.push('=');
                uri.extend(utf8_percent_encode(&value, UNRESERVED));
            }
        }
        uri
    }

    /// The variables' values in `uri`, when the template gives it: each path variable
    /// non-empty (percent-decoded; `{var}` within one segment), query parameters only those
    /// the template names, each at most once.
    pub fn match_uri(&self, uri: &str) -> Option<Vec<(String, String)>> {
        if uri.len() > MAX_URI {
            return None;
        }
        let (path, query) = match self.query.is_empty() {
            true => (uri, None),
            false => match uri.split_once('?') {
                Some((path, query)) => (path, Some(query)),
                None => (uri, None),
            },
        };
        let mut values = self.match_path(path)?;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode(name)?;
            if !self.query.contains(&name) || values.iter().any(|(n, _)| *n == name) {
                return None;
            }
            values.push((name, decode(&value.replace('+', " "))?));
        }
        Some(values)
    }

    /// The path variables' values: each variable takes the text up to the first place the
    /// literal after it appears.
    fn match_path(&self, mut rest: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Var { name, reserved } => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    let stops = if *reserved {
                        &['#'][..]
                    } else {
                        &['/', '?', '#'][..]
                    };
                    if raw.is_empty() || raw.contains(stops) {
                        return None;
                    }
                    values.push((name.clone(), decode(raw)?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

/// A percent-decoded text, when it is UTF-8.
fn decode(text: &str) -> Option<String> {
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn a_template_reads_back_what_it_expands() {
        let t = UriTemplate::parse("petstore://pets/{petId}/photos{?size,format}").unwrap();
        assert_eq!(
            t.variables().collect::<Vec<_>>(),
            ["petId", "size", "format"]
        );
        let expanded = t.expand(&|n| match n {
            "petId" => Some("a b/c".into()),
            "format" => Some("png".into()),
            _ => None,
        });
        assert_eq!(expanded, "petstore://pets/a%20b%2Fc/photos?format=png");
        assert_eq!(
            t.match_uri(&expanded),
            values(&[("petId", "a b/c"), ("format", "png")])
        );
        assert_eq!(
            t.match_uri("petstore://pets/7/photos"),
            values(&[("petId", "7")])
        );
    }

    #[test]
    fn a_uri_the_template_does_not_give_matches_nothing() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.match_uri("test://template/123/data"),
            values(&[("id", "123")])
        );
        for uri in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/1/data/more",
            "test://template/1/data?x=1",
            "other://template/1/data",
            "test://template/%FF/data",
        ] {
            assert_eq!(t.match_uri(uri), None, "{uri}");
        }
        let q = UriTemplate::parse("api://items{?q}").unwrap();
        assert_eq!(q.match_uri("api://items?other=1"), None);
        assert_eq!(q.match_uri("api://items?q=1&q=2"), None);
        assert_eq!(q.match_uri("api://items?q=a+b"), values(&[("q", "a b")]));
    }

    #[test]
    fn a_reserved_variable_spans_segments() {
        let t = UriTemplate::parse("files://{+path}").unwrap();
        assert_eq!(
            t.match_uri("files://a/b/c.txt"),
            values(&[("path", "a/b/c.txt")])
        );
        assert_eq!(t.expand(&|_| Some("a/b c".into())), "files://a/b%20c");
    }

    #[test]
    fn templates_restmcp_cannot_read_back_are_refused_with_the_reason() {
        for (text, why) in [
            ("pets/{id}", "not an absolute URI"),
            ("x://{a}{b}", "nothing between them"),
            ("x://{a,b}", "several variables"),
            ("x://{#a}", "operator '#'"),
            ("x://{a:3}", "not a variable name"),
            ("x://{?a}/{b}", "must end the template"),
            ("x://{a", "unclosed"),
            ("x://a}", "unopened"),
            ("x://{a}/{a}", "appears twice"),
        ] {
            let error = UriTemplate::parse(text).unwrap_err();
            assert!(error.0.contains(why), "{text}: {error}");
        }
        assert!(
            !UriTemplate::parse("test://static-text")
                .unwrap()
                .is_template()
        );
    }
}
