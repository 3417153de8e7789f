//! Resource subscriptions: `resources/subscribe` and `resources/unsubscribe` on a session,
//! and the `resourceSubscriptions` of a 2026-07-28 `subscriptions/listen`. REST has no
//! change notifications, so restmcp asks: every `resources.poll_seconds` it reads the
//! resource again with the subscriber's own context (credentials, forwarded headers,
//! scopes), conditionally when the upstream gave validators (`If-None-Match`,
//! `If-Modified-Since`; a 304 is unchanged), and compares a digest of the contents
//! otherwise; only a change sends `notifications/resources/updated`. A failed read sends
//! nothing and keeps the last contents to compare with.
//!
//! Bounds: `resources.max_subscriptions_per_session` per session (or listen), and
//! `resources.max_subscriptions` in all ([`super::tables::Subscriptions`] counts them); polling stops
//! on `unsubscribe`, when the listen ends, and when the session's transport closes or its
//! server is dropped ([`SessionSubscriptions`] holds each poller's drop guard).
//! A reload that changes the resources or prompts sends `list_changed`
//! ([`ServerState::tell_surface_changes`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ProtocolVersion, ResourceUpdatedNotificationParam};
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::{ServerState, Snapshot};
use crate::upstream::CacheValidators;
use crate::upstream::CallContext;

/// One held subscription's place in the count, given back when it is dropped.
struct Slot(Arc<ServerState>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.subscriptions.give_back();
    }
}

/// One session's (or listen's) subscriptions, by URI: dropping it stops their polling.
#[derive(Default)]
pub(crate) struct SessionSubscriptions {
    polling: Mutex<HashMap<String, DropGuard>>,
}

impl SessionSubscriptions {
    /// Stops polling `uri`; false when it was not subscribed.
    pub(super) fn remove(&self, uri: &str) -> bool {
        self.polling
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uri)
            .is_some()
    }
}

/// Where a subscription's changes are told.
#[derive(Clone)]
pub(super) enum Notifier {
    Session(Peer<RoleServer>),
    Listen(SubscriptionSink),
}

impl Notifier {
    fn closed(&self) -> bool {
        match self {
            Notifier::Session(peer) => peer.is_transport_closed(),
            Notifier::Listen(_) => false,
        }
    }

    /// Tells of a change; false when it could not be told (the client is gone).
    async fn updated(&self, uri: &str) -> bool {
        match self {
            Notifier::Session(peer) => {
                let params = ResourceUpdatedNotificationParam::new(uri);
                peer.notify_resource_updated(params).await.is_ok()
            }
            Notifier::Listen(sink) => sink.notify_resource_updated(uri).await.is_ok(),
        }
    }
}

/// What a subscribe needs besides the URI.
pub(super) struct Subscriber<'a> {
    pub session: &'a SessionSubscriptions,
    pub notifier: Notifier,
    pub incoming: CallContext,
    pub version: Option<&'a ProtocolVersion>,
}

impl ServerState {
    /// Subscribes to `uri`: polling starts (a second subscribe of the same URI is a no-op).
    /// An unknown URI is "resource not found"; past a cap, an error saying which.
    pub(super) fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        subscriber: Subscriber<'_>,
    ) -> Result<(), ErrorData> {
        let snapshot = self.current();
        if snapshot.resource_of(uri).is_none() {
            return Err(super::resources::not_found(uri, subscriber.version, ""));
        }
        let settings = &snapshot.resource_settings;
        let mut polling = subscriber
            .session
            .polling
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if polling.contains_key(uri) {
            return Ok(());
        }
        if polling.len() >= settings.max_subscriptions_per_session {
            return Err(ErrorData::invalid_request(
                format!(
                    "this session holds {} subscriptions, the most it may \
                     (resources.max_subscriptions_per_session); unsubscribe from one first",
                    polling.len()
                ),
                None,
            ));
        }
        if !self.subscriptions.take(settings.max_subscriptions) {
            return Err(ErrorData::internal_error(
                "the server holds as many subscriptions as it may (resources.max_subscriptions); \
                 try again later",
                None,
            ));
        }
        let slot = Slot(self.clone());
        let stop = CancellationToken::new();
        let interval = Duration::from_secs(settings.poll_seconds);
        let poller = Poller {
            state: self.clone(),
            uri: uri.to_string(),
            incoming: subscriber.incoming,
            notifier: subscriber.notifier,
            stop: stop.clone(),
            interval,
            _slot: slot,
        };
        tokio::spawn(poller.run());
        polling.insert(uri.to_string(), stop.drop_guard());
        Ok(())
    }
}

