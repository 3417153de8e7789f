//! Discovery: how an API too large to list reaches a model (`apis.NAME.discovery`).
//!
//! - `all`: every tool is in `tools/list`.
//! - `search`: `tools/list` shows `search_tools` (ranked keyword search, see [`search`],
//!   returning full definitions) and `call_tool` (name + arguments, dispatched exactly like
//!   a listed tool), plus pinned tools.
//! - `meta`: `list_operations` (one line per operation), `describe_operation` (one full
//!   definition) and `call_operation`.
//!
//! This module decides what a call to one of these tools means ([`Action`]); the MCP layer
//! answers it or dispatches the named tool. Tools stay callable by their own names too.

pub mod search;

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Tool, naming};
use crate::config::DiscoveryMode;
use crate::json::compact_len;
use crate::upstream::{Content, ToolResult};
use search::SearchIndex;

/// What a discovery tool call asks for.
#[derive(Debug)]
pub enum Action {
    /// The answer, complete.
    Answer(ToolResult),
    /// Call catalog tool `tool` with `arguments`, as if it had been called directly.
    Dispatch {
        tool: String,
        arguments: Map<String, Value>,
    },
}

/// The discovery tools of one catalog, and what they search.
pub struct Discovery {
    index: Option<SearchIndex>,
    /// Catalog positions of the tools of APIs in `meta` mode.
    operations: Vec<usize>,
    /// The discovery tools' definitions (MCP JSON), in `tools/list` order.
    definitions: Vec<Value>,
    names: Names,
    /// Names `call_tool` passes on although the catalog has no such tool (restmcp's own
    /// tools, such as the status tool of long-running operations).
    passed_on: Vec<String>,
}

/// The discovery tools' names: the usual ones, unless a catalog tool already has one.
struct Names {
    search: String,
    call: String,
    list: String,
    describe: String,
    call_operation: String,
}

/// What the discovery tools of a catalog are, without the search index: their names and
/// definitions, and the tools of APIs in `meta` mode.
struct Plan {
    operations: Vec<usize>,
    definitions: Vec<Value>,
    names: Names,
}

impl Plan {
    /// `catalog`'s plan, and the tools (with their catalog positions) of its APIs in
    /// `search` mode.
    fn of(catalog: &Catalog) -> (Plan, Vec<(usize, &Tool)>) {
        let taken = |name: &str| catalog.get(name).is_some();
        let free = |name: &str| {
            if taken(name) {
                format!("restmcp_{name}")
            } else {
                name.to_string()
            }
        };
        let names = Names {
            search: free("search_tools"),
            call: free("call_tool"),
            list: free("list_operations"),
            describe: free("describe_operation"),
            call_operation: free("call_operation"),
        };
        let mode_of = |tool: &Tool| {
            catalog
                .listing(&tool.route.api)
                .map_or(DiscoveryMode::All, |l| l.discovery)
        };
        let searched: Vec<(usize, &Tool)> = catalog
            .tools()
            .iter()
            .enumerate()
            .filter(|(_, tool)| mode_of(tool) == DiscoveryMode::Search)
            .collect();
        let operations: Vec<usize> = catalog
            .tools()
            .iter()
            .enumerate()
            .filter(|(_, tool)| mode_of(tool) == DiscoveryMode::Meta)
            .map(|(i, _)| i)
            .collect();
        let apis_in = |indices: &mut dyn Iterator<Item = usize>| -> Vec<(String, usize)> {
            let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
            for i in indices {
                *counts
                    .entry(catalog.tools()[i].route.api.clone())
                    .or_default() += 1;
            }
            counts.into_iter().collect()
        };
        let mut definitions = Vec::new();
        let search_apis = apis_in(&mut searched.iter().map(|(i, _)| *i));
        if !search_apis.is_empty() {
            definitions.extend(search_definitions(catalog, &names, &search_apis));
        }
        let meta_apis = apis_in(&mut operations.iter().copied());
        if !meta_apis.is_empty() {
            definitions.extend(meta_definitions(catalog, &names, &meta_apis));
        }
        let plan = Plan {
            operations,
            definitions,
            names,
        };
        (plan, searched)
    }
}

/// Most definitions `search_tools` returns at once.
const MAX_RESULTS: usize = 20;
const DEFAULT_RESULTS: usize = 5;
const DEFAULT_OPERATIONS: usize = 200;

