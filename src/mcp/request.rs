//! One `tools/call` as its JSON-RPC message carries it, read once for every transport: the
//! request's id, the tool's name and arguments, what its `_meta` says about running it
//! (trace context, a progress token, a revision of its own, the Tasks extension), and the
//! answers of an earlier confirmation round (`inputResponses`, `requestState`). The direct
//! paths (Streamable HTTP's [`super::direct`], [`super::stdio`]) read the message with
//! [`ToolCall::take`], or a call of the plainest shape straight from its bytes with
//! [`plain_call`] (stdio, and a session's call in [`super::front`]); the SDK's path
//! ([`super::server`]) gets the parsed params from rmcp and reads only their `_meta` with
//! [`CallMeta::read`]. Either way the answer is written by [`answer_bytes`], from the
//! SDK's own types.

use rmcp::model::{
    ContentBlock, ErrorData, JsonRpcError, JsonRpcResponse, JsonRpcVersion2_0, ProtocolVersion,
    RequestId, ServerResult,
};
use serde_json::{Map, Value};

use super::call::Answered;
use super::confirm::Asker;
use crate::json::field;
use crate::telemetry::trace::TraceContext;

/// `_meta` key of a 2026-07-28 request's own protocol revision.
pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a 2026-07-28 request's own log level (SEP-2575).
pub(super) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a 2026-07-28 request's `clientInfo`.
pub(super) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a 2026-07-28 request's client capabilities.
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What a request's `_meta` says about how to run it.
#[derive(Debug, Default, Clone)]
pub(super) struct CallMeta {
    /// W3C trace context (`traceparent`, `tracestate`): specific to this request, so it wins
    /// over the HTTP `traceparent` header.
    pub trace: Option<TraceContext>,
    /// The request asked for notifications while it runs (`progressToken`, or a
    /// 2026-07-28 request's own `logLevel`), which only the SDK's peer can send.
    pub wants_notifications: bool,
    /// The request names its own protocol revision (2026-07-28's per-request `_meta`).
    pub names_revision: bool,
    /// The request declares the Tasks extension in its own client capabilities.
    pub declares_tasks: bool,
}

impl CallMeta {
    /// Reads the `_meta` of a request's `params`, leaving the message as it is.
    pub(super) fn of(message: &Value) -> CallMeta {
        CallMeta::read(
            super::jsonrpc::member(message, &["params", "_meta"]).and_then(Value::as_object),
        )
    }

    /// Reads a request's `_meta` object (`None`: it has none).
    pub(super) fn read(meta: Option<&Map<String, Value>>) -> CallMeta {
        let Some(meta) = meta else {
            return CallMeta::default();
        };
        let has = |key: &str| field(meta, key).is_some();
        let text = |key: &str| field(meta, key).and_then(Value::as_str);
        CallMeta {
            trace: text("traceparent")
                .and_then(|traceparent| TraceContext::parse(traceparent, text("tracestate"))),
            wants_notifications: has("progressToken") || has(META_LOG_LEVEL),
            names_revision: has(META_VERSION),
            declares_tasks: field(meta, META_CAPABILITIES)
                .and_then(|capabilities| crate::json::member(capabilities, "extensions"))
                .is_some_and(super::session::declares_tasks),
        }
    }
}

