//! OpenAPI schemas → self-contained JSON Schema 2020-12.
//!
//! Every schema restmcp publishes must be valid 2020-12, contain no OpenAPI-only keyword
//! (`nullable`, `discriminator`, `xml`, boolean `exclusiveMinimum`, `example`…) and no
//! `$ref` that leaves it, because clients validate with stock JSON Schema libraries and
//! some reject the whole `tools/list` over one bad schema. That includes the `$ref`s
//! descriptions write inside values (examples, defaults, `enum` and `const` members): they
//! are resolved to Example objects' values or the value is removed ([`crate::spec::values`]).
//!
//! A [`Session`] translates all the schema pieces of one tool in one direction (its
//! parameters and body for the input, a response for the output) in two passes:
//! 1. *analysis* follows every `$ref`, counts how often each target is used and marks the
//!    targets that are reachable from themselves (recursive);
//! 2. *emission* inlines a target used once and not recursive, and puts the rest under
//!    the tool's own `$defs` — so schemas stay as small as the original, readable where
//!    possible, and finite where the API is recursive.
//!
//! A [`Limit`] bounds an emission: below a depth, output schemas accept anything and input
//! schemas keep a typed placeholder naming what was left out (the catalog keeps the full
//! schema beside it). [`Session::shared`] emits with shared definitions instead: every
//! `$ref` a `$defs` entry named by its target ([`RefGraph::shared_name`]), so that a
//! component's text is the same in every tool and is converted once per API.
//!
//! Output schemas are lenient by design ([`Direction::Output`]): upstreams return data their
//! specs do not quite promise, and a client that sees `structuredContent` contradict the
//! `outputSchema` rejects the result. So validation-only keywords are dropped there and
//! `oneOf` becomes `anyOf`.
//!
//! The translation lives in this file; its submodules:
//! * [`graph`]: the `$ref` graph of one API description, built lazily and shared by every
//!   tool's translation (which targets are recursive, computed once);
//! * [`dialect`]: the published input schema rewritten for client model APIs that take
//!   only a subset of JSON Schema (openai-strict, Gemini), and their arguments restored;
//! * [`mod@hoist`]: repeated subtrees of a published schema moved into its `$defs` where that
//!   makes it smaller;
//! * [`example`]: deterministic example values generated from a published schema (the
//!   mock upstream's answers, `restmcp selftest`'s arguments), with the validator that
//!   checks them;
//! * `tests`: the translation of each OpenAPI construct, every result checked against
//!   the 2020-12 meta-schema and a stock validator.

pub mod dialect;
pub mod ecma;
pub mod example;
mod graph;
mod hoist;

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value, json};

pub use graph::{NodeId, RefGraph};
pub use hoist::{Hoisted, Scope, hoist, hoist_unmeasured};

use crate::json::Lookup as _;
use crate::spec::{DocId, SchemaRef, SpecVersion, values};

/// Which side of the call a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Arguments: faithful to the spec, `readOnly` properties left out.
    Input,
    /// Results: lenient, `writeOnly` properties left out.
    Output,
    /// Results as the spec promises them (for the mock upstream to produce): faithful like
    /// `Input`, `writeOnly` properties left out like `Output`.
    Response,
}

/// How much of its own description a relaxed input subschema keeps (characters).
const RELAXED_DESCRIPTION_CHARS: usize = 160;

/// Depth beyond which a `$ref` is never inlined (it goes to `$defs`), which bounds the
/// recursion of emission whatever the input.
const MAX_INLINE_DEPTH: usize = 200;

/// What the translation changed, for `restmcp check`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Notes {
    /// OpenAPI-only or unknown keywords removed, with how often.
    pub dropped: BTreeMap<String, usize>,
    /// Values that were not valid where they stood, removed.
    pub invalid: Vec<String>,
}

impl Notes {
    fn drop_keyword(&mut self, keyword: &str) {
        *self.dropped.entry(keyword.to_string()).or_default() += 1;
    }

    pub fn merge(&mut self, other: Notes) {
        for (k, n) in other.dropped {
            *self.dropped.entry(k).or_default() += n;
        }
        self.invalid.extend(other.invalid);
    }
}

/// Translation of several schema pieces that end up in one JSON Schema document.
pub struct Session<'d, 'g> {
    graph: &'g mut RefGraph<'d>,
    version: SpecVersion,
    direction: Direction,
    counts: FxHashMap<NodeId, u32>,
    reached: FxHashSet<NodeId>,
    def_names: FxHashMap<NodeId, String>,
    used_names: FxHashSet<String>,
    pending: VecDeque<(String, NodeId)>,
    /// Shallowest depth each pending def was referenced at: its body continues from there
    /// when a depth limit applies.
    def_depth: FxHashMap<String, usize>,
    defs: Map<String, Value>,
    limit: Option<Limit>,
    spent: Spent,
    /// Every `$ref` becomes a reference to its shared definition (see [`Session::shared`]).
    shared: bool,
    pub notes: Notes,
}

