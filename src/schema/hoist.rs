//! Repeated subtrees of one published JSON Schema 2020-12 hoisted into its `$defs`.
//!
//! A tool's schema inlines every component it uses once per use: GitHub's `simple-user`
//! reached from `owner`, `author` and `committer` is written three times. [`hoist`] finds
//! the subtrees written more than once at schema positions (members of `properties`,
//! `items`, `anyOf`…, never `enum`, `const`, `default` or `examples` values), and replaces
//! each by `{"$ref": "#/$defs/NAME"}` with one copy under `$defs`, where that makes the
//! text smaller: k copies of n bytes are worth hoisting when
//! `k·n > k·len(ref) + len(def entry)`. Largest subtrees first, so that hoisting one takes
//! the repeats nested in it along.
//!
//! Validation meaning is unchanged: a `$ref` is an in-place applicator in 2020-12, so a
//! subtree read through one validates (and annotates, for `unevaluated*`) as it did inline.
//! What could change meaning is left alone: a subtree holding `$id`, `$anchor`,
//! `$dynamicAnchor`, `$dynamicRef` or `$defs`, and a whole schema with a `$ref` other than
//! `#/$defs/NAME` (a pointer into `properties` would move). With
//! [`Scope::InsideProperties`] the root's own `properties` members (a tool's arguments)
//! keep their keywords in place, because overlays, the mock upstream and `restmcp explain`
//! read them there; what is inside them is hoisted.
//!
//! The output depends only on the input: same schema, same text.

use crate::json::Lookup as _;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};

use super::graph::unique_name;

/// The sizes (compact JSON bytes) of a schema before and after [`hoist`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hoisted {
    pub bytes_before: usize,
    pub bytes_after: usize,
}

impl Hoisted {
    /// Bytes saved.
    pub fn saved(&self) -> usize {
        self.bytes_before.saturating_sub(self.bytes_after)
    }
}

/// Which subtrees [`hoist`] may replace by a `$ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Any subschema but the root.
    Everywhere,
    /// Not the root's own `properties` members (an inputSchema's arguments), only what is
    /// inside them and elsewhere.
    InsideProperties,
}

/// Subtrees shorter than this never pay for a `$ref` (which is at least 20 bytes).
const MIN_BYTES: usize = 24;

/// How many bytes at each end of a subtree's text [`Scan::choose`] first groups it by.
const HASHED_ENDS: usize = 32;

/// A subtree's text's length and its first and last [`HASHED_ENDS`] bytes.
type Ends<'t> = (usize, &'t [u8], &'t [u8]);

/// Keywords whose value is one schema. (These three lists are the subschema keywords of a
/// translated schema; `graph.rs`'s `subschemas` walks a spec's and says how they differ.)
const SCHEMA_KEYWORDS: [&str; 12] = [
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "additionalItems",
];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAY_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords that give a subtree an identity of its own, or a scope: never moved.
const PINNED_KEYWORDS: [&str; 6] = [
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$defs",
    "$recursiveAnchor",
];

/// Hoists the repeated subtrees of `schema` into its root `$defs` where that makes it
/// smaller (see the module doc). A schema that is not an object, whose `$defs` is not an
/// object, or that has a `$ref` other than `#/$defs/NAME`, is left as it is.
pub fn hoist(schema: &mut Value, scope: Scope) -> Hoisted {
    let (bytes_before, changed) = hoist_unmeasured(schema, scope);
    Hoisted {
        bytes_before,
        bytes_after: match changed {
            true => crate::json::compact_value_len(schema),
            false => bytes_before,
        },
    }
}