/// One subscription's polling.
struct Poller {
    state: Arc<ServerState>,
    uri: String,
    incoming: CallContext,
    notifier: Notifier,
    stop: CancellationToken,
    interval: Duration,
    _slot: Slot,
}

/// What the last successful read gave.
struct Seen {
    validators: CacheValidators,
    digest: [u8; 32],
}

impl Poller {
    async fn run(self) {
        let mut seen = self.read(None).await;
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(self.interval) => {}
            }
            if self.notifier.closed() {
                return;
            }
            let Some(now) = self.read(seen.as_ref()).await else {
                continue;
            };
            let changed = seen.as_ref().is_some_and(|seen| seen.digest != now.digest);
            seen = Some(now);
            if changed && !self.notifier.updated(&self.uri).await {
                return;
            }
        }
    }

    /// Reads the resource (conditionally, after a read that gave validators): what it
    /// gave now, the last one again for a 304, nothing for a failed read.
    async fn read(&self, last: Option<&Seen>) -> Option<Seen> {
        let mut incoming = self.incoming.clone();
        incoming.conditional = last
            .map(|seen| seen.validators.clone())
            .filter(|v| v.etag.is_some() || v.last_modified.is_some());
        let read = self
            .state
            .read_uri(&self.uri, &mut incoming, None, &self.stop)
            .await;
        let read = match read {
            Ok(read) => read,
            // 304: the answer has no body, so its contents do not compare.
            Err(_) => return None,
        };
        let contents = serde_json::to_vec(&read.contents).unwrap_or_default();
        Some(Seen {
            digest: crate::digest::sha256_parts(&[&contents]),
            validators: read.validators,
        })
    }
}

impl Snapshot {
    /// The resources' and prompts' listings, to see whether a reload changed them.
    fn surface_listing(&self) -> (String, String) {
        let resources = serde_json::to_string(&(
            self.list_resources(None).resources,
            self.list_templates(None).resource_templates,
        ))
        .unwrap_or_default();
        let prompts = serde_json::to_string(&self.list_prompts().prompts).unwrap_or_default();
        (resources, prompts)
    }
}

impl ServerState {
    /// After a reload from `old`: tells every session and listener whose filter asks for
    /// it that the resources, or the prompts, changed.
    pub async fn tell_surface_changes(&self, old: &Snapshot) {
        let (old_resources, old_prompts) = old.surface_listing();
        let (resources, prompts) = self.current().surface_listing();
        let (resources, prompts) = (resources != old_resources, prompts != old_prompts);
        if !resources && !prompts {
            return;
        }
        let peers: Vec<Peer<RoleServer>> =
            self.peers.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for peer in peers.iter().filter(|p| !p.is_transport_closed()) {
            if resources {
                let _ = peer.notify_resource_list_changed().await;
            }
            if prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
        }
        let sinks: Vec<SubscriptionSink> = self
            .subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for sink in sinks {
            let accepted = sink.accepted();
            if resources && accepted.resources_list_changed == Some(true) {
                let _ = sink.notify_resource_list_changed().await;
            }
            if prompts && accepted.prompts_list_changed == Some(true) {
                let _ = sink.notify_prompt_list_changed().await;
            }
        }
    }
}
