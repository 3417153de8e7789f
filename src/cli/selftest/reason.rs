//! Why a call failed, in one line: the mock upstream's list of problems, an upstream's RFC
//! 9457 problem body (Prism's `validation` list), or the first line of the error text, cut
//! to [`MAX_REASON_CHARS`].

use serde_json::Value;

/// Longest reason kept for one call (the JSON report carries it whole).
pub(super) const MAX_REASON_CHARS: usize = 1000;
/// Most entries of an upstream's list of violations named in a reason.
const MAX_VIOLATIONS: usize = 8;

/// One line that says why an error result failed. The mock's 400 carries its reasons in
/// a JSON body (`{"error": …, "problems": […]}`) after a long preamble, so those reasons
/// are taken out; an upstream's RFC 9457 problem body is cut down to what it says was
/// wrong ([`upstream_problem`]); otherwise the first line, with the list it introduces when
/// it ends in `:` (as "Invalid arguments …:" does).
pub fn error_reason(text: &str) -> String {
    if let Some(problems) = mock_problems(text) {
        return truncate(&format!(
            "the mock upstream rejected the request: {}",
            problems.join("; ")
        ));
    }
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return "the result is an error, without text".into();
    };
    if let Some(problem) = upstream_problem(first) {
        return truncate(&problem);
    }
    let mut reason = first.to_string();
    if first.ends_with(':') {
        for line in lines.take_while(|l| l.starts_with('-')) {
            reason.push(' ');
            reason.push_str(line);
        }
    }
    truncate(&reason)
}

/// The `problems` of the mock upstream's 400 body, when `text` is that result.
fn mock_problems(text: &str) -> Option<Vec<String>> {
    let first = text.lines().next()?;
    let body = &first[first.find("{\"error\":\"restmcp mock:")?..];
    let body: Value = serde_json::from_str(body).ok()?;
    let problems: Vec<String> = body
        .get("problems")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    (!problems.is_empty()).then_some(problems)
}

/// `upstream API "a" answered 422 Unprocessable Entity: {…}` whose body is an RFC 9457
/// problem (`application/problem+json`, as Prism answers): the same preamble, then what the
/// body says was wrong. Prism lists each violation of the API description under
/// `validation` (`{"location": ["query", "limit"], "message": "must be integer"}`), which
/// becomes `query.limit: must be integer`; another problem gives its `title` and `detail`.
/// None when the line is not an upstream's answer or its body not such an object.
fn upstream_problem(line: &str) -> Option<String> {
    let rest = line.strip_prefix("upstream API \"")?;
    let (api, rest) = rest.split_once("\" answered ")?;
    let (status, body) = rest.split_once(": ")?;
    let Value::Object(body) = serde_json::from_str::<Value>(body).ok()? else {
        return None;
    };
    let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::trim);
    let mut said: Vec<String> = Vec::new();
    if let Some(Value::Array(violations)) = body.get("validation") {
        said.extend(violations.iter().take(MAX_VIOLATIONS).map(|v| {
            let message = v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("invalid");
            let location: Vec<String> = v
                .get("location")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .map(|p| match p {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if location.is_empty() {
                message.to_string()
            } else {
                format!("{}: {message}", location.join("."))
            }
        }));
        if violations.len() > MAX_VIOLATIONS {
            said.push(format!("and {} more", violations.len() - MAX_VIOLATIONS));
        }
    }
    if said.is_empty() {
        said.extend(
            [text("title"), text("detail")]
                .into_iter()
                .flatten()
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        );
    }
    if said.is_empty() {
        return None;
    }
    Some(format!(
        "upstream API \"{api}\" answered {status}: {}",
        said.join("; ")
    ))
}

/// At most [`MAX_REASON_CHARS`] characters, on one line.
pub(super) fn truncate(text: &str) -> String {
    cut(text, MAX_REASON_CHARS)
}

/// At most `max` characters of `text`, on one line, marked `…` when cut.
pub(super) fn cut(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