/// [`hoist`] without measuring the result, for a caller that writes it out anyway: the
/// size before, and whether anything was hoisted.
pub fn hoist_unmeasured(schema: &mut Value, scope: Scope) -> (usize, bool) {
    let (bytes_before, actions) = {
        let mut scan = Scan {
            text: Vec::new(),
            nodes: Vec::new(),
            foreign_ref: false,
            keep_arguments: scope == Scope::InsideProperties,
        };
        scan.schema(schema, None, [None, None]);
        let defs_object = schema.field("$defs").is_none_or(Value::is_object);
        let hoistable = !scan.foreign_ref && schema.is_object() && defs_object;
        let actions = if hoistable {
            scan.choose(schema)
        } else {
            Vec::new()
        };
        (scan.text.len(), actions)
    };
    if actions.is_empty() {
        return (bytes_before, false);
    }
    // Applied smallest first: a subtree nested in a bigger one is replaced in place before
    // the bigger one is moved into `$defs`, so that the moved copy holds the `$ref`.
    let mut new_defs = Vec::new();
    for action in actions.iter().rev() {
        let reference = reference(&action.name);
        for path in &action.replaced {
            if let Some(slot) = at_mut(schema, path) {
                let body = std::mem::replace(slot, reference.clone());
                // The kept copy (one of the replaced) becomes the definition's body.
                if action.kept.as_ref() == Some(path) {
                    new_defs.push((action.name.clone(), body));
                }
            }
        }
    }
    if let Value::Object(root) = schema {
        let defs = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defs) = defs {
            for (name, body) in new_defs.into_iter().rev() {
                defs.insert(name, body);
            }
        }
    }
    (bytes_before, true)
}

fn reference(name: &str) -> Value {
    let mut map = Map::new();
    map.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
    Value::Object(map)
}

/// One step from a schema to a subschema: a keyword, a member name or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A [`Step`] borrowed from the schema being scanned.
#[derive(Clone, Copy)]
enum Edge<'v> {
    Key(&'v str),
    Index(usize),
}

impl Edge<'_> {
    fn owned(self) -> Step {
        match self {
            Edge::Key(key) => Step::Key(key.to_string()),
            Edge::Index(index) => Step::Index(index),
        }
    }
}

fn at<'v>(value: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(value, |value, step| match step {
        Step::Key(key) => value.field(key),
        Step::Index(index) => value.get(index),
    })
}

fn at_mut<'v>(value: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |value, step| match step {
        Step::Key(key) => value.get_mut(key),
        Step::Index(index) => value.get_mut(index),
    })
}

/// A subschema met while writing the text: where it is, and its span of the text.
struct Node<'v> {
    parent: Option<usize>,
    /// The steps from the parent schema to this one (one or two).
    steps: [Option<Edge<'v>>; 2],
    start: usize,
    end: usize,
    /// It holds a keyword of [`PINNED_KEYWORDS`], itself or below.
    pinned: bool,
    /// A member of the root's `$defs`: an existing definition, never replaced.
    definition: Option<&'v str>,
    /// A member of the root's `properties`: kept in place.
    argument: bool,
}

/// The schema written as compact JSON text (the same text `serde_json` writes), with the
/// span of every subschema.
struct Scan<'v> {
    text: Vec<u8>,
    nodes: Vec<Node<'v>>,
    /// A `$ref` other than `#/$defs/NAME`.
    foreign_ref: bool,
    /// [`Scope::InsideProperties`].
    keep_arguments: bool,
}

/// One subtree hoisted: its definition's name, where its body is taken from (`None`: an
/// existing definition) and the places it replaces.
struct Action {
    name: String,
    kept: Option<Vec<Step>>,
    replaced: Vec<Vec<Step>>,
}

