//! Long-running operations past their call: the handle a result gives for an operation
//! still going upstream, the status tool that looks at it, and 2026-07-28's Tasks
//! extension (`io.modelcontextprotocol/tasks`), where such a call becomes a task at once.
//!
//! A handle (and a task id, which is the same string) is the operation's [`Pending`] state
//! sealed with the key confirmations are sealed with (`server.confirm.state_key_env`;
//! rmcp's `RequestStateCodec`, HMAC-SHA256), bound to the caller and with a lifetime of
//! [`HANDLE_TTL`]. Nothing is kept per operation: whoever holds the handle asks any replica
//! sharing the key, which polls the upstream's status monitor once through the tool's own
//! exchange. Sealed is not secret: the status monitor's URL can be read from a handle, as
//! the upstream's own answer gave it.
//!
//! The store keeps two small things, shared by replicas with `[server.store]`: when an
//! operation was last asked about, so a client polling faster than the upstream's
//! `Retry-After` gets the last status without a request upstream; and the tasks cancelled
//! with `tasks/cancel` (restmcp stops following them; no API restmcp knows has a generic way
//! to cancel upstream, so the operation may go on there).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use rmcp::model::{
    CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, RequestStateCodec, SealOptions,
    Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use crate::store::{Claim, Keep, Store};
use crate::upstream::operation::Pending;
use crate::upstream::{CallContext, Called, Content, Dispatcher, Resumed, ToolResult};

/// How long a handle (and a task) can be asked about.
pub(crate) const HANDLE_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The status tool's usual name (`restmcp_operation_status` when a tool has it).
const STATUS_TOOL: &str = "operation_status";

/// The status tool's title, which tells it from an API's tools (`restmcp selftest` skips it).
pub const STATUS_TOOL_TITLE: &str = "Status of a long-running operation";

/// Seals and opens handles, and answers the status tool and `tasks/*`.
pub(crate) struct Operations {
    codec: RequestStateCodec,
    store: Arc<Store>,
}

/// What a handle holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    /// The tool whose call started the operation.
    t: String,
    /// The status monitor.
    m: String,
    /// Where the result is read, when not from the monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<String>,
    /// The status when the handle was made.
    s: String,
    /// The upstream's wait between polls, in milliseconds.
    w: u64,
    /// When the operation was accepted, in milliseconds since the Unix epoch.
    c: u64,
}

/// A handle just made for an operation, and when the operation was accepted.
pub(crate) struct Handed {
    pub handle: String,
    pub created: Duration,
}

/// An opened handle.
pub(crate) struct Opened {
    pub tool: String,
    pub pending: Pending,
    /// When the operation was accepted (since the Unix epoch).
    pub created: Duration,
    /// The handle itself, as given.
    handle: String,
}

/// The name of the status tool for a catalog that may have a tool of that name.
pub(crate) fn status_tool_name(taken: impl Fn(&str) -> bool) -> String {
    if taken(STATUS_TOOL) {
        format!("restmcp_{STATUS_TOOL}")
    } else {
        STATUS_TOOL.to_string()
    }
}

/// The status tool's definition, as MCP tool JSON.
pub(crate) fn status_tool_definition(name: &str) -> Value {
    json!({
        "name": name,
        "title": STATUS_TOOL_TITLE,
        "description": "Looks at an operation an API goes on with after a tool call answered \
            (the call's result gives its handle): says whether it is still running, and once \
            it ended gives the call's final result. Ask again after the wait it gives; do not \
            call the original tool again, which would start another operation.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "handle": {
                    "type": "string",
                    "description": "The handle a tool call's result gave for the operation."
                }
            },
            "required": ["handle"],
            "additionalProperties": false
        },
        "annotations": {
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": true
        }
    })
}

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// What a handle is bound to: the caller (an OAuth caller's pseudonym, or empty).
fn bound(caller: &str) -> Vec<u8> {
    let mut bound = b"restmcp-operation\0".to_vec();
    bound.extend_from_slice(caller.as_bytes());
    bound
}

/// The store key of a handle's state (cancelled).
fn key(kind: &str, handle: &str) -> String {
    let digest = crate::digest::sha256_parts(&[handle.as_bytes()]);
    format!("restmcp:{kind}:{}", crate::digest::hex(&digest))
}

/// The store key saying an operation's monitor was asked lately (whichever of its handles
/// is used): its caller, start and monitor.
fn asked_key(caller: &str, created: Duration, monitor: &url::Url) -> String {
    let created = created.as_millis().to_string();
    let digest = crate::digest::sha256_parts(&[
        caller.as_bytes(),
        created.as_bytes(),
        monitor.as_str().as_bytes(),
    ]);
    format!("restmcp:operation-asked:{}", crate::digest::hex(&digest))
}

