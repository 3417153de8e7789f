//! What a well-formed JSON-RPC message is, for the transports to refuse the rest before
//! the SDK sees it: JSON-RPC 2.0 as MCP narrows it (basic/index, "Messages"): an object with
//! `"jsonrpc": "2.0"`, an id that is a string or an integer (never null), a method name,
//! params that are an object. Both transports answer a failure the same way, with a
//! JSON-RPC error that carries the id when it could be read.

use serde_json::{Value, json};

use crate::json::field;

/// The member at `path` (object keys, outermost first), as `Value::pointer` finds it for a
/// fixed path, but without the two strings `pointer` allocates per token to unescape it,
/// and without hashing names in a small object ([`crate::json::field`]): the transports
/// look several such paths up in every message.
pub(super) fn member<'a>(message: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(message, |node, key| crate::json::member(node, key))
}

/// A problem found: the JSON-RPC error code, the message, and the id to answer with.
pub(super) type Problem = (i64, String, Option<Value>);

/// Whether `message` is a JSON-RPC 2.0 message as MCP uses them (basic/index "Messages"):
/// else the error code, the problem, and the id to answer with when it could be read.
pub(super) fn check_message(message: &Value) -> Result<(), Problem> {
    let invalid = |problem: &str, id: Option<&Value>| {
        Err((-32600, format!("Invalid Request: {problem}"), id.cloned()))
    };
    let Some(fields) = message.as_object() else {
        return invalid("a JSON-RPC message is a JSON object", None);
    };
    let id = field(fields, "id");
    let valid_id = id.filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    if id.is_some() && valid_id.is_none() {
        return invalid(
            &format!(
                "the id must be a string or an integer (MCP allows no null id), not {}",
                crate::json::kind(id.unwrap_or(&Value::Null))
            ),
            None,
        );
    }
    if field(fields, "jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"", valid_id);
    }
    let method = match field(fields, "method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return invalid("the method must be a string", valid_id),
        None if valid_id.is_some()
            && (field(fields, "result").is_some() || field(fields, "error").is_some()) =>
        {
            return Ok(());
        }
        None => return invalid("a request or notification needs a method", valid_id),
    };
    let params = field(fields, "params");
    let wrong = |problem: &str| {
        Err((
            -32602,
            format!("Invalid params: {problem}"),
            valid_id.cloned(),
        ))
    };
    match params {
        None | Some(Value::Object(_)) => {}
        Some(_) => return wrong("params must be an object"),
    }
    if method == "tools/list"
        && params
            .and_then(|p| crate::json::member(p, "cursor"))
            .is_some_and(|cursor| !cursor.is_string() && !cursor.is_null())
    {
        return wrong("the cursor must be a string from a previous nextCursor");
    }
    Ok(())
}

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}` around an id and a result already serialized.
pub(super) fn success_bytes(id: &[u8], result: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(result.len() + id.len() + 32);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(id);
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    body
}

/// A JSON-RPC error message; `id` when the request's could be read (else null).
pub(super) fn failure_message(code: i64, message: &str, id: Option<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": {"code": code, "message": message}})
}
