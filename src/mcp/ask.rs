//! Arguments asked of the user: a required argument the model left out, or one the
//! operator marked `ask: true` (an overlay's argument patch), is asked for with a form
//! built from its schema before the request is built: its title, description, default (the
//! model's value, for an `ask` argument it gave), bounds and format; `enum` as choices,
//! `x-enumNames` as their titles, `oneOf`/`anyOf` of `const`/`title` as titled choices, an
//! array of those as a multi-select. A session's client is asked with `elicitation/create`
//! while the call waits; a 2026-07-28 request gets `input_required` (key `arguments`) and
//! sends the answers with its retry.
//!
//! It composes with confirmation: the answers travel in a sealed state of their own,
//! bound to the tool, the caller and the model's arguments, which also carries the
//! confirmation's state on the round after (so a call that needs both takes two rounds,
//! and the confirmation still binds the exact request the answers made).
//!
//! Never asked: an argument that looks like a credential (a name of a password, token,
//! secret or key, `format: password`, a header named `Authorization`), and one whose
//! schema a form cannot hold (an object, an array of free values): validation then says
//! what is missing, as before.

use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult, RequestStateCodec, SealOptions,
};
use serde_json::{Map, Value, json};

use super::confirm::Asker;
use crate::catalog::{Location, Tool};

/// The key of the question in `inputRequests` and `inputResponses`.
pub(crate) const ARGUMENTS: &str = "arguments";

/// How long a 2026-07-28 question for arguments stays answerable.
const STATE_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// Keywords of an argument's schema a form keeps.
const KEPT: [&str; 14] = [
    "type",
    "title",
    "description",
    "default",
    "enum",
    "oneOf",
    "anyOf",
    "items",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

/// Whether a call of `tool` with `arguments` may have something to ask: the tool has
/// `ask` arguments, or an argument the operation requires is missing (cheap: no schema is
/// read; [`Asking::ask`] decides).
pub(super) fn may_ask(tool: &Tool, arguments: &Map<String, Value>) -> bool {
    !tool.route.ask.is_empty()
        || tool.route.arguments.bindings.iter().any(|b| {
            b.required
                && b.fixed.is_none()
                && b.default.is_none()
                && !arguments.contains_key(&b.argument)
        })
}

/// What the user is asked for: the arguments and the form.
struct Form {
    names: Vec<String>,
    schema: Value,
}

/// What a sealed state carries between rounds: the answers so far, and the
/// confirmation's own state once it asked.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Carried {
    a: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    c: Option<String>,
}

/// Where asking for a call's arguments leaves it.
pub(super) enum Asked {
    /// Go on with these arguments; `asker` for the confirmation (a 2026-07-28 request's
    /// confirmation state unwrapped), and the answers given so far (to carry in the
    /// confirmation's state).
    Ready {
        arguments: Map<String, Value>,
        asker: Asker,
        answers: Map<String, Value>,
    },
    /// The client asks its user and calls again.
    Ask(InputRequiredResult),
    /// The user declined: the call's error result says so; nothing is sent.
    Declined(String),
    /// A state restmcp did not seal for this call.
    Invalid(ErrorData),
}

/// The questions a call's arguments raise, with the codec that seals their state.
pub(super) struct Asking<'a> {
    pub codec: &'a RequestStateCodec,
    pub ttl: std::time::Duration,
    pub caller: &'a str,
}