/// A cap on an emission: below `max_depth` subschemas become `{}` (anything) in output
/// schemas and a typed placeholder in input schemas (see `Session::relaxed`), and once the
/// estimated size passes `budget` bytes the emission is abandoned as exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub max_depth: usize,
    pub budget: usize,
}

#[derive(Debug, Default)]
struct Spent {
    bytes: usize,
    exceeded: bool,
}

impl<'d, 'g> Session<'d, 'g> {
    pub fn new(graph: &'g mut RefGraph<'d>, version: SpecVersion, direction: Direction) -> Self {
        Session {
            graph,
            version,
            direction,
            counts: FxHashMap::default(),
            reached: FxHashSet::default(),
            def_names: FxHashMap::default(),
            used_names: FxHashSet::default(),
            pending: VecDeque::new(),
            def_depth: FxHashMap::default(),
            defs: Map::new(),
            limit: None,
            spent: Spent::default(),
            shared: false,
            notes: Notes::default(),
        }
    }

    /// A session that emits with shared definitions: no `$ref` is inlined, each becomes
    /// `{"$ref": "#/$defs/NAME"}` with the name the graph gives its target
    /// ([`RefGraph::shared_name`]), and the definitions are not collected here: the caller
    /// emits each once with [`Session::emit_definition`] and shares it between schemas.
    /// [`Session::reached`] lists the ones a schema needs. Used for the full schemas kept
    /// beside relaxed ones, where each component is converted once per API, not per tool.
    pub fn shared(graph: &'g mut RefGraph<'d>, version: SpecVersion, direction: Direction) -> Self {
        let mut session = Session::new(graph, version, direction);
        session.shared = true;
        session
    }

    /// Every `$ref` target the analyzed pieces reach, directly or not, in a stable order,
    /// with its shared name.
    pub fn reached(&mut self) -> Vec<(NodeId, String)> {
        let mut ids: Vec<NodeId> = self.reached.iter().copied().collect();
        ids.sort_unstable();
        ids.into_iter()
            .map(|id| (id, self.graph.shared_name(id).to_string()))
            .collect()
    }

    /// The body of the shared definition of node `id` (see [`Session::shared`]).
    pub fn emit_definition(&mut self, id: NodeId) -> Value {
        let (doc, value) = {
            let node = self.graph.node(id);
            (node.doc, node.value)
        };
        if value.field("$ref").is_some() {
            self.emit(doc, value, 1)
        } else {
            self.emit_content(doc, value, 1)
        }
    }

    /// In a shared session: `schema` with every `$ref` among its `allOf` members (and
    /// theirs, in turn) replaced by the definition it names, annotations beside the
    /// reference kept. A reference and its target validate the same, so the meaning is
    /// unchanged; what changes is that a body made of components (`allOf: [entity, {…}]`,
    /// as Microsoft Graph writes them) can be flattened into the same arguments as its
    /// published schema, where those components were written inline.
    pub fn expand_parts(&mut self, schema: &Value) -> Value {
        let ids: Vec<NodeId> = self.reached.iter().copied().collect();
        let names: FxHashMap<String, NodeId> = ids
            .into_iter()
            .map(|id| (self.graph.shared_name(id).to_string(), id))
            .collect();
        self.expand_parts_with(&names, schema.clone(), 0)
    }