/// The id of a request, when it is one a direct path answers (a string, or an integer that
/// fits in 64 bits).
pub(super) fn request_id(message: &Value) -> Option<RequestId> {
    match crate::json::member(message, "id")? {
        Value::String(id) => Some(RequestId::String(id.as_str().into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

/// A `tools/call` message of the plainest shape, read without building a tree of it:
/// members `jsonrpc` ("2.0"), `id` (a string or an integer that fits in 64 bits), `method`
/// ("tools/call") and `params` with `name` and, if any, `arguments` (an object), each
/// once, and nothing else. Any other message (`_meta`, a confirmation's answers, an
/// escaped `method`, a repeated member, a bad shape) is `None`, and is read as a tree
/// ([`ToolCall::take`]), which judges it as before. The message and `params` trees cost
/// about 5,000 instructions a call that this does not spend (bench/README.md, Per call).
pub(super) fn plain_call(line: &[u8]) -> Option<ToolCall> {
    // Read from a `str` once the whole message is known to be UTF-8: serde_json then checks
    // no string on its own (about 1,000 instructions a call less). Not UTF-8, it is no
    // message, which the tree's reading says.
    let message: PlainMessage<'_> = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
    if message.jsonrpc != "2.0" || message.method != "tools/call" {
        return None;
    }
    Some(ToolCall {
        id: message.id.0,
        name: message.params.name,
        arguments: message.params.arguments,
        meta: CallMeta::default(),
        capabilities: None,
        rest: Map::new(),
    })
}

/// The members [`plain_call`] reads; any other is an error, and so is a repeated one.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainMessage<'a> {
    jsonrpc: &'a str,
    id: PlainId,
    method: &'a str,
    params: PlainParams,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainParams {
    name: String,
    /// Absent: no arguments. `null` is an error here (the tree's path judges it).
    #[serde(default)]
    arguments: Map<String, Value>,
}

/// A request id as [`request_id`] takes it: a string, or an integer that fits in an `i64`.
struct PlainId(RequestId);

impl<'de> serde::Deserialize<'de> for PlainId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = PlainId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<PlainId, E> {
                Ok(PlainId(RequestId::Number(n)))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<PlainId, E> {
                i64::try_from(n)
                    .map(|n| PlainId(RequestId::Number(n)))
                    .map_err(|_| E::custom("an id past i64"))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<PlainId, E> {
                Ok(PlainId(RequestId::String(text.into())))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A `tools/call` request read from its message.
#[derive(Debug)]
pub(super) struct ToolCall {
    pub id: RequestId,
    /// The tool name as the client knows it.
    pub name: String,
    pub arguments: Map<String, Value>,
    /// What `_meta` says about running it.
    pub meta: CallMeta,
    /// The client capabilities its `_meta` declares (2026-07-28), for a confirmation round.
    capabilities: Option<Value>,
    /// The other members of `params` (`inputResponses`, `requestState`, …).
    rest: Map<String, Value>,
}

impl ToolCall {
    /// Reads the `tools/call` request `message`, whose id is `id` ([`request_id`]) and
    /// whose `_meta` said `meta` ([`CallMeta::of`]), taking its `params` out of it (nothing
    /// is copied). `params` of the wrong shape give the error the client is answered with,
    /// and leave `message` as it was.
    pub(super) fn take(
        message: &mut Value,
        id: RequestId,
        meta: CallMeta,
    ) -> Result<ToolCall, ErrorData> {
        shape(crate::json::member(message, "params"))?;
        let params = message.as_object_mut().and_then(|fields| {
            fields
                .iter_mut()
                .find_map(|(key, value)| (key == "params").then(|| value.take()))
        });
        let Some(Value::Object(params)) = params else {
            return Err(ErrorData::invalid_params("missing params", None));
        };
        // Taken apart in one pass: no name hashed (see `crate::json::field`).
        let (mut name, mut arguments, mut capabilities) = (String::new(), Map::new(), None);
        let mut rest = Map::new();
        for (key, value) in params {
            match (key.as_str(), value) {
                ("name", Value::String(text)) => name = text,
                ("arguments", Value::Object(map)) => arguments = map,
                ("_meta", Value::Object(mut meta)) => capabilities = meta.remove(META_CAPABILITIES),
                ("name" | "arguments" | "_meta", _) => {}
                (_, value) => {
                    rest.insert(key, value);
                }
            }
        }
        Ok(ToolCall {
            id,
            name,
            arguments,
            meta,
            capabilities,
            rest,
        })
    }

    /// How the user can be asked on a 2026-07-28 request without a session: the answers
    /// and state of an earlier round, and whether its client can elicit
    /// ([`super::confirm`]).
    pub(super) fn rounds(&mut self) -> Result<Asker, ErrorData> {
        let responses = match self.rest.remove("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Object(responses)) => Some(responses.into_iter().collect()),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "inputResponses must be an object",
                    None,
                ));
            }
        };
        let state = match self.rest.remove("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(state)) => Some(state),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "requestState must be a string",
                    None,
                ));
            }
        };
        Ok(Asker::rounds(responses, state, self.capabilities.as_ref()))
    }
}

/// Whether `params` has the shape of a `tools/call`'s: an object with a string `name`,
/// `arguments` an object or absent, `_meta` an object or absent.
fn shape(params: Option<&Value>) -> Result<(), ErrorData> {
    let Some(Value::Object(params)) = params else {
        return Err(ErrorData::invalid_params("missing params", None));
    };
    if !matches!(field(params, "name"), Some(Value::String(_))) {
        return Err(ErrorData::invalid_params("missing tool name", None));
    }
    if !matches!(
        field(params, "arguments"),
        None | Some(Value::Null | Value::Object(_))
    ) {
        return Err(ErrorData::invalid_params(
            "arguments must be an object",
            None,
        ));
    }
    if !matches!(field(params, "_meta"), None | Some(Value::Object(_))) {
        return Err(ErrorData::invalid_params("_meta must be an object", None));
    }
    Ok(())
}

/// The buffer an answer is first written into.
const ANSWER_CAPACITY: usize = 1024;

/// The answer to request `id`: its result in the client's revision, or its error, as the
/// JSON text the SDK would send. A result's `structuredContent` that its first text is
/// exactly, compact ([`Answered::text_is_structured`], a JSON answer's usual shape), is
/// written as that text rather than by serializing the tree again: byte for byte the same
/// answer.
pub(super) fn answer_bytes(
    id: RequestId,
    outcome: Result<Answered, ErrorData>,
    version: &ProtocolVersion,
) -> Vec<u8> {
    let answered = match outcome {
        Ok(answered) => answered,
        Err(error) => return error_bytes(id, error),
    };
    let mut response = JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: super::revision::finish(ServerResult::from(answered.response), version),
    };
    let tree = stand_in_for_text(&mut response.result, answered.text_is_structured);
    if let Some(bytes) = plain_answer(&response, tree.is_some()) {
        return bytes;
    }
    let Some(tree) = tree else {
        return written(&response);
    };
    let mut bytes = written(&response);
    if text_for_stand_in(&mut bytes, &response.result) {
        return bytes;
    }
    // Not found where it was put (no answer has it elsewhere): written from the tree, read
    // again from the text (the stand-in of a structured content left in it is no tree).
    if let ServerResult::CallToolResult(call) = &mut response.result {
        let text = call.content.first().and_then(|block| block.as_text());
        let read = text.and_then(|text| serde_json::from_str(&text.text).ok());
        call.structured_content = Some(read.unwrap_or(tree));
    }
    written(&response)
}