impl Asking<'_> {
    /// Asks for what `tool`'s call with `arguments` lacks (see the module doc).
    pub(super) async fn ask(
        &self,
        tool: &Tool,
        mut arguments: Map<String, Value>,
        asker: Asker,
    ) -> Asked {
        let bound = self.binding(tool, &arguments);
        let (mut answers, asker) = match self.unwrap(asker, &bound) {
            Ok(unwrapped) => unwrapped,
            Err(asked) => return *asked,
        };
        // Only what a form may ask: an answer does not add other arguments.
        answers.retain(|name, _| askable(tool, name));
        arguments.extend(answers.clone());
        let Some(form) = form(tool, &arguments, &answers) else {
            return Asked::Ready {
                arguments,
                asker,
                answers,
            };
        };
        let message = format!(
            "Tool \"{}\" ({} {}) needs: {}",
            tool.name,
            tool.route.method,
            tool.route.path,
            form.names.join(", ")
        );
        let Ok(schema) = serde_json::from_value::<ElicitationSchema>(form.schema.clone()) else {
            return Asked::Ready {
                arguments,
                asker,
                answers,
            };
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        match asker {
            Asker::Session(peer)
                if peer
                    .supported_elicitation_modes()
                    .contains(&rmcp::service::ElicitationMode::Form) =>
            {
                let answer = peer
                    .create_elicitation_with_timeout(params, Some(self.ttl))
                    .await;
                match answer {
                    Ok(answer) if answer.action == ElicitationAction::Accept => {
                        let given = answer.content.and_then(|c| c.as_object().cloned());
                        // Only what was asked: an answer does not add other arguments.
                        let given = given
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|(name, _)| form.names.contains(name));
                        arguments.extend(given);
                        Asked::Ready {
                            arguments,
                            asker: Asker::Session(peer),
                            answers,
                        }
                    }
                    Ok(_) => Asked::Declined(declined(tool, &form.names)),
                    Err(error) => Asked::Declined(format!(
                        "Tool \"{}\" needs {} from the user, and the question could not be \
                         asked ({error}); nothing was sent.",
                        tool.name,
                        form.names.join(", ")
                    )),
                }
            }
            Asker::Rounds {
                can_elicit: true, ..
            } => {
                let request = ElicitRequest::new(params);
                let mut requests = InputRequests::new();
                requests.insert(ARGUMENTS.to_string(), InputRequest::Elicitation(request));
                let carried = Carried {
                    a: std::mem::take(&mut answers),
                    c: None,
                };
                let state = self.seal(&carried, &bound);
                Asked::Ask(InputRequiredResult::new(Some(requests), Some(state)))
            }
            // Nobody to ask: validation says what is missing.
            asker => Asked::Ready {
                arguments,
                asker,
                answers,
            },
        }
    }

    /// A 2026-07-28 retry's answers and the confirmation's part of its state, when its
    /// state is one of this module's (else the asker as it came: a confirmation's own).
    fn unwrap(
        &self,
        asker: Asker,
        bound: &[u8],
    ) -> Result<(Map<String, Value>, Asker), Box<Asked>> {
        let Asker::Rounds {
            responses,
            state: Some(state),
            can_elicit,
        } = asker
        else {
            return Ok((Map::new(), asker));
        };
        let Ok(payload) = self.codec.open_with(&state, bound) else {
            let asker = Asker::Rounds {
                responses,
                state: Some(state),
                can_elicit,
            };
            return Ok((Map::new(), asker));
        };
        let Ok(carried) = serde_json::from_slice::<Carried>(&payload) else {
            return Err(Box::new(Asked::Invalid(ErrorData::invalid_params(
                "requestState refused: it is not restmcp's; nothing was sent",
                None,
            ))));
        };
        let mut answers = carried.a;
        if let Some(answer) = responses.as_ref().and_then(|r| r.get(ARGUMENTS)) {
            match answer.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let given = answer.get("content").and_then(Value::as_object);
                    answers.extend(given.cloned().unwrap_or_default());
                }
                _ => {
                    let names: Vec<String> = answers.keys().cloned().collect();
                    return Err(Box::new(Asked::Declined(format!(
                        "The user declined to give the arguments asked for{}; nothing was sent.",
                        if names.is_empty() {
                            String::new()
                        } else {
                            format!(" (had: {})", names.join(", "))
                        }
                    ))));
                }
            }
        }
        let asker = Asker::Rounds {
            responses,
            state: carried.c,
            can_elicit,
        };
        Ok((answers, asker))
    }

    /// `question` (a confirmation's) with its state wrapped in one of this module's that
    /// carries `answers`, when the user gave some: the retry brings both back.
    pub(super) fn carry(
        &self,
        tool: &Tool,
        model_arguments: &Map<String, Value>,
        answers: Map<String, Value>,
        mut question: InputRequiredResult,
    ) -> InputRequiredResult {
        if answers.is_empty() {
            return question;
        }
        let carried = Carried {
            a: answers,
            c: question.request_state.take(),
        };
        question.request_state = Some(self.seal(&carried, &self.binding(tool, model_arguments)));
        question
    }

    fn seal(&self, carried: &Carried, bound: &[u8]) -> String {
        let payload = serde_json::to_vec(carried).unwrap_or_default();
        self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(bound).ttl(STATE_TTL),
        )
    }

    /// What a state is bound to: the tool, the caller, and the model's own arguments.
    fn binding(&self, tool: &Tool, model_arguments: &Map<String, Value>) -> Vec<u8> {
        let arguments = Value::Object(model_arguments.clone()).to_string();
        let digest = crate::digest::sha256_parts(&[arguments.as_bytes()]);
        format!(
            "arguments\n{}\n{}\n{}",
            tool.name,
            self.caller,
            crate::digest::hex(&digest)
        )
        .into_bytes()
    }
}