/// How long a status just seen stands for: the upstream's wait, at least 100 ms.
fn standing(pending: &Pending) -> Duration {
    pending.wait().max(Duration::from_millis(100))
}

impl Operations {
    pub(crate) fn new(codec: RequestStateCodec, store: Arc<Store>) -> Operations {
        Operations { codec, store }
    }

    /// A handle for `pending`, an operation a call of `tool` by `caller` started at
    /// `created`.
    pub(crate) fn seal(
        &self,
        tool: &str,
        pending: &Pending,
        caller: &str,
        created: Duration,
    ) -> String {
        let sealed = Sealed {
            t: tool.to_string(),
            m: pending.monitor.to_string(),
            r: pending.result.as_ref().map(|url| url.to_string()),
            s: pending.status.clone(),
            w: pending.wait_ms,
            c: created.as_millis() as u64,
        };
        let payload = serde_json::to_vec(&sealed).unwrap_or_default();
        // The handle lives from the operation's start, whenever it is re-sealed.
        let left = (created + HANDLE_TTL).saturating_sub(since_epoch());
        self.codec.seal_with(
            &payload,
            &SealOptions::new()
                .associated_data(&bound(caller))
                .ttl(left.max(Duration::from_secs(1))),
        )
    }

    /// The operation a handle restmcp sealed for `caller` holds; a text saying why not.
    pub(crate) fn open(&self, handle: &str, caller: &str) -> Result<Opened, String> {
        let payload = self
            .codec
            .open_with(handle.trim(), &bound(caller))
            .map_err(|error| match error {
                rmcp::model::RequestStateError::Expired => {
                    "the handle expired (handles last 24 hours)".to_string()
                }
                _ => "it is not a handle restmcp gave this caller".to_string(),
            })?;
        let sealed: Sealed = serde_json::from_slice(&payload)
            .map_err(|_| "it is not a handle restmcp gave this caller".to_string())?;
        let created = Duration::from_millis(sealed.c);
        if created + HANDLE_TTL < since_epoch() {
            return Err("the handle expired (handles last 24 hours)".to_string());
        }
        let url = |text: &str| {
            url::Url::parse(text).map_err(|_| "it is not a handle restmcp gave".to_string())
        };
        Ok(Opened {
            pending: Pending {
                monitor: url(&sealed.m)?,
                result: sealed.r.as_deref().map(url).transpose()?,
                status: sealed.s,
                wait_ms: sealed.w,
            },
            tool: sealed.t,
            created,
            handle: handle.trim().to_string(),
        })
    }

    /// Gives the result of a call of `tool` that left an operation going upstream its
    /// handle, in a sentence naming the status tool; returns the handle. The status just
    /// seen stands until the upstream's wait is over.
    pub(crate) async fn hand_over(
        &self,
        called: &mut Called,
        tool: &str,
        status_tool: &str,
        caller: &str,
    ) -> Option<Handed> {
        let pending = called.operation.as_ref()?;
        // In whole milliseconds, as the handle keeps it: createdAt is the same every time.
        let created = Duration::from_millis(since_epoch().as_millis() as u64);
        let handle = self.seal(tool, pending, caller, created);
        let asked = asked_key(caller, created, &pending.monitor);
        let _ = self
            .store
            .put(
                &asked,
                &pending.status,
                standing(pending),
                Keep::Cache(caller),
            )
            .await;
        let text = format!(
            "Call {status_tool} with handle \"{handle}\" to see how it goes and to get its \
             result (ask again after about {} s); do not call the tool again, which would \
             start the operation again.",
            pending.wait().as_secs().max(1)
        );
        called.result.unmark();
        if let Some(Content::Text { text: first }) = called.result.content.first_mut() {
            first.push(' ');
            first.push_str(&text);
        }
        Some(Handed { handle, created })
    }