impl Discovery {
    /// The discovery tools `catalog` needs, with the search index over the tools of its
    /// APIs in `search` mode.
    pub fn new(catalog: &Catalog) -> Discovery {
        let (plan, searched) = Plan::of(catalog);
        Discovery {
            index: (!searched.is_empty()).then(|| SearchIndex::new(searched)),
            operations: plan.operations,
            definitions: plan.definitions,
            names: plan.names,
            passed_on: Vec::new(),
        }
    }

    /// `call_tool` (and `call_operation`) also dispatch calls of `name`, a tool the MCP
    /// layer answers itself.
    pub fn pass_on(&mut self, name: String) {
        self.passed_on.push(name);
    }

    /// The discovery tools to list, as MCP tool JSON.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// True when `name` is one of the discovery tools in service.
    pub fn handles(&self, name: &str) -> bool {
        let names = &self.names;
        (self.index.is_some() && (name == names.search || name == names.call))
            || (!self.operations.is_empty()
                && (name == names.list || name == names.describe || name == names.call_operation))
    }

    /// What a call of discovery tool `name` means. `describe` gives a tool's full
    /// definition as the client should see it. Bad arguments are answered with an error
    /// result naming the problem.
    pub fn handle(
        &self,
        catalog: &Catalog,
        name: &str,
        arguments: &Map<String, Value>,
        describe: &dyn Fn(&Tool) -> Value,
    ) -> Action {
        let names = &self.names;
        let outcome = if name == names.search {
            self.search(catalog, arguments, describe)
        } else if name == names.call || name == names.call_operation {
            call(catalog, name, arguments, &self.passed_on)
        } else if name == names.list {
            self.list(catalog, arguments)
        } else if name == names.describe {
            text_argument(arguments, "name").and_then(|wanted| {
                let tool = find(catalog, &wanted)?;
                Ok(Action::Answer(ToolResult::json(describe(tool))))
            })
        } else {
            Err(format!("\"{name}\" is not a discovery tool"))
        };
        outcome.unwrap_or_else(|problem| Action::Answer(ToolResult::error(problem)))
    }

    fn search(
        &self,
        catalog: &Catalog,
        arguments: &Map<String, Value>,
        describe: &dyn Fn(&Tool) -> Value,
    ) -> Result<Action, String> {
        let index = self.index.as_ref().ok_or("no API is in search mode")?;
        let query = text_argument(arguments, "query")?;
        let limit = count_argument(arguments, "limit", DEFAULT_RESULTS, MAX_RESULTS)?;
        let api = optional_text(arguments, "api")?;
        let found = index.search(&query, limit, api.as_deref());
        let tools: Vec<Value> = found
            .iter()
            .map(|(position, _)| describe(&catalog.tools()[*position]))
            .collect();
        if tools.is_empty() {
            return Ok(Action::Answer(ToolResult {
                content: vec![Content::Text {
                    text: format!(
                        "No tool matches \"{query}\". Try other words: what the operation does (\"list\", \"create\"), or the kind of object it works on."
                    ),
                }],
                structured: Some(json!({ "tools": [] })),
                is_error: false,
                text_is_structured: None,
            }));
        }
        Ok(Action::Answer(ToolResult::json(json!({ "tools": tools }))))
    }

    fn list(&self, catalog: &Catalog, arguments: &Map<String, Value>) -> Result<Action, String> {
        let api = optional_text(arguments, "api")?;
        let filter = optional_text(arguments, "filter")?.map(|f| f.to_lowercase());
        let offset = count_argument(arguments, "offset", 0, usize::MAX)?;
        let limit = count_argument(arguments, "limit", DEFAULT_OPERATIONS, 1000)?;
        let matching: Vec<&Tool> = self
            .operations
            .iter()
            .map(|&i| &catalog.tools()[i])
            .filter(|tool| api.as_deref().is_none_or(|api| tool.route.api == api))
            .filter(|tool| {
                filter.as_deref().is_none_or(|filter| {
                    tool.name.to_lowercase().contains(filter)
                        || summary(tool).to_lowercase().contains(filter)
                })
            })
            .collect();
        let total = matching.len();
        let page: Vec<&Tool> = matching.into_iter().skip(offset).take(limit).collect();
        let mut text: String = page
            .iter()
            .map(|tool| format!("{}: {}\n", tool.name, summary(tool)))
            .collect();
        let next = offset.saturating_add(page.len());
        if next < total {
            text.push_str(&format!(
                "({} of {total} shown; call again with offset {next} for more)\n",
                page.len()
            ));
        }
        let operations: Vec<Value> = page
            .iter()
            .map(|tool| json!({ "name": tool.name, "summary": summary(tool) }))
            .collect();
        let mut structured = json!({ "operations": operations, "total": total });
        if next < total {
            structured["nextOffset"] = json!(next);
        }
        Ok(Action::Answer(ToolResult {
            content: vec![Content::Text { text }],
            structured: Some(structured),
            is_error: false,
            text_is_structured: None,
        }))
    }
}

