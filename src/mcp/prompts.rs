//! Prompts: `prompts/list` and `prompts/get` for the catalog's prompts
//! ([`crate::catalog::prompt`]). Getting one fills `{{argument}}` in its texts (plain
//! substitution), reads the resources its `resource` messages name and runs the tools its
//! `operation` messages name, each through the tool's own pipeline, so a prompt such as
//! `triage(issue)` brings the live item into the conversation; a tool's answer becomes
//! messages through the call's content mapping (an `image/*` answer is an image).
//!
//! A required argument the client did not give is an error (-32602) up to 2025-11-25; on
//! 2026-07-28 the answer is `input_required` with a form asking the user for the missing
//! ones (its `requestState` sealed and bound to the prompt and the caller), and the retry
//! carries the answers.

use rmcp::ErrorData;
use rmcp::model::{
    ContentBlock, ElicitRequest, ElicitRequestParams, ElicitationSchema, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InputRequest, InputRequests, InputRequiredResult,
    ListPromptsResult, PromptArgument as McpArgument, PromptMessage as McpMessage, ProtocolVersion,
    Role as McpRole, SealOptions,
};
use serde_json::{Map, Value, json};

use super::{ServerState, Snapshot};
use crate::catalog::Prompt;
use crate::catalog::prompt::fill;
use crate::catalog::resource::as_text;
use crate::config::{PromptMessage, Role};
use crate::upstream::CallContext;

/// The key of the question for missing arguments in `inputRequests`.
const MISSING: &str = "arguments";

/// How long a prompt's question stays answerable.
const STATE_TTL: std::time::Duration = std::time::Duration::from_secs(600);

impl Snapshot {
    pub(super) fn has_prompts(&self) -> bool {
        !self.catalog().prompts().is_empty()
    }

    /// `prompts/list`.
    pub(super) fn list_prompts(&self) -> ListPromptsResult {
        let prompts = self
            .catalog()
            .prompts()
            .iter()
            .map(|prompt| {
                let settings = &prompt.settings;
                let arguments = settings
                    .arguments
                    .iter()
                    .map(|a| {
                        let mut argument = McpArgument::new(&a.name).with_required(a.required);
                        argument.title = a.title.clone();
                        argument.description = a.description.clone();
                        argument
                    })
                    .collect::<Vec<_>>();
                let description = Some(settings.description.clone()).filter(|d| !d.is_empty());
                let mut listed = rmcp::model::Prompt::new(
                    &prompt.name,
                    description,
                    Some(arguments).filter(|a| !a.is_empty()),
                );
                listed.title = settings.title.clone();
                listed
            })
            .collect();
        ListPromptsResult::with_all_items(prompts)
    }
}

/// A `prompts/get` as the client made it.
pub(super) struct PromptRequest<'a> {
    pub params: GetPromptRequestParams,
    pub incoming: CallContext,
    pub version: Option<&'a ProtocolVersion>,
    pub cancelled: &'a tokio_util::sync::CancellationToken,
}