    /// The status tool's answer for `handle`, asked by `caller`, who `may_call` the tools
    /// its scopes open.
    pub(crate) async fn status(
        &self,
        dispatcher: &Dispatcher,
        handle: &str,
        (caller, may_call): (&str, &(dyn Fn(&str) -> bool + Sync)),
        context: &CallContext,
    ) -> ToolResult {
        let opened = match self.open(handle, caller) {
            Ok(opened) => opened,
            Err(why) => return ToolResult::error(format!("Unknown operation handle: {why}.")),
        };
        if !may_call(&opened.tool) {
            return ToolResult::error(format!(
                "The access token no longer grants the scopes tool \"{}\" needs; its \
                 operation cannot be looked at.",
                opened.tool
            ));
        }
        match self.look(dispatcher, opened, context).await {
            Look::Running { pending, handle } => {
                let wait = pending.wait().as_secs().max(1);
                ToolResult {
                    content: vec![Content::Text {
                        text: format!(
                            "The operation is still {}; ask again in about {wait} s with \
                             handle \"{handle}\".",
                            pending.status
                        ),
                    }],
                    structured: Some(json!({
                        "status": pending.status,
                        "running": true,
                        "handle": handle,
                        "retryAfterSeconds": wait,
                    })),
                    is_error: false,
                    text_is_structured: None,
                }
            }
            Look::Done(called) => called.result,
            Look::Unknown(why) => ToolResult::error(format!("Unknown operation handle: {why}.")),
        }
    }

    /// Looks at an operation: from the store when the upstream's wait since the last look
    /// has not passed, else once upstream.
    async fn look(&self, dispatcher: &Dispatcher, opened: Opened, context: &CallContext) -> Look {
        let Opened {
            tool,
            pending,
            created,
            handle,
        } = opened;
        let caller = context.pseudonym();
        let asked = asked_key(caller, created, &pending.monitor);
        // A failing store only costs the throttle: the upstream is asked.
        if let Ok(Claim::Held(status)) = self
            .store
            .claim(
                &asked,
                &pending.status,
                standing(&pending),
                Keep::Cache(caller),
            )
            .await
        {
            let pending = Box::new(Pending { status, ..pending });
            return Look::Running { pending, handle };
        }
        let monitor = pending.monitor.clone();
        match dispatcher.resume(&tool, pending, context).await {
            Ok(Resumed::Running(pending)) => {
                let asked = asked_key(caller, created, &pending.monitor);
                let _ = self
                    .store
                    .put(
                        &asked,
                        &pending.status,
                        standing(&pending),
                        Keep::Cache(caller),
                    )
                    .await;
                // A new handle only when the upstream moved the monitor.
                let handle = if pending.monitor == monitor {
                    handle
                } else {
                    self.seal(&tool, &pending, caller, created)
                };
                Look::Running {
                    pending: Box::new(pending),
                    handle,
                }
            }
            Ok(Resumed::Done(called)) => Look::Done(Box::new(called)),
            Err(_) => Look::Unknown(format!(
                "tool \"{tool}\", which started it, is no longer served"
            )),
        }
    }

    /// The `CreateTaskResult` for a call that left `pending` going upstream (the handle
    /// [`Operations::hand_over`] made is the task id).
    pub(crate) fn task(&self, handed: &Handed, pending: &Pending) -> CreateTaskResult {
        let created = crate::telemetry::clock::rfc3339(handed.created);
        let task = Task::new(
            &handed.handle,
            TaskStatus::Working,
            created.clone(),
            created,
        )
        .with_status_message(format!("the upstream operation is {}", pending.status))
        .with_ttl_ms(HANDLE_TTL.as_millis() as u64)
        .with_poll_interval_ms(pending.wait().as_millis().max(1) as u64);
        CreateTaskResult::new(task)
    }

    /// `tasks/get`: the task's state; a task restmcp did not make for this caller is
    /// -32602.
    pub(crate) async fn get_task(
        &self,
        dispatcher: &Dispatcher,
        task_id: &str,
        context: &CallContext,
        finish: impl FnOnce(ToolResult) -> Value,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = context.pseudonym();
        let opened = self.open(task_id, caller).map_err(unknown_task)?;
        let created = crate::telemetry::clock::rfc3339(opened.created);
        let now = crate::telemetry::clock::rfc3339(since_epoch());
        let base = |status: TaskStatus| {
            Task::new(
                task_id.trim().to_string(),
                status,
                created.clone(),
                now.clone(),
            )
            .with_ttl_ms(HANDLE_TTL.as_millis() as u64)
        };
        if self.cancelled(task_id).await? {
            let task = base(TaskStatus::Cancelled).with_status_message(
                "cancelled: restmcp stopped following the operation; it may go on upstream",
            );
            return Ok(GetTaskResult::new(DetailedTask::new(
                task,
                TaskPayload::Cancelled,
            )));
        }
        let detailed = match self.look(dispatcher, opened, context).await {
            Look::Running { pending, .. } => DetailedTask::new(
                base(TaskStatus::Working)
                    .with_status_message(format!("the upstream operation is {}", pending.status))
                    .with_poll_interval_ms(pending.wait().as_millis().max(1) as u64),
                TaskPayload::Working,
            ),
            Look::Done(called) => {
                let result = match finish(called.result) {
                    Value::Object(result) => result,
                    _ => JsonObject::new(),
                };
                DetailedTask::new(
                    base(TaskStatus::Completed),
                    TaskPayload::Completed { result },
                )
            }
            Look::Unknown(why) => return Err(unknown_task(why)),
        };
        Ok(GetTaskResult::new(detailed))
    }

