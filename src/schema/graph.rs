//! The `$ref` graph of one API description, built lazily and shared by every tool's
//! translation.
//!
//! Each distinct `$ref` target becomes a node holding its direct references. A tool's
//! analysis is then a walk over edges instead of over JSON, which matters for specs like
//! Stripe's where most operations reach most of the components: the JSON of each
//! component is read once per API, not once per tool. Whether a node is recursive (can
//! reach itself) is a property of the graph, computed once with Tarjan's algorithm over
//! the nodes first reached together and cached.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use crate::spec::{DocId, DocumentSet};

/// Index of a `$ref` target in its [`RefGraph`].
pub type NodeId = u32;

/// One `$ref` target.
#[derive(Debug)]
pub struct Node<'d> {
    pub doc: DocId,
    pub value: &'d Value,
    /// The decoded JSON pointer, for `$defs` names.
    pub pointer: String,
    /// Direct references, with multiplicity, in document order. `None` until first used.
    edges: Option<Result<Vec<NodeId>, String>>,
    recursive: Option<bool>,
}

/// All `$ref` targets of one document set reached so far.
#[derive(Debug)]
pub struct RefGraph<'d> {
    docs: &'d DocumentSet,
    nodes: Vec<Node<'d>>,
    /// Per document: reference string as written → node (or the reason it does not resolve).
    by_reference: Vec<FxHashMap<String, Result<NodeId, String>>>,
    by_key: FxHashMap<(DocId, String), NodeId>,
    /// Node → its `$defs` name in schemas emitted with shared definitions (see
    /// [`RefGraph::shared_name`]), and the names taken.
    shared_names: FxHashMap<NodeId, String>,
    taken_names: rustc_hash::FxHashSet<String>,
    /// `pattern` as written → what is published for it ([`super::ecma::publishable`]:
    /// `None` when unchanged), worked out once per API.
    patterns: FxHashMap<String, Result<Option<String>, String>>,
}

impl<'d> RefGraph<'d> {
    pub fn new(docs: &'d DocumentSet) -> Self {
        RefGraph {
            docs,
            nodes: Vec::new(),
            by_reference: (0..docs.len()).map(|_| FxHashMap::default()).collect(),
            by_key: FxHashMap::default(),
            shared_names: FxHashMap::default(),
            taken_names: rustc_hash::FxHashSet::default(),
            patterns: FxHashMap::default(),
        }
    }

    /// The `$defs` name of node `id` in every schema this graph emits with shared
    /// definitions: its JSON pointer with `/` as `.` (`components.schemas.user`), prefixed
    /// with the document's index for a document other than the root, made unique by a
    /// suffix when two pointers read the same. Fixed once given, so a definition's text is
    /// the same in every tool that holds it.
    pub fn shared_name(&mut self, id: NodeId) -> &str {
        if !self.shared_names.contains_key(&id) {
            let node = &self.nodes[id as usize];
            let mut base: String = node
                .pointer
                .trim_start_matches('/')
                .chars()
                .map(|c| match c {
                    '/' => '.',
                    c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') => c,
                    _ => '_',
                })
                .collect();
            if node.doc != 0 {
                base = format!("doc{}.{base}", node.doc);
            }
            if base.is_empty() {
                base = "root".into();
            }
            let name = unique_name(&base, &mut self.taken_names);
            self.shared_names.insert(id, name);
        }
        self.shared_names.get(&id).map_or("", String::as_str)
    }

    /// The pattern published (and validated with) for `pattern`, or why it is left out
    /// ([`super::ecma::publishable`]); each distinct pattern is worked out once.
    pub fn pattern(&mut self, pattern: &str) -> Result<Option<String>, String> {
        if let Some(known) = self.patterns.get(pattern) {
            return known.clone();
        }
        let outcome = super::ecma::publishable(pattern).map(|published| match published {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(rewritten) => Some(rewritten),
        });
        self.patterns.insert(pattern.to_string(), outcome.clone());
        outcome
    }