/// What API `api` adds to `tools/list` in each mode, in bytes of compact JSON: every tool
/// (`all`), or the discovery tools for it alone plus its pinned tools (`search`, `meta`).
pub fn budget(catalog: &Catalog, api: &str) -> crate::catalog::report::Budget {
    let names = Names {
        search: "search_tools".into(),
        call: "call_tool".into(),
        list: "list_operations".into(),
        describe: "describe_operation".into(),
        call_operation: "call_operation".into(),
    };
    let tools: Vec<&Tool> = catalog
        .tools()
        .iter()
        .filter(|tool| tool.route.api == api)
        .collect();
    let listing = catalog.listing(api);
    let pinned_bytes: usize = tools
        .iter()
        .filter(|tool| listing.is_some_and(|l| l.pinned.contains(&tool.name)))
        .map(|tool| compact_len(&tool.mcp()) + 1)
        .sum();
    let all_bytes = listing.map_or_else(
        || tools.iter().map(|tool| compact_len(&tool.mcp()) + 1).sum(),
        |l| l.bytes,
    );
    let apis = [(api.to_string(), tools.len())];
    let bytes = |definitions: Vec<Value>| -> usize {
        definitions
            .iter()
            .map(|d| d.to_string().len() + 1)
            .sum::<usize>()
            + pinned_bytes
    };
    crate::catalog::report::Budget {
        discovery: listing
            .map_or(DiscoveryMode::All, |l| l.discovery)
            .as_str()
            .to_string(),
        auto: listing.and_then(|l| l.chosen.as_ref()).map(|c| c.reason()),
        all_bytes,
        search_bytes: bytes(search_definitions(catalog, &names, &apis)),
        meta_bytes: bytes(meta_definitions(catalog, &names, &apis)),
    }
}

/// `call_tool` / `call_operation`: which tool, with which arguments.
fn call(
    catalog: &Catalog,
    name: &str,
    arguments: &Map<String, Value>,
    passed_on: &[String],
) -> Result<Action, String> {
    let wanted = text_argument(arguments, "name")?;
    let tool = if passed_on.contains(&wanted) {
        wanted
    } else {
        find(catalog, &wanted)?.name.clone()
    };
    let inner = match arguments.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        // Clients whose schema dialect has no free-form object send the arguments as JSON
        // text (see `mcp::view`).
        Some(Value::String(text)) if text.trim().is_empty() => Map::new(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(format!(
                    "{name}: \"arguments\" must be a JSON object with the tool's arguments"
                ));
            }
        },
        Some(_) => {
            return Err(format!(
                "{name}: \"arguments\" must be an object with the tool's arguments"
            ));
        }
    };
    Ok(Action::Dispatch {
        tool,
        arguments: inner,
    })
}

fn find<'c>(catalog: &'c Catalog, wanted: &str) -> Result<&'c Tool, String> {
    catalog.get(wanted).ok_or_else(|| {
        let known: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
        match naming::closest(wanted, &known) {
            Some(close) => format!("no tool is named \"{wanted}\"; did you mean \"{close}\"?"),
            None => format!("no tool is named \"{wanted}\"; search for it first"),
        }
    })
}

/// A tool's one-line summary: its title, else the first line of its description.
fn summary(tool: &Tool) -> String {
    let line = tool
        .title
        .clone()
        .unwrap_or_else(|| tool.description.lines().next().unwrap_or("").to_string());
    crate::catalog::truncate_text(&line, 120)
}

fn text_argument(arguments: &Map<String, Value>, key: &str) -> Result<String, String> {
    match arguments.get(key) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Some(_) => Err(format!("\"{key}\" must be a non-empty string")),
        None => Err(format!("\"{key}\" is required")),
    }
}

fn optional_text(arguments: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text_argument(arguments, key).map(Some),
    }
}

fn count_argument(
    arguments: &Map<String, Value>,
    key: &str,
    default: usize,
    max: usize,
) -> Result<usize, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(|n| n.min(max))
            .ok_or_else(|| format!("\"{key}\" must be a whole number of at least 0")),
    }
}

