//! Human confirmation of calls that change the world (`docs/src/changing-the-world.md`,
//! "Confirmation by a human").
//! Before a call of a tool
//! whose route needs it ([`crate::catalog::Route::needs_confirmation`]) sends its request,
//! the user is asked through the protocol, shown what will happen rather than the model's
//! summary of it (the API, the tool, the HTTP method, the resolved URL, the headers the
//! arguments set and the body, shortened), and the request goes out only on an accepting
//! answer:
//! - initialize-based sessions (stdio, Streamable HTTP with sessions, legacy SSE): an
//!   `elicitation/create` request (form mode) on the session, while the call waits;
//! - 2026-07-28 (SEP-2322, multi round-trip requests): an `input_required` result carrying
//!   the same question and a `requestState`; the client retries the call with the answer
//!   and the state. The state is sealed with HMAC-SHA256 (rmcp's [`RequestStateCodec`]),
//!   bound to the caller and to the exact request (method, URL, every header an argument
//!   set, body) through associated data, expires after `server.confirm.state_ttl_seconds`, and is redeemed once: a state
//!   that fails verification, or comes back a second time, is a JSON-RPC error (-32602)
//!   and nothing is sent. Replicas sharing `server.confirm.state_key_env` accept each
//!   other's states; the single use is remembered per process.
//!
//! A client that cannot be asked (no `elicitation` capability) gets an error result and
//! nothing is sent, unless the operator set `server.confirm.without_elicitation =
//! "proceed"`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, RequestStateCodec,
    SealOptions,
};
use rmcp::{ErrorData, Peer, RoleServer};

use crate::config::{ConfirmSettings, WithoutElicitation};
use crate::store::{Claim, Keep, Store};
use crate::upstream::Preview;

/// Why a client cannot be asked: it did not declare the capability.
const NO_CAPABILITY: &str =
    "it did not declare the elicitation capability; use a client that supports elicitation";

/// Why a client cannot be asked: there is no session to send the question on.
const NO_SESSION: &str = "restmcp serves it without sessions (server.sessions = false), so no \
     question can reach it; enable sessions or use a 2026-07-28 client";

/// The key of the confirmation question in `inputRequests` and `inputResponses`.
pub(crate) const QUESTION: &str = "confirm";

/// Characters of a request body the question shows; the rest is left out (and said so).
const BODY_SHOWN: usize = 800;

/// The confirmation key could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    #[error("server.confirm.state_key_env: the environment variable {0} is not set")]
    MissingKey(String),
    #[error(
        "server.confirm.state_key_env: the key in {0} is too short (at least 32 bytes are needed)"
    )]
    ShortKey(String),
}

/// How the client of one call can be asked.
pub(crate) enum Asker {
    /// An initialize-based session: `elicitation/create` on its peer, when the client
    /// declared the capability.
    Session(Peer<RoleServer>),
    /// A 2026-07-28 request: what it carries of an earlier round, and whether its
    /// `clientCapabilities` include elicitation.
    Rounds {
        responses: Option<InputResponses>,
        state: Option<String>,
        can_elicit: bool,
    },
    /// A client that cannot be asked (a stateless initialize-based request).
    Unable,
}

impl Asker {
    /// A 2026-07-28 request's asker: the answers and state it carries of an earlier round,
    /// and whether the client capabilities in its `_meta` include elicitation.
    pub(crate) fn rounds(
        responses: Option<InputResponses>,
        state: Option<String>,
        capabilities: Option<&serde_json::Value>,
    ) -> Asker {
        let can_elicit = capabilities
            .and_then(|capabilities| capabilities.get("elicitation"))
            .is_some();
        Asker::Rounds {
            responses,
            state,
            can_elicit,
        }
    }
}