    pub fn docs(&self) -> &'d DocumentSet {
        self.docs
    }

    pub fn node(&self, id: NodeId) -> &Node<'d> {
        &self.nodes[id as usize]
    }

    /// The node `reference` (written in document `doc`) points to. The error names the
    /// target and the problem; callers add where the reference stood.
    pub fn resolve(&mut self, doc: DocId, reference: &str) -> Result<NodeId, String> {
        if let Some(found) = self.by_reference[doc].get(reference) {
            return found.clone();
        }
        let docs = self.docs;
        let result = match docs.resolve(doc, reference) {
            Ok(resolved) => {
                let key = docs.key(&resolved);
                let id = match self.by_key.get(&(key.doc, key.pointer.clone())) {
                    Some(&id) => id,
                    None => {
                        let id = self.nodes.len() as NodeId;
                        self.nodes.push(Node {
                            doc: resolved.doc,
                            value: resolved.value,
                            pointer: key.pointer.clone(),
                            edges: None,
                            recursive: None,
                        });
                        self.by_key.insert((key.doc, key.pointer), id);
                        id
                    }
                };
                Ok(id)
            }
            Err(e) => Err(format!("{}: {}", e.target, e.problem)),
        };
        self.by_reference[doc].insert(reference.to_string(), result.clone());
        result
    }

    /// The direct references of a node, reading its JSON the first time.
    pub fn edges(&mut self, id: NodeId) -> Result<&[NodeId], String> {
        if self.nodes[id as usize].edges.is_none() {
            let (doc, value) = {
                let node = &self.nodes[id as usize];
                (node.doc, node.value)
            };
            let edges = self.direct_references(doc, value);
            self.nodes[id as usize].edges = Some(edges);
        }
        match &self.nodes[id as usize].edges {
            Some(Ok(edges)) => Ok(edges),
            Some(Err(problem)) => Err(problem.clone()),
            None => Ok(&[]),
        }
    }

    /// Every `$ref` directly inside `value` (not following them), as nodes.
    pub fn direct_references(&mut self, doc: DocId, value: &Value) -> Result<Vec<NodeId>, String> {
        let mut found = Vec::new();
        let mut stack = vec![value];
        while let Some(node) = stack.pop() {
            let Value::Object(map) = node else { continue };
            if let Some(Value::String(reference)) = map.get("$ref") {
                let id = self.resolve(doc, reference).map_err(|problem| {
                    format!(
                        "$ref \"{reference}\" in {} → {problem}",
                        self.docs.doc(doc).name
                    )
                })?;
                found.push(id);
            }
            let before = stack.len();
            stack.extend(subschemas(map));
            // Keep document order: the stack pops in reverse.
            stack[before..].reverse();
        }
        Ok(found)
    }

    /// Whether `id` can reach itself. Computes, for every node reachable from `id` whose
    /// answer is not known yet, the strongly connected components (iterative Tarjan).
    pub fn is_recursive(&mut self, id: NodeId) -> Result<bool, String> {
        if let Some(known) = self.nodes[id as usize].recursive {
            return Ok(known);
        }
        self.classify_from(id)?;
        Ok(self.nodes[id as usize].recursive.unwrap_or(false))
    }

    fn classify_from(&mut self, start: NodeId) -> Result<(), String> {
        #[derive(Clone, Copy)]
        struct State {
            index: u32,
            low: u32,
            on_stack: bool,
        }
        let mut state: FxHashMap<NodeId, State> = FxHashMap::default();
        let mut scc_stack: Vec<NodeId> = Vec::new();
        // (node, next edge position)
        let mut call: Vec<(NodeId, usize)> = Vec::new();
        let mut next_index = 0u32;
        state.insert(
            start,
            State {
                index: 0,
                low: 0,
                on_stack: true,
            },
        );
        next_index += 1;
        scc_stack.push(start);
        call.push((start, 0));
        while let Some(&(node, position)) = call.last() {
            let edges_len = self.edges(node)?.len();
            if position < edges_len {
                let target = self.edges(node)?[position];
                if let Some(top) = call.last_mut() {
                    top.1 += 1;
                }
                if self.nodes[target as usize].recursive.is_some() {
                    // Classified earlier: its component is closed, so it cannot lead back.
                    continue;
                }
                match state.get(&target).copied() {
                    None => {
                        state.insert(
                            target,
                            State {
                                index: next_index,
                                low: next_index,
                                on_stack: true,
                            },
                        );
                        next_index += 1;
                        scc_stack.push(target);
                        call.push((target, 0));
                    }
                    Some(t) if t.on_stack => {
                        let s = state.get_mut(&node).expect("visited");
                        s.low = s.low.min(t.index);
                    }
                    Some(_) => {}
                }
                continue;
            }
            call.pop();
            let s = state[&node];
            if let Some(&(parent, _)) = call.last() {
                let p = state.get_mut(&parent).expect("visited");
                p.low = p.low.min(s.low);
            }
            if s.low == s.index {
                let mut component = Vec::new();
                while let Some(member) = scc_stack.pop() {
                    if let Some(m) = state.get_mut(&member) {
                        m.on_stack = false;
                    }
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                let self_loop = component.len() == 1 && self.edges(node)?.contains(&node);
                let recursive = component.len() > 1 || self_loop;
                for member in component {
                    self.nodes[member as usize].recursive = Some(recursive);
                }
            }
        }
        Ok(())
    }
}

/// The subschemas of a schema object: the places where `$ref`s that matter can stand.
/// (`example`, `default`, `enum` and extensions are data, never followed.)
///
/// `hoist.rs` keeps keyword lists of its own, since it walks the translated schema, not the
/// spec: it also walks `$defs`, whose members it moves and renames, where this walk leaves
/// `$defs` out (a definition matters only when a `$ref` reaches it, and that `$ref` is an
/// edge of its own); and it names `additionalItems`, which translation drops.
fn subschemas(map: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    map.iter().flat_map(|(key, value)| {
        let children: Box<dyn Iterator<Item = &Value>> = match (key.as_str(), value) {
            ("properties" | "patternProperties" | "dependentSchemas", Value::Object(children)) => {
                Box::new(children.values())
            }
            ("allOf" | "anyOf" | "oneOf" | "prefixItems" | "items", Value::Array(children)) => {
                Box::new(children.iter())
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema",
                Value::Object(_),
            ) => Box::new(std::iter::once(value)),
            _ => Box::new(std::iter::empty()),
        };
        children
    })
}

/// `base`, or `base_2`, `base_3`… the first one not in `taken`, which it is added to.
pub(super) fn unique_name(base: &str, taken: &mut rustc_hash::FxHashSet<String>) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}
