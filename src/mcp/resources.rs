//! Resources: `resources/list`, `resources/templates/list` and `resources/read` for the
//! tools the operator marked `resource` ([`crate::catalog::resource`]). A read finds the
//! resource (or template) whose URI gives the one asked, turns the URI's variables into
//! the tool's arguments and runs the tool's own pipeline
//! ([`ServerState::run_for_read`]: scopes, validation, credentials, forwarded headers,
//! limits, redaction, metrics); the answer becomes one text (JSON and text) or blob (any
//! other type) with its media type. A URI no resource gives, or an upstream 404, is
//! "resource not found": -32002 up to 2025-11-25, -32602 with `data.uri` on 2026-07-28
//! (SEP-2164), never empty `contents`. 2026-07-28 reads carry cache hints: `ttlMs` from
//! the upstream's `Cache-Control: max-age` (else `resources.ttl_seconds`), `cacheScope`
//! private whenever the read carried a caller's identity or forwarded headers.

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ProtocolVersion,
    ReadResourceResult, Resource as McpResource, ResourceContents, ResourceTemplate,
};
use serde_json::json;

use super::{ServerState, Snapshot};
use crate::catalog::{Resource, Tool};
use crate::identity::Caller;
use crate::upstream::{CallContext, CallOutcome, Called, Content};

/// What one read gave: the contents, and how long they stay fresh.
pub(super) struct Read {
    pub contents: Vec<ResourceContents>,
    pub validators: crate::upstream::CacheValidators,
}

impl Snapshot {
    /// The resources (`templates` false) or templates (true) a caller with `user`'s scopes
    /// may read, in catalog order.
    fn resources_for<'s>(
        &'s self,
        user: Option<&'s Caller>,
        templates: bool,
    ) -> impl Iterator<Item = (&'s Tool, &'s Resource)> {
        self.catalog().resources().filter(move |(tool, resource)| {
            resource.uri.is_template() == templates
                && user.is_none_or(|user| self.scopes().missing(&tool.name, &user.scopes).is_none())
        })
    }

    /// Whether any resource or template is served.
    pub(super) fn has_resources(&self) -> bool {
        self.serves_resources
    }

    /// `resources/list`.
    pub(super) fn list_resources(&self, user: Option<&Caller>) -> ListResourcesResult {
        let resources = self
            .resources_for(user, false)
            .map(|(_, r)| {
                let mut raw = McpResource::new(r.uri.as_str(), r.name.clone());
                raw.title = r.title.clone();
                raw.description = Some(r.description.clone()).filter(|d| !d.is_empty());
                raw.mime_type = r.mime_type.clone();
                raw
            })
            .collect();
        ListResourcesResult::with_all_items(resources)
    }

    /// `resources/templates/list`.
    pub(super) fn list_templates(&self, user: Option<&Caller>) -> ListResourceTemplatesResult {
        let templates = self
            .resources_for(user, true)
            .map(|(_, r)| {
                let mut template = ResourceTemplate::new(r.uri.as_str(), r.name.clone());
                template.title = r.title.clone();
                template.description = Some(r.description.clone()).filter(|d| !d.is_empty());
                template.mime_type = r.mime_type.clone();
                template
            })
            .collect();
        ListResourceTemplatesResult::with_all_items(templates)
    }

    /// The resource that gives `uri` (a resource before a template) and the tool's
    /// arguments it means.
    pub(super) fn resource_of(
        &self,
        uri: &str,
    ) -> Option<(&Tool, &Resource, serde_json::Map<String, serde_json::Value>)> {
        let mut found = self
            .catalog()
            .resources()
            .filter(|(_, r)| !r.uri.is_template() && r.uri.as_str() == uri)
            .map(|(tool, resource)| (tool, resource, Default::default()));
        if let Some(exact) = found.next() {
            return Some(exact);
        }
        self.catalog().resources().find_map(|(tool, resource)| {
            let values = resource.uri.match_uri(uri)?;
            Some((
                tool,
                resource,
                resource.arguments(&tool.route.arguments.bindings, values),
            ))
        })
    }
}

