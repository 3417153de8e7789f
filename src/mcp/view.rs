//! What one client sees of a snapshot: the tools in the schema dialect its rule or their API
//! asks for (`tools.dialect`, `apis.NAME.dialect`, `[[tools.clients]]`), with names within
//! the client's length budget. Views are made on first use and kept with the snapshot.

use std::collections::HashMap;
use std::sync::Arc;

use super::listed::ListedTool;
use crate::catalog::{Catalog, SchemaText, naming};
use crate::config::{ClientRule, Config, Dialect};
use crate::schema::dialect;

/// The configured presentation rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Presentation {
    default: Dialect,
    apis: HashMap<String, Dialect>,
    clients: Vec<ClientRule>,
}

impl Presentation {
    pub fn from_config(config: &Config) -> Presentation {
        Presentation {
            default: config.tools.dialect,
            apis: config
                .apis
                .iter()
                .filter_map(|(name, api)| Some((name.clone(), api.dialect?)))
                .collect(),
            clients: config.tools.clients.clone(),
        }
    }

    /// The rule (by position) for a client that calls itself `client`.
    pub fn rule_for(&self, client: Option<&str>) -> Option<usize> {
        let client = client?;
        self.clients.iter().position(|rule| rule.matches(client))
    }

    /// The dialect a tool of `api` (None: a discovery tool) is shown in under `rule`.
    pub fn dialect(&self, rule: Option<usize>, api: Option<&str>) -> Dialect {
        rule.and_then(|i| self.clients.get(i)?.dialect)
            .or_else(|| api.and_then(|api| self.apis.get(api).copied()))
            .unwrap_or(self.default)
    }

    /// True when nobody sees anything but the synthesized tools.
    pub fn is_plain(&self) -> bool {
        self.clients.is_empty()
            && self.default == Dialect::Full
            && self.apis.values().all(|d| *d == Dialect::Full)
    }

    fn max_name_length(&self, rule: Option<usize>) -> Option<usize> {
        rule.and_then(|i| self.clients.get(i)?.max_name_length)
    }
}

/// One client's tools, and the names it may call that differ from the catalog's.
#[derive(Debug, Default)]
pub struct View {
    pub tools: Arc<Vec<ListedTool>>,
    /// Shortened name → catalog name.
    aliases: HashMap<String, String>,
    pub rule: Option<usize>,
    /// For listed tools shown in another dialect: how their arguments are mapped back, by
    /// catalog name.
    restorers: HashMap<String, dialect::Restorer>,
    /// Definitions already returned by search or describe, by catalog name.
    described: std::sync::Mutex<HashMap<String, serde_json::Value>>,
    /// `tools/list` results already serialized, by cursor ("" for the first page).
    pub(super) wire_pages: std::sync::Mutex<HashMap<String, axum::body::Bytes>>,
    /// Each listed tool's size as JSON, for pages by bytes; counted on first use.
    wire_sizes: std::sync::OnceLock<Vec<usize>>,
}

impl View {
    /// The plain view: the tools as they are.
    pub fn plain(tools: Arc<Vec<ListedTool>>) -> View {
        View {
            tools,
            aliases: HashMap::new(),
            rule: None,
            restorers: HashMap::new(),
            described: Default::default(),
            wire_pages: Default::default(),
            wire_sizes: Default::default(),
        }
    }

    /// Each listed tool's length as compact JSON, in listing order.
    pub(super) fn wire_sizes(&self) -> &[usize] {
        self.wire_sizes
            .get_or_init(|| self.tools.iter().map(crate::json::compact_len).collect())
    }

    /// Arguments a client of this view sent to catalog tool `tool` (shown in `dialect`), as
    /// the tool's own schema expects them.
    pub fn restore(
        &self,
        tool: &crate::catalog::Tool,
        dialect: Dialect,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        if dialect == Dialect::Full {
            return arguments;
        }
        match self.restorers.get(&tool.name) {
            Some(restorer) => restorer.restore(arguments),
            // A tool found through search is not in the listed set: worked out per call.
            None => dialect::restore_arguments(dialect, &tool.input_schema.to_value(), arguments),
        }
    }