    fn expand_parts_with(
        &mut self,
        names: &FxHashMap<String, NodeId>,
        mut schema: Value,
        level: usize,
    ) -> Value {
        // A part that is (through others) itself: never flattened anyway.
        if level > 32 {
            return schema;
        }
        let Some(Value::Array(members)) = schema.get_mut("allOf") else {
            return schema;
        };
        for member in members.iter_mut() {
            let target = member
                .field("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| names.get(name).copied());
            let part = match (target, &*member) {
                (Some(id), Value::Object(beside)) => {
                    let mut body = self.emit_definition(id);
                    if let Value::Object(map) = &mut body {
                        for (key, value) in beside {
                            if key != "$ref" && !map.contains_key(key) {
                                map.insert(key.clone(), value.clone());
                            }
                        }
                    }
                    body
                }
                _ => std::mem::take(member),
            };
            *member = self.expand_parts_with(names, part, level + 1);
        }
        schema
    }

    /// First pass over one piece: counts how often each `$ref` target would be emitted.
    /// Every piece must be analyzed before any is emitted, so that a target shared between
    /// pieces is known to be shared.
    pub fn analyze(&mut self, piece: &SchemaRef<'_>) -> Result<(), String> {
        let docs = self.graph.docs();
        let at = |problem: String| {
            format!(
                "{problem} (schema at {}#{})",
                docs.doc(piece.doc).name,
                piece.pointer
            )
        };
        let roots = match self.graph.direct_references(piece.doc, &piece.schema) {
            Ok(roots) => roots,
            Err(problem) => return Err(at(problem)),
        };
        let mut queue = Vec::new();
        for id in roots {
            *self.counts.entry(id).or_default() += 1;
            if self.reached.insert(id) {
                queue.push(id);
            }
        }
        while let Some(id) = queue.pop() {
            let edges = match self.graph.edges(id) {
                Ok(edges) => edges.to_vec(),
                Err(problem) => return Err(at(problem)),
            };
            for target in edges {
                *self.counts.entry(target).or_default() += 1;
                if self.reached.insert(target) {
                    queue.push(target);
                }
            }
        }
        Ok(())
    }

    /// Starts (or restarts) emission under `limit`, forgetting any earlier attempt's output
    /// but keeping the analysis.
    pub fn begin(&mut self, limit: Option<Limit>) {
        self.limit = limit;
        self.spent = Spent::default();
        self.def_names.clear();
        self.used_names.clear();
        self.pending.clear();
        self.def_depth.clear();
        self.defs.clear();
        self.notes = Notes::default();
    }

    /// True when the current emission passed its byte budget.
    pub fn exceeded(&self) -> bool {
        self.spent.exceeded
    }

    /// Second pass: the translated piece. A `$ref` at the piece's root is followed, so the
    /// caller sees the actual schema (needed to flatten bodies and to test for objects).
    pub fn emit_root(&mut self, piece: &SchemaRef<'_>) -> Value {
        let mut doc = piece.doc;
        let mut node: &Value = &piece.schema;
        let mut siblings: Vec<(DocId, &str, &Value)> = Vec::new();
        let mut nullable_ref = false;
        for _ in 0..32 {
            let Some(reference) = node.field("$ref").and_then(Value::as_str) else {
                break;
            };
            let Ok(id) = self.graph.resolve(doc, reference) else {
                break;
            };
            let target = self.graph.node(id);
            if let Some(map) = node.as_object() {
                nullable_ref |= self.is_nullable(map);
                siblings.extend(
                    map.iter()
                        .filter(|(k, _)| is_annotation(k))
                        .map(|(k, v)| (doc, k.as_str(), v)),
                );
            }
            doc = target.doc;
            node = target.value;
        }
        let mut out = if node.field("$ref").is_some() {
            self.emit(doc, node, 0)
        } else {
            self.emit_content(doc, node, 0)
        };
        for (at, key, value) in siblings {
            self.apply_annotation(&mut out, at, key, value);
        }
        if nullable_ref {
            out = make_nullable(out);
        }
        out
    }

    /// The `$defs` every emitted piece refers to; `None` when nothing was shared or
    /// recursive. Call after the last `emit_root`.
    pub fn defs(&mut self) -> Option<Map<String, Value>> {
        while let Some((name, id)) = self.pending.pop_front() {
            let depth = self.def_depth.get(&name).copied().unwrap_or(0);
            let (doc, value) = {
                let node = self.graph.node(id);
                (node.doc, node.value)
            };
            // An alias (a def that is itself a `$ref`) is followed, not emptied.
            let body = if value.field("$ref").is_some() {
                self.emit(doc, value, depth)
            } else {
                self.emit_content(doc, value, depth)
            };
            self.defs.insert(name, body);
        }
        if self.defs.is_empty() {
            return None;
        }
        let mut sorted: Vec<(String, Value)> = std::mem::take(&mut self.defs).into_iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        Some(sorted.into_iter().collect())
    }

    /// Says which part of the tool the values noted since note `from` (a length of
    /// `notes.invalid`) belong to: `label: note`.
    pub fn label_notes(&mut self, from: usize, label: &str) {
        for note in self.notes.invalid.iter_mut().skip(from) {
            *note = format!("{label}: {note}");
        }
    }

    pub fn into_notes(self) -> Notes {
        self.notes
    }

    fn cut_off(&self, depth: usize) -> bool {
        self.limit
            .is_some_and(|limit| depth > limit.max_depth || self.spent.exceeded)
    }

    fn charge(&mut self, out: &Map<String, Value>) {
        let Some(limit) = self.limit else { return };
        self.spent.bytes += estimate_size(out);
        if self.spent.bytes > limit.budget {
            self.spent.exceeded = true;
        }
    }

    fn emit(&mut self, doc: DocId, node: &Value, depth: usize) -> Value {
        if self.cut_off(depth) {
            // In an input schema a leaf costs no more than its placeholder would: kept.
            let leaf =
                self.direction == Direction::Input && !self.spent.exceeded && !has_structure(node);
            if !leaf {
                return self.relaxed(doc, node);
            }
        } else if self.direction == Direction::Input
            && node.field("$ref").is_some()
            && self.cut_off(depth + 1)
        {
            // The target would start below the limit: the reference itself is relaxed
            // (rather than becoming a `$defs` entry whose every member is a placeholder).
            return self.relaxed(doc, node);
        }
        match node {
            Value::Bool(b) => Value::Bool(*b),
            Value::Object(map) => match map.field("$ref") {
                Some(Value::String(reference))
                    if self.version == SpecVersion::OpenApi31 && has_schema_siblings(map) =>
                {
                    self.emit_ref_with_siblings(doc, node, reference, depth)
                }
                Some(Value::String(reference)) => self.emit_ref(doc, map, reference, depth),
                _ => self.emit_content(doc, node, depth),
            },
            other => {
                let shown = self.graph.docs().shown(doc, other);
                self.notes
                    .invalid
                    .push(format!("{shown} is not a schema; replaced by {{}}"));
                json!({})
            }
        }
    }

    /// What stands for a subschema below the depth limit. Output schemas accept anything
    /// there (`{}`). An input schema keeps what a model needs to fill the argument in, and
    /// nothing the full schema would not also demand: the type (with `null` when nullable),
    /// the format, and a description naming what was left out. The full schema is what
    /// arguments are checked against, so the placeholder must never be stricter.
    fn relaxed(&mut self, doc: DocId, node: &Value) -> Value {
        if self.direction != Direction::Input || self.spent.exceeded {
            return json!({});
        }
        let mut described = node.field("description").and_then(Value::as_str);
        let mut title = node.field("title").and_then(Value::as_str);
        let (mut at, mut target) = (doc, node);
        let mut name = None;
        for _ in 0..8 {
            let Some(reference) = target.field("$ref").and_then(Value::as_str) else {
                break;
            };
            let Ok(id) = self.graph.resolve(at, reference) else {
                break;
            };
            let resolved = self.graph.node(id);
            name = resolved
                .pointer
                .rsplit('/')
                .next()
                .map(|last| crate::json::unescape_token(last).into_owned());
            at = resolved.doc;
            target = resolved.value;
            described = described.or_else(|| target.field("description").and_then(Value::as_str));
            title = title.or_else(|| target.field("title").and_then(Value::as_str));
        }
        let mut out = Map::new();
        if let Value::Object(map) = target {
            let nullable =
                self.is_nullable(map) || node.as_object().is_some_and(|m| self.is_nullable(m));
            if let Some(t) = map.field("type").and_then(|t| translate_type(t, nullable)) {
                out.insert("type".into(), t);
            }
            if let Some(Value::String(format)) = map.field("format") {
                out.insert("format".into(), json!(format));
            }
        }
        let what = name.or_else(|| title.map(str::to_string));
        let mut text = String::new();
        if let Some(described) = described {
            text.extend(described.chars().take(RELAXED_DESCRIPTION_CHARS));
            if described.chars().count() > RELAXED_DESCRIPTION_CHARS {
                text.push('…');
            }
            text.push(' ');
        }
        text.push_str(&match what {
            Some(what) => format!("[{what}: nested fields not listed, to keep this schema small; sent values are checked against the full schema]"),
            None => "[nested fields not listed, to keep this schema small; sent values are checked against the full schema]".to_string(),
        });
        out.insert("description".into(), Value::String(text));
        self.charge(&out);
        Value::Object(out)
    }

    fn emit_ref(
        &mut self,
        doc: DocId,
        map: &Map<String, Value>,
        reference: &str,
        depth: usize,
    ) -> Value {
        let Ok(id) = self.graph.resolve(doc, reference) else {
            self.notes.invalid.push(format!(
                "unresolvable $ref \"{reference}\" replaced by {{}}"
            ));
            return json!({});
        };
        let recursive = self.graph.is_recursive(id).unwrap_or(true);
        let inline = !self.shared
            && self.counts.get(&id).copied().unwrap_or(0) <= 1
            && !recursive
            && depth < MAX_INLINE_DEPTH;
        let mut out = if inline {
            let (target_doc, target) = {
                let node = self.graph.node(id);
                (node.doc, node.value)
            };
            self.emit(target_doc, target, depth + 1)
        } else if self.shared {
            json!({ "$ref": format!("#/$defs/{}", self.graph.shared_name(id)) })
        } else {
            let name = self.def_name(id, depth + 1);
            json!({ "$ref": format!("#/$defs/{name}") })
        };
        for (k, v) in map {
            if is_annotation(k) {
                self.apply_annotation(&mut out, doc, k, v);
            }
        }
        if self.is_nullable(map) {
            out = make_nullable(out);
        }
        out
    }

    /// OpenAPI 3.1 (JSON Schema 2020-12): keywords next to a `$ref` apply together with it,
    /// so the reference becomes one more `allOf` member of the sibling schema.
    fn emit_ref_with_siblings(
        &mut self,
        doc: DocId,
        node: &Value,
        reference: &str,
        depth: usize,
    ) -> Value {
        let referenced = self.emit_ref(doc, &Map::new(), reference, depth);
        let mut siblings = self.emit_content(doc, node, depth);
        if let Value::Object(map) = &mut siblings {
            match map.get_mut("allOf") {
                Some(Value::Array(members)) => members.insert(0, referenced),
                _ => {
                    map.insert("allOf".into(), Value::Array(vec![referenced]));
                }
            }
        }
        siblings
    }

    fn def_name(&mut self, id: NodeId, depth: usize) -> String {
        if let Some(name) = self.def_names.get(&id) {
            let name = name.clone();
            if let Some(d) = self.def_depth.get_mut(&name) {
                *d = (*d).min(depth);
            }
            return name;
        }
        let node = self.graph.node(id);
        let last = if node.pointer.is_empty() {
            // A whole document: named after its file.
            let url = &self.graph.docs().doc(node.doc).url;
            let file = url
                .path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or("");
            file.split('.').next().unwrap_or("").to_string()
        } else {
            let last = node.pointer.rsplit('/').next().unwrap_or("");
            crate::json::unescape_token(last).into_owned()
        };
        let mut base: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "schema".into();
        }
        let name = graph::unique_name(&base, &mut self.used_names);
        self.def_names.insert(id, name.clone());
        self.def_depth.insert(name.clone(), depth);
        self.pending.push_back((name.clone(), id));
        name
    }

