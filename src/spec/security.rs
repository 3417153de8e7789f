//! Security schemes and requirements, read the same way for both dialects where they agree:
//! OpenAPI 3.x `components.securitySchemes` and Swagger 2.0 `securityDefinitions` become
//! [`SecurityScheme`]s, and the `security` lists (document level, overridden by operation
//! level) become lists of [`SecurityRequirement`] alternatives.

use std::collections::BTreeMap;

use serde_json::Value;

use super::document::DocumentSet;
use super::model::{ApiKeyLocation, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use super::text;

/// OpenAPI 3.x `components.securitySchemes` (each entry may be a `$ref`).
pub(super) fn schemes_v3(docs: &DocumentSet) -> BTreeMap<String, SecurityScheme> {
    let root = &docs.root().root;
    let Some(map) = root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
    else {
        return BTreeMap::new();
    };
    map.iter()
        .map(|(name, value)| {
            let scheme = match docs.deref(0, value) {
                Ok((doc, value)) => scheme_v3(docs, doc, value),
                Err(_) => unsupported("unresolvable $ref"),
            };
            (name.clone(), scheme)
        })
        .collect()
}

fn scheme_v3(docs: &DocumentSet, doc: usize, value: &Value) -> SecurityScheme {
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "apiKey" => api_key(value),
        "http" => {
            let scheme = text(value, "scheme").unwrap_or_default();
            if scheme.eq_ignore_ascii_case("bearer") {
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Bearer,
                    bearer_format: text(value, "bearerFormat"),
                }
            } else if scheme.eq_ignore_ascii_case("basic") {
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Basic,
                    bearer_format: None,
                }
            } else {
                unsupported(&format!("http {scheme}"))
            }
        }
        "oauth2" => match value.pointer("/flows/clientCredentials") {
            Some(flow) => oauth2(docs, doc, flow),
            None => unsupported("oauth2"),
        },
        other => unsupported(other),
    }
}

/// Swagger 2.0 `securityDefinitions`.
pub(super) fn schemes_v2(docs: &DocumentSet) -> BTreeMap<String, SecurityScheme> {
    let root = &docs.root().root;
    let Some(map) = root.get("securityDefinitions").and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    map.iter()
        .map(|(name, value)| {
            let scheme = match docs.deref(0, value) {
                Ok((doc, value)) => match value.get("type").and_then(Value::as_str) {
                    Some("apiKey") => api_key(value),
                    Some("basic") => SecurityScheme::Http {
                        scheme: HttpAuthScheme::Basic,
                        bearer_format: None,
                    },
                    Some("oauth2")
                        if value.get("flow").and_then(Value::as_str) == Some("application") =>
                    {
                        oauth2(docs, doc, value)
                    }
                    Some(other) => unsupported(other),
                    None => unsupported(""),
                },
                Err(_) => unsupported("unresolvable $ref"),
            };
            (name.clone(), scheme)
        })
        .collect()
}

fn unsupported(kind: &str) -> SecurityScheme {
    SecurityScheme::Unsupported {
        kind: if kind.is_empty() {
            "no type".to_string()
        } else {
            kind.to_string()
        },
    }
}

fn api_key(value: &Value) -> SecurityScheme {
    let name = value.get("name").and_then(Value::as_str).unwrap_or("");
    let location = value
        .get("in")
        .and_then(Value::as_str)
        .and_then(ApiKeyLocation::parse);
    match location {
        Some(location) if !name.is_empty() => SecurityScheme::ApiKey {
            name: name.to_string(),
            location,
        },
        _ => unsupported("apiKey without a valid \"name\" and \"in\""),
    }
}

/// A client credentials flow: `tokenUrl` (made absolute against the document's own URL
/// when that is http(s), as relative URLs are relative to it) and the declared scopes.
fn oauth2(docs: &DocumentSet, doc: usize, flow: &Value) -> SecurityScheme {
    let Some(token_url) = text(flow, "tokenUrl") else {
        return unsupported("oauth2 client credentials without a \"tokenUrl\"");
    };
    let scopes = flow
        .get("scopes")
        .and_then(Value::as_object)
        .map(|scopes| scopes.keys().cloned().collect())
        .unwrap_or_default();
    let base = &docs.doc(doc).url;
    let token_url = if token_url.contains("://") || !matches!(base.scheme(), "http" | "https") {
        token_url
    } else {
        base.join(&token_url)
            .map(|u| u.to_string())
            .unwrap_or(token_url)
    };
    SecurityScheme::OAuth2 { token_url, scopes }
}