/// The bytes of an answer whose result is a `tools/call` result of the plainest shape (one
/// text content without annotations or `_meta`, no `_meta` of its own), written here: the
/// SDK's derived serialization writes the same bytes (a test compares them), at about twice
/// the cost, most of it in escaping the text, which [`crate::json::write_string`] does
/// here. `text_is_structured`: the structured content stands in for the text (see
/// [`stand_in_for_text`]). `None` for any other answer.
fn plain_answer(
    response: &JsonRpcResponse<ServerResult>,
    text_is_structured: bool,
) -> Option<Vec<u8>> {
    let ServerResult::CallToolResult(call) = &response.result else {
        return None;
    };
    let [ContentBlock::Text(text)] = call.content.as_slice() else {
        return None;
    };
    if call.meta.is_some() || text.meta.is_some() || text.annotations.is_some() {
        return None;
    }
    // The text escaped (at most twice its length) and, as structured content, once more.
    let mut bytes = Vec::with_capacity(ANSWER_CAPACITY.max(3 * text.text.len() + 160));
    bytes.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut bytes, &response.id).ok()?;
    bytes.extend_from_slice(br#","result":{"#);
    if let Some(result_type) = &call.result_type {
        bytes.extend_from_slice(br#""resultType":"#);
        serde_json::to_writer(&mut bytes, result_type).ok()?;
        bytes.push(b',');
    }
    bytes.extend_from_slice(br#""content":[{"type":"text","text":"#);
    crate::json::write_string(&mut bytes, &text.text);
    bytes.extend_from_slice(b"}]");
    match &call.structured_content {
        Some(_) if text_is_structured => {
            bytes.extend_from_slice(br#","structuredContent":"#);
            bytes.extend_from_slice(text.text.as_bytes());
        }
        Some(structured) => {
            bytes.extend_from_slice(br#","structuredContent":"#);
            serde_json::to_writer(&mut bytes, structured).ok()?;
        }
        None => {}
    }
    if let Some(is_error) = call.is_error {
        bytes.extend_from_slice(if is_error {
            br#","isError":true"#
        } else {
            br#","isError":false"#
        });
    }
    bytes.extend_from_slice(b"}}");
    Some(bytes)
}

/// What an answer's structured content is written as until its text takes the place.
const STAND_IN: &[u8] = br#""structuredContent":null"#;

/// A result's structured content, replaced by `null`, when its first text is that content
/// written compact: marked so by the response mapping, and still of the marked length.
fn stand_in_for_text(result: &mut ServerResult, marked: Option<usize>) -> Option<Value> {
    let ServerResult::CallToolResult(call) = result else {
        return None;
    };
    super::call::marked_length(call, marked)?;
    call.structured_content.as_mut().map(std::mem::take)
}

/// Puts the first text of `result` in place of the stand-in `null` written for its
/// structured content, the last one in `bytes`: the result's own member, which comes after
/// its content (a text's quotes are escaped, so no text holds [`STAND_IN`], and restmcp's
/// `_meta` has no such member). `false` when there is none.
fn text_for_stand_in(bytes: &mut Vec<u8>, result: &ServerResult) -> bool {
    let ServerResult::CallToolResult(call) = result else {
        return false;
    };
    let Some(text) = call.content.first().and_then(|block| block.as_text()) else {
        return false;
    };
    let Some(at) = bytes
        .windows(STAND_IN.len())
        .rposition(|at| at[0] == b'"' && at == STAND_IN)
    else {
        return false;
    };
    let null = at + STAND_IN.len() - "null".len();
    replace_range(bytes, null..null + "null".len(), text.text.as_bytes());
    true
}

/// `bytes` with `range` replaced by `with`, moving what follows once.
fn replace_range(bytes: &mut Vec<u8>, range: std::ops::Range<usize>, with: &[u8]) {
    let tail = range.end..bytes.len();
    let length = range.start + with.len() + tail.len();
    if length > bytes.len() {
        bytes.resize(length, 0);
    }
    bytes.copy_within(tail, range.start + with.len());
    bytes[range.start..range.start + with.len()].copy_from_slice(with);
    bytes.truncate(length);
}

/// `response` as JSON text.
fn written(response: &JsonRpcResponse<ServerResult>) -> Vec<u8> {
    // Room for a small answer at once: `to_vec` starts at 128 bytes and grows by doubling.
    let mut bytes = Vec::with_capacity(ANSWER_CAPACITY);
    match serde_json::to_writer(&mut bytes, response) {
        Ok(()) => bytes,
        Err(_) => Vec::new(),
    }
}

/// The error answer to request `id`.
pub(super) fn error_bytes(id: RequestId, error: ErrorData) -> Vec<u8> {
    serde_json::to_vec(&JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id),
        error,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;

    fn call(message: Value) -> Result<ToolCall, ErrorData> {
        let mut message = message;
        let meta = CallMeta::of(&message);
        let id = request_id(&message).unwrap();
        ToolCall::take(&mut message, id, meta)
    }

    #[test]
    fn a_plain_call_is_read_as_its_tree_is() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getPet","arguments":{"petId":1,"tags":["a"]}}}"#,
            r#"{"params":{"arguments":{},"name":"get\u0050et"},"method":"tools/call","id":"a\n1","jsonrpc":"2.0"}"#,
            r#" {"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"x"}} "#,
        ] {
            let plain = plain_call(line.as_bytes()).expect(line);
            let tree = call(serde_json::from_str(line).unwrap()).unwrap();
            assert_eq!(plain.id, tree.id, "{line}");
            assert_eq!(plain.name, tree.name, "{line}");
            assert_eq!(plain.arguments, tree.arguments, "{line}");
            assert!(plain.rest.is_empty() && plain.capabilities.is_none());
            assert!(plain.meta.trace.is_none() && !plain.meta.wants_notifications);
        }
    }

    #[test]
    fn any_other_message_is_left_to_the_tree() {
        for line in [
            // What only the tree's path reads or judges.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","requestState":"s"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}} x"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}]"#,
        ] {
            assert!(plain_call(line.as_bytes()).is_none(), "{line}");
        }
    }

    #[test]
    fn a_call_is_read_with_what_its_meta_says() {
        let message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "getPet", "arguments": {"petId": 1},
            "_meta": {
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                "progressToken": "p",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":
                    {"extensions": {"io.modelcontextprotocol/tasks": {}}}
            },
            "requestState": "sealed"
        }});
        let mut call = call(message).unwrap();
        assert_eq!(call.id, RequestId::Number(7));
        assert_eq!(call.name, "getPet");
        assert_eq!(
            call.arguments,
            json!({"petId": 1}).as_object().unwrap().clone()
        );
        assert!(call.meta.trace.is_some());
        assert!(
            call.meta.wants_notifications && call.meta.names_revision && call.meta.declares_tasks
        );
        assert!(call.rounds().is_ok());
    }

    #[test]
    fn a_call_of_the_wrong_shape_is_refused_and_left_as_it_was() {
        for (params, problem) in [
            (json!(null), "missing params"),
            (json!({"arguments": {}}), "missing tool name"),
            (
                json!({"name": "t", "arguments": [1]}),
                "arguments must be an object",
            ),
            (json!({"name": "t", "_meta": 3}), "_meta must be an object"),
        ] {
            let mut message = json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call",
                "params": params});
            let before = message.clone();
            let id = RequestId::String("a".into());
            let error = ToolCall::take(&mut message, id, CallMeta::default()).unwrap_err();
            assert_eq!(error.message, problem);
            assert_eq!(message, before);
        }
        let mut call = call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "inputResponses": []}}))
        .unwrap();
        let Err(error) = call.rounds() else {
            panic!("inputResponses of the wrong shape were taken");
        };
        assert_eq!(error.message, "inputResponses must be an object");
    }

    #[test]
    fn only_string_and_integer_ids_are_taken() {
        for id in [json!(null), json!(1.5), json!([1]), json!(u64::MAX)] {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t"}});
            assert!(request_id(&message).is_none());
        }
    }

    #[test]
    fn answers_are_what_the_sdk_sends() {
        let version = ProtocolVersion::V_2025_06_18;
        let error = ErrorData::invalid_params("unknown tool", None);
        let text = answer_bytes(RequestId::Number(3), Err(error.clone()), &version);
        assert_eq!(text, error_bytes(RequestId::Number(3), error));
        let message: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(message["id"], 3);
        assert_eq!(message["error"]["code"], -32602);
    }

    /// The answer as serde_json writes the SDK's types, with no shortcut.
    fn sdk_bytes(id: i64, result: CallToolResult, version: &ProtocolVersion) -> Vec<u8> {
        serde_json::to_vec(&JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(id),
            result: crate::mcp::revision::finish(
                ServerResult::from(CallToolResponse::from(result)),
                version,
            ),
        })
        .unwrap()
    }

    fn result(texts: &[&str], structured: Option<Value>, is_error: bool) -> CallToolResult {
        let content = texts.iter().map(|text| ContentBlock::text(*text)).collect();
        let mut result = if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = structured;
        result
    }

    #[test]
    fn structured_content_written_as_its_text_is_the_answer_the_sdk_writes() {
        let pet = json!({"id": 10, "name": "doggie", "category": {"id": 1, "name": "Dogs"},
            "photoUrls": ["a"], "tags": [], "price": 9.99, "big": 12345678901234567890u64,
            "neg": -3, "ok": true, "none": null, "word": "café", "say": "\"hi\"\n\u{1}"});
        let pet_text = pet.to_string();
        let whole = Some(pet_text.len());
        let mut replayed = result(&[&pet_text], Some(pet.clone()), false);
        let mut meta = serde_json::Map::new();
        meta.insert("io.restmcp/replayed".into(), Value::Bool(true));
        replayed.meta = Some(rmcp::model::MetaObject(meta));
        let noted = format!("{pet_text} Call the status tool to follow it.");
        // (result, its mark, written from the text)
        let cases = [
            (result(&[&pet_text], Some(pet.clone()), false), whole, true),
            (
                result(&[&pet_text, "1 more page"], Some(pet.clone()), false),
                whole,
                true,
            ),
            (replayed, whole, true),
            (result(&["1"], Some(json!(1)), false), Some(1), true),
            (result(&["null"], Some(Value::Null), false), Some(4), true),
            (result(&["[]"], Some(json!([])), false), Some(2), true),
            (
                result(
                    &[r#"{"result":[1,2]}"#],
                    Some(json!({"result": [1, 2]})),
                    false,
                ),
                Some(16),
                true,
            ),
            // Not marked, a text changed since (another length), nothing structured, no
            // text: written from the tree.
            (result(&[&pet_text], Some(pet.clone()), false), None, false),
            (result(&[&noted], Some(pet.clone()), false), whole, false),
            (result(&[&pet_text], None, true), whole, false),
            (result(&[], Some(pet.clone()), false), whole, false),
            (result(&["note", &pet_text], Some(pet), false), whole, false),
            // Raw control characters, quotes, backslashes and non-ASCII in a text.
            (
                result(&["a\tb \"q\" \\ ✓\u{1}\u{7f}"], None, false),
                None,
                false,
            ),
            (result(&[""], None, false), None, false),
        ];
        for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2026_07_28] {
            for (id, (call, mark, from_text)) in (0..).zip(&cases) {
                let mut server = ServerResult::from(CallToolResponse::from(call.clone()));
                let stood_in = stand_in_for_text(&mut server, *mark).is_some();
                assert_eq!(stood_in, *from_text, "case {id}");
                let answered = Answered {
                    response: call.clone().into(),
                    tool: "t".into(),
                    text_is_structured: *mark,
                };
                let ours = answer_bytes(RequestId::Number(id), Ok(answered), &version);
                let sdk = sdk_bytes(id, call.clone(), &version);
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    String::from_utf8(sdk).unwrap(),
                    "case {id}"
                );
            }
        }
    }

    #[test]
    fn a_plain_answer_to_a_request_with_a_string_id_is_the_sdks() {
        let call = result(&["{\"a\":1}"], Some(json!({"a": 1})), false);
        for (mark, version) in [
            (Some(7), ProtocolVersion::V_2026_07_28),
            (None, ProtocolVersion::V_2025_06_18),
        ] {
            let id = RequestId::String("req \"1\"".into());
            let answered = Answered {
                response: call.clone().into(),
                tool: "t".into(),
                text_is_structured: mark,
            };
            let ours = answer_bytes(id.clone(), Ok(answered), &version);
            let sdk = serde_json::to_vec(&JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id,
                result: crate::mcp::revision::finish(
                    ServerResult::from(CallToolResponse::from(call.clone())),
                    &version,
                ),
            })
            .unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(sdk).unwrap()
            );
        }
    }

    #[test]
    fn a_range_is_replaced_by_longer_shorter_and_empty_bytes() {
        for with in ["", "x", "null", "longer than four"] {
            let mut bytes = b"[a,null,b]".to_vec();
            replace_range(&mut bytes, 3..7, with.as_bytes());
            assert_eq!(String::from_utf8(bytes).unwrap(), format!("[a,{with},b]"));
        }
    }
}