    fn is_nullable(&self, map: &Map<String, Value>) -> bool {
        let openapi_nullable = self.version != SpecVersion::OpenApi31
            && map.field("nullable") == Some(&Value::Bool(true));
        openapi_nullable || map.field("x-nullable") == Some(&Value::Bool(true))
    }

    /// Annotations written next to a `$ref` apply to the referenced schema; the referring
    /// site's text wins because it is the more specific.
    fn apply_annotation(&mut self, out: &mut Value, doc: DocId, key: &str, value: &Value) {
        let mut scratch = Map::new();
        self.translate_annotation(&mut scratch, doc, key, value);
        if let Value::Object(target) = out {
            for (k, v) in scratch {
                target.insert(k, v);
            }
        }
    }

    /// A data value (example, default, `enum` or `const` member) with the `$ref`s written
    /// in it resolved (see [`values`]); `None`, noted, when one cannot be: no `$ref` may
    /// leave the schema.
    fn data_value(&mut self, doc: DocId, keyword: &str, value: &Value) -> Option<Value> {
        match values::resolve(self.graph.docs(), doc, value) {
            Ok(value) => Some(value.into_owned()),
            Err(problem) => {
                self.notes
                    .invalid
                    .push(format!("{keyword} removed: {problem}"));
                None
            }
        }
    }