/// Reads a `security` list. `None` when absent (the level above applies); a note when it is
/// malformed, in which case it is treated as absent.
pub(super) fn requirements(
    value: Option<&Value>,
    notes: &mut Vec<String>,
) -> Option<Vec<SecurityRequirement>> {
    let value = value?;
    let Some(list) = value.as_array() else {
        notes.push("\"security\" is not an array; ignored".to_string());
        return None;
    };
    let mut alternatives = Vec::with_capacity(list.len());
    for entry in list {
        let Some(map) = entry.as_object() else {
            notes.push(format!(
                "security requirement {entry} is not an object; ignored"
            ));
            continue;
        };
        let requirement: SecurityRequirement = map
            .iter()
            .map(|(scheme, scopes)| {
                let scopes = scopes
                    .as_array()
                    .map(|s| {
                        s.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                (scheme.clone(), scopes)
            })
            .collect();
        alternatives.push(requirement);
    }
    Some(alternatives)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use url::Url;

    use super::*;
    use crate::spec::{Api, normalize};

    fn docs(url: &str, spec: Value) -> DocumentSet {
        DocumentSet::single(Url::parse(url).expect("url"), "api".into(), spec)
    }

    fn with_api<T>(spec: Value, check: impl FnOnce(&Api<'_>) -> T) -> T {
        let docs = docs("file:///specs/api.json", spec);
        let api = normalize(&docs).expect("normalizes");
        check(&api)
    }

    fn req(entries: &[(&str, &[&str])]) -> SecurityRequirement {
        entries
            .iter()
            .map(|(name, scopes)| {
                (
                    name.to_string(),
                    scopes.iter().map(|s| s.to_string()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn openapi_3_0_schemes_are_typed() {
        let spec = json!({
            "openapi": "3.0.3",
            "info": {"title": "T", "version": "1"},
            "paths": {},
            "components": {
                "securitySchemes": {
                    "key": {"type": "apiKey", "name": "X-API-Key", "in": "header"},
                    "qkey": {"type": "apiKey", "name": "api_key", "in": "query"},
                    "ckey": {"type": "apiKey", "name": "session", "in": "cookie"},
                    "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
                    "basic": {"type": "http", "scheme": "BASIC"},
                    "digest": {"type": "http", "scheme": "digest"},
                    "cc": {"type": "oauth2", "flows": {
                        "implicit": {"authorizationUrl": "https://a.test/auth", "scopes": {}},
                        "clientCredentials": {
                            "tokenUrl": "https://a.test/token",
                            "scopes": {"read": "r", "write": "w"}
                        }
                    }},
                    "implicit": {"type": "oauth2", "flows": {
                        "implicit": {"authorizationUrl": "https://a.test/auth", "scopes": {}}
                    }},
                    "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://a.test/.well-known"},
                    "tls": {"type": "mutualTLS"},
                    "broken": {"type": "apiKey", "in": "body", "name": "k"},
                    "shared": {"$ref": "#/components/x-shared"}
                }
            },
            "x-shared": null
        });
        let mut spec = spec;
        spec["components"]["x-shared"] = json!({"type": "http", "scheme": "bearer"});
        with_api(spec, |api| {
            let s = &api.security_schemes;
            assert_eq!(
                s["key"],
                SecurityScheme::ApiKey {
                    name: "X-API-Key".into(),
                    location: ApiKeyLocation::Header
                }
            );
            assert_eq!(
                s["qkey"],
                SecurityScheme::ApiKey {
                    name: "api_key".into(),
                    location: ApiKeyLocation::Query
                }
            );
            assert_eq!(
                s["ckey"],
                SecurityScheme::ApiKey {
                    name: "session".into(),
                    location: ApiKeyLocation::Cookie
                }
            );
            assert_eq!(
                s["bearer"],
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Bearer,
                    bearer_format: Some("JWT".into())
                }
            );
            assert_eq!(
                s["basic"],
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Basic,
                    bearer_format: None
                }
            );
            assert_eq!(
                s["digest"],
                SecurityScheme::Unsupported {
                    kind: "http digest".into()
                }
            );
            assert_eq!(
                s["cc"],
                SecurityScheme::OAuth2 {
                    token_url: "https://a.test/token".into(),
                    scopes: vec!["read".into(), "write".into()]
                }
            );
            assert_eq!(
                s["implicit"],
                SecurityScheme::Unsupported {
                    kind: "oauth2".into()
                }
            );
            assert_eq!(
                s["oidc"],
                SecurityScheme::Unsupported {
                    kind: "openIdConnect".into()
                }
            );
            assert_eq!(
                s["tls"],
                SecurityScheme::Unsupported {
                    kind: "mutualTLS".into()
                }
            );
            assert!(matches!(s["broken"], SecurityScheme::Unsupported { .. }));
            assert_eq!(
                s["shared"],
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Bearer,
                    bearer_format: None
                }
            );
        });
    }

    #[test]
    fn openapi_3_1_schemes_and_relative_token_url() {
        let spec = json!({
            "openapi": "3.1.0",
            "info": {"title": "T", "version": "1"},
            "components": {"securitySchemes": {
                "cc": {"type": "oauth2", "flows": {"clientCredentials": {
                    "tokenUrl": "/oauth/token", "scopes": {}
                }}},
                "key": {"type": "apiKey", "name": "k", "in": "query"}
            }}
        });
        let docs = docs("https://api.test/specs/openapi.json", spec);
        let api = normalize(&docs).expect("normalizes");
        assert_eq!(
            api.security_schemes["cc"],
            SecurityScheme::OAuth2 {
                token_url: "https://api.test/oauth/token".into(),
                scopes: vec![]
            }
        );
        assert_eq!(
            api.security_schemes["key"],
            SecurityScheme::ApiKey {
                name: "k".into(),
                location: ApiKeyLocation::Query
            }
        );
    }

    #[test]
    fn swagger_2_definitions_are_typed() {
        let spec = json!({
            "swagger": "2.0",
            "info": {"title": "T", "version": "1"},
            "host": "api.test",
            "paths": {},
            "securityDefinitions": {
                "qkey": {"type": "apiKey", "name": "api_key", "in": "query"},
                "hkey": {"type": "apiKey", "name": "X-Key", "in": "header"},
                "basic": {"type": "basic"},
                "app": {"type": "oauth2", "flow": "application",
                        "tokenUrl": "https://api.test/token", "scopes": {"a": "A"}},
                "implicit": {"type": "oauth2", "flow": "implicit",
                             "authorizationUrl": "https://api.test/auth", "scopes": {}}
            }
        });
        with_api(spec, |api| {
            let s = &api.security_schemes;
            assert_eq!(
                s["qkey"],
                SecurityScheme::ApiKey {
                    name: "api_key".into(),
                    location: ApiKeyLocation::Query
                }
            );
            assert_eq!(
                s["hkey"],
                SecurityScheme::ApiKey {
                    name: "X-Key".into(),
                    location: ApiKeyLocation::Header
                }
            );
            assert_eq!(
                s["basic"],
                SecurityScheme::Http {
                    scheme: HttpAuthScheme::Basic,
                    bearer_format: None
                }
            );
            assert_eq!(
                s["app"],
                SecurityScheme::OAuth2 {
                    token_url: "https://api.test/token".into(),
                    scopes: vec!["a".into()]
                }
            );
            assert_eq!(
                s["implicit"],
                SecurityScheme::Unsupported {
                    kind: "oauth2".into()
                }
            );
        });
    }

    fn requirement_spec(version: &str) -> Value {
        let mut spec = json!({
            "info": {"title": "T", "version": "1"},
            "security": [{"key": []}, {"oauth": ["read", "write"]}],
            "paths": {"/things": {
                "get": {"operationId": "inherits"},
                "put": {"operationId": "overrides", "security": [{"key": [], "basic": []}]},
                "post": {"operationId": "none", "security": []},
                "delete": {"operationId": "optional", "security": [{}, {"key": []}]},
                "patch": {"operationId": "malformed", "security": {"key": []}}
            }}
        });
        if version == "2.0" {
            spec["swagger"] = json!("2.0");
        } else {
            spec["openapi"] = json!(version);
        }
        spec
    }

    #[test]
    fn requirements_inherit_override_and_clear() {
        for version in ["2.0", "3.0.3", "3.1.0"] {
            with_api(requirement_spec(version), |api| {
                let security = |id: &str| {
                    api.operations
                        .iter()
                        .find(|op| op.operation_id.as_deref() == Some(id))
                        .unwrap_or_else(|| panic!("{id}"))
                        .security
                        .clone()
                };
                let document = vec![req(&[("key", &[])]), req(&[("oauth", &["read", "write"])])];
                assert_eq!(security("inherits"), document, "{version}");
                assert_eq!(
                    security("overrides"),
                    vec![req(&[("key", &[]), ("basic", &[])])],
                    "{version}"
                );
                assert_eq!(security("none"), Vec::<SecurityRequirement>::new());
                assert_eq!(
                    security("optional"),
                    vec![req(&[]), req(&[("key", &[])])],
                    "{version}"
                );
                // A malformed list is noted and the document's applies.
                assert_eq!(security("malformed"), document, "{version}");
                let malformed = api
                    .operations
                    .iter()
                    .find(|op| op.operation_id.as_deref() == Some("malformed"))
                    .expect("op");
                assert!(
                    malformed.notes.iter().any(|n| n.contains("\"security\"")),
                    "{:?}",
                    malformed.notes
                );
            });
        }
    }

    #[test]
    fn no_security_anywhere_means_none_required() {
        let spec = json!({
            "openapi": "3.0.3",
            "info": {"title": "T", "version": "1"},
            "paths": {"/a": {"get": {}}}
        });
        with_api(spec, |api| {
            assert!(api.operations[0].security.is_empty());
            assert!(api.security_schemes.is_empty());
        });
    }
}
