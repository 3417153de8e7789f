//! Deterministic example values from JSON Schema 2020-12.
//!
//! [`value_for`] walks the schemas restmcp publishes (self-contained, with shared and
//! recursive parts under the root's `$defs`) and builds one value that validates against
//! them: a response body for the mock upstream, tool-call arguments for `restmcp selftest`.
//! The same schema always gives the same value: nothing depends on hashing order or time.
//!
//! How a value is found, for one schema position:
//! 1. the schemas that apply there (the node, its `$ref` target, its `allOf` members, …)
//!    are *flattened* into one list of parts, so that `allOf` merges for free: a property's
//!    value is built from every part's schema for it, bounds combine, types intersect;
//! 2. each `anyOf`/`oneOf` is decided by trying its members in order (a `null`-only member
//!    last; beyond the depth limit, members that cannot recurse first) until one gives a
//!    valid value;
//! 3. `examples`, `default`, `const` and `enum` values are used when they are valid;
//! 4. otherwise a value of the first allowed type is built from the parts' keywords (string
//!    `format`s and `pattern`s, numeric bounds, properties, items…), and other types,
//!    variants or a minimal form are tried when a keyword such as `not` rejects it;
//! 5. `if`/`then`/`else`: when the value fails, the branch it selects is merged in and the
//!    value built again (then the `then` branch with its `if`, then `else`).
//!
//! An optional property or array item that comes out invalid is left out.
//!
//! Values are checked with a small validator of this module's own, not the `jsonschema`
//! crate: compiling a validator per node (or per `oneOf` member) would cost more than the
//! generation itself on Stripe-sized schemas. Keywords the construction guarantees (a
//! property's value was built from every schema that applies to it) are not checked twice;
//! the rest (`oneOf`, `not`, `if`, `contains`, `propertyNames`, literal values taken from
//! the schema) are. The tests hold the validator to `jsonschema`'s verdicts and check every
//! generated value with `jsonschema`, including every tool of the shared real-world specs.
//! `pattern`s are checked with the `regex` crate, whose syntax is close to, not the same
//! as, the ECMA-262 dialect `jsonschema` implements; a pattern it cannot compile
//! (lookaround, backreferences) counts as matched, so its string is only a best effort.
//!
//! Work is bounded whatever the input: nesting beyond [`Limits::max_depth`] keeps only what
//! is required, a few levels further generation gives up, and a step budget caps the search
//! through alternatives and the validator. When no valid value turns up the best effort is
//! returned (a string that misses an unusual `pattern`, say); `None` only when nothing
//! could be built at all (`false`, contradictory bounds or types, an infinite required
//! recursion).
//!
//! This file holds the public API ([`example`], [`value_for`], [`Limits`]) and the state
//! one call shares (the root, the budgets, the resolved `$ref`s). One concept per
//! submodule:
//! * `generate`: the generator, steps 1–5 above: a position's schemas flattened into one
//!   shape, `anyOf`/`oneOf` decided, literal values tried, values of each type built;
//! * `check`: the validator generation checks its candidates with;
//! * `number`: counts, `multipleOf` as `jsonschema` reads it, bounds and the candidate
//!   numbers between them;
//! * `text`: strings that read like data (from a property's name), fitted to length
//!   bounds;
//! * `format`: a value in each known string `format`, and whether a text is in one;
//! * `pattern`: regular expression → matching strings, and matching with compiled
//!   patterns;
//! * `tests`: the generator held to `jsonschema`, on small schemas and on every tool of the
//!   shared real-world specs.

mod check;
mod format;
mod generate;
mod number;
mod pattern;
mod text;

use rustc_hash::FxHashMap;
use serde_json::Value;

use generate::Ctx;

/// Generation limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Nesting depth (objects and arrays) up to which arrays get an item; optional
    /// properties stop at half of it. Beyond it only what the schema requires is built.
    pub(crate) max_depth: usize,
    /// Optional properties per object.
    pub(crate) max_properties: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 8,
            max_properties: 16,
        }
    }
}

/// A value valid against `schema` (a root schema; its `$defs` resolve `$ref`s), or `None`
/// when no value can be found (e.g. `false`, or contradictory constraints). Same input →
/// same output, always.
///
/// When something could be built but nothing valid was found (a `pattern` no generated
/// string matches, say), that best effort is returned: callers that must know validate it.
pub(crate) fn value_for(schema: &Value, limits: &Limits) -> Option<Value> {
    let mut generator = Generator::new(schema, limits);
    let root = Ctx {
        depth: 0,
        name: None,
        variant: 0,
        frames: 0,
    };
    generator.generate(&[schema], root).map(|(value, _)| value)
}

/// Convenience for `value_for(schema, &Limits::default())`.
pub fn example(schema: &Value) -> Option<Value> {
    value_for(schema, &Limits::default())
}

/// `max_depth` is clamped to this, which bounds the stack whatever the caller asks.
const DEPTH_CAP: usize = 32;

/// Values generated before the rest of a call only builds what is required.
const SOFT_NODES: usize = 2_000;

/// Generation and validation steps before a call gives up.
const HARD_STEPS: usize = 60_000;

struct Generator<'a> {
    root: &'a Value,
    max_depth: usize,
    max_properties: usize,
    /// Values generated (the soft budget).
    nodes: usize,
    /// Generation and validation steps (the hard budget).
    steps: usize,
    refs: FxHashMap<&'a str, Option<&'a Value>>,
}

impl<'a> Generator<'a> {
    fn new(root: &'a Value, limits: &Limits) -> Self {
        Generator {
            root,
            max_depth: limits.max_depth.min(DEPTH_CAP),
            max_properties: limits.max_properties,
            nodes: 0,
            steps: 0,
            refs: FxHashMap::default(),
        }
    }

    fn out_of_fuel(&self) -> bool {
        self.nodes > SOFT_NODES
    }

    fn exhausted(&self) -> bool {
        self.steps > HARD_STEPS
    }

    /// Resolves a local reference (`#`, `#/$defs/Name`, any JSON pointer into the root).
    fn resolve(&mut self, reference: &'a str) -> Option<&'a Value> {
        if let Some(found) = self.refs.get(reference) {
            return *found;
        }
        let found = resolve_pointer(self.root, reference);
        self.refs.insert(reference, found);
        found
    }
}

fn resolve_pointer<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let pointer = fragment.strip_prefix('/')?;
    let mut node = root;
    for raw in pointer.split('/') {
        let decoded = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .ok()?;
        let segment = crate::json::unescape_token(&decoded).into_owned();
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests;