    fn translate_annotation(
        &mut self,
        out: &mut Map<String, Value>,
        doc: DocId,
        key: &str,
        value: &Value,
    ) {
        match key {
            "title" | "description" => {
                if let Some(s) = value.as_str() {
                    out.insert(key.into(), json!(s));
                }
            }
            "deprecated" | "readOnly" | "writeOnly" if value.is_boolean() => {
                out.insert(key.into(), value.clone());
            }
            "default" => {
                if let Some(value) = self.data_value(doc, key, value) {
                    out.insert(key.into(), value);
                }
            }
            "example" => {
                if !out.contains_key("examples")
                    && let Some(value) = self.data_value(doc, key, value)
                {
                    out.insert("examples".into(), Value::Array(vec![value]));
                }
            }
            "examples" => {
                if let Value::Array(items) = value {
                    let items: Vec<Value> = items
                        .iter()
                        .filter_map(|item| self.data_value(doc, "example", item))
                        .collect();
                    if !items.is_empty() {
                        out.insert(key.into(), Value::Array(items));
                    }
                }
            }
            _ => {}
        }
    }

    /// Translates a schema object's own keywords (a `$ref` in it is not followed here).
    fn emit_content(&mut self, doc: DocId, node: &Value, depth: usize) -> Value {
        let map = match node {
            Value::Object(map) => map,
            other => return self.emit(doc, other, depth),
        };
        let input = self.direction == Direction::Input;
        let strict = self.direction != Direction::Output;
        let nullable = self.is_nullable(map);
        let mut out = Map::new();
        let mut removed_properties: Vec<&str> = Vec::new();
        let mut dropped_pattern_property = false;
        for (key, value) in map {
            match key.as_str() {
                "$ref" => {}
                "type" => {
                    if let Some(t) = translate_type(value, nullable) {
                        out.insert("type".into(), t);
                    } else {
                        self.invalid_value(doc, key, value);
                    }
                }
                "format" => {
                    if let Some(format) = value.as_str() {
                        out.insert(key.clone(), value.clone());
                        if input && format == "binary" && !map.contains_key("contentEncoding") {
                            out.insert("contentEncoding".into(), json!("base64"));
                        }
                    }
                }
                "enum" | "const" if !strict => {}
                "enum" => {
                    // One member that cannot be had removes the whole list: a narrower
                    // `enum` would refuse a value the spec allows.
                    if let Value::Array(items) = value
                        && let Some(mut items) = items
                            .iter()
                            .map(|item| self.data_value(doc, key, item))
                            .collect::<Option<Vec<Value>>>()
                    {
                        if nullable && !items.contains(&Value::Null) {
                            items.push(Value::Null);
                        }
                        out.insert(key.clone(), Value::Array(items));
                    }
                }
                "const" => {
                    if let Some(value) = self.data_value(doc, key, value) {
                        out.insert(key.clone(), value);
                    }
                }
                "properties" => {
                    if let Value::Object(props) = value {
                        let mut translated = Map::new();
                        for (name, sub) in props {
                            if self.excluded_property(doc, sub) {
                                removed_properties.push(name);
                                continue;
                            }
                            translated.insert(name.clone(), self.emit(doc, sub, depth + 1));
                        }
                        out.insert(key.clone(), Value::Object(translated));
                    }
                }
                "patternProperties" => {
                    if let Value::Object(props) = value {
                        let mut translated = Map::new();
                        for (name, sub) in props {
                            match self.pattern(doc, &Value::String(name.clone())) {
                                Some(Value::String(published)) => {
                                    translated.insert(published, self.emit(doc, sub, depth + 1));
                                }
                                _ => dropped_pattern_property = true,
                            }
                        }
                        out.insert(key.clone(), Value::Object(translated));
                    }
                }
                "dependentSchemas" => {
                    if let Value::Object(props) = value {
                        let translated: Map<String, Value> = props
                            .iter()
                            .map(|(name, sub)| (name.clone(), self.emit(doc, sub, depth + 1)))
                            .collect();
                        out.insert(key.clone(), Value::Object(translated));
                    }
                }
                "required" | "dependentRequired" if !strict => {}
                "required" => {} // after properties, which may remove some
                "dependentRequired" => {
                    let well_formed = value.as_object().is_some_and(|deps| {
                        deps.values().all(|names| {
                            names.as_array().is_some_and(|names| {
                                names.iter().all(Value::is_string)
                                    && names
                                        .iter()
                                        .enumerate()
                                        .all(|(i, n)| !names[..i].contains(n))
                            })
                        })
                    });
                    if well_formed {
                        out.insert(key.clone(), value.clone());
                    } else {
                        self.invalid_value(doc, key, value);
                    }
                }
                "additionalProperties" | "unevaluatedProperties" | "unevaluatedItems" => {
                    match value {
                        Value::Bool(false) if !strict => {}
                        Value::Bool(true) if !strict => {}
                        Value::Bool(_) | Value::Object(_) => {
                            out.insert(key.clone(), self.emit(doc, value, depth + 1));
                        }
                        _ => self.invalid_value(doc, key, value),
                    }
                }
                "items" => match value {
                    Value::Array(tuple) => {
                        let translated: Vec<Value> =
                            tuple.iter().map(|s| self.emit(doc, s, depth + 1)).collect();
                        out.insert("prefixItems".into(), Value::Array(translated));
                    }
                    Value::Object(_) | Value::Bool(_) => {
                        out.insert(key.clone(), self.emit(doc, value, depth + 1));
                    }
                    _ => self.invalid_value(doc, "items", value),
                },
                "prefixItems" | "allOf" | "anyOf" | "oneOf" => {
                    if let Value::Array(list) = value {
                        if list.is_empty() {
                            continue;
                        }
                        let translated: Vec<Value> =
                            list.iter().map(|s| self.emit(doc, s, depth + 1)).collect();
                        let name = if key == "oneOf" && !strict {
                            "anyOf"
                        } else {
                            key.as_str()
                        };
                        match out.get_mut(name) {
                            // `anyOf` written next to a `oneOf` in an output: both apply.
                            Some(Value::Array(existing)) => existing.extend(translated),
                            _ => {
                                out.insert(name.into(), Value::Array(translated));
                            }
                        }
                    }
                }
                "not" if !strict => {}
                "not" | "if" | "then" | "else" | "contains" | "propertyNames" | "contentSchema" => {
                    if value.is_object() || value.is_boolean() {
                        out.insert(key.clone(), self.emit(doc, value, depth + 1));
                    }
                }
                "multipleOf" | "maximum" | "minimum" | "pattern" | "uniqueItems" | "maxLength"
                | "minLength" | "maxItems" | "minItems" | "maxProperties" | "minProperties"
                | "maxContains" | "minContains" | "exclusiveMaximum" | "exclusiveMinimum"
                    if !strict => {}
                "multipleOf" => {
                    if value.as_f64().is_some_and(|n| n > 0.0) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "maximum" | "minimum" => {
                    let exclusive = if key == "maximum" {
                        "exclusiveMaximum"
                    } else {
                        "exclusiveMinimum"
                    };
                    // OpenAPI 3.0 / draft 4: a boolean exclusive flag modifies the bound.
                    if value.is_number() && map.field(exclusive) != Some(&Value::Bool(true)) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "exclusiveMaximum" | "exclusiveMinimum" => match value {
                    Value::Number(_) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::Bool(true) => {
                        let bound = if key == "exclusiveMaximum" {
                            "maximum"
                        } else {
                            "minimum"
                        };
                        if let Some(n) = map.field(bound).filter(|n| n.is_number()) {
                            out.insert(key.clone(), n.clone());
                        }
                    }
                    _ => {}
                },
                "pattern" => {
                    if let Some(pattern) = self.pattern(doc, value) {
                        out.insert(key.clone(), pattern);
                    }
                }
                "uniqueItems" => {
                    if value.is_boolean() {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
                | "minProperties" | "maxContains" | "minContains" => {
                    match value.as_u64().or_else(|| {
                        value
                            .as_f64()
                            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                            .map(|f| f as u64)
                    }) {
                        Some(n) => {
                            out.insert(key.clone(), json!(n));
                        }
                        None => self.invalid_value(doc, key, value),
                    }
                }
                "title" | "description" | "default" | "deprecated" | "readOnly" | "writeOnly"
                | "examples" | "example" => self.translate_annotation(&mut out, doc, key, value),
                "contentMediaType" | "contentEncoding" => {
                    if value.is_string() {
                        out.insert(key.clone(), value.clone());
                    }
                }
                // Titles of the `enum` values (a common extension): kept for a form asking
                // the user to choose (`mcp::ask`), where it becomes `enumNames`.
                "x-enumNames"
                    if value
                        .as_array()
                        .is_some_and(|names| names.iter().all(Value::is_string)) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                "nullable" | "x-nullable" | "$comment" | "$defs" | "definitions" => {}
                "discriminator" | "xml" | "externalDocs" | "$schema" | "$id" | "$anchor"
                | "$dynamicAnchor" | "$dynamicRef" | "$vocabulary" | "$recursiveRef"
                | "$recursiveAnchor" | "additionalItems" => self.notes.drop_keyword(key),
                other if other.starts_with("x-") => {}
                other => self.notes.drop_keyword(other),
            }
        }
        if dropped_pattern_property {
            // The names that pattern covered now fall to these, which must not refuse them.
            for key in ["additionalProperties", "unevaluatedProperties"] {
                if out.remove(key).is_some() {
                    self.notes.invalid.push(format!(
                        "{key} removed with the patternProperties entry it stood beside"
                    ));
                }
            }
        }
        if strict {
            // A property left out (readOnly) may be declared in one `allOf` member and
            // required by another, so the whole family's hidden names are filtered.
            let mut hidden: Vec<String> =
                removed_properties.iter().map(|s| s.to_string()).collect();
            if map.contains_key("allOf") {
                self.collect_excluded(doc, node, 0, &mut hidden);
            }
            if let Some(Value::Array(required)) = map.field("required") {
                let mut names: Vec<Value> = Vec::new();
                for name in required {
                    if let Some(s) = name.as_str()
                        && !hidden.iter().any(|h| h == s)
                        && !names.contains(name)
                    {
                        names.push(name.clone());
                    }
                }
                if !names.is_empty() {
                    out.insert("required".into(), Value::Array(names));
                }
            }
            if !hidden.is_empty()
                && let Some(Value::Array(members)) = out.get_mut("allOf")
            {
                for member in members.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some(Value::Array(required)) = member.get_mut("required") {
                        required
                            .retain(|n| !n.as_str().is_some_and(|n| hidden.iter().any(|h| h == n)));
                        if required.is_empty() {
                            member.remove("required");
                        }
                    }
                }
            }
        }
        self.charge(&out);
        let mut out = Value::Object(out);
        // `nullable` with no `type` to extend (e.g. next to `allOf`): null is one more option.
        if nullable && out.field("type").is_none() && !out.as_object().is_some_and(Map::is_empty) {
            out = make_nullable(out);
        }
        out
    }

    /// The pattern to publish for a `pattern` value (rewritten so that restmcp's validator
    /// reads it as ECMA-262 does, see [`ecma`]); `None`, noted, when there is none: that
    /// one pattern is left out of the schema and so of validation, and the tool stays
    /// callable.
    fn pattern(&mut self, doc: DocId, value: &Value) -> Option<Value> {
        let written = value.as_str()?;
        match self.graph.pattern(written) {
            Ok(None) => Some(value.clone()),
            Ok(Some(rewritten)) => Some(Value::String(rewritten)),
            Err(problem) => {
                let shown = self.graph.docs().shown(doc, value);
                self.notes.invalid.push(format!(
                    "pattern {shown} left out of the schema and of validation: {problem}"
                ));
                None
            }
        }
    }

    /// Notes a keyword whose value is not valid where it stands, and so was removed.
    fn invalid_value(&mut self, doc: DocId, key: &str, value: &Value) {
        let shown = self.graph.docs().shown(doc, value);
        self.notes.invalid.push(format!("{key}: {shown} removed"));
    }

    fn excluded_flag(&self) -> &'static str {
        match self.direction {
            Direction::Input => "readOnly",
            Direction::Output | Direction::Response => "writeOnly",
        }
    }

    /// `readOnly` properties are not sent (inputs); `writeOnly` ones are not returned
    /// (outputs).
    fn excluded_property(&mut self, doc: DocId, sub: &Value) -> bool {
        let flag = self.excluded_flag();
        self.has_flag(doc, sub, flag, 0)
    }

    /// Whether a schema carries `flag: true`, looking through `$ref` chains and `allOf`
    /// members (the 3.0 idiom for annotating a reference).
    fn has_flag(&mut self, doc: DocId, node: &Value, flag: &str, hops: usize) -> bool {
        if hops > 16 {
            return false;
        }
        if node.field(flag) == Some(&Value::Bool(true)) {
            return true;
        }
        if let Some(reference) = node.field("$ref").and_then(Value::as_str)
            && let Ok(id) = self.graph.resolve(doc, reference)
        {
            let (target_doc, target) = {
                let target = self.graph.node(id);
                (target.doc, target.value)
            };
            if self.has_flag(target_doc, target, flag, hops + 1) {
                return true;
            }
        }
        if let Some(Value::Array(members)) = node.field("allOf") {
            for member in members {
                if self.has_flag(doc, member, flag, hops + 1) {
                    return true;
                }
            }
        }
        false
    }

    /// Names of the excluded properties declared by `node` or any of its `allOf` members.
    fn collect_excluded(&mut self, doc: DocId, node: &Value, hops: usize, names: &mut Vec<String>) {
        if hops > 16 {
            return;
        }
        let (doc, node) = match node.field("$ref").and_then(Value::as_str) {
            Some(reference) => match self.graph.resolve(doc, reference) {
                Ok(id) => {
                    let target = self.graph.node(id);
                    (target.doc, target.value)
                }
                Err(_) => return,
            },
            None => (doc, node),
        };
        if let Some(Value::Object(properties)) = node.field("properties") {
            for (name, property) in properties {
                if !names.contains(name) && self.excluded_property(doc, property) {
                    names.push(name.clone());
                }
            }
        }
        if let Some(Value::Array(members)) = node.field("allOf") {
            for member in members {
                self.collect_excluded(doc, member, hops + 1, names);
            }
        }
    }
}

/// The serialized size of one schema object, not counting nested schemas (they are
/// charged when they are emitted): close enough to budget by, and cheap.
fn estimate_size(map: &Map<String, Value>) -> usize {
    fn scalar(value: &Value) -> usize {
        match value {
            Value::String(s) => s.len() + 2,
            Value::Array(items) => 2 + items.iter().map(scalar).sum::<usize>(),
            Value::Object(_) => 2,
            _ => 6,
        }
    }
    2 + map
        .iter()
        .map(|(k, v)| {
            k.len()
                + 4
                + match v {
                    Value::Object(children) => {
                        2 + children.keys().map(|c| c.len() + 4).sum::<usize>()
                    }
                    other => scalar(other),
                }
        })
        .sum::<usize>()
}

/// True when a schema can hold other schemas (or refer to one): what a depth limit cuts.
fn has_structure(node: &Value) -> bool {
    const NESTING: [&str; 12] = [
        "$ref",
        "properties",
        "patternProperties",
        "additionalProperties",
        "items",
        "prefixItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "dependentSchemas",
    ];
    node.as_object()
        .is_some_and(|map| NESTING.iter().any(|key| map.contains_key(*key)))
}

/// True when a schema holding a `$ref` also holds keywords other than annotations.
fn has_schema_siblings(map: &Map<String, Value>) -> bool {
    map.keys().any(|k| {
        k != "$ref"
            && !is_annotation(k)
            && !k.starts_with("x-")
            && k != "$comment"
            && k != "nullable"
    })
}

fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "title"
            | "description"
            | "default"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "example"
            | "examples"
    )
}

const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// A valid 2020-12 `type` (one name or a non-empty set), with `null` added when nullable.
fn translate_type(value: &Value, nullable: bool) -> Option<Value> {
    let mut names: Vec<&str> = match value {
        Value::String(t) => vec![t.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    names.retain(|t| TYPES.contains(t));
    names.dedup();
    if names.is_empty() {
        return None;
    }
    if nullable && !names.contains(&"null") {
        names.push("null");
    }
    let mut unique: Vec<&str> = Vec::new();
    for name in names {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    Some(match unique.as_slice() {
        [one] => json!(one),
        many => json!(many),
    })
}

/// `X or null`: extends `type` (and `enum`) when there is one, else wraps in `anyOf`.
fn make_nullable(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) if map.contains_key("type") => {
            if let Some(t) = translate_type(&map["type"], true) {
                map.insert("type".into(), t);
            }
            if let Some(Value::Array(items)) = map.get_mut("enum")
                && !items.contains(&Value::Null)
            {
                items.push(Value::Null);
            }
            Value::Object(map)
        }
        other => json!({"anyOf": [other, {"type": "null"}]}),
    }
}

#[cfg(test)]
mod tests;