    /// Catalog tool `tool`'s full definition as this client sees listed tools (its
    /// `dialect`, its names), for search and describe answers; made once per view.
    pub fn describe(&self, tool: &crate::catalog::Tool, dialect: Dialect) -> serde_json::Value {
        let mut described = self.described.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(definition) = described.get(&tool.name) {
            return definition.clone();
        }
        let definition = match ListedTool::from_catalog(tool) {
            Some(wire) => {
                let mut wire = adapt(wire, dialect);
                wire.name = self.client_name(&tool.name);
                serde_json::to_value(wire).unwrap_or_else(|_| tool.to_mcp())
            }
            None => tool.to_mcp(),
        };
        described.insert(tool.name.clone(), definition.clone());
        definition
    }

    /// The catalog name of a tool this client called `name`.
    pub fn catalog_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map(String::as_str).unwrap_or(name)
    }

    /// The name this client knows catalog tool `name` by.
    pub fn client_name(&self, name: &str) -> String {
        self.aliases
            .iter()
            .find(|(_, real)| real.as_str() == name)
            .map(|(short, _)| short.clone())
            .unwrap_or_else(|| name.to_string())
    }

    /// `base` (tools shaped for the client's protocol version) as a client under `rule` sees
    /// them.
    pub fn build(
        base: &[ListedTool],
        catalog: &Catalog,
        presentation: &Presentation,
        rule: Option<usize>,
    ) -> View {
        let mut restorers = HashMap::new();
        let mut tools: Vec<ListedTool> = base
            .iter()
            .map(|tool| {
                let api = catalog.get(&tool.name).map(|t| t.route.api.as_str());
                let dialect = presentation.dialect(rule, api);
                let mut tool = tool.clone();
                if api.is_none() && dialect != Dialect::Full {
                    arguments_as_text(&mut tool);
                }
                let (tool, restorer) = adapt_for_calls(tool, dialect);
                if let Some(restorer) = restorer.filter(|_| api.is_some()) {
                    restorers.insert(tool.name.to_string(), restorer);
                }
                tool
            })
            .collect();
        let mut aliases = HashMap::new();
        if let Some(max) = presentation.max_name_length(rule) {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            let short = naming::within_budget(&names, max);
            for (tool, short) in tools.iter_mut().zip(short) {
                if short != tool.name {
                    aliases.insert(short.clone(), tool.name.to_string());
                    tool.name = short;
                }
            }
        }
        View {
            tools: Arc::new(tools),
            aliases,
            rule,
            restorers,
            described: Default::default(),
            wire_pages: Default::default(),
            wire_sizes: Default::default(),
        }
    }
}

/// A discovery tool's free-form `arguments` object, which strict dialects cannot express,
/// becomes JSON text (which `call_tool` also accepts).
fn arguments_as_text(tool: &mut ListedTool) {
    let mut schema = tool.input_schema.to_value();
    let Some(property) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("arguments"))
    else {
        return;
    };
    *property = serde_json::json!({
        "type": "string",
        "description": "The tool's arguments as a JSON object, e.g. {\"owner\": \"octo\", \"per_page\": 10}."
    });
    tool.input_schema = SchemaText::new(&schema);
}

/// `tool` in `dialect`: its input schema adapted, its output schema kept only where the
/// dialect has one.
pub fn adapt(tool: ListedTool, dialect: Dialect) -> ListedTool {
    adapt_for_calls(tool, dialect).0
}

/// [`adapt`], with what maps a call's arguments back (`None` when nothing changed).
fn adapt_for_calls(
    mut tool: ListedTool,
    dialect: Dialect,
) -> (ListedTool, Option<dialect::Restorer>) {
    if dialect == Dialect::Full {
        return (tool, None);
    }
    let (adapted, restorer) = dialect::adapt_for_calls(dialect, &tool.input_schema.to_value());
    if adapted.schema.is_object() {
        tool.input_schema = SchemaText::new(&adapted.schema);
    }
    if !dialect::keeps_output_schema(dialect) {
        tool.output_schema = None;
    }
    (tool, restorer)
}