/// What becomes of a call after [`Confirmer::confirm`].
pub(crate) enum Verdict {
    /// Send the request.
    Proceed,
    /// Nothing is sent; the call's result is an error with this text.
    Refused(String),
    /// Nothing is sent yet: the client is to ask its user and call again (2026-07-28).
    Ask(InputRequiredResult),
    /// The `requestState` is not one restmcp issued for this call, or was used already:
    /// a protocol error, nothing sent.
    Invalid(ErrorData),
}

/// Asks users to confirm calls (see the module documentation).
pub(crate) struct Confirmer {
    codec: RequestStateCodec,
    ttl: Duration,
    without_elicitation: WithoutElicitation,
    /// Where redeemed states are remembered (shared by replicas with `[server.store]`).
    store: Arc<Store>,
}

/// What a sealed state says (besides the codec's own expiry).
#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    /// Random, so that each question is redeemed once.
    n: String,
}

impl Confirmer {
    /// A confirmer with the key `settings.state_key_env` names (read through `env`), or a
    /// random one when it names none.
    pub(crate) fn new(
        settings: &ConfirmSettings,
        store: Arc<Store>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Confirmer, ConfirmError> {
        let Some(name) = &settings.state_key_env else {
            return Ok(Confirmer::unkeyed(settings, store));
        };
        let value = env(name).ok_or_else(|| ConfirmError::MissingKey(name.clone()))?;
        let codec = RequestStateCodec::try_new(value.trim().as_bytes().to_vec())
            .map_err(|_| ConfirmError::ShortKey(name.clone()))?;
        Ok(Confirmer::with_codec(settings, codec, store))
    }

    /// The key's codec: long-running operations' handles are sealed with it too.
    pub(crate) fn codec(&self) -> &RequestStateCodec {
        &self.codec
    }

    /// How long a human has to answer a confirmation.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A confirmer with a random key made now (`server.confirm.state_key_env` unset).
    pub(crate) fn unkeyed(settings: &ConfirmSettings, store: Arc<Store>) -> Confirmer {
        let codec = RequestStateCodec::new_unchecked(crate::digest::random::<32>().to_vec());
        Confirmer::with_codec(settings, codec, store)
    }

    fn with_codec(
        settings: &ConfirmSettings,
        codec: RequestStateCodec,
        store: Arc<Store>,
    ) -> Confirmer {
        Confirmer {
            codec,
            ttl: Duration::from_secs(settings.state_ttl_seconds.max(1)),
            without_elicitation: settings.without_elicitation,
            store,
        }
    }

    /// Asks whoever `asker` reaches to confirm the request `preview` shows, made for
    /// `caller` (an OAuth caller's pseudonym, or empty). Every text shown passes `redact`
    /// first: a hidden argument's value from the environment may be in the URL or body.
    pub(crate) async fn confirm(
        &self,
        preview: &Preview<'_>,
        asker: Asker,
        caller: &str,
        redact: &(dyn Fn(&str) -> String + Sync),
    ) -> Verdict {
        let question = redact(&question(preview));
        match self.decide(preview, asker, caller, question).await {
            Verdict::Refused(text) => Verdict::Refused(redact(&text)),
            verdict => verdict,
        }
    }

    async fn decide(
        &self,
        preview: &Preview<'_>,
        asker: Asker,
        caller: &str,
        question: String,
    ) -> Verdict {
        match asker {
            Asker::Session(peer) => {
                if !peer
                    .supported_elicitation_modes()
                    .contains(&rmcp::service::ElicitationMode::Form)
                {
                    return self.unable(preview, NO_CAPABILITY);
                }
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question,
                    requested_schema: form(),
                };
                // Bounded like a 2026-07-28 question: a user who never answers does not
                // hold the call forever.
                match peer
                    .create_elicitation_with_timeout(params, Some(self.ttl))
                    .await
                {
                    Ok(answer) => verdict_of(preview, answer.action),
                    Err(error) => Verdict::Refused(format!(
                        "Tool \"{}\" needs a human's confirmation and the question could not be \
                         asked ({error}); nothing was sent.",
                        preview.tool
                    )),
                }
            }
            Asker::Rounds {
                responses,
                state,
                can_elicit,
            } => {
                if !can_elicit {
                    return self.unable(preview, NO_CAPABILITY);
                }
                let bound = binding(preview, caller);
                let answer = responses.as_ref().and_then(|r| r.get(QUESTION));
                let (Some(state), Some(answer)) = (state, answer) else {
                    // A first round, or an answer without its question: ask (again).
                    return Verdict::Ask(self.ask(question, &bound));
                };
                let nonce = match self.open(&state, &bound) {
                    Ok(nonce) => nonce,
                    Err(error) => return Verdict::Invalid(error),
                };
                let Ok(answer) = serde_json::from_value::<ElicitResult>(answer.clone()) else {
                    return Verdict::Invalid(ErrorData::invalid_params(
                        format!(
                            "inputResponses.{QUESTION} is not an elicitation result \
                             ({{\"action\": \"accept\" | \"decline\" | \"cancel\"}})"
                        ),
                        None,
                    ));
                };
                if let Err(error) = self.redeem(nonce).await {
                    return Verdict::Invalid(error);
                }
                verdict_of(preview, answer.action)
            }
            Asker::Unable => self.unable(preview, NO_SESSION),
        }
    }

