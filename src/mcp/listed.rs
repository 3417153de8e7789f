//! A tool as a `tools/list` page carries it, and the pages themselves.
//!
//! The SDK's `Tool` holds its schemas as `serde_json` trees; built for every tool of a
//! large API and every protocol revision, those copies were most of restmcp's memory
//! (GitHub: about 35 MB per copy of the catalog). A [`ListedTool`] shares the catalog's
//! [`SchemaText`] instead, and a page is written by copying that text. The SDK's type is
//! made only where the SDK itself answers (`tools/list` over the SDK's own handlers).

use std::sync::Arc;

use rmcp::model::{ListToolsResult, ProtocolVersion, ServerResult, Tool, ToolAnnotations};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::catalog::SchemaText;

/// One `tools/list` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: SchemaText,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<SchemaText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

impl ListedTool {
    /// A catalog tool as the newest protocol revisions list it. `None` if a schema is not a
    /// JSON object (which MCP requires).
    pub fn from_catalog(tool: &crate::catalog::Tool) -> Option<ListedTool> {
        if !tool.input_schema.is_object()
            || tool.output_schema.as_ref().is_some_and(|s| !s.is_object())
        {
            return None;
        }
        let hints = tool.annotations;
        Some(ListedTool {
            name: tool.name.clone(),
            title: tool.title.clone(),
            description: Some(tool.description.clone()),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            annotations: Some(ToolAnnotations::from_raw(
                None,
                Some(hints.read_only_hint),
                Some(hints.destructive_hint),
                Some(hints.idempotent_hint),
                Some(hints.open_world_hint),
            )),
        })
    }

    /// A tool defined as MCP JSON (the discovery tools); an error if it is not a valid tool.
    pub fn from_definition(definition: &Value) -> Result<ListedTool, serde_json::Error> {
        let tool: Tool = serde_json::from_value(definition.clone())?;
        Ok(ListedTool {
            name: tool.name.into_owned(),
            title: tool.title,
            description: tool.description.map(|d| d.into_owned()),
            input_schema: SchemaText::new(&Value::Object(tool.input_schema.as_ref().clone())),
            output_schema: tool
                .output_schema
                .map(|schema| SchemaText::new(&Value::Object(schema.as_ref().clone()))),
            annotations: tool.annotations,
        })
    }

    /// The SDK's `Tool` for this entry (its schemas parsed into trees).
    pub fn to_sdk(&self) -> Option<Tool> {
        let mut tool = Tool::new(self.name.clone(), "", self.input_schema.to_object()?);
        // `Tool::new` always sets a description; a tool without one keeps none.
        tool.description = self.description.clone().map(Into::into);
        tool.title = self.title.clone();
        tool.output_schema = match &self.output_schema {
            Some(schema) => Some(Arc::new(schema.to_object()?)),
            None => None,
        };
        tool.annotations = self.annotations.clone();
        Some(tool)
    }
}

/// One page of a listing: its tools and the cursor of the next page.
pub struct Page<'a> {
    pub tools: &'a [ListedTool],
    pub next_cursor: Option<String>,
}

impl Page<'_> {
    /// The page as the SDK's result, for the SDK's own `tools/list` handler.
    pub fn to_sdk(&self) -> ListToolsResult {
        let mut result = ListToolsResult::with_all_items(
            self.tools.iter().filter_map(ListedTool::to_sdk).collect(),
        );
        result.next_cursor = self.next_cursor.clone();
        result
    }

    /// The `tools/list` result in protocol `version`, as JSON: the SDK's result for an empty
    /// page (so every field the SDK adds for the version is there), with the tools written
    /// from their text.
    pub fn to_json(&self, version: &ProtocolVersion) -> Vec<u8> {
        let mut empty = ListToolsResult::with_all_items(Vec::new());
        empty.next_cursor = self.next_cursor.clone();
        let result = super::revision::finish(ServerResult::ListToolsResult(empty), version);
        let mut rest = match serde_json::to_value(&result) {
            Ok(Value::Object(fields)) => fields,
            _ => Map::new(),
        };
        rest.shift_remove("tools");
        #[derive(Serialize)]
        struct Wire<'a> {
            tools: &'a [ListedTool],
            #[serde(flatten)]
            rest: Map<String, Value>,
        }
        // Plain data into a Vec cannot fail to serialize.
        serde_json::to_vec(&Wire {
            tools: self.tools,
            rest,
        })
        .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn catalog(path: &std::path::Path) -> Catalog {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let source = crate::spec::SpecSource::File(path.to_path_buf());
        let docs = runtime.block_on(crate::spec::load(&source)).expect("loads");
        let input = crate::catalog::ApiInput::new("api", Some(&docs));
        let settings = crate::config::ToolSettings::default();
        crate::catalog::build(&[input], &settings)
            .expect("builds")
            .0
    }

    /// A listed tool is written exactly as the catalog's MCP JSON, and the SDK's `Tool`
    /// made from it is what the SDK reads from that JSON, for every tool of the shipped
    /// spec and of the large shared ones that are present.
    #[test]
    fn listed_tools_are_the_catalogs_mcp_json() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut specs = vec![root.join("specs/petstore.yaml")];
        for name in ["github", "stripe", "kubernetes"] {
            let path = root.join(format!("../shared/specs/real/{name}.json"));
            if path.exists() {
                specs.push(path);
            } else {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "{} is missing",
                    path.display()
                );
            }
        }
        for spec in specs {
            let catalog = catalog(&spec);
            assert!(!catalog.is_empty());
            for tool in catalog.tools() {
                let listed = ListedTool::from_catalog(tool).expect("object schemas");
                let json = tool.to_mcp();
                assert_eq!(
                    serde_json::to_value(&listed).expect("serializes"),
                    json,
                    "{} in {}",
                    tool.name,
                    spec.display()
                );
                let round_trip: Tool = serde_json::from_value(json).expect("a Tool");
                assert_eq!(
                    listed.to_sdk(),
                    Some(round_trip),
                    "{} in {}",
                    tool.name,
                    spec.display()
                );
            }
        }
    }
}