impl<'v> Scan<'v> {
    fn schema(&mut self, value: &'v Value, parent: Option<usize>, steps: [Option<Edge<'v>>; 2]) {
        let index = self.nodes.len();
        let (definition, argument) = match (parent, steps) {
            (Some(0), [Some(Edge::Key("$defs")), Some(Edge::Key(name))]) => (Some(name), false),
            (Some(0), [Some(Edge::Key("properties")), Some(_)]) => (None, self.keep_arguments),
            _ => (None, false),
        };
        self.nodes.push(Node {
            parent,
            steps,
            start: self.text.len(),
            end: 0,
            pinned: false,
            definition,
            argument,
        });
        let Value::Object(map) = value else {
            self.value(value);
            self.nodes[index].end = self.text.len();
            return;
        };
        self.text.push(b'{');
        for (i, (key, member)) in map.iter().enumerate() {
            if i > 0 {
                self.text.push(b',');
            }
            self.key(key);
            let keyword = key.as_str();
            if PINNED_KEYWORDS.contains(&keyword) && !(index == 0 && keyword == "$defs") {
                self.nodes[index].pinned = true;
            }
            if keyword == "$ref" {
                let local = member
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .is_some_and(|name| !name.is_empty() && !name.contains('/'));
                if !local {
                    self.foreign_ref = true;
                }
                self.value(member);
            } else if SCHEMA_KEYWORDS.contains(&keyword) {
                self.schema(member, Some(index), [Some(Edge::Key(keyword)), None]);
            } else if let (true, Value::Object(members)) =
                (SCHEMA_MAP_KEYWORDS.contains(&keyword), member)
            {
                self.text.push(b'{');
                for (j, (name, sub)) in members.iter().enumerate() {
                    if j > 0 {
                        self.text.push(b',');
                    }
                    self.key(name);
                    let steps = [Some(Edge::Key(keyword)), Some(Edge::Key(name.as_str()))];
                    self.schema(sub, Some(index), steps);
                }
                self.text.push(b'}');
            } else if let (true, Value::Array(members)) =
                (SCHEMA_ARRAY_KEYWORDS.contains(&keyword), member)
            {
                self.text.push(b'[');
                for (j, sub) in members.iter().enumerate() {
                    if j > 0 {
                        self.text.push(b',');
                    }
                    let steps = [Some(Edge::Key(keyword)), Some(Edge::Index(j))];
                    self.schema(sub, Some(index), steps);
                }
                self.text.push(b']');
            } else {
                self.value(member);
            }
        }
        self.text.push(b'}');
        self.nodes[index].end = self.text.len();
        if self.nodes[index].pinned
            && let Some(parent) = parent
        {
            self.nodes[parent].pinned = true;
        }
    }

    /// A value that is not a schema, as `serde_json` writes it.
    fn value(&mut self, value: &Value) {
        crate::json::write_compact(&mut self.text, value);
    }

    /// An object member's name and its colon.
    fn key(&mut self, key: &str) {
        crate::json::write_plain_string(&mut self.text, key);
        self.text.push(b':');
    }

    fn path(&self, mut node: usize) -> Vec<Step> {
        let mut reversed = Vec::new();
        while let Some(parent) = self.nodes[node].parent {
            let [first, second] = self.nodes[node].steps;
            reversed.extend(second.map(Edge::owned));
            reversed.extend(first.map(Edge::owned));
            node = parent;
        }
        reversed.reverse();
        reversed
    }

    /// The subtrees worth hoisting, largest first.
    fn choose(&self, schema: &Value) -> Vec<Action> {
        let groups = self.equal_subtrees();
        let mut taken: FxHashSet<String> = schema
            .field("$defs")
            .and_then(Value::as_object)
            .map(|defs| defs.keys().cloned().collect())
            .unwrap_or_default();
        let mut has_defs = schema
            .field("$defs")
            .is_some_and(|d| d.as_object().is_some());
        let mut removed = vec![false; self.nodes.len()];
        let mut shared = 0;
        let mut actions = Vec::new();
        for (len, nodes) in groups {
            let live: Vec<usize> = nodes
                .into_iter()
                .filter(|&node| !self.inside_removed(node, &removed))
                .collect();
            let existing = live
                .iter()
                .find_map(|&n| self.nodes[n].definition.map(str::to_string));
            let replaceable: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&n| self.nodes[n].definition.is_none())
                .collect();
            if let Some(name) = existing {
                // Written out again where a definition already says it.
                let ref_len = name.len() + 19;
                if replaceable.is_empty() || ref_len >= len {
                    continue;
                }
                for &node in &replaceable {
                    removed[node] = true;
                }
                actions.push(Action {
                    name,
                    kept: None,
                    replaced: replaceable.iter().map(|&n| self.path(n)).collect(),
                });
                continue;
            }
            if replaceable.len() < 2 {
                continue;
            }
            let base = self.name_hint(schema, replaceable[0]);
            let candidate = match &base {
                Some(base) => probe_name(base, &taken),
                None => probe_name(&format!("shared{}", shared + 1), &taken),
            };
            let k = replaceable.len();
            let ref_len = candidate.len() + 19;
            let entry_len = candidate.len() + 3 + len + 1;
            let cost = k * ref_len + entry_len + if has_defs { 0 } else { 10 };
            if k * len <= cost {
                continue;
            }
            let name = match base {
                Some(base) => unique_name(&base, &mut taken),
                None => {
                    shared += 1;
                    unique_name(&format!("shared{shared}"), &mut taken)
                }
            };
            has_defs = true;
            // The first copy lives on as the definition's body; the others are gone.
            for &node in &replaceable[1..] {
                removed[node] = true;
            }
            actions.push(Action {
                name,
                kept: Some(self.path(replaceable[0])),
                replaced: replaceable.iter().map(|&n| self.path(n)).collect(),
            });
        }
        actions
    }

    /// The groups of two or more subtrees [`Scan::choose`] may hoist whose texts are equal,
    /// as (text length, nodes in document order), longest first.
    fn equal_subtrees(&self) -> Vec<(usize, Vec<usize>)> {
        // Grouped first by length and ends, then, where those are shared, by the whole
        // text: each subtree's text holds every subtree below it, so hashing every text
        // whole hashed each byte once per level above it (for Microsoft Graph beta's
        // `check`, hoisting took 3.02 G instructions that way, 2.75 G this way).
        let mut alike: FxHashMap<Ends<'_>, Vec<usize>> = FxHashMap::default();
        for (index, node) in self.nodes.iter().enumerate().skip(1) {
            let text = &self.text[node.start..node.end];
            if node.pinned || node.argument || text.len() < MIN_BYTES || !text.starts_with(b"{") {
                continue;
            }
            let ends = HASHED_ENDS.min(text.len());
            let key = (text.len(), &text[..ends], &text[text.len() - ends..]);
            alike.entry(key).or_default().push(index);
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for ((len, _, _), nodes) in alike {
            if nodes.len() < 2 {
                continue;
            }
            let mut equal: FxHashMap<&[u8], Vec<usize>> = FxHashMap::default();
            for index in nodes {
                let node = &self.nodes[index];
                equal
                    .entry(&self.text[node.start..node.end])
                    .or_default()
                    .push(index);
            }
            groups.extend(
                equal
                    .into_values()
                    .filter(|nodes| nodes.len() > 1)
                    .map(|nodes| (len, nodes)),
            );
        }
        groups.sort_by_key(|(len, nodes)| (std::cmp::Reverse(*len), nodes[0]));
        groups
    }

    /// True when an ancestor of `node` was replaced by a `$ref` whose body is another copy.
    fn inside_removed(&self, node: usize, removed: &[bool]) -> bool {
        let mut current = self.nodes[node].parent;
        while let Some(ancestor) = current {
            if removed[ancestor] {
                return true;
            }
            current = self.nodes[ancestor].parent;
        }
        false
    }

    /// A readable name for the subtree at `node`: its `title`, else the property it is the
    /// value of (`owner`), or whose items it is (`labels_item`).
    fn name_hint(&self, schema: &Value, node: usize) -> Option<String> {
        let value = at(schema, &self.path(node))?;
        if let Some(title) = value.field("title").and_then(Value::as_str) {
            let name = sanitize(title);
            if !name.is_empty() {
                return Some(name);
            }
        }
        let property = |node: &Node<'_>| match node.steps {
            [Some(Edge::Key("properties")), Some(Edge::Key(name))] => Some(name.to_string()),
            _ => None,
        };
        let own = &self.nodes[node];
        let name = match own.steps {
            [Some(Edge::Key("items")), None] => own
                .parent
                .and_then(|parent| property(&self.nodes[parent]))
                .map(|name| format!("{name}_item")),
            _ => property(own),
        }?;
        Some(sanitize(&name)).filter(|name| !name.is_empty())
    }
}

/// What [`unique_name`] would give for `base`, without taking it.
fn probe_name(base: &str, taken: &FxHashSet<String>) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// `text` as a `$defs` name that needs no escaping in a `$ref`: ASCII letters, digits,
/// `_` and `-`, at most 64 of them. Never a `.`, which every shared definition's name has
/// ([`super::RefGraph::shared_name`]): a relaxed tool's full schema holds both kinds.
fn sanitize(text: &str) -> String {
    let name: String = text
        .trim()
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') => c,
            _ => '_',
        })
        .take(64)
        .collect();
    if name.chars().all(|c| c == '_') {
        String::new()
    } else {
        name
    }
}

#[cfg(test)]
mod tests;