    /// The verdict for a client that cannot be asked, and `why`.
    fn unable(&self, preview: &Preview<'_>, why: &str) -> Verdict {
        match self.without_elicitation {
            WithoutElicitation::Proceed => {
                tracing::warn!(
                    tool = preview.tool,
                    "a call that needs confirmation was sent unconfirmed: the client cannot \
                     ask its user (server.confirm.without_elicitation = \"proceed\")"
                );
                Verdict::Proceed
            }
            WithoutElicitation::Refuse => Verdict::Refused(format!(
                "Tool \"{}\" needs a human's confirmation before {} {} is sent, and this client \
                 cannot ask its user ({why}); nothing was sent.",
                preview.tool, preview.method, preview.url
            )),
        }
    }

    /// The `input_required` result asking `question`, with a fresh sealed state.
    fn ask(&self, question: String, bound: &[u8]) -> InputRequiredResult {
        let nonce = crate::digest::random::<16>();
        let sealed = Sealed {
            n: crate::digest::hex(&nonce),
        };
        let payload = serde_json::to_vec(&sealed).unwrap_or_default();
        let state = self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(bound).ttl(self.ttl),
        );
        let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question,
            requested_schema: form(),
        });
        let mut requests = InputRequests::new();
        requests.insert(QUESTION.to_string(), InputRequest::Elicitation(request));
        InputRequiredResult::new(Some(requests), Some(state))
    }

    /// The nonce of a state restmcp sealed for this very request and caller.
    fn open(&self, state: &str, bound: &[u8]) -> Result<[u8; 16], ErrorData> {
        let refused = |why: &str| {
            ErrorData::invalid_params(
                format!("requestState refused: {why}; nothing was sent"),
                None,
            )
        };
        let payload = self
            .codec
            .open_with(state, bound)
            .map_err(|error| match error {
                rmcp::model::RequestStateError::Expired => {
                    refused("the confirmation expired; call the tool again to be asked anew")
                }
                _ => refused(
                    "it does not verify (altered, or issued for another request, tool or caller)",
                ),
            })?;
        let sealed: Sealed =
            serde_json::from_slice(&payload).map_err(|_| refused("it is not restmcp's"))?;
        let nonce: [u8; 16] = crate::digest::from_hex(&sealed.n)
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| refused("it is not restmcp's"))?;
        Ok(nonce)
    }

    /// Marks a state's nonce used, in the store replicas share; an error when it was
    /// already (or when the store cannot say: fail closed).
    async fn redeem(&self, nonce: [u8; 16]) -> Result<(), ErrorData> {
        let key = format!("restmcp:confirm:{}", crate::digest::hex(&nonce));
        // Kept a little past the state's own expiry, so it cannot come back in between.
        let ttl = self.ttl + Duration::from_secs(1);
        match self.store.claim(&key, "1", ttl, Keep::Pinned).await {
            Ok(Claim::Claimed) => Ok(()),
            Ok(Claim::Held(_)) => Err(ErrorData::invalid_params(
                "requestState refused: this confirmation was already used; nothing was sent",
                None,
            )),
            Err(error) => Err(ErrorData::internal_error(
                format!("the confirmation could not be recorded ({error}); nothing was sent"),
                None,
            )),
        }
    }
}