    /// `tasks/cancel`: restmcp stops following the operation (it may go on upstream).
    pub(crate) async fn cancel_task(&self, task_id: &str, caller: &str) -> Result<(), ErrorData> {
        let opened = self.open(task_id, caller).map_err(unknown_task)?;
        let left = (opened.created + HANDLE_TTL).saturating_sub(since_epoch());
        self.store
            .put(
                &key("task-cancelled", task_id.trim()),
                "1",
                left.max(Duration::from_secs(1)),
                Keep::Pinned,
            )
            .await
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("the cancellation could not be recorded ({error})"),
                    None,
                )
            })
    }

    /// `tasks/update`: restmcp's tasks never ask for input, so there is nothing to
    /// deliver; an answer for a task that is not this caller's is -32602.
    pub(crate) fn update_task(&self, task_id: &str, caller: &str) -> Result<(), ErrorData> {
        self.open(task_id, caller).map(|_| ()).map_err(unknown_task)
    }

    async fn cancelled(&self, task_id: &str) -> Result<bool, ErrorData> {
        self.store
            .get(&key("task-cancelled", task_id.trim()))
            .await
            .map(|held| held.is_some())
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("the task's state could not be read ({error})"),
                    None,
                )
            })
    }
}

/// What a look at an operation found.
enum Look {
    Running {
        pending: Box<Pending>,
        handle: String,
    },
    Done(Box<Called>),
    Unknown(String),
}

fn unknown_task(why: String) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task: {why}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operations() -> Operations {
        let codec = RequestStateCodec::new_unchecked(crate::digest::random::<32>().to_vec());
        Operations::new(codec, Arc::new(Store::memory()))
    }

    fn pending() -> Pending {
        Pending {
            monitor: url::Url::parse("https://api.example.test/operations/7").expect("url"),
            result: Some(url::Url::parse("https://api.example.test/things/7").expect("url")),
            status: "Running".into(),
            wait_ms: 1500,
        }
    }

    #[test]
    fn a_handle_opens_for_its_caller_only_and_not_once_altered() {
        let operations = operations();
        let created = since_epoch();
        let handle = operations.seal("putThing", &pending(), "alice", created);
        let opened = operations.open(&handle, "alice").expect("opens");
        assert_eq!(opened.tool, "putThing");
        assert_eq!(opened.pending, pending());
        assert_eq!(opened.created.as_millis(), created.as_millis());

        assert!(operations.open(&handle, "bob").is_err(), "another caller");
        assert!(operations.open(&handle, "").is_err(), "no caller");
        let mut altered = handle.clone();
        altered.insert(handle.len() / 2, 'A');
        assert!(operations.open(&altered, "alice").is_err());
        // Another process (another key) did not give it.
        assert!(self::operations().open(&handle, "alice").is_err());
    }

    #[test]
    fn a_handle_lives_a_day_from_the_operations_start() {
        let operations = operations();
        let long_ago = since_epoch() - HANDLE_TTL - Duration::from_secs(5);
        let handle = operations.seal("putThing", &pending(), "alice", long_ago);
        let refused = operations.open(&handle, "alice").err().expect("expired");
        assert!(refused.contains("expired"), "{refused}");
    }

    #[tokio::test]
    async fn a_cancelled_task_stays_cancelled_and_unknown_ones_are_invalid_params() {
        let operations = operations();
        let handle = operations.seal("putThing", &pending(), "", since_epoch());
        assert!(!operations.cancelled(&handle).await.expect("read"));
        operations.cancel_task(&handle, "").await.expect("cancel");
        assert!(operations.cancelled(&handle).await.expect("read"));
        // Idempotent.
        operations
            .cancel_task(&handle, "")
            .await
            .expect("cancel again");
        let unknown = operations
            .cancel_task("made-up", "")
            .await
            .expect_err("unknown");
        assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(operations.update_task(&handle, "").is_ok());
        assert!(operations.update_task(&handle, "mallory").is_err());
    }
}
