//! Which tools an OAuth caller's scopes open. A tool's required scopes come from its
//! operation's `security` ([`Catalog::required_scopes`]): the requirements are
//! alternatives, and an alternative asks for the scopes it lists under its OAuth 2.0 and
//! OpenID Connect schemes (other schemes, and an empty alternative, ask for none). A caller
//! may use a tool when one alternative's scopes are all among the token's. With `[server.oauth]`, `tools/list` shows an OAuth
//! caller only such tools and a call of another is refused with the scopes to ask for;
//! clients with a static token, and stdio, see and call everything.

use std::collections::{BTreeSet, HashMap};

use crate::catalog::Catalog;

/// The scope alternatives of every tool that needs scopes, by catalog name.
#[derive(Debug, Default)]
pub struct ScopePolicy {
    needs: HashMap<String, Vec<Vec<String>>>,
    /// Every scope some tool asks for, sorted: the part of a token's scopes that decides
    /// what it sees.
    relevant: Vec<String>,
}

impl ScopePolicy {
    pub fn new(catalog: &Catalog) -> ScopePolicy {
        let mut needs = HashMap::new();
        let mut relevant = BTreeSet::new();
        for tool in catalog.tools() {
            let alternatives = catalog.required_scopes(tool);
            if alternatives.is_empty() {
                continue;
            }
            relevant.extend(alternatives.iter().flatten().cloned());
            needs.insert(tool.name.clone(), alternatives);
        }
        ScopePolicy {
            needs,
            relevant: relevant.into_iter().collect(),
        }
    }

    /// Every scope some tool asks for, sorted.
    pub fn scopes(&self) -> &[String] {
        &self.relevant
    }

    /// True when no tool needs a scope.
    pub fn is_open(&self) -> bool {
        self.needs.is_empty()
    }

    /// `None` when a token with `granted` may call catalog tool `tool`; else the scopes of
    /// the alternative closest to being met, to ask for.
    pub fn missing(&self, tool: &str, granted: &[String]) -> Option<Vec<String>> {
        let alternatives = self.needs.get(tool)?;
        let lacking = |alternative: &Vec<String>| {
            alternative
                .iter()
                .filter(|scope| !granted.contains(scope))
                .count()
        };
        if alternatives
            .iter()
            .any(|alternative| lacking(alternative) == 0)
        {
            return None;
        }
        alternatives
            .iter()
            .min_by_key(|alternative| lacking(alternative))
            .cloned()
    }

    /// The scopes of `granted` that decide what a token sees: tokens with the same key
    /// see the same tools, so their listing is made once.
    pub fn key(&self, granted: &[String]) -> Vec<String> {
        self.relevant
            .iter()
            .filter(|scope| granted.contains(scope))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> (ScopePolicy, Catalog) {
        let spec = r#"
openapi: 3.0.3
info: {title: scoped, version: "1"}
components:
  securitySchemes:
    user: {type: oauth2, flows: {authorizationCode: {authorizationUrl: "https://as.example/a", tokenUrl: "https://as.example/t", scopes: {"pets:read": r, "pets:write": w, "admin": a}}}}
    oidc: {type: openIdConnect, openIdConnectUrl: "https://as.example/.well-known/openid-configuration"}
    key: {type: apiKey, in: header, name: X-Key}
security: [{user: ["pets:read"]}]
paths:
  /pets:
    get: {operationId: listPets, responses: {"200": {description: ok}}}
    post:
      operationId: addPet
      security: [{user: ["pets:write"]}, {oidc: ["admin"]}]
      responses: {"200": {description: ok}}
  /pets/{id}:
    delete:
      operationId: deletePet
      security: [{user: ["pets:write", "admin"]}]
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /health:
    get: {operationId: health, security: [], responses: {"200": {description: ok}}}
  /keyed:
    get: {operationId: keyed, security: [{key: []}], responses: {"200": {description: ok}}}
"#;
        let root: serde_json::Value = serde_saphyr::from_str(spec).expect("yaml");
        let url = url::Url::parse("file:///scoped.yaml").expect("url");
        let docs = crate::spec::DocumentSet::single(url, "scoped.yaml".into(), root);
        let input = crate::catalog::ApiInput::new("api", Some(&docs));
        let settings = crate::config::ToolSettings::default();
        let catalog = crate::catalog::build(&[input], &settings)
            .expect("builds")
            .0;
        (ScopePolicy::new(&catalog), catalog)
    }

    fn granted(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_tool_opens_when_one_alternatives_oauth_scopes_are_all_granted() {
        let (policy, _catalog) = policy();
        let reader = granted(&["pets:read"]);
        assert_eq!(
            policy.missing("listPets", &reader),
            None,
            "the spec-wide requirement"
        );
        assert_eq!(
            policy.missing("health", &reader),
            None,
            "security: [] asks for nothing"
        );
        assert_eq!(
            policy.missing("keyed", &reader),
            None,
            "an API key needs no scope"
        );
        assert_eq!(
            policy.missing("addPet", &reader),
            Some(granted(&["pets:write"])),
            "the closest alternative's scopes"
        );
        assert_eq!(
            policy.missing("addPet", &granted(&["admin"])),
            None,
            "openIdConnect"
        );
        assert_eq!(
            policy.missing("deletePet", &granted(&["pets:write"])),
            Some(granted(&["admin", "pets:write"]))
        );
        assert_eq!(
            policy.missing("listPets", &[]),
            Some(granted(&["pets:read"]))
        );
        assert_eq!(
            policy.key(&granted(&["mcp:tools", "pets:write", "pets:read"])),
            granted(&["pets:read", "pets:write"]),
            "scopes no tool asks for do not split listings"
        );
        assert!(!policy.is_open());
    }
}