/// The empty form: accepting it is the confirmation.
fn form() -> ElicitationSchema {
    ElicitationSchema::new(Default::default())
}

/// The call's fate after the user's answer.
fn verdict_of(preview: &Preview<'_>, action: ElicitationAction) -> Verdict {
    let why = match action {
        ElicitationAction::Accept => return Verdict::Proceed,
        ElicitationAction::Decline => "declined",
        // Cancel, and any action a later revision adds: not an acceptance.
        _ => "cancelled",
    };
    Verdict::Refused(format!(
        "The user {why} the call of tool \"{}\" ({} {}); nothing was sent.",
        preview.tool, preview.method, preview.url
    ))
}

/// What the user is asked: what will be sent, where, by which API.
fn question(preview: &Preview<'_>) -> String {
    let mut text = match preview.plan {
        Some(plan) => format!("Allow this workflow to run?\n\n{plan}"),
        None => format!("Allow this request?\n\n{} {}", preview.method, preview.url),
    };
    for (name, value) in &preview.headers {
        // A header is one line: what a value could hide past a line break is shown escaped.
        let value = crate::catalog::truncate_text(&value.escape_debug().to_string(), BODY_SHOWN);
        text.push_str(&format!("\n{name}: {value}"));
    }
    text.push_str(&format!(
        "\n\nAPI: {} · tool: {}",
        preview.api, preview.tool
    ));
    if let Some((media_type, body)) = preview.body {
        let body = String::from_utf8_lossy(body);
        let shown = crate::catalog::truncate_text(&body, BODY_SHOWN);
        let label = match preview.plan {
            Some(_) => "Arguments",
            None => "Body",
        };
        text.push_str(&format!("\n\n{label} ({media_type}, {} bytes", body.len()));
        if shown.len() < body.len() {
            text.push_str(&format!(", first {} shown", shown.chars().count()));
        }
        text.push_str(&format!("):\n{shown}"));
    }
    text.push_str("\n\nNothing is sent unless you accept.");
    text
}