fn api_words(catalog: &Catalog, apis: &[(String, usize)]) -> String {
    apis.iter()
        .map(|(api, count)| {
            let title = catalog
                .listing(api)
                .map(|l| l.title.as_str())
                .filter(|t| !t.is_empty());
            match title {
                Some(title) => format!("{count} tools of API \"{api}\" ({title})"),
                None => format!("{count} tools of API \"{api}\""),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn api_property(apis: &[(String, usize)]) -> Option<Value> {
    (apis.len() > 1).then(|| {
        let names: Vec<&str> = apis.iter().map(|(a, _)| a.as_str()).collect();
        json!({ "type": "string", "enum": names, "description": "Only this API's tools." })
    })
}

fn search_definitions(catalog: &Catalog, names: &Names, apis: &[(String, usize)]) -> Vec<Value> {
    let mut properties = json!({
        "query": {"type": "string", "description": "What you want to do, in a few words, e.g. \"create an issue comment\"."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS, "description": "How many tools to return."}
    });
    if let Some(api) = api_property(apis) {
        properties["api"] = api;
    }
    vec![
        json!({
            "name": names.search,
            "title": "Search tools",
            "description": format!(
                "Finds tools among {} by keywords and returns their full definitions (name, description, inputSchema). Call the one you need with {}.",
                api_words(catalog, apis), names.call
            ),
            "inputSchema": {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }),
        json!({
            "name": names.call,
            "title": "Call a tool",
            "description": format!(
                "Calls a tool found with {} by its name, with arguments that follow its inputSchema; returns that tool's result.",
                names.search
            ),
            "inputSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "The tool's name, as search returned it."},
                "arguments": {"type": "object", "description": "The tool's arguments."}
            }, "required": ["name"], "additionalProperties": false}
        }),
    ]
}

fn meta_definitions(catalog: &Catalog, names: &Names, apis: &[(String, usize)]) -> Vec<Value> {
    let mut list_properties = json!({
        "filter": {"type": "string", "description": "Only operations whose name or summary contains this text."},
        "offset": {"type": "integer", "minimum": 0, "default": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": DEFAULT_OPERATIONS}
    });
    if let Some(api) = api_property(apis) {
        list_properties["api"] = api;
    }
    let name_schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "The operation's name, as listed."}
    }, "required": ["name"], "additionalProperties": false});
    vec![
        json!({
            "name": names.list,
            "title": "List operations",
            "description": format!("Lists the {}: one line each, name and summary. Then get an operation's arguments with {}.", api_words(catalog, apis), names.describe),
            "inputSchema": {"type": "object", "properties": list_properties, "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }),
        json!({
            "name": names.describe,
            "title": "Describe an operation",
            "description": format!("Returns one operation's full definition (description and inputSchema), to call it with {}.", names.call_operation),
            "inputSchema": name_schema,
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }),
        json!({
            "name": names.call_operation,
            "title": "Call an operation",
            "description": "Calls an operation by its name with arguments that follow its inputSchema; returns its result.",
            "inputSchema": {"type": "object", "properties": {
                "name": {"type": "string", "description": "The operation's name."},
                "arguments": {"type": "object", "description": "The operation's arguments."}
            }, "required": ["name"], "additionalProperties": false}
        }),
    ]
}

/// Bytes of the `tools/list` result this catalog is served with (`{"tools":[…]}`).
pub fn served_list_bytes(catalog: &Catalog) -> usize {
    // The definitions only: building the search index too took 0.12 s of Microsoft Graph
    // beta's 1.9 s `check`.
    let (plan, _) = Plan::of(catalog);
    /// Each entry serialized as it is, so no copy of the schemas is made just to be measured
    /// (a `Value` copy of GitHub's list peaked at 65 MB).
    #[derive(serde::Serialize)]
    #[serde(untagged)]
    enum Entry<'a> {
        Definition(&'a Value),
        Tool(crate::catalog::McpTool<'a>),
    }
    #[derive(serde::Serialize)]
    struct List<'a> {
        tools: Vec<Entry<'a>>,
    }
    let tools = plan
        .definitions
        .iter()
        .map(Entry::Definition)
        .chain(
            catalog
                .tools()
                .iter()
                .filter(|tool| catalog.is_listed(tool))
                .map(|tool| Entry::Tool(tool.mcp())),
        )
        .collect();
    compact_len(&List { tools })
}