/// "Resource not found" as `version` says it: -32602 with `data.uri` on 2026-07-28
/// (SEP-2164), -32002 before.
pub(super) fn not_found(uri: &str, version: Option<&ProtocolVersion>, why: &str) -> ErrorData {
    let message = format!("resource not found: {uri}{why}");
    let data = Some(json!({ "uri": uri }));
    if version == Some(&ProtocolVersion::V_2026_07_28) {
        ErrorData::invalid_params(message, data)
    } else {
        ErrorData::resource_not_found(message, data)
    }
}

impl ServerState {
    /// Reads `uri` for a client speaking `version`, as `incoming` (see the module doc).
    pub(super) async fn read_resource(
        &self,
        uri: &str,
        mut incoming: CallContext,
        version: Option<&ProtocolVersion>,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<ReadResourceResult, ErrorData> {
        let private = incoming.caller.is_some()
            || incoming.principal.is_some()
            || !incoming.headers.is_empty();
        let read = self
            .read_uri(uri, &mut incoming, version, cancelled)
            .await?;
        let mut result = ReadResourceResult::new(read.contents);
        if version == Some(&ProtocolVersion::V_2026_07_28) {
            let snapshot = self.current();
            let ttl = read
                .validators
                .max_age
                .unwrap_or(snapshot.resource_settings.ttl_seconds);
            result = result
                .with_ttl_ms(ttl.saturating_mul(1000))
                .with_cache_scope(if private {
                    CacheScope::Private
                } else {
                    CacheScope::Public
                });
        }
        Ok(result)
    }

    /// Reads `uri` through its tool: the contents and the answer's validators.
    pub(super) async fn read_uri(
        &self,
        uri: &str,
        incoming: &mut CallContext,
        version: Option<&ProtocolVersion>,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<Read, ErrorData> {
        let snapshot = self.current();
        let Some((tool, resource, arguments)) = snapshot.resource_of(uri) else {
            return Err(not_found(uri, version, ""));
        };
        // The body as the API sent it, whatever the client's revision.
        incoming.bare_structured = true;
        let (name, fallback) = (tool.name.clone(), resource.mime_type.clone());
        let called = self
            .run_for_read(&snapshot, &name, arguments, incoming.clone(), cancelled)
            .await?;
        let validators = called.stats.validators.clone();
        let contents = contents_of(uri, called, fallback.as_deref(), version)?;
        Ok(Read {
            contents,
            validators,
        })
    }
}

/// A read's result as resource contents, or the error it is.
fn contents_of(
    uri: &str,
    called: Called,
    fallback_type: Option<&str>,
    version: Option<&ProtocolVersion>,
) -> Result<Vec<ResourceContents>, ErrorData> {
    let Called { result, stats, .. } = called;
    if result.is_error {
        let text = result.joined_text();
        return Err(match (stats.outcome, stats.status) {
            (_, Some(404 | 410)) => not_found(uri, version, " (the upstream has no such item)"),
            (CallOutcome::ToolError, _) => {
                ErrorData::invalid_params(text, Some(json!({"uri": uri})))
            }
            _ => ErrorData::internal_error(text, Some(json!({"uri": uri}))),
        });
    }
    let media_type = stats
        .media_type
        .as_deref()
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .or_else(|| fallback_type.map(str::to_string));
    let block = result.content.into_iter().next();
    let content = match block {
        Some(Content::Text { text }) => ResourceContents::text(text, uri),
        Some(
            Content::Image { data, mime_type }
            | Content::Audio { data, mime_type }
            | Content::Resource {
                blob: data,
                mime_type,
                ..
            },
        ) => ResourceContents::blob(data, uri).with_mime_type(mime_type),
        None => ResourceContents::text(String::new(), uri),
    };
    Ok(vec![match (media_type, &content) {
        (Some(media_type), ResourceContents::TextResourceContents { .. }) => {
            content.with_mime_type(media_type)
        }
        _ => content,
    }])
}