impl ServerState {
    /// `prompts/get` (see the module doc).
    pub(super) async fn get_prompt(
        &self,
        request: PromptRequest<'_>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let snapshot = self.current();
        let params = &request.params;
        let Some(prompt) = snapshot
            .catalog()
            .prompts()
            .iter()
            .find(|p| p.name == params.name)
        else {
            return Err(ErrorData::invalid_params(
                format!("no prompt is named \"{}\"", params.name),
                Some(json!({"name": params.name})),
            ));
        };
        let caller = request.incoming.pseudonym().to_string();
        let mut given = texts(params.arguments.as_ref());
        if let Some(state) = &params.request_state {
            self.open_state(state, prompt, &caller)?;
            merge_answers(&mut given, params.input_responses.as_ref());
        }
        check_choices(prompt, &given)?;
        let missing: Vec<&crate::config::PromptArgument> = prompt
            .settings
            .arguments
            .iter()
            .filter(|a| {
                a.required
                    && given
                        .get(&a.name)
                        .is_none_or(|v| v.as_str().is_some_and(str::is_empty))
            })
            .collect();
        if !missing.is_empty() {
            if request.version == Some(&ProtocolVersion::V_2026_07_28) {
                return Ok(GetPromptResponse::InputRequired(
                    self.ask_for(prompt, &missing, &given, &caller),
                ));
            }
            let names: Vec<&str> = missing.iter().map(|a| a.name.as_str()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "prompt \"{}\" needs argument(s) {}",
                    prompt.name,
                    names.join(", ")
                ),
                Some(json!({"missing": names})),
            ));
        }
        let mut messages = Vec::new();
        for message in &prompt.settings.messages {
            let made = self.message(message, &given, &request).await?;
            messages.extend(made);
        }
        let mut result = GetPromptResult::new(messages);
        if !prompt.settings.description.is_empty() {
            result = result.with_description(prompt.settings.description.clone());
        }
        Ok(GetPromptResponse::Complete(result))
    }

    /// The messages one of the prompt's messages makes with the arguments `given`.
    async fn message(
        &self,
        message: &PromptMessage,
        given: &Map<String, Value>,
        request: &PromptRequest<'_>,
    ) -> Result<Vec<McpMessage>, ErrorData> {
        let role = match message.role {
            Role::User => McpRole::User,
            Role::Assistant => McpRole::Assistant,
        };
        let value = |name: &str| given.get(name).and_then(as_text);
        if let Some(text) = &message.text {
            return Ok(vec![McpMessage::new_text(role, fill(text, &value))]);
        }
        if let Some(uri) = &message.resource {
            let uri = fill(uri, &value);
            let mut incoming = request.incoming.clone();
            let read = self
                .read_uri(&uri, &mut incoming, request.version, request.cancelled)
                .await?;
            let messages = read
                .contents
                .into_iter()
                .map(|contents| McpMessage::new(role.clone(), ContentBlock::resource(contents)))
                .collect();
            return Ok(messages);
        }
        let Some(operation) = &message.operation else {
            return Ok(Vec::new());
        };
        let arguments = operation
            .arguments
            .iter()
            .map(|(name, v)| (name.clone(), filled(v, given)))
            .collect();
        let snapshot = self.current();
        let arguments = match snapshot.catalog().get(&operation.tool) {
            Some(tool) => crate::catalog::served::typed_arguments(tool, arguments),
            None => arguments,
        };
        let called = self
            .run_for_read(
                &snapshot,
                &operation.tool,
                arguments,
                request.incoming.clone(),
                request.cancelled,
            )
            .await?;
        if called.result.is_error {
            return Err(ErrorData::internal_error(
                format!(
                    "the prompt's call of tool \"{}\" failed: {}",
                    operation.tool,
                    called.result.joined_text()
                ),
                None,
            ));
        }
        Ok(called
            .result
            .content
            .into_iter()
            .map(|content| McpMessage::new(role.clone(), super::call::to_block(content)))
            .collect())
    }

    /// The `input_required` result asking the user for the `missing` arguments.
    fn ask_for(
        &self,
        prompt: &Prompt,
        missing: &[&crate::config::PromptArgument],
        given: &Map<String, Value>,
        caller: &str,
    ) -> InputRequiredResult {
        let mut properties = Map::new();
        for argument in missing {
            let mut field = json!({"type": "string"});
            if let Some(title) = &argument.title {
                field["title"] = json!(title);
            }
            if let Some(description) = &argument.description {
                field["description"] = json!(description);
            }
            if !argument.choices.is_empty() {
                field["enum"] = json!(argument.choices);
            }
            properties.insert(argument.name.clone(), field);
        }
        let names: Vec<&str> = missing.iter().map(|a| a.name.as_str()).collect();
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": properties,
            "required": names,
        }))
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()));
        let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("Prompt \"{}\" needs: {}", prompt.name, names.join(", ")),
            requested_schema: schema,
        });
        let mut requests = InputRequests::new();
        requests.insert(MISSING.to_string(), InputRequest::Elicitation(request));
        let payload = serde_json::to_vec(given).unwrap_or_default();
        let bound = binding(prompt, caller);
        let state = self.confirmer.codec().seal_with(
            &payload,
            &SealOptions::new().associated_data(&bound).ttl(STATE_TTL),
        );
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// Checks a prompt's `requestState` is one restmcp sealed for this prompt and caller.
    fn open_state(&self, state: &str, prompt: &Prompt, caller: &str) -> Result<(), ErrorData> {
        self.confirmer
            .codec()
            .open_with(state, &binding(prompt, caller))
            .map(|_| ())
            .map_err(|_| {
                ErrorData::invalid_params(
                    "requestState refused: it does not verify (altered, expired, or issued for \
                     another prompt or caller)",
                    None,
                )
            })
    }
}

/// What a prompt's sealed state is bound to.
fn binding(prompt: &Prompt, caller: &str) -> Vec<u8> {
    format!("prompt\n{}\n{caller}", prompt.name).into_bytes()
}

/// The arguments as texts (a prompt's arguments are strings; other scalars are read as
/// their text).
fn texts(arguments: Option<&Map<String, Value>>) -> Map<String, Value> {
    arguments
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), Value::String(as_text(value)?))))
        .collect()
}

/// Adds the user's answers to the form (an accepted elicitation's `content`).
fn merge_answers(given: &mut Map<String, Value>, responses: Option<&rmcp::model::InputResponses>) {
    let Some(answer) = responses.and_then(|r| r.get(MISSING)) else {
        return;
    };
    if answer.get("action").and_then(Value::as_str) != Some("accept") {
        return;
    }
    for (name, value) in answer
        .get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(text) = as_text(value) {
            given.insert(name.clone(), Value::String(text));
        }
    }
}

/// Refuses a value an argument's `enum` does not list.
fn check_choices(prompt: &Prompt, given: &Map<String, Value>) -> Result<(), ErrorData> {
    for argument in &prompt.settings.arguments {
        let Some(value) = given.get(&argument.name).and_then(Value::as_str) else {
            continue;
        };
        if !argument.choices.is_empty() && !argument.choices.iter().any(|c| c == value) {
            return Err(ErrorData::invalid_params(
                format!(
                    "argument \"{}\" of prompt \"{}\" must be one of: {}",
                    argument.name,
                    prompt.name,
                    argument.choices.join(", ")
                ),
                None,
            ));
        }
    }
    Ok(())
}

/// An operation message's argument value with the prompt's arguments filled in: a text
/// that is exactly `{{name}}` is the argument's value, other texts are filled.
fn filled(value: &Value, given: &Map<String, Value>) -> Value {
    let Value::String(text) = value else {
        return value.clone();
    };
    let whole = text
        .strip_prefix("{{")
        .and_then(|t| t.strip_suffix("}}"))
        .map(str::trim);
    if let Some(name) = whole
        && !name.contains("{{")
        && let Some(value) = given.get(name)
    {
        return value.clone();
    }
    Value::String(fill(text, &|name| given.get(name).and_then(as_text)))
}