/// What a state is bound to: the caller and the exact request (every header an argument
/// set included), hashed.
fn binding(preview: &Preview<'_>, caller: &str) -> Vec<u8> {
    let (media_type, body) = preview.body.unwrap_or(("", b""));
    let mut parts: Vec<&[u8]> = vec![
        caller.as_bytes(),
        preview.api.as_bytes(),
        preview.tool.as_bytes(),
        preview.method.as_str().as_bytes(),
        preview.url.as_bytes(),
        media_type.as_bytes(),
        body,
        preview.plan.unwrap_or_default().as_bytes(),
    ];
    for (name, value) in &preview.headers {
        parts.push(name.as_bytes());
        parts.push(value.as_bytes());
    }
    crate::digest::sha256_parts(&parts).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Method;

    impl Confirmer {
        async fn confirm_plain(&self, p: &Preview<'_>, asker: Asker, caller: &str) -> Verdict {
            self.confirm(p, asker, caller, &|text: &str| text.to_string())
                .await
        }
    }

    fn confirmer() -> Confirmer {
        Confirmer::new(
            &ConfirmSettings::default(),
            Arc::new(Store::memory()),
            |_| None,
        )
        .expect("random key")
    }

    fn preview(url: &str) -> Preview<'_> {
        Preview {
            api: "pets",
            tool: "deletePet",
            method: Method::Delete,
            url,
            headers: Vec::new(),
            body: None,
            plan: None,
        }
    }

    fn rounds(state: Option<String>, answer: Option<serde_json::Value>) -> Asker {
        Asker::Rounds {
            responses: answer.map(|a| [(QUESTION.to_string(), a)].into_iter().collect()),
            state,
            can_elicit: true,
        }
    }

    async fn first_state(c: &Confirmer, p: &Preview<'_>, caller: &str) -> String {
        match c.confirm_plain(p, rounds(None, None), caller).await {
            Verdict::Ask(result) => {
                let json = serde_json::to_value(&result).expect("json");
                assert_eq!(json["resultType"], "input_required");
                let request = &json["inputRequests"][QUESTION];
                assert_eq!(request["method"], "elicitation/create");
                assert_eq!(request["params"]["mode"], "form");
                let message = request["params"]["message"].as_str().expect("message");
                assert!(message.contains(&format!("DELETE {}", p.url)), "{message}");
                assert!(message.contains("pets"), "{message}");
                result.request_state.expect("state")
            }
            _ => panic!("expected a question"),
        }
    }

    #[tokio::test]
    async fn an_accepted_state_proceeds_once_and_a_replay_is_refused() {
        let c = confirmer();
        let p = preview("https://api.example/pets/1");
        let state = first_state(&c, &p, "").await;
        let accept = serde_json::json!({"action": "accept"});
        let go = c
            .confirm_plain(&p, rounds(Some(state.clone()), Some(accept.clone())), "")
            .await;
        assert!(matches!(go, Verdict::Proceed));
        let again = c
            .confirm_plain(&p, rounds(Some(state), Some(accept)), "")
            .await;
        match again {
            Verdict::Invalid(e) => assert!(e.message.contains("already used"), "{}", e.message),
            _ => panic!("a replay must be refused"),
        }
    }

    #[tokio::test]
    async fn a_state_for_another_request_or_caller_or_altered_is_refused() {
        let c = confirmer();
        let p = preview("https://api.example/pets/1");
        let state = first_state(&c, &p, "sub:a").await;
        let accept = || Some(serde_json::json!({"action": "accept"}));
        let other = preview("https://api.example/pets/2");
        for (p, caller, state) in [
            (&other, "sub:a", state.clone()),
            (&p, "sub:b", state.clone()),
            (&p, "sub:a", format!("{state}x")),
        ] {
            let verdict = c
                .confirm_plain(p, rounds(Some(state), accept()), caller)
                .await;
            assert!(matches!(verdict, Verdict::Invalid(_)));
        }
        // A state for one header value does not open the call with another.
        let dry = Preview {
            headers: vec![("X-Mode", "dry-run")],
            ..preview("https://api.example/pets/1")
        };
        let dry_state = first_state(&c, &dry, "sub:a").await;
        let purge = Preview {
            headers: vec![("X-Mode", "purge-everything")],
            ..preview("https://api.example/pets/1")
        };
        let verdict = c
            .confirm_plain(&purge, rounds(Some(dry_state), accept()), "sub:a")
            .await;
        assert!(
            matches!(verdict, Verdict::Invalid(_)),
            "another header value"
        );
        // The genuine one still works: refusals did not redeem it.
        let verdict = c
            .confirm_plain(&p, rounds(Some(state), accept()), "sub:a")
            .await;
        assert!(matches!(verdict, Verdict::Proceed));
    }

    #[tokio::test]
    async fn decline_refuses_and_a_missing_answer_asks_again() {
        let c = confirmer();
        let p = preview("https://api.example/pets/1");
        let state = first_state(&c, &p, "").await;
        let asked = c
            .confirm_plain(
                &p,
                Asker::Rounds {
                    responses: Some(
                        [("other".to_string(), serde_json::json!({"action": "accept"}))]
                            .into_iter()
                            .collect(),
                    ),
                    state: Some(state.clone()),
                    can_elicit: true,
                },
                "",
            )
            .await;
        assert!(matches!(asked, Verdict::Ask(_)));
        let declined = c
            .confirm_plain(
                &p,
                rounds(Some(state), Some(serde_json::json!({"action": "decline"}))),
                "",
            )
            .await;
        match declined {
            Verdict::Refused(text) => {
                assert!(text.contains("declined") && text.contains("nothing was sent"))
            }
            _ => panic!("declined"),
        }
    }

    #[tokio::test]
    async fn a_client_that_cannot_elicit_fails_closed_unless_the_operator_opts_out() {
        let c = confirmer();
        let p = preview("https://api.example/pets/1");
        let unable = Asker::Rounds {
            responses: None,
            state: None,
            can_elicit: false,
        };
        assert!(matches!(
            c.confirm_plain(&p, unable, "").await,
            Verdict::Refused(_)
        ));
        let settings = ConfirmSettings {
            without_elicitation: WithoutElicitation::Proceed,
            ..Default::default()
        };
        let open =
            Confirmer::new(&settings, Arc::new(Store::memory()), |_| None).expect("confirmer");
        assert!(matches!(
            open.confirm_plain(&p, Asker::Unable, "").await,
            Verdict::Proceed
        ));
    }

    #[tokio::test]
    async fn replicas_sharing_the_key_accept_each_others_states() {
        let settings = ConfirmSettings {
            state_key_env: Some("KEY".into()),
            ..Default::default()
        };
        let key = |_: &str| Some("k".repeat(40));
        let store = Arc::new(Store::memory());
        let (a, b) = (
            Confirmer::new(&settings, store.clone(), key).expect("a"),
            Confirmer::new(&settings, store.clone(), key).expect("b"),
        );
        let p = preview("https://api.example/pets/1");
        let state = first_state(&a, &p, "").await;
        let verdict = b
            .confirm_plain(
                &p,
                rounds(
                    Some(state.clone()),
                    Some(serde_json::json!({"action": "accept"})),
                ),
                "",
            )
            .await;
        assert!(matches!(verdict, Verdict::Proceed));
        // The replica sharing the store refuses the same state coming back.
        let again = a
            .confirm_plain(
                &p,
                rounds(Some(state), Some(serde_json::json!({"action": "accept"}))),
                "",
            )
            .await;
        assert!(matches!(again, Verdict::Invalid(_)));
        assert!(matches!(
            Confirmer::new(&settings, store.clone(), |_| Some("short".into())),
            Err(ConfirmError::ShortKey(_))
        ));
        assert!(matches!(
            Confirmer::new(&settings, store, |_| None),
            Err(ConfirmError::MissingKey(_))
        ));
    }

    #[test]
    fn the_question_shows_every_header_an_argument_set_on_one_line() {
        let p = Preview {
            headers: vec![("X-Mode", "dry-run"), ("X-Note", "a\r\nX-Mode: purge")],
            ..preview("https://api.example/pets/1")
        };
        let text = question(&p);
        assert!(text.contains("\nX-Mode: dry-run\n"), "{text}");
        assert!(text.contains("X-Note: a\\r\\nX-Mode: purge"), "{text}");
        assert!(!text.contains("\nX-Mode: purge"), "{text}");
    }

    #[test]
    fn the_question_shows_a_long_body_shortened() {
        let body = format!("{{\"name\": \"{}\"}}", "x".repeat(10_000));
        let p = Preview {
            body: Some(("application/json", body.as_bytes())),
            ..preview("https://api.example/pets")
        };
        let text = question(&p);
        assert!(text.len() < 1_200, "{}", text.len());
        assert!(
            text.contains("application/json, 10012 bytes, first"),
            "{text}"
        );
    }
}