fn declined(tool: &Tool, names: &[String]) -> String {
    format!(
        "The user declined to give {} for tool \"{}\"; nothing was sent.",
        names.join(", "),
        tool.name
    )
}

/// The form for what `tool`'s call lacks: its required arguments not in `arguments`,
/// and its `ask` arguments not in `answered`; none when there is nothing to ask.
fn form(
    tool: &Tool,
    arguments: &Map<String, Value>,
    answered: &Map<String, Value>,
) -> Option<Form> {
    let input = tool.input_schema.to_value();
    let properties = input.get("properties")?.as_object()?;
    let required: Vec<&str> = input
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let bindings = &tool.route.arguments.bindings;
    let asked: Vec<&str> = tool
        .route
        .ask
        .iter()
        .filter_map(|&i| bindings.get(i).map(|b| b.argument.as_str()))
        .collect();
    let mut fields = Map::new();
    let mut names = Vec::new();
    for (name, schema) in properties {
        let missing = required.contains(&name.as_str()) && !arguments.contains_key(name);
        let ask = asked.contains(&name.as_str()) && !answered.contains_key(name);
        if !(missing || ask) || is_credential(tool, name, schema) {
            continue;
        }
        let Some(mut field) = field(schema) else {
            continue;
        };
        if let Some(given) = arguments.get(name) {
            field["default"] = given.clone();
        }
        fields.insert(name.clone(), field);
        names.push(name.clone());
    }
    if names.is_empty() {
        return None;
    }
    let schema = json!({"type": "object", "properties": fields, "required": names});
    Some(Form { names, schema })
}

/// An argument's schema as a form field, when a form can hold it.
fn field(schema: &Value) -> Option<Value> {
    let schema = schema.as_object()?;
    let mut field = Map::new();
    for key in KEPT {
        if let Some(value) = schema.get(key) {
            field.insert(key.to_string(), value.clone());
        }
    }
    if let Some(names) = schema.get("x-enumNames") {
        field.insert("enumNames".into(), names.clone());
    }
    let titled = |key: &str, node: &Map<String, Value>| {
        node.get(key)
            .and_then(Value::as_array)
            .is_some_and(|options| options.iter().all(|o| o.get("const").is_some()))
    };
    let kind = field.get("type").and_then(Value::as_str);
    let choices = field.contains_key("enum") || titled("oneOf", &field) || titled("anyOf", &field);
    let fits = match kind {
        Some("string" | "number" | "integer" | "boolean") => true,
        Some("array") => field
            .get("items")
            .and_then(Value::as_object)
            .is_some_and(|items| {
                items.contains_key("enum") || titled("anyOf", items) || titled("oneOf", items)
            }),
        None if choices => {
            field.insert("type".into(), json!("string"));
            true
        }
        _ => false,
    };
    fits.then_some(Value::Object(field))
}

/// Whether argument `name` of `tool` is one a form may ask for: required by the
/// operation or marked `ask`, and not a credential.
fn askable(tool: &Tool, name: &str) -> bool {
    let bindings = &tool.route.arguments.bindings;
    let Some(index) = bindings.iter().position(|b| b.argument == name) else {
        return false;
    };
    let binding = &bindings[index];
    let input = tool.input_schema.to_value();
    let schema = input.pointer(&format!("/properties/{}", crate::json::escape_token(name)));
    (binding.required || tool.route.ask.contains(&index))
        && schema.is_some_and(|schema| !is_credential(tool, name, schema))
}

/// Whether an argument looks like a credential, which is never asked for.
fn is_credential(tool: &Tool, name: &str, schema: &Value) -> bool {
    let lower = name.to_ascii_lowercase().replace(['-', '_'], "");
    let named = [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "authorization",
        "credential",
        "privatekey",
    ]
    .iter()
    .any(|word| lower.contains(word));
    let password = schema.get("format").and_then(Value::as_str) == Some("password")
        || schema.get("writeOnly") == Some(&Value::Bool(true));
    let header = tool.route.arguments.get(name).is_some_and(|b| {
        matches!(b.location, Location::Header | Location::Cookie)
            && (b.wire_name.eq_ignore_ascii_case("authorization")
                || b.wire_name.to_ascii_lowercase().contains("key"))
    });
    named || password || header
}
