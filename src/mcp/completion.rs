//! Completions (`completion/complete`) for prompt arguments and resource-template
//! variables. The values come from the argument's `enum` (for a template variable, its
//! parameter's schema `enum`, else `examples`), or from a configured list tool
//! ([`crate::catalog::CompleteSource`]): its result read at a JSON pointer where `*` is
//! every item, its arguments filled from the values the client already gave
//! (`context.arguments`), so `{repo}` can depend on `{owner}`. Values are filtered by the
//! prefix typed (case-insensitively), at most 100 are returned with the total.
//!
//! Completion fires on every keystroke, so a list tool's values are kept briefly per
//! caller, forwarded headers, tool and arguments, in a table bounded in bytes
//! ([`super::tables::Completions`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use serde_json::{Map, Value};

use super::ServerState;
use crate::catalog::CompleteSource;
use crate::catalog::prompt::fill;
use crate::catalog::resource::as_text;
use crate::catalog::served::typed_arguments;
use crate::upstream::CallContext;

/// The most values read from one list tool's answer.
const MAX_LISTED: usize = 10_000;

/// Where one argument's completions come from.
enum Source {
    Listed(Vec<String>),
    Tool(CompleteSource),
}

impl ServerState {
    /// `completion/complete` (see the module doc).
    pub(super) async fn complete(
        &self,
        request: CompleteRequestParams,
        incoming: CallContext,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<CompleteResult, ErrorData> {
        let source = self.source_of(&request.r#ref, &request.argument.name)?;
        let context: Map<String, Value> = request
            .context
            .and_then(|c| c.arguments)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let values = match source {
            None => Arc::new(Vec::new()),
            Some(Source::Listed(values)) => Arc::new(values),
            Some(Source::Tool(source)) => {
                self.listed_values(&source, &context, incoming, cancelled)
                    .await?
            }
        };
        Ok(CompleteResult::new(matching(
            &values,
            &request.argument.value,
        )))
    }

    /// Where the completions of argument `name` of `reference` come from (none: no
    /// values); an unknown prompt or template is an error.
    fn source_of(&self, reference: &Reference, name: &str) -> Result<Option<Source>, ErrorData> {
        let snapshot = self.current();
        match reference {
            Reference::Prompt(prompt) => {
                let Some(prompt) = snapshot
                    .catalog()
                    .prompts()
                    .iter()
                    .find(|p| p.name == prompt.name)
                else {
                    return Err(ErrorData::invalid_params(
                        format!("no prompt is named \"{}\"", prompt.name),
                        None,
                    ));
                };
                Ok(prompt.argument(name).map(|a| match &a.complete {
                    Some(source) => Source::Tool(source.clone()),
                    None => Source::Listed(a.choices.clone()),
                }))
            }
            Reference::Resource(template) => {
                let Some((_, resource)) = snapshot
                    .catalog()
                    .resources()
                    .find(|(_, r)| r.uri.as_str() == template.uri)
                else {
                    return Err(ErrorData::invalid_params(
                        format!("no resource template is \"{}\"", template.uri),
                        None,
                    ));
                };
                Ok(resource.variable(name).map(|v| match &v.complete {
                    Some(source) => Source::Tool(source.clone()),
                    None => Source::Listed(v.choices.clone()),
                }))
            }
            _ => Err(ErrorData::invalid_params(
                "completion/complete: unknown kind of ref",
                None,
            )),
        }
    }

    /// The values a list tool gives, with its arguments filled from `context`: from the
    /// cache, else read through the tool's pipeline.
    async fn listed_values(
        &self,
        source: &CompleteSource,
        context: &Map<String, Value>,
        incoming: CallContext,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<Arc<Vec<String>>, ErrorData> {
        let value = |name: &str| context.get(name).and_then(as_text);
        let arguments: Map<String, Value> = source
            .arguments
            .iter()
            .map(|(name, v)| {
                let v = match v {
                    Value::String(text) => Value::String(fill(text, &value)),
                    v => v.clone(),
                };
                (name.clone(), v)
            })
            .collect();
        let snapshot = self.current();
        let Some(tool) = snapshot.catalog().get(&source.tool) else {
            return Ok(Arc::new(Vec::new()));
        };
        let arguments = typed_arguments(tool, arguments);
        let key = crate::digest::hex(&crate::digest::sha256_parts(&[
            incoming.pseudonym().as_bytes(),
            format!("{:?}", incoming.headers).as_bytes(),
            source.tool.as_bytes(),
            Value::Object(arguments.clone()).to_string().as_bytes(),
        ]));
        if let Some(values) = self.completions.get(&key) {
            return Ok(values);
        }
        let mut incoming = incoming;
        incoming.bare_structured = true;
        let called = self
            .run_for_read(&snapshot, &source.tool, arguments, incoming, cancelled)
            .await?;
        let values = match (&called.result.structured, called.result.is_error) {
            (Some(body), false) => Arc::new(at_pointer(body, &source.values)),
            // A list that fails completes nothing (the user is typing, not calling).
            _ => Arc::new(Vec::new()),
        };
        self.completions.put(key, values.clone());
        Ok(values)
    }
}

/// The values at `pointer` in `body`, where a `*` segment is every item (or member), as
/// texts, each once, in order.
fn at_pointer(body: &Value, pointer: &str) -> Vec<String> {
    let mut found = vec![body];
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        found = found
            .into_iter()
            .flat_map(|value| -> Vec<&Value> {
                match (segment.as_str(), value) {
                    ("*", Value::Array(items)) => items.iter().collect(),
                    ("*", Value::Object(members)) => members.values().collect(),
                    (key, Value::Object(members)) => members.get(key).into_iter().collect(),
                    (index, Value::Array(items)) => index
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| items.get(i))
                        .into_iter()
                        .collect(),
                    _ => Vec::new(),
                }
            })
            .take(MAX_LISTED)
            .collect();
    }
    let mut values: Vec<String> = Vec::new();
    for text in found.into_iter().filter_map(as_text) {
        if !values.contains(&text) {
            values.push(text);
        }
    }
    values
}

/// The values starting with `typed` (case-insensitively): the first 100, the total, and
/// whether there are more.
fn matching(values: &[String], typed: &str) -> CompletionInfo {
    let typed = typed.to_lowercase();
    let all: Vec<&String> = values
        .iter()
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect();
    let total = all.len();
    let shown: Vec<String> = all
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .cloned()
        .collect();
    let has_more = total > shown.len();
    let total = Some(total.min(u32::MAX as usize) as u32);
    // At most MAX_VALUES values: always within what `with_pagination` accepts.
    CompletionInfo::with_pagination(shown, total, has_more).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pointer_with_stars_reads_every_item_once() {
        let body = json!([{"login": "a"}, {"login": "b"}, {"login": "a"}, {"x": 1}]);
        assert_eq!(at_pointer(&body, "/*/login"), ["a", "b"]);
        let nested = json!({"items": [{"id": 1}, {"id": 2}]});
        assert_eq!(at_pointer(&nested, "/items/*/id"), ["1", "2"]);
        assert_eq!(at_pointer(&json!(["x", "y"]), ""), Vec::<String>::new());
        assert_eq!(at_pointer(&json!(["x", "y"]), "/*"), ["x", "y"]);
    }

    #[test]
    fn completions_are_prefix_matched_and_capped_at_100_with_the_total() {
        let values: Vec<String> = (0..250).map(|i| format!("Item{i}")).collect();
        let info = matching(&values, "item1");
        assert_eq!(info.total, Some(111));
        assert_eq!(info.values.len(), 100);
        assert_eq!(info.has_more, Some(true));
        assert_eq!(matching(&values, "nothing").values.len(), 0);
    }
}
