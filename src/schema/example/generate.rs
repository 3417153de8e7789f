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

use std::cell::RefCell;

use base64::Engine as _;
use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Number, Value};

/// Generation limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nesting depth (objects and arrays) up to which arrays get an item; optional
    /// properties stop at half of it. Beyond it only what the schema requires is built.
    pub max_depth: usize,
    /// Optional properties per object.
    pub max_properties: usize,
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
pub fn value_for(schema: &Value, limits: &Limits) -> Option<Value> {
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
/// Value nesting beyond `max_depth` at which generation gives up (an infinite required
/// recursion has no value).
const HARD_EXTRA: usize = 8;
/// Values generated before the rest of a call only builds what is required.
const SOFT_NODES: usize = 2_000;
/// Generation and validation steps before a call gives up.
const HARD_STEPS: usize = 60_000;
/// Schemas flattened into one position.
const MAX_PARTS: usize = 128;
/// `anyOf`/`oneOf` groups decided at one position.
const MAX_GROUPS: usize = 16;
/// Members of one `anyOf`/`oneOf` tried.
const MAX_MEMBERS: usize = 32;
/// `minItems`/`minProperties` beyond which no value is attempted.
const MAX_COUNT: usize = 1_000;
/// `minLength` beyond which no value is attempted.
const MAX_LENGTH: usize = 100_000;
/// Nested generation frames (values plus `anyOf`/`oneOf` decisions).
const MAX_FRAMES: usize = 120;
/// Nested validator calls.
const CHECK_DEPTH: usize = 160;
/// Compiled patterns kept per thread.
const REGEX_CACHE: usize = 4_096;

/// Property names in first-seen order, without duplicates.
#[derive(Debug, Default)]
struct Names<'n> {
    order: Vec<&'n str>,
    seen: FxHashSet<&'n str>,
}

impl<'n> Names<'n> {
    fn push(&mut self, name: &'n str) {
        if self.seen.insert(name) {
            self.order.push(name);
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.seen.contains(name)
    }

    fn len(&self) -> usize {
        self.order.len()
    }
}

/// Where a value is being generated.
#[derive(Debug, Clone, Copy)]
struct Ctx<'a> {
    /// Object/array nesting of the value.
    depth: usize,
    /// The property (or the array's property) the value is for: text is derived from it.
    name: Option<&'a str>,
    /// 0 for the natural value; others give different values (unique items, retries).
    variant: u32,
    /// Nested generation calls (values and `anyOf`/`oneOf` decisions): bounds the stack.
    frames: usize,
}

impl<'a> Ctx<'a> {
    fn child(self, name: Option<&'a str>, variant: u32) -> Self {
        Ctx {
            depth: self.depth + 1,
            name,
            variant,
            frames: self.frames + 1,
        }
    }
}

/// The schemas that apply at one position, flattened through `$ref` and `allOf`.
#[derive(Debug, Clone, Default)]
struct Shape<'a> {
    parts: Vec<&'a Map<String, Value>>,
    /// Undecided `anyOf` (false) and `oneOf` (true) member lists.
    groups: Vec<(&'a [Value], bool)>,
    /// Groups ever added, decided or not: bounds the search.
    group_count: usize,
    /// Parts holding an `if`.
    conds: Vec<&'a Map<String, Value>>,
    /// A `false` applies: no value.
    never: bool,
    /// Something was left out (caps): values must be checked in full.
    truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    Integer,
    String,
}

const T_NULL: u8 = 1;
const T_BOOLEAN: u8 = 2;
const T_OBJECT: u8 = 4;
const T_ARRAY: u8 = 8;
const T_NUMBER: u8 = 16;
const T_INTEGER: u8 = 32;
const T_STRING: u8 = 64;
const T_ALL: u8 = 127;

fn type_bits(name: &str) -> u8 {
    match name {
        "null" => T_NULL,
        "boolean" => T_BOOLEAN,
        "object" => T_OBJECT,
        "array" => T_ARRAY,
        "number" => T_NUMBER | T_INTEGER,
        "integer" => T_INTEGER,
        "string" => T_STRING,
        _ => 0,
    }
}

fn type_mask(value: &Value) -> u8 {
    match value {
        Value::String(name) => type_bits(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .fold(0, |mask, name| mask | type_bits(name)),
        _ => T_ALL,
    }
}

/// How much of a schema the validator checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything.
    Full,
    /// Only what generation does not guarantee by construction: the keywords about this
    /// value itself, `oneOf`, `not`, `if`, `contains`, `propertyNames`… — not `$ref`,
    /// `allOf`, `anyOf` (flattened) nor property and item values (built from their schemas).
    Local,
}

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

    // ----- flattening -----

    fn flatten(&mut self, shape: &mut Shape<'a>, schema: &'a Value, hops: usize) {
        let map = match schema {
            Value::Bool(false) => {
                shape.never = true;
                return;
            }
            Value::Object(map) => map,
            _ => return,
        };
        if shape.parts.iter().any(|part| std::ptr::eq(*part, map)) {
            return;
        }
        if shape.parts.len() >= MAX_PARTS || hops > MAX_PARTS {
            shape.truncated = true;
            return;
        }
        if map.get("not").is_some_and(accepts_everything) {
            shape.never = true;
            return;
        }
        shape.parts.push(map);
        if let Some(reference) = map.get("$ref").and_then(Value::as_str)
            && let Some(target) = self.resolve(reference)
        {
            self.flatten(shape, target, hops + 1);
        }
        if let Some(Value::Array(members)) = map.get("allOf") {
            for member in members {
                self.flatten(shape, member, hops + 1);
            }
        }
        for (keyword, one_of) in [("anyOf", false), ("oneOf", true)] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                if members.is_empty() {
                    continue;
                }
                if shape.group_count >= MAX_GROUPS {
                    shape.truncated = true;
                    continue;
                }
                shape.group_count += 1;
                shape.groups.push((members.as_slice(), one_of));
            }
        }
        if map.contains_key("if") {
            shape.conds.push(map);
        }
    }

    // ----- generation -----

    /// A value for the conjunction of `conj`, and whether it is known valid.
    fn generate(&mut self, conj: &[&'a Value], ctx: Ctx<'a>) -> Option<(Value, bool)> {
        self.steps += 1;
        self.nodes += 1;
        if self.exhausted() || ctx.depth > self.max_depth + HARD_EXTRA || ctx.frames > MAX_FRAMES {
            return None;
        }
        let mut shape = Shape::default();
        for schema in conj {
            self.flatten(&mut shape, schema, 0);
        }
        if shape.never {
            return None;
        }
        self.for_shape(shape, conj, ctx)
    }

    fn for_shape(
        &mut self,
        mut shape: Shape<'a>,
        conj: &[&'a Value],
        ctx: Ctx<'a>,
    ) -> Option<(Value, bool)> {
        if !shape.groups.is_empty() {
            let (members, _) = shape.groups.remove(0);
            let ctx = Ctx {
                frames: ctx.frames + 1,
                ..ctx
            };
            if ctx.frames > MAX_FRAMES {
                return None;
            }
            let mut fallback = None;
            for index in self.member_order(members, ctx) {
                if self.exhausted() || (fallback.is_some() && self.out_of_fuel()) {
                    break;
                }
                let mut next = shape.clone();
                self.flatten(&mut next, &members[index], 0);
                if next.never {
                    continue;
                }
                match self.for_shape(next, conj, ctx) {
                    Some((value, true)) => return Some((value, true)),
                    Some(found) => {
                        fallback.get_or_insert(found);
                    }
                    None => {}
                }
            }
            return fallback;
        }
        let (literal, restricted) = self.literal(&shape, conj, ctx);
        if restricted || matches!(literal, Some((_, true))) {
            return literal;
        }
        let first = self.typed(&shape, conj, ctx);
        if shape.conds.is_empty() || matches!(first, Some((_, true))) || self.exhausted() {
            return first;
        }
        self.conditional(&shape, conj, ctx, first)
    }

    /// The order `anyOf`/`oneOf` members are tried in: as written, but a member that can
    /// only be `null` last — or, beyond `max_depth`, members that cannot recurse first.
    fn member_order(&self, members: &'a [Value], ctx: Ctx<'a>) -> Vec<usize> {
        let mut order: Vec<usize> = (0..members.len().min(MAX_MEMBERS)).collect();
        if ctx.depth >= self.max_depth {
            order.sort_by_key(|&i| !is_leaf(&members[i]));
        } else {
            order.sort_by_key(|&i| is_null_only(&members[i]));
        }
        order
    }

    /// `examples`, `default`, `const` and `enum` values; `restricted` when `const`/`enum`
    /// leave nothing else to generate.
    fn literal(
        &mut self,
        shape: &Shape<'a>,
        conj: &[&'a Value],
        ctx: Ctx<'a>,
    ) -> (Option<(Value, bool)>, bool) {
        if ctx.variant == 0 {
            for part in &shape.parts {
                if let Some(Value::Array(examples)) = part.get("examples") {
                    for example in examples.iter().take(4) {
                        if self.valid_all(example, conj) {
                            return (Some((example.clone(), true)), false);
                        }
                    }
                }
            }
            for part in &shape.parts {
                if let Some(default) = part.get("default")
                    && self.valid_all(default, conj)
                {
                    return (Some((default.clone(), true)), false);
                }
            }
        }
        let mut first: Option<&'a Value> = None;
        for part in &shape.parts {
            if let Some(constant) = part.get("const") {
                first.get_or_insert(constant);
                if self.valid_all(constant, conj) {
                    return (Some((constant.clone(), true)), true);
                }
            }
        }
        let mut restricted = first.is_some();
        for part in &shape.parts {
            if let Some(values) = part.get("enum") {
                restricted = true;
                let Some(values) = values.as_array().filter(|v| !v.is_empty()) else {
                    continue;
                };
                let len = values.len();
                for offset in 0..len.min(64) {
                    let value = &values[(offset + ctx.variant as usize) % len];
                    first.get_or_insert(value);
                    if self.valid_all(value, conj) {
                        return (Some((value.clone(), true)), true);
                    }
                }
            }
        }
        (first.map(|value| (value.clone(), false)), restricted)
    }

    /// Builds a value of the first allowed type; other types, variants or a minimal form
    /// when the checks reject it for its own sake (not for a child's).
    fn typed(
        &mut self,
        shape: &Shape<'a>,
        conj: &[&'a Value],
        ctx: Ctx<'a>,
    ) -> Option<(Value, bool)> {
        let types = self.type_order(shape, ctx);
        let untyped = !shape.parts.iter().any(|part| part.contains_key("type"));
        let mut fallback: Option<(Value, bool)> = None;
        for ty in types {
            if self.exhausted() || (fallback.is_some() && self.out_of_fuel()) {
                break;
            }
            let attempts: &[(u32, bool)] = match ty {
                Ty::Object | Ty::Array => &[(0, false), (0, true)],
                Ty::Null => &[(0, false)],
                _ => &[(0, false), (1, false), (2, false), (3, false)],
            };
            for &(extra, minimal) in attempts {
                let variant = ctx.variant.saturating_add(extra);
                let ctx = Ctx { variant, ..ctx };
                let built = match ty {
                    Ty::Null => Some((Value::Null, true)),
                    Ty::Boolean => Some((Value::Bool(variant % 2 == 0), true)),
                    Ty::Number => self.number(shape, false, variant).map(|v| (v, true)),
                    Ty::Integer => self.number(shape, true, variant).map(|v| (v, true)),
                    Ty::String => self
                        .string(shape, ctx, untyped)
                        .map(|v| (Value::String(v), true)),
                    Ty::Object => self.object(shape, ctx, minimal),
                    Ty::Array => self.array(shape, ctx, minimal),
                };
                let Some((value, children_ok)) = built else {
                    break;
                };
                if !children_ok {
                    // A child failed: another form of this value would not fix it.
                    fallback.get_or_insert((value, false));
                    return fallback;
                }
                let ok = self.local_ok(&value, shape)
                    && (!shape.truncated || self.valid_all(&value, conj));
                if ok {
                    return Some((value, true));
                }
                fallback.get_or_insert((value, false));
                if self.exhausted() {
                    break;
                }
            }
        }
        fallback
    }

    /// `if`/`then`/`else`: the branch the first value selects, then the `then` branch
    /// (with its `if`), then `else`.
    fn conditional(
        &mut self,
        shape: &Shape<'a>,
        conj: &[&'a Value],
        ctx: Ctx<'a>,
        first: Option<(Value, bool)>,
    ) -> Option<(Value, bool)> {
        let conds: Vec<&'a Map<String, Value>> = shape.conds.clone();
        let mut base = shape.clone();
        base.conds.clear();
        let probe = first.as_ref().map(|(value, _)| value.clone());
        for attempt in 0..3 {
            let mut next = base.clone();
            for cond in &conds {
                let Some(condition) = cond.get("if") else {
                    continue;
                };
                let take_then = match attempt {
                    0 => probe
                        .as_ref()
                        .is_some_and(|value| self.valid(value, condition, 0)),
                    1 => true,
                    _ => false,
                };
                if take_then {
                    if attempt == 1 {
                        self.flatten(&mut next, condition, 0);
                    }
                    if let Some(then) = cond.get("then") {
                        self.flatten(&mut next, then, 0);
                    }
                } else if let Some(otherwise) = cond.get("else") {
                    self.flatten(&mut next, otherwise, 0);
                }
            }
            next.conds.clear();
            if next.never {
                continue;
            }
            if let Some((value, true)) = self.typed(&next, conj, ctx)
                && self.local_ok(&value, shape)
            {
                return Some((value, true));
            }
        }
        first
    }

    fn type_order(&self, shape: &Shape<'a>, ctx: Ctx<'a>) -> Vec<Ty> {
        let mut allowed = T_ALL;
        let mut declared: Option<&Value> = None;
        for part in &shape.parts {
            if let Some(types) = part.get("type") {
                allowed &= type_mask(types);
                declared.get_or_insert(types);
            }
        }
        let mut order: Vec<Ty> = Vec::new();
        let push = |order: &mut Vec<Ty>, ty: Ty| {
            let bit = match ty {
                Ty::Null => T_NULL,
                Ty::Boolean => T_BOOLEAN,
                Ty::Object => T_OBJECT,
                Ty::Array => T_ARRAY,
                Ty::Number => T_NUMBER,
                Ty::Integer => T_INTEGER,
                Ty::String => T_STRING,
            };
            if allowed & bit != 0 && !order.contains(&ty) {
                order.push(ty);
            }
        };
        let declares_null = allowed & T_NULL != 0 && declared.is_some();
        if declares_null && ctx.depth >= self.max_depth {
            push(&mut order, Ty::Null);
        }
        let names: Vec<&str> = match declared {
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for name in names {
            match name {
                "boolean" => push(&mut order, Ty::Boolean),
                "object" => push(&mut order, Ty::Object),
                "array" => push(&mut order, Ty::Array),
                "number" => {
                    push(&mut order, Ty::Number);
                    push(&mut order, Ty::Integer);
                }
                "integer" => push(&mut order, Ty::Integer),
                "string" => push(&mut order, Ty::String),
                _ => {}
            }
        }
        if declared.is_none() {
            for ty in inferred_types(shape) {
                push(&mut order, ty);
            }
        }
        for ty in [
            Ty::String,
            Ty::Integer,
            Ty::Number,
            Ty::Boolean,
            Ty::Object,
            Ty::Array,
            Ty::Null,
        ] {
            push(&mut order, ty);
        }
        order
    }

    // ----- scalars -----

    fn string(&mut self, shape: &Shape<'a>, ctx: Ctx<'a>, untyped: bool) -> Option<String> {
        let mut min_len = 0usize;
        let mut max_len = usize::MAX;
        let mut patterns: Vec<&'a str> = Vec::new();
        let mut format: Option<&'a str> = None;
        let mut base64 = false;
        for part in &shape.parts {
            if let Some(n) = part.get("minLength").and_then(count) {
                min_len = min_len.max(n);
            }
            if let Some(n) = part.get("maxLength").and_then(count) {
                max_len = max_len.min(n);
            }
            if let Some(pattern) = part.get("pattern").and_then(Value::as_str) {
                patterns.push(pattern);
            }
            if format.is_none() {
                format = part.get("format").and_then(Value::as_str);
            }
            base64 |= part.get("contentEncoding").and_then(Value::as_str) == Some("base64");
        }
        if min_len > max_len || min_len > MAX_LENGTH {
            return None;
        }
        let variant = ctx.variant;
        let unknown = patterns.iter().any(|p| pattern_matches(p, "").is_none());
        let parsed = patterns.first().and_then(|p| pattern::Pattern::parse(p));
        let mut best: Option<String> = None;
        let mut pattern_best: Option<String> = None;
        let mut accept = |text: &str, from_pattern: bool| {
            let text = fit_length(text, min_len, max_len, variant);
            let len = text.chars().count();
            if len >= min_len
                && len <= max_len
                && patterns
                    .iter()
                    .all(|p| pattern_matches(p, &text).unwrap_or(true))
            {
                return Some(text);
            }
            if from_pattern {
                pattern_best.get_or_insert_with(|| text.clone());
            }
            best.get_or_insert(text);
            None
        };
        let from_patterns = |accept: &mut dyn FnMut(&str, bool) -> Option<String>| {
            parsed
                .iter()
                .flat_map(|p| p.texts(min_len, variant))
                .take(40)
                .find_map(|text| accept(&text, true))
        };
        if unknown && let Some(text) = from_patterns(&mut accept) {
            return Some(text);
        }
        let format_text = format.and_then(|f| format_text(f, variant));
        let base64_text = base64.then(|| encode_base64(variant));
        let default_text = if untyped { "example" } else { "string" };
        let named = name_text(ctx.name, default_text, variant);
        // contentEncoding is only an annotation to a validator, but the consumer decodes
        // the text (restmcp sends base64 arguments as bytes), so it comes first.
        for text in [base64_text, format_text, Some(named)]
            .into_iter()
            .flatten()
        {
            if let Some(text) = accept(&text, false) {
                return Some(text);
            }
        }
        if !unknown && let Some(text) = from_patterns(&mut accept) {
            return Some(text);
        }
        for canned in CANNED {
            if let Some(text) = accept(&with_variant(canned, variant), false) {
                return Some(text);
            }
        }
        pattern_best.or(best)
    }

    fn number(&self, shape: &Shape<'a>, integer: bool, variant: u32) -> Option<Value> {
        let mut bounds = Bounds::default();
        let mut multiples: Vec<f64> = Vec::new();
        for part in &shape.parts {
            if let Some(n) = part.get("minimum").and_then(Value::as_f64) {
                bounds.raise(n, false);
            }
            if let Some(n) = part.get("exclusiveMinimum").and_then(Value::as_f64) {
                bounds.raise(n, true);
            }
            if let Some(n) = part.get("maximum").and_then(Value::as_f64) {
                bounds.lower(n, false);
            }
            if let Some(n) = part.get("exclusiveMaximum").and_then(Value::as_f64) {
                bounds.lower(n, true);
            }
            if let Some(m) = part.get("multipleOf").and_then(Value::as_f64)
                && m > 0.0
                && m.is_finite()
            {
                multiples.push(m);
            }
        }
        let fits = |x: f64| {
            x.is_finite()
                && bounds.contains(x)
                && multiples.iter().all(|&m| is_multiple(x, m))
                && (!integer || x.fract() == 0.0)
        };
        let whole = |k: u32| integral_candidate(&bounds, &multiples, k).filter(|x| fits(*x));
        let fraction = |k: u32| fractional_candidate(&bounds, &multiples, k).filter(|x| fits(*x));
        let found = if integer {
            whole(variant).or_else(|| whole(0))
        } else if variant.is_multiple_of(2) {
            whole(variant / 2).or_else(|| fraction(variant / 2))
        } else {
            fraction(variant / 2).or_else(|| whole(variant / 2 + 1))
        };
        found
            .or_else(|| whole(0))
            .or_else(|| fraction(0))
            .and_then(number_value)
    }

    // ----- objects -----

    fn object(&mut self, shape: &Shape<'a>, ctx: Ctx<'a>, minimal: bool) -> Option<(Value, bool)> {
        let parts = &shape.parts;
        let mut declared = Names::default();
        let mut required = Names::default();
        let mut min_props = 0usize;
        let mut max_props = usize::MAX;
        for part in parts {
            if let Some(Value::Object(properties)) = part.get("properties") {
                for name in properties.keys() {
                    declared.push(name);
                }
            }
            if let Some(Value::Array(names)) = part.get("required") {
                for name in names.iter().filter_map(Value::as_str) {
                    required.push(name);
                }
            }
            if let Some(n) = part.get("minProperties").and_then(count) {
                min_props = min_props.max(n);
            }
            if let Some(n) = part.get("maxProperties").and_then(count) {
                max_props = max_props.min(n);
            }
        }
        if min_props > max_props || min_props > MAX_COUNT || required.len() > MAX_COUNT {
            return None;
        }
        let full = !minimal && ctx.depth < self.max_depth / 2 && !self.out_of_fuel();
        let mut budget = if full { self.max_properties } else { 0 };
        let mut chosen = Names::default();
        for &name in &declared.order {
            if required.contains(name) {
                chosen.push(name);
            } else if budget > 0
                && !has_dependent_schema(parts, name)
                && self.admissible(parts, name)
            {
                chosen.push(name);
                budget -= 1;
            }
        }
        for &name in &required.order {
            chosen.push(name);
        }
        // `dependentRequired`: a present property brings its dependencies.
        let mut needed = required;
        let mut index = 0;
        while index < chosen.len() && chosen.len() <= MAX_COUNT {
            let name = chosen.order[index];
            for part in parts {
                if let Some(Value::Array(names)) =
                    part.get("dependentRequired").and_then(|d| d.get(name))
                {
                    for dependency in names.iter().filter_map(Value::as_str) {
                        chosen.push(dependency);
                        needed.push(dependency);
                    }
                }
            }
            index += 1;
        }
        // `minProperties`: declared properties first, then made-up names.
        for &name in &declared.order {
            if chosen.len() >= min_props {
                break;
            }
            if !chosen.contains(name) && self.admissible(parts, name) {
                chosen.push(name);
                needed.push(name);
            }
        }
        let mut extra: Vec<String> = Vec::new();
        let mut attempt = 0u32;
        while chosen.len() + extra.len() < min_props && attempt < min_props as u32 + 16 {
            attempt += 1;
            let mut names = vec![format!("property{attempt}")];
            for part in parts {
                if let Some(Value::Object(patterns)) = part.get("patternProperties") {
                    for pattern in patterns.keys() {
                        names.extend(pattern::candidates(pattern, 1, 64, attempt - 1));
                    }
                }
            }
            for name in names {
                if !chosen.contains(&name)
                    && !extra.contains(&name)
                    && self.admissible(parts, &name)
                {
                    extra.push(name);
                    break;
                }
            }
        }
        // `maxProperties`: optional properties go first, from the last.
        let mut excess = (chosen.len() + extra.len()).saturating_sub(max_props);
        let mut kept: Vec<&'a str> = Vec::with_capacity(chosen.len());
        for &name in chosen.order.iter().rev() {
            if excess > 0 && !needed.contains(name) {
                excess -= 1;
            } else {
                kept.push(name);
            }
        }
        kept.reverse();
        let mut object = Map::new();
        let mut all_ok = true;
        for name in kept {
            let schemas = self.property_schemas(parts, name);
            let child = ctx.child(Some(name), ctx.variant);
            let needed = needed.contains(name);
            match self.generate(&schemas, child) {
                // An optional property that came out invalid is better left out.
                Some((_, false)) if !needed => {}
                Some((value, ok)) => {
                    all_ok &= ok;
                    object.insert(name.to_string(), value);
                }
                None if needed => return None,
                None => {}
            }
        }
        for name in extra {
            let schemas = self.property_schemas(parts, &name);
            let child = ctx.child(None, ctx.variant);
            let (value, ok) = self.generate(&schemas, child)?;
            all_ok &= ok;
            object.insert(name, value);
        }
        Some((Value::Object(object), all_ok))
    }

    /// Whether every part allows a property of this name.
    fn admissible(&mut self, parts: &[&'a Map<String, Value>], name: &str) -> bool {
        let declared_anywhere = parts.iter().any(|part| declares(part, name));
        for part in parts {
            if !declares(part, name)
                && part.get("additionalProperties") == Some(&Value::Bool(false))
            {
                return false;
            }
            if !declared_anywhere && part.get("unevaluatedProperties") == Some(&Value::Bool(false))
            {
                return false;
            }
            if let Some(names) = part.get("propertyNames")
                && !self.valid(&Value::String(name.to_string()), names, 0)
            {
                return false;
            }
        }
        true
    }

    /// Every schema that applies to the value of property `name`.
    fn property_schemas(&self, parts: &[&'a Map<String, Value>], name: &str) -> Vec<&'a Value> {
        let declared_anywhere = parts.iter().any(|part| declares(part, name));
        let mut schemas = Vec::new();
        for part in parts {
            let mut hit = false;
            if let Some(schema) = part
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| p.get(name))
            {
                schemas.push(schema);
                hit = true;
            }
            if let Some(Value::Object(patterns)) = part.get("patternProperties") {
                for (pattern, schema) in patterns {
                    if pattern_matches(pattern, name).unwrap_or(true) {
                        schemas.push(schema);
                        hit = true;
                    }
                }
            }
            if !hit {
                if let Some(schema) = part.get("additionalProperties") {
                    schemas.push(schema);
                } else if !declared_anywhere && let Some(schema) = part.get("unevaluatedProperties")
                {
                    schemas.push(schema);
                }
            }
        }
        schemas
    }

    // ----- arrays -----

    fn array(&mut self, shape: &Shape<'a>, ctx: Ctx<'a>, minimal: bool) -> Option<(Value, bool)> {
        let parts = &shape.parts;
        let mut min_items = 0usize;
        let mut max_items = usize::MAX;
        let mut unique = false;
        let mut prefix_len = 0usize;
        let mut contains: Vec<&'a Value> = Vec::new();
        let mut need = 0usize;
        for part in parts {
            if let Some(n) = part.get("minItems").and_then(count) {
                min_items = min_items.max(n);
            }
            if let Some(n) = part.get("maxItems").and_then(count) {
                max_items = max_items.min(n);
            }
            unique |= part.get("uniqueItems") == Some(&Value::Bool(true));
            let prefix = part
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            prefix_len = prefix_len.max(prefix);
            if part.get("items") == Some(&Value::Bool(false)) {
                max_items = max_items.min(prefix);
            }
            if let Some(schema) = part.get("contains") {
                contains.push(schema);
                need = need.max(part.get("minContains").and_then(count).unwrap_or(1));
            }
        }
        if min_items > max_items || min_items > MAX_COUNT || need > MAX_COUNT {
            return None;
        }
        let shallow = !minimal && ctx.depth < self.max_depth && !self.out_of_fuel();
        let natural = if shallow { prefix_len.max(1) } else { 0 };
        let target = natural.max(min_items).max(need).min(max_items);
        let required = min_items.max(need);
        let mut items: Vec<Value> = Vec::with_capacity(target);
        let mut all_ok = true;
        for index in 0..target {
            let mut schemas = items_for(parts, index);
            if index < need {
                schemas.extend(contains.iter().copied());
            }
            let mut found = None;
            for retry in 0..8u32 {
                let variant = if unique {
                    ctx.variant
                        .saturating_add(index as u32)
                        .saturating_add(retry.saturating_mul(target as u32))
                } else {
                    ctx.variant
                };
                let child = ctx.child(ctx.name, variant);
                let Some(candidate) = self.generate(&schemas, child) else {
                    break;
                };
                let duplicate = unique && items.iter().any(|item| json_eq(item, &candidate.0));
                if !duplicate || retry == 7 || self.exhausted() {
                    found = Some(candidate);
                    break;
                }
            }
            match found {
                Some((value, ok)) if ok || index < required => {
                    all_ok &= ok;
                    items.push(value);
                }
                None if index < required => return None,
                // An optional item that came out invalid (or none at all) ends the array.
                _ => break,
            }
        }
        Some((Value::Array(items), all_ok))
    }

    // ----- validation -----

    fn valid_all(&mut self, value: &Value, conj: &[&'a Value]) -> bool {
        conj.iter().all(|schema| self.valid(value, schema, 0))
    }

    fn local_ok(&mut self, value: &Value, shape: &Shape<'a>) -> bool {
        shape
            .parts
            .iter()
            .all(|part| self.check(value, part, Mode::Local, 0))
    }

    fn valid(&mut self, value: &Value, schema: &'a Value, depth: usize) -> bool {
        self.steps += 1;
        if depth > CHECK_DEPTH || self.exhausted() {
            return false;
        }
        match schema {
            Value::Bool(b) => *b,
            Value::Object(map) => self.check(value, map, Mode::Full, depth),
            _ => true,
        }
    }

    fn check(
        &mut self,
        value: &Value,
        map: &'a Map<String, Value>,
        mode: Mode,
        depth: usize,
    ) -> bool {
        let full = mode == Mode::Full;
        let next = depth + 1;
        for (keyword, s) in map {
            let ok = match keyword.as_str() {
                "$ref" if full => match s.as_str().and_then(|r| self.resolve(r)) {
                    Some(target) => self.valid(value, target, next),
                    None => true,
                },
                "type" => type_matches(value, s),
                "enum" => s
                    .as_array()
                    .is_none_or(|values| values.iter().any(|v| json_eq(v, value))),
                "const" => json_eq(s, value),
                "multipleOf" | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    match (value.as_f64(), s.as_f64()) {
                        (Some(x), Some(limit)) => match keyword.as_str() {
                            "multipleOf" => is_multiple(x, limit),
                            "minimum" => x >= limit,
                            "maximum" => x <= limit,
                            "exclusiveMinimum" => x > limit,
                            _ => x < limit,
                        },
                        _ => true,
                    }
                }
                "minLength" | "maxLength" => match (value.as_str(), count(s)) {
                    (Some(text), Some(n)) => {
                        let len = text.chars().count();
                        if keyword == "minLength" {
                            len >= n
                        } else {
                            len <= n
                        }
                    }
                    _ => true,
                },
                "pattern" => match (value.as_str(), s.as_str()) {
                    (Some(text), Some(pattern)) => pattern_matches(pattern, text).unwrap_or(true),
                    _ => true,
                },
                "format" => match (value.as_str(), s.as_str()) {
                    (Some(text), Some(format)) => format_matches(format, text),
                    _ => true,
                },
                "minItems" | "maxItems" => match (value.as_array(), count(s)) {
                    (Some(items), Some(n)) => {
                        if keyword == "minItems" {
                            items.len() >= n
                        } else {
                            items.len() <= n
                        }
                    }
                    _ => true,
                },
                "uniqueItems" => match value.as_array() {
                    Some(items) if s == &Value::Bool(true) => {
                        // Pairwise: charged to the step budget, so a huge array gives up.
                        let pairs = items.len().saturating_mul(items.len()) / 2;
                        self.steps = self.steps.saturating_add(pairs / 64);
                        !self.exhausted()
                            && items
                                .iter()
                                .enumerate()
                                .all(|(i, a)| items[..i].iter().all(|b| !json_eq(a, b)))
                    }
                    _ => true,
                },
                "prefixItems" if full => match (value.as_array(), s.as_array()) {
                    (Some(items), Some(schemas)) => items
                        .iter()
                        .zip(schemas)
                        .all(|(item, schema)| self.valid(item, schema, next)),
                    _ => true,
                },
                "items" => match value.as_array() {
                    Some(items) => {
                        let start = map
                            .get("prefixItems")
                            .and_then(Value::as_array)
                            .map_or(0, Vec::len);
                        if s == &Value::Bool(false) {
                            items.len() <= start
                        } else if full {
                            items
                                .iter()
                                .skip(start)
                                .all(|item| self.valid(item, s, next))
                        } else {
                            true
                        }
                    }
                    None => true,
                },
                "contains" => match value.as_array() {
                    Some(items) => {
                        let min = map.get("minContains").and_then(count).unwrap_or(1);
                        let max = map.get("maxContains").and_then(count);
                        let mut matched = 0usize;
                        for item in items {
                            if self.valid(item, s, next) {
                                matched += 1;
                            }
                        }
                        matched >= min && max.is_none_or(|max| matched <= max)
                    }
                    None => true,
                },
                "minProperties" | "maxProperties" => match (value.as_object(), count(s)) {
                    (Some(object), Some(n)) => {
                        if keyword == "minProperties" {
                            object.len() >= n
                        } else {
                            object.len() <= n
                        }
                    }
                    _ => true,
                },
                "required" => match (value.as_object(), s.as_array()) {
                    (Some(object), Some(names)) => names
                        .iter()
                        .filter_map(Value::as_str)
                        .all(|name| object.contains_key(name)),
                    _ => true,
                },
                "dependentRequired" => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(dependencies)) => {
                        dependencies.iter().all(|(name, names)| {
                            !object.contains_key(name)
                                || names.as_array().is_none_or(|names| {
                                    names
                                        .iter()
                                        .filter_map(Value::as_str)
                                        .all(|n| object.contains_key(n))
                                })
                        })
                    }
                    _ => true,
                },
                "properties" if full => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(properties)) => properties.iter().all(|(name, schema)| {
                        object.get(name).is_none_or(|v| self.valid(v, schema, next))
                    }),
                    _ => true,
                },
                "patternProperties" if full => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(patterns)) => patterns.iter().all(|(pattern, schema)| {
                        object.iter().all(|(name, v)| {
                            !pattern_matches(pattern, name).unwrap_or(true)
                                || self.valid(v, schema, next)
                        })
                    }),
                    _ => true,
                },
                "additionalProperties" => match value.as_object() {
                    Some(object) if full || s == &Value::Bool(false) => object
                        .iter()
                        .all(|(name, v)| declares(map, name) || self.valid(v, s, next)),
                    _ => true,
                },
                "propertyNames" => match value.as_object() {
                    Some(object) => object
                        .keys()
                        .all(|name| self.valid(&Value::String(name.clone()), s, next)),
                    None => true,
                },
                "dependentSchemas" => match (value.as_object(), s.as_object()) {
                    (Some(object), Some(schemas)) => schemas.iter().all(|(name, schema)| {
                        !object.contains_key(name) || self.valid(value, schema, next)
                    }),
                    _ => true,
                },
                "allOf" if full => s
                    .as_array()
                    .is_none_or(|members| members.iter().all(|m| self.valid(value, m, next))),
                "anyOf" if full => s
                    .as_array()
                    .is_none_or(|members| members.iter().any(|m| self.valid(value, m, next))),
                "oneOf" => match s.as_array() {
                    Some(members) => {
                        let mut matched = 0;
                        for member in members {
                            if self.valid(value, member, next) {
                                matched += 1;
                                if matched > 1 {
                                    break;
                                }
                            }
                        }
                        matched == 1
                    }
                    None => true,
                },
                "not" => !self.valid(value, s, next),
                "if" => {
                    if self.valid(value, s, next) {
                        map.get("then").is_none_or(|t| self.valid(value, t, next))
                    } else {
                        map.get("else").is_none_or(|e| self.valid(value, e, next))
                    }
                }
                "unevaluatedProperties" => match value.as_object() {
                    Some(object) => object.iter().all(|(name, v)| {
                        self.evaluates(map, name, 0)
                            || (s != &Value::Bool(false) && (!full || self.valid(v, s, next)))
                    }),
                    None => true,
                },
                "unevaluatedItems" => match value.as_array() {
                    Some(items) => {
                        let start = self.evaluated_items(map, 0);
                        items.len() <= start
                            || (s != &Value::Bool(false)
                                && (!full
                                    || items
                                        .iter()
                                        .skip(start)
                                        .all(|item| self.valid(item, s, next))))
                    }
                    None => true,
                },
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Whether `map` (or a schema it applies in place) evaluates property `name`: an
    /// approximation of `unevaluatedProperties` that counts every applicator's members.
    fn evaluates(&mut self, map: &'a Map<String, Value>, name: &str, depth: usize) -> bool {
        if depth > 16 || declares(map, name) || map.contains_key("additionalProperties") {
            return true;
        }
        let mut nested: Vec<&'a Value> = Vec::new();
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            nested.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                nested.extend(members);
            }
        }
        for keyword in ["then", "else"] {
            if let Some(schema) = map.get(keyword) {
                nested.push(schema);
            }
        }
        if let Some(Value::Object(schemas)) = map.get("dependentSchemas") {
            nested.extend(schemas.values());
        }
        nested.into_iter().any(|schema| {
            schema
                .as_object()
                .is_some_and(|m| self.evaluates(m, name, depth + 1))
        })
    }

    /// How many leading items `map` evaluates (an approximation for `unevaluatedItems`).
    fn evaluated_items(&mut self, map: &'a Map<String, Value>, depth: usize) -> usize {
        if depth > 16 || map.contains_key("items") {
            return usize::MAX;
        }
        let mut evaluated = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut nested: Vec<&'a Value> = Vec::new();
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            nested.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                nested.extend(members);
            }
        }
        for schema in nested {
            if let Some(m) = schema.as_object() {
                evaluated = evaluated.max(self.evaluated_items(m, depth + 1));
            }
        }
        evaluated
    }
}

// ----- helpers -----

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
        let segment = decoded.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// A non-negative integer keyword value (`3` or `3.0`).
fn count(value: &Value) -> Option<usize> {
    if let Some(n) = value.as_u64() {
        return Some(usize::try_from(n).unwrap_or(usize::MAX));
    }
    value
        .as_f64()
        .filter(|f| *f >= 0.0 && f.fract() == 0.0)
        .map(|f| {
            if f >= usize::MAX as f64 {
                usize::MAX
            } else {
                f as usize
            }
        })
}

/// Whether a part declares property `name` (in `properties` or by a `patternProperties`).
fn declares(map: &Map<String, Value>, name: &str) -> bool {
    map.get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name))
        || map
            .get("patternProperties")
            .and_then(Value::as_object)
            .is_some_and(|p| {
                p.keys()
                    .any(|pattern| pattern_matches(pattern, name).unwrap_or(true))
            })
}

fn has_dependent_schema(parts: &[&Map<String, Value>], name: &str) -> bool {
    parts.iter().any(|part| {
        part.get("dependentSchemas")
            .and_then(Value::as_object)
            .is_some_and(|d| d.contains_key(name))
    })
}

fn items_for<'a>(parts: &[&'a Map<String, Value>], index: usize) -> Vec<&'a Value> {
    let mut schemas = Vec::new();
    for part in parts {
        match part.get("prefixItems").and_then(Value::as_array) {
            Some(prefix) if index < prefix.len() => schemas.push(&prefix[index]),
            _ => {
                if let Some(items) = part.get("items") {
                    schemas.push(items);
                } else if let Some(items) = part.get("unevaluatedItems") {
                    schemas.push(items);
                }
            }
        }
    }
    schemas
}

/// Types suggested by keywords when no `type` is given.
fn inferred_types(shape: &Shape<'_>) -> Vec<Ty> {
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    ];
    const ARRAY: &[&str] = &[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "contains",
        "uniqueItems",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    ];
    const STRING: &[&str] = &[
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "contentEncoding",
        "contentMediaType",
    ];
    const NUMBER: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ];
    let has = |keywords: &[&str]| {
        shape
            .parts
            .iter()
            .any(|part| keywords.iter().any(|k| part.contains_key(*k)))
    };
    let mut types = Vec::new();
    if has(OBJECT) {
        types.push(Ty::Object);
    }
    if has(ARRAY) {
        types.push(Ty::Array);
    }
    if has(STRING) {
        types.push(Ty::String);
    }
    if has(NUMBER) {
        types.push(Ty::Number);
    }
    types
}

/// `true`, or a schema of annotations only (`not` of it is `false`).
fn accepts_everything(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.keys().all(|k| {
            matches!(
                k.as_str(),
                "title"
                    | "description"
                    | "$comment"
                    | "examples"
                    | "default"
                    | "deprecated"
                    | "readOnly"
                    | "writeOnly"
            )
        }),
        _ => false,
    }
}

/// A member that can only be `null`.
fn is_null_only(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type").is_some_and(|t| type_mask(t) == T_NULL)
        || map.get("const") == Some(&Value::Null)
}

/// A member that cannot recurse: no `$ref`, applicators or nested schemas.
fn is_leaf(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return true;
    };
    !map.keys().any(|k| {
        matches!(
            k.as_str(),
            "$ref"
                | "allOf"
                | "anyOf"
                | "oneOf"
                | "properties"
                | "items"
                | "prefixItems"
                | "additionalProperties"
                | "patternProperties"
        )
    }) && map
        .get("type")
        .is_none_or(|t| type_mask(t) & (T_OBJECT | T_ARRAY) == 0)
}

fn type_matches(value: &Value, types: &Value) -> bool {
    let matches = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64()
                || value.is_u64()
                || value
                    .as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        "string" => value.is_string(),
        _ => false,
    };
    match types {
        Value::String(name) => matches(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(matches),
        _ => true,
    }
}

use crate::json::equal as json_eq;

/// `multipleOf` as `jsonschema` reads it: exact in the decimals both numbers print as.
fn is_multiple(x: f64, m: f64) -> bool {
    if m <= 0.0 || !m.is_finite() || !x.is_finite() {
        return true;
    }
    if x == 0.0 {
        return true;
    }
    if x.abs() < m {
        return false;
    }
    if let (Some((xm, xd)), Some((mm, md))) = (decimal_parts(x), decimal_parts(m))
        && mm != 0
    {
        let shared = xd.min(md);
        let scale = |mantissa: i128, decimals: u32| {
            mantissa.checked_mul(10_i128.checked_pow(decimals - shared)?)
        };
        if let (Some(a), Some(b)) = (scale(xm, md), scale(mm, xd))
            && b != 0
        {
            return a % b == 0;
        }
    }
    let q = x / m;
    (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

/// `1.25` → `(125, 2)`: the shortest decimal a float prints as.
fn decimal_parts(x: f64) -> Option<(i128, u32)> {
    let text = format!("{x}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    if whole.len() + fraction.len() > 36 {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    Some((digits.parse().ok()?, u32::try_from(fraction.len()).ok()?))
}

#[derive(Debug, Default, Clone, Copy)]
struct Bounds {
    lo: Option<(f64, bool)>,
    hi: Option<(f64, bool)>,
}

impl Bounds {
    fn raise(&mut self, n: f64, exclusive: bool) {
        match self.lo {
            Some((l, e)) if l > n || (l == n && e) => {}
            _ => self.lo = Some((n, exclusive)),
        }
    }

    fn lower(&mut self, n: f64, exclusive: bool) {
        match self.hi {
            Some((h, e)) if h < n || (h == n && e) => {}
            _ => self.hi = Some((n, exclusive)),
        }
    }

    fn contains(&self, x: f64) -> bool {
        self.lo.is_none_or(|(l, e)| if e { x > l } else { x >= l })
            && self.hi.is_none_or(|(h, e)| if e { x < h } else { x <= h })
    }
}

/// The smallest positive integer that is a multiple of every `multipleOf`.
fn integral_step(multiples: &[f64]) -> Option<f64> {
    if multiples.is_empty() {
        return Some(1.0);
    }
    if multiples.iter().all(|m| m.fract() == 0.0 && *m < 1e15) {
        let mut step: u64 = 1;
        for &m in multiples {
            let m = m as u64;
            step = step.checked_mul(m / gcd(step, m))?;
            if step > 1 << 53 {
                return None;
            }
        }
        return Some(step as f64);
    }
    (1..=1000)
        .map(f64::from)
        .find(|n| multiples.iter().all(|&m| is_multiple(*n, m)))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
}

/// The `k`-th integral value: from 1 when it fits, else from the lower bound up, else from
/// the upper bound down — on the grid of the `multipleOf`s.
fn integral_candidate(bounds: &Bounds, multiples: &[f64], k: u32) -> Option<f64> {
    let step = integral_step(multiples)?;
    let k = f64::from(k);
    let preferred = (1.0 / step).ceil() * step;
    if bounds.contains(preferred) {
        let up = preferred + k * step;
        if bounds.contains(up) {
            return Some(up);
        }
    }
    if let Some((l, e)) = bounds.lo {
        let mut start = (l / step).ceil() * step;
        if e && start <= l {
            start += step;
        }
        let x = start + k * step;
        return bounds.contains(x).then_some(x);
    }
    if let Some((h, e)) = bounds.hi {
        let mut start = (h / step).floor() * step;
        if e && start >= h {
            start -= step;
        }
        let x = start - k * step;
        return bounds.contains(x).then_some(x);
    }
    None
}

/// The `k`-th value off the integer grid: halfway points, or steps of a fractional
/// `multipleOf`.
fn fractional_candidate(bounds: &Bounds, multiples: &[f64], k: u32) -> Option<f64> {
    let k = f64::from(k);
    if let Some(&m) = multiples.iter().find(|m| m.fract() != 0.0) {
        let start = match bounds.lo {
            Some((l, e)) => {
                let mut n = (l / m).ceil();
                if e && n * m <= l {
                    n += 1.0;
                }
                n
            }
            None => match bounds.hi {
                Some((h, _)) if h < m => (h / m).floor() - 2.0 * k,
                _ => 1.0,
            },
        };
        return round_like((start + k) * m, m);
    }
    if !multiples.is_empty() {
        return None;
    }
    Some(match (bounds.lo, bounds.hi) {
        (Some((l, _)), Some((h, _))) => l + (h - l) / (k + 2.0),
        (Some((l, _)), None) => l.floor() + 1.5 + k,
        (None, Some((h, _))) => h.ceil() - 1.5 - k,
        (None, None) => 1.5 + k,
    })
}

/// `x` rounded to the decimals `m` prints with (so `3 * 0.1` reads `0.3`).
fn round_like(x: f64, m: f64) -> Option<f64> {
    let (_, decimals) = decimal_parts(m)?;
    format!("{x:.*}", decimals as usize).parse().ok()
}

fn number_value(x: f64) -> Option<Value> {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Some(Value::from(x as i64))
    } else {
        Number::from_f64(x).map(Value::Number)
    }
}

// ----- strings -----

const CANNED: &[&str] = &[
    "example",
    "a",
    "A",
    "0",
    "1",
    "abc",
    "ABC",
    "a1",
    "example.com",
    "2024-01-01",
    "user@example.com",
    "https://example.com",
    "00000000-0000-4000-8000-000000000001",
    "a-b",
    "a_b",
    "a.b",
    "",
];

fn with_variant(text: &str, variant: u32) -> String {
    if variant == 0 {
        text.to_string()
    } else {
        format!("{text}-{}", u64::from(variant) + 1)
    }
}

/// Text derived from the property name (`email` → `user@example.com`, `id` → `id-1`).
fn name_text(name: Option<&str>, default: &str, variant: u32) -> String {
    let n = u64::from(variant) + 1;
    let Some(name) = name.filter(|n| {
        !n.is_empty() && n.len() <= 64 && !n.chars().any(|c| c.is_whitespace() || c.is_control())
    }) else {
        return with_variant(default, variant);
    };
    let lower = name.to_ascii_lowercase();
    if lower.contains("email") {
        return if variant == 0 {
            "user@example.com".into()
        } else {
            format!("user{n}@example.com")
        };
    }
    if lower == "id" || lower.ends_with("_id") || lower.ends_with("-id") || name.ends_with("Id") {
        return format!("{name}-{n}");
    }
    if matches!(lower.as_str(), "url" | "uri" | "href" | "link" | "website")
        || lower.ends_with("_url")
        || lower.ends_with("_uri")
        || name.ends_with("Url")
    {
        return if variant == 0 {
            "https://example.com".into()
        } else {
            format!("https://example.com/{n}")
        };
    }
    with_variant(name, variant)
}

fn encode_base64(variant: u32) -> String {
    let text = with_variant("example", variant);
    base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
}

/// Text in a known `format`.
fn format_text(format: &str, variant: u32) -> Option<String> {
    let n = u64::from(variant) + 1;
    let day = 1 + variant % 28;
    Some(match format {
        "date-time" => format!("2024-01-{day:02}T00:00:00Z"),
        "date" => format!("2024-01-{day:02}"),
        "time" => format!("00:00:{:02}Z", variant % 60),
        "duration" => format!("P{n}D"),
        "email" | "idn-email" => {
            if variant == 0 {
                "user@example.com".into()
            } else {
                format!("user{n}@example.com")
            }
        }
        "hostname" | "idn-hostname" => {
            if variant == 0 {
                "example.com".into()
            } else {
                format!("host{n}.example.com")
            }
        }
        "ipv4" => format!("192.0.2.{}", 1 + variant % 254),
        "ipv6" => format!("2001:db8::{n:x}"),
        "uri" | "url" | "iri" => {
            if variant == 0 {
                "https://example.com".into()
            } else {
                format!("https://example.com/{n}")
            }
        }
        "uri-reference" | "iri-reference" => {
            if variant == 0 {
                "/example".into()
            } else {
                format!("/example/{n}")
            }
        }
        "uri-template" => "https://example.com/{id}".into(),
        "uuid" => format!("00000000-0000-4000-8000-{n:012x}"),
        "byte" | "base64" => encode_base64(variant),
        "binary" => with_variant("example", variant),
        "password" => with_variant("password", variant),
        "int32" | "int64" | "integer" | "uint32" | "uint64" => n.to_string(),
        "number" | "float" | "double" | "decimal" => format!("{n}.5"),
        "json-pointer" => format!(
            "/example{}",
            if variant == 0 {
                String::new()
            } else {
                n.to_string()
            }
        ),
        "relative-json-pointer" => variant.to_string(),
        "regex" => "^example$".into(),
        _ => return None,
    })
}

/// Pads (by repeating the text) or truncates to the length bounds.
fn fit_length(text: &str, min_len: usize, max_len: usize, variant: u32) -> String {
    let len = text.chars().count();
    if len < min_len {
        let source: Vec<char> = if text.is_empty() {
            vec!['x']
        } else {
            text.chars().collect()
        };
        source.iter().cycle().take(min_len).collect()
    } else if len > max_len {
        if variant == 0 {
            text.chars().take(max_len).collect()
        } else {
            // Keep the variant's distinguishing tail.
            text.chars().skip(len - max_len).collect()
        }
    } else {
        text.to_string()
    }
}

thread_local! {
    static REGEXES: RefCell<FxHashMap<String, Option<Regex>>> = RefCell::new(FxHashMap::default());
}

/// Whether `text` matches `pattern` (unanchored), `None` when the `regex` crate cannot
/// compile it.
fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(compiled) = cache.get(pattern) {
            return compiled.as_ref().map(|re| re.is_match(text));
        }
        if cache.len() >= REGEX_CACHE {
            cache.clear();
        }
        let compiled = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 22)
            .build()
            .ok();
        let result = compiled.as_ref().map(|re| re.is_match(text));
        cache.insert(pattern.to_string(), compiled);
        result
    })
}

thread_local! {
    static FORMATS: RefCell<FxHashMap<String, Option<jsonschema::Validator>>> =
        RefCell::new(FxHashMap::default());
}

/// Whether `text` is in `format`, as `jsonschema` checks formats when asked to (and as
/// validating servers such as Prism do): an example or default the spec gives in the wrong
/// format (GitHub's `"format": "uri"` with the example `com/github/bar/libfoo-1.2.3`) is
/// not used. Formats `jsonschema` does not know (OpenAPI's `byte`, `int32`, …) match
/// anything; the values this module builds for them are right by construction.
fn format_matches(format: &str, text: &str) -> bool {
    FORMATS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if !cache.contains_key(format) {
            if cache.len() >= REGEX_CACHE {
                cache.clear();
            }
            let compiled = jsonschema::options()
                .should_validate_formats(true)
                .build(&serde_json::json!({"format": format}))
                .ok();
            cache.insert(format.to_string(), compiled);
        }
        cache
            .get(format)
            .and_then(Option::as_ref)
            .is_none_or(|validator| validator.is_valid(&Value::String(text.to_string())))
    })
}

/// A tiny generator for the regular expressions found in API specs: literals, classes,
/// groups, alternation, quantifiers and anchors. Lookarounds are skipped and
/// backreferences produce nothing; the caller checks what comes out.
mod pattern {
    const MAX_PATTERN: usize = 2_000;
    const MAX_NESTING: usize = 48;
    const MAX_OUTPUT: usize = 20_000;
    const MAX_WORK: usize = 100_000;
    const PREFERRED: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const WORD: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
    const SPACE: &[(char, char)] = &[(' ', ' '), ('\t', '\r')];

    #[derive(Debug)]
    enum Node {
        Char(char),
        /// A class, as the characters to render it with.
        Set(Vec<char>),
        Any,
        Seq(Vec<Node>),
        Alt(Vec<Node>),
        Repeat(Box<Node>, u32, Option<u32>),
        Assert,
    }

    enum Escape {
        Char(char),
        Set(Vec<(char, char)>, bool),
        Assert,
        Empty,
    }

    /// Strings that should match `pattern`, the most natural first and those within the
    /// length bounds before the others.
    /// A parsed pattern, rendered on demand.
    pub(super) struct Pattern {
        node: Node,
    }

    impl Pattern {
        pub(super) fn parse(pattern: &str) -> Option<Pattern> {
            parse(pattern).map(|node| Pattern { node })
        }

        /// Strings that should match, the most natural first: for each of three variants,
        /// quantifiers stretched further and further (toward `min_len`), then the first
        /// one padded on either side (for unanchored patterns).
        pub(super) fn texts(&self, min_len: usize, variant: u32) -> impl Iterator<Item = String> {
            let stretch_min = u32::try_from(min_len).unwrap_or(u32::MAX);
            let first = self.render(0, variant);
            let padded = first
                .filter(|text| text.chars().count() < min_len && min_len <= MAX_OUTPUT)
                .map(|text| {
                    let pad = "a".repeat(min_len - text.chars().count());
                    [format!("{text}{pad}"), format!("{pad}{text}")]
                })
                .into_iter()
                .flatten();
            (variant..variant.saturating_add(3))
                .flat_map(move |v| {
                    [0, 1, 2, 4, 8, 16, stretch_min, 64]
                        .into_iter()
                        .map(move |stretch| (stretch, v))
                })
                .filter_map(|(stretch, v)| self.render(stretch, v))
                .chain(padded)
        }

        fn render(&self, stretch: u32, variant: u32) -> Option<String> {
            render(&self.node, stretch, variant)
        }
    }

    /// Distinct strings that should match `pattern`, those within the length bounds first.
    pub(super) fn candidates(
        pattern: &str,
        min_len: usize,
        max_len: usize,
        variant: u32,
    ) -> Vec<String> {
        let Some(parsed) = Pattern::parse(pattern) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for text in parsed.texts(min_len, variant) {
            if !out.contains(&text) {
                out.push(text);
            }
        }
        out.sort_by_key(|text| {
            let len = text.chars().count();
            !(min_len <= len && len <= max_len)
        });
        out
    }

    fn parse(pattern: &str) -> Option<Node> {
        if pattern.len() > MAX_PATTERN {
            return None;
        }
        let mut parser = Parser {
            chars: pattern.chars().collect(),
            pos: 0,
            nesting: 0,
        };
        let node = parser.alternation()?;
        (parser.pos == parser.chars.len()).then_some(node)
    }

    fn render(node: &Node, stretch: u32, variant: u32) -> Option<String> {
        let mut out = String::new();
        let mut budget = MAX_WORK;
        write(node, stretch, variant, &mut out, &mut budget)?;
        Some(out)
    }

    /// Appends a rendering of `node`; `None` once the output or the work (`budget`, which
    /// nested repetitions of nothing, like `(()*)*`, consume without output) runs out.
    fn write(
        node: &Node,
        stretch: u32,
        variant: u32,
        out: &mut String,
        budget: &mut usize,
    ) -> Option<()> {
        *budget = budget.checked_sub(1)?;
        if out.len() > MAX_OUTPUT {
            return None;
        }
        match node {
            Node::Char(c) => out.push(*c),
            Node::Set(choices) => out.push(*choices.get(variant as usize % choices.len().max(1))?),
            Node::Any => out.push(PREFERRED.chars().nth(variant as usize % 26)?),
            Node::Seq(items) => {
                for item in items {
                    write(item, stretch, variant, out, budget)?;
                }
            }
            Node::Alt(alternatives) => {
                let chosen = alternatives.get(variant as usize % alternatives.len().max(1))?;
                write(chosen, stretch, variant, out, budget)?;
            }
            Node::Repeat(inner, min, max) => {
                let wanted = min.saturating_add(stretch);
                let times = max.map_or(wanted, |max| wanted.min(max)).max(*min);
                for _ in 0..times {
                    write(inner, stretch, variant, out, budget)?;
                }
            }
            Node::Assert => {}
        }
        Some(())
    }

    /// The characters a class is rendered with, the most natural first: letters and
    /// digits it contains (or, negated, does not contain), else its ranges' first ones.
    fn choices(ranges: &[(char, char)], negated: bool) -> Vec<char> {
        let inside = |c: char| ranges.iter().any(|&(a, b)| a <= c && c <= b);
        if negated {
            return PREFERRED
                .chars()
                .chain(['-', '_', '.', ' ', '!', '~'])
                .filter(|&c| !inside(c))
                .collect();
        }
        let preferred: Vec<char> = PREFERRED.chars().filter(|&c| inside(c)).collect();
        if !preferred.is_empty() {
            return preferred;
        }
        ranges.iter().map(|&(start, _)| start).collect()
    }

    struct Parser {
        chars: Vec<char>,
        pos: usize,
        nesting: usize,
    }

    impl Parser {
        fn peek(&self) -> Option<char> {
            self.chars.get(self.pos).copied()
        }

        fn bump(&mut self) -> Option<char> {
            let c = self.peek()?;
            self.pos += 1;
            Some(c)
        }

        fn eat(&mut self, c: char) -> bool {
            if self.peek() == Some(c) {
                self.pos += 1;
                true
            } else {
                false
            }
        }

        fn alternation(&mut self) -> Option<Node> {
            self.nesting += 1;
            if self.nesting > MAX_NESTING {
                return None;
            }
            let mut alternatives = vec![self.sequence()?];
            while self.eat('|') {
                alternatives.push(self.sequence()?);
            }
            self.nesting -= 1;
            Some(if alternatives.len() == 1 {
                alternatives.pop()?
            } else {
                Node::Alt(alternatives)
            })
        }

        fn sequence(&mut self) -> Option<Node> {
            let mut items = Vec::new();
            while let Some(c) = self.peek() {
                if c == '|' || c == ')' {
                    break;
                }
                let atom = self.atom()?;
                items.push(self.quantified(atom));
            }
            Some(Node::Seq(items))
        }

        fn quantified(&mut self, mut atom: Node) -> Node {
            loop {
                let (min, max) = match self.peek() {
                    Some('*') => {
                        self.pos += 1;
                        (0, None)
                    }
                    Some('+') => {
                        self.pos += 1;
                        (1, None)
                    }
                    Some('?') => {
                        self.pos += 1;
                        (0, Some(1))
                    }
                    Some('{') => match self.braces() {
                        Some(bounds) => bounds,
                        None => return atom,
                    },
                    _ => return atom,
                };
                // Lazy and possessive forms generate the same strings.
                if matches!(self.peek(), Some('?' | '+')) {
                    self.pos += 1;
                }
                atom = Node::Repeat(Box::new(atom), min, max);
            }
        }

        /// `{n}`, `{n,}`, `{n,m}`; `None` (and nothing consumed) for a literal brace.
        fn braces(&mut self) -> Option<(u32, Option<u32>)> {
            let start = self.pos;
            self.pos += 1;
            let result = (|| {
                let min = self.digits()?;
                if self.eat('}') {
                    return Some((min, Some(min)));
                }
                if !self.eat(',') {
                    return None;
                }
                if self.eat('}') {
                    return Some((min, None));
                }
                let max = self.digits()?;
                self.eat('}').then_some((min, Some(max)))
            })();
            if result.is_none() {
                self.pos = start;
            }
            result
        }

        fn digits(&mut self) -> Option<u32> {
            let mut value: Option<u32> = None;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
                self.pos += 1;
                value = Some(value.unwrap_or(0).saturating_mul(10).saturating_add(d));
            }
            value.map(|v| v.min(10_000))
        }

        fn atom(&mut self) -> Option<Node> {
            Some(match self.bump()? {
                '(' => self.group()?,
                '[' => self.class()?,
                '.' => Node::Any,
                '^' | '$' => Node::Assert,
                '\\' => match self.escape(false)? {
                    Escape::Char(c) => Node::Char(c),
                    Escape::Set(ranges, negated) => Node::Set(choices(&ranges, negated)),
                    Escape::Assert => Node::Assert,
                    Escape::Empty => Node::Seq(Vec::new()),
                },
                other => Node::Char(other),
            })
        }

        fn group(&mut self) -> Option<Node> {
            let mut assertion = false;
            if self.eat('?') {
                match self.bump()? {
                    ':' => {}
                    '=' | '!' => assertion = true,
                    '<' => {
                        if self.eat('=') || self.eat('!') {
                            assertion = true;
                        } else {
                            self.skip_past('>')?;
                        }
                    }
                    'P' if self.eat('<') => self.skip_past('>')?,
                    _ => {
                        // Flags: `(?i)`, `(?i:…)`, `(?-s)`.
                        self.pos -= 1;
                        while self
                            .peek()
                            .is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
                        {
                            self.pos += 1;
                        }
                        if self.eat(')') {
                            return Some(Node::Seq(Vec::new()));
                        }
                        if !self.eat(':') {
                            return None;
                        }
                    }
                }
            }
            let inner = self.alternation()?;
            if !self.eat(')') {
                return None;
            }
            Some(if assertion { Node::Assert } else { inner })
        }

        fn skip_past(&mut self, end: char) -> Option<()> {
            while self.bump()? != end {}
            Some(())
        }

        fn class(&mut self) -> Option<Node> {
            let negated = self.eat('^');
            let mut ranges = Vec::new();
            let mut first = true;
            loop {
                let c = self.bump()?;
                if c == ']' && !first {
                    break;
                }
                first = false;
                let start = match c {
                    '\\' => match self.escape(true)? {
                        Escape::Char(c) => c,
                        Escape::Set(set, false) => {
                            ranges.extend(set);
                            continue;
                        }
                        Escape::Set(set, true) => {
                            ranges.extend(complement_sample(&set));
                            continue;
                        }
                        Escape::Assert | Escape::Empty => continue,
                    },
                    '[' if self.peek() == Some(':') => {
                        let begin = self.pos + 1;
                        let mut name = String::new();
                        self.pos = begin;
                        while let Some(c) = self.bump() {
                            if c == ':' && self.eat(']') {
                                break;
                            }
                            name.push(c);
                        }
                        ranges.extend(posix_class(&name));
                        continue;
                    }
                    other => other,
                };
                let is_range = self.peek() == Some('-')
                    && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']');
                if !is_range {
                    ranges.push((start, start));
                    continue;
                }
                self.pos += 1;
                let end = match self.bump()? {
                    '\\' => match self.escape(true)? {
                        Escape::Char(c) => c,
                        Escape::Set(set, _) => {
                            ranges.push((start, start));
                            ranges.push(('-', '-'));
                            ranges.extend(set);
                            continue;
                        }
                        Escape::Assert | Escape::Empty => continue,
                    },
                    other => other,
                };
                if end < start {
                    return None;
                }
                ranges.push((start, end));
            }
            Some(Node::Set(choices(&ranges, negated)))
        }

        fn escape(&mut self, in_class: bool) -> Option<Escape> {
            let c = self.bump()?;
            Some(match c {
                'd' => Escape::Set(vec![('0', '9')], false),
                'D' => Escape::Set(vec![('0', '9')], true),
                'w' => Escape::Set(WORD.to_vec(), false),
                'W' => Escape::Set(WORD.to_vec(), true),
                's' => Escape::Set(SPACE.to_vec(), false),
                'S' => Escape::Set(SPACE.to_vec(), true),
                'b' if in_class => Escape::Char('\u{8}'),
                'b' | 'B' | 'A' | 'z' | 'Z' | 'G' => Escape::Assert,
                'n' => Escape::Char('\n'),
                't' => Escape::Char('\t'),
                'r' => Escape::Char('\r'),
                'f' => Escape::Char('\u{c}'),
                'v' => Escape::Char('\u{b}'),
                '0' => Escape::Char('\0'),
                'x' => Escape::Char(self.hex(2)?),
                'u' => Escape::Char(self.hex(4)?),
                'c' => Escape::Char(char::from_u32(self.bump()? as u32 % 32)?),
                'p' | 'P' => {
                    let name = if self.eat('{') {
                        let mut name = String::new();
                        loop {
                            match self.bump()? {
                                '}' => break,
                                c => name.push(c),
                            }
                        }
                        name
                    } else {
                        self.bump()?.to_string()
                    };
                    Escape::Set(property_sample(&name), c == 'P')
                }
                '1'..='9' => Escape::Empty,
                'k' => {
                    if self.eat('<') {
                        self.skip_past('>')?;
                    }
                    Escape::Empty
                }
                other => Escape::Char(other),
            })
        }

        fn hex(&mut self, digits: usize) -> Option<char> {
            let mut value: u32 = 0;
            if self.eat('{') {
                loop {
                    match self.bump()? {
                        '}' => break,
                        c => value = value.checked_mul(16)?.checked_add(c.to_digit(16)?)?,
                    }
                }
            } else {
                for _ in 0..digits {
                    value = value * 16 + self.bump()?.to_digit(16)?;
                }
            }
            char::from_u32(value)
        }
    }

    /// A few characters outside `set`, standing for a negated shorthand inside a class.
    fn complement_sample(set: &[(char, char)]) -> Vec<(char, char)> {
        let inside = |c: char| set.iter().any(|&(a, b)| a <= c && c <= b);
        PREFERRED
            .chars()
            .chain(['-', ' ', '.', '!'])
            .filter(|&c| !inside(c))
            .take(8)
            .map(|c| (c, c))
            .collect()
    }

    fn posix_class(name: &str) -> Vec<(char, char)> {
        match name {
            "alpha" => vec![('a', 'z'), ('A', 'Z')],
            "digit" => vec![('0', '9')],
            "alnum" => vec![('a', 'z'), ('A', 'Z'), ('0', '9')],
            "upper" => vec![('A', 'Z')],
            "lower" => vec![('a', 'z')],
            "space" => SPACE.to_vec(),
            "xdigit" => vec![('0', '9'), ('a', 'f'), ('A', 'F')],
            "word" => WORD.to_vec(),
            "punct" => vec![('!', '/')],
            _ => vec![('a', 'z')],
        }
    }

    /// Characters standing for a Unicode property class (`\p{L}`, `\p{Nd}`…).
    fn property_sample(name: &str) -> Vec<(char, char)> {
        let name = name.split(['=', ':']).next_back().unwrap_or(name);
        match name {
            "Lu" | "Uppercase_Letter" | "Uppercase" | "Upper" => vec![('A', 'Z')],
            n if n.starts_with('L') || n.starts_with("Alpha") || n == "Latin" => {
                vec![('a', 'z'), ('A', 'Z')]
            }
            n if n.starts_with('N') || n == "Digit" => vec![('0', '9')],
            n if n.starts_with('P') => vec![('.', '.'), ('-', '-')],
            n if n.starts_with('Z') || n == "White_Space" => vec![(' ', ' ')],
            n if n.starts_with('S') => vec![('+', '+'), ('$', '$')],
            _ => vec![('a', 'z')],
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;

    /// The example for `schema`, asserted valid (by `jsonschema`) and deterministic.
    fn valid_example(schema: &Value) -> Value {
        let value = example(schema).unwrap_or_else(|| panic!("no value for {schema}"));
        let validator = jsonschema::draft202012::new(schema).expect("schema compiles");
        if let Err(error) = validator.validate(&value) {
            panic!("{value} is not valid against {schema}: {error}");
        }
        assert_eq!(example(schema).as_ref(), Some(&value), "not deterministic");
        value
    }

    #[test]
    fn empty_and_true_schemas_give_a_string_and_false_gives_nothing() {
        assert_eq!(valid_example(&json!({})), json!("example"));
        assert_eq!(valid_example(&json!(true)), json!("example"));
        assert_eq!(example(&json!(false)), None);
        assert_eq!(example(&json!({"not": {}})), None);
    }

    #[test]
    fn scalars_of_each_type() {
        assert_eq!(valid_example(&json!({"type": "string"})), json!("string"));
        assert_eq!(valid_example(&json!({"type": "integer"})), json!(1));
        assert_eq!(valid_example(&json!({"type": "number"})), json!(1));
        assert_eq!(valid_example(&json!({"type": "boolean"})), json!(true));
        assert_eq!(valid_example(&json!({"type": "null"})), json!(null));
        assert_eq!(
            valid_example(&json!({"type": ["null", "integer"]})),
            json!(1)
        );
        assert_eq!(valid_example(&json!({"type": ["null"]})), json!(null));
    }

    #[test]
    fn types_are_inferred_from_keywords() {
        assert_eq!(
            valid_example(&json!({"properties": {"a": {"type": "integer"}}})),
            json!({"a": 1})
        );
        assert_eq!(
            valid_example(&json!({"items": {"type": "boolean"}})),
            json!([true])
        );
        assert_eq!(valid_example(&json!({"minLength": 3})), json!("example"));
        assert_eq!(valid_example(&json!({"pattern": "^[0-9]+$"})), json!("0"));
        assert_eq!(valid_example(&json!({"minimum": 7})), json!(7));
    }

    #[test]
    fn examples_default_const_and_enum_win_when_valid() {
        assert_eq!(
            valid_example(&json!({"type": "string", "examples": ["octocat"], "default": "x"})),
            json!("octocat")
        );
        // An example that contradicts its schema is ignored.
        assert_eq!(
            valid_example(
                &json!({"type": "integer", "maximum": 5, "examples": [10], "default": 3})
            ),
            json!(3)
        );
        assert_eq!(
            valid_example(&json!({"type": "integer", "minimum": 5, "default": 1})),
            json!(5)
        );
        assert_eq!(valid_example(&json!({"const": "fixed"})), json!("fixed"));
        assert_eq!(
            valid_example(&json!({"type": "string", "enum": ["asc", "desc"]})),
            json!("asc")
        );
        // The first enum value that fits the rest of the schema.
        assert_eq!(
            valid_example(&json!({"enum": ["a", 2, "ccc"], "type": "string", "minLength": 2})),
            json!("ccc")
        );
        assert_eq!(example(&json!({"enum": []})), None);
    }

    #[test]
    fn string_text_comes_from_the_property_name() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string"},
                "id": {"type": "string"},
                "html_url": {"type": "string"},
                "owner_id": {"type": "string"},
            },
        });
        assert_eq!(
            valid_example(&schema),
            json!({
                "name": "name",
                "email": "user@example.com",
                "id": "id-1",
                "html_url": "https://example.com",
                "owner_id": "owner_id-1",
            })
        );
    }

    #[test]
    fn string_lengths_are_respected() {
        assert_eq!(
            valid_example(&json!({"type": "string", "minLength": 10})),
            json!("stringstri")
        );
        assert_eq!(
            valid_example(&json!({"type": "string", "maxLength": 3})),
            json!("str")
        );
        assert_eq!(
            valid_example(&json!({"type": "string", "maxLength": 0})),
            json!("")
        );
        assert_eq!(
            example(&json!({"type": "string", "minLength": 5, "maxLength": 4})),
            None
        );
    }

    #[test]
    fn string_formats() {
        let cases = [
            ("date-time", "2024-01-01T00:00:00Z"),
            ("date", "2024-01-01"),
            ("time", "00:00:00Z"),
            ("email", "user@example.com"),
            ("uri", "https://example.com"),
            ("url", "https://example.com"),
            ("uri-reference", "/example"),
            ("hostname", "example.com"),
            ("ipv4", "192.0.2.1"),
            ("ipv6", "2001:db8::1"),
            ("uuid", "00000000-0000-4000-8000-000000000001"),
            ("byte", "ZXhhbXBsZQ=="),
            ("binary", "example"),
            ("password", "password"),
            ("int64", "1"),
            ("duration", "P1D"),
        ];
        for (format, expected) in cases {
            assert_eq!(
                valid_example(&json!({"type": "string", "format": format})),
                json!(expected),
                "{format}"
            );
        }
        assert_eq!(
            valid_example(&json!({"type": "string", "contentEncoding": "base64"})),
            json!("ZXhhbXBsZQ==")
        );
        // Formats are checked the way jsonschema checks them when asked to.
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&json!({"type": "string"}))
            .expect("compiles");
        for (format, _) in cases {
            let schema = json!({"type": "string", "format": format});
            let value = example(&schema).expect("value");
            let strict = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("compiles");
            assert!(strict.is_valid(&value), "{format}: {value}");
            assert!(validator.is_valid(&value));
        }
    }

    #[test]
    fn an_example_or_default_in_the_wrong_format_is_not_used() {
        // GitHub's artifact storage record: a "uri" whose example has no scheme.
        let path =
            json!({"type": "string", "format": "uri", "examples": ["com/github/bar/libfoo-1.2.3"]});
        assert_eq!(valid_example(&path), json!("https://example.com"));
        let when = json!({"type": "string", "format": "date-time", "default": "yesterday"});
        assert_eq!(valid_example(&when), json!("2024-01-01T00:00:00Z"));
        // Right formats are kept, and formats jsonschema does not know accept anything.
        let right =
            json!({"type": "string", "format": "uri", "examples": ["https://reg.example.com/a"]});
        assert_eq!(valid_example(&right), json!("https://reg.example.com/a"));
        let unknown = json!({"type": "string", "format": "sha256-digest", "examples": ["abc"]});
        assert_eq!(valid_example(&unknown), json!("abc"));
    }

    #[test]
    fn patterns() {
        assert_eq!(
            valid_example(&json!({"type": "string", "pattern": "^[A-Z]{3}-\\d{2,4}$"})),
            json!("AAA-00")
        );
        assert_eq!(
            valid_example(&json!({"type": "string", "pattern": "^(asc|desc)$"})),
            json!("asc")
        );
        assert_eq!(
            valid_example(&json!({"type": "string", "pattern": "^[0-9]+$", "minLength": 4})),
            json!("0000")
        );
        // The property name wins when it matches.
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "properties": {"slug": {"type": "string", "pattern": "^[a-z]+$"}},
                "required": ["slug"],
            })),
            json!({"slug": "slug"})
        );
        for pattern in [
            "^\\+?[1-9]\\d{1,14}$",
            "^[^/]+/[^/]+$",
            "^#?[0-9a-fA-F]{6}$",
            "^v\\d+\\.\\d+\\.\\d+(-[a-z]+)?$",
            "^(?:[a-z]+\\.)*[a-z]+$",
            "^\\p{L}+$",
            "^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$",
            "^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$",
            "^\\S+$",
            "^.{8,}$",
            "(?i)^abc$",
            "^[a-z](?:[a-z0-9_]{0,30}[a-z0-9])?$",
        ] {
            valid_example(&json!({"type": "string", "pattern": pattern}));
        }
        // Unsatisfiable: still a string, the best effort.
        let hopeless = json!({"type": "string", "pattern": "^a$", "minLength": 2});
        assert!(example(&hopeless).is_some_and(|v| v.is_string()));
    }

    #[test]
    fn numbers_respect_bounds_and_multiples() {
        let cases = [
            (json!({"type": "integer", "minimum": 5}), json!(5)),
            (json!({"type": "integer", "exclusiveMinimum": 1}), json!(2)),
            (json!({"type": "integer", "maximum": 0}), json!(0)),
            (json!({"type": "integer", "exclusiveMaximum": 0}), json!(-1)),
            (json!({"type": "integer", "multipleOf": 3}), json!(3)),
            (
                json!({"type": "integer", "minimum": 10, "multipleOf": 4}),
                json!(12),
            ),
            (
                json!({"type": "integer", "multipleOf": 4, "allOf": [{"multipleOf": 6}]}),
                json!(12),
            ),
            (
                json!({"type": "integer", "minimum": 0, "maximum": 100}),
                json!(1),
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}),
                json!(0.5),
            ),
            (json!({"type": "number", "multipleOf": 0.01}), json!(1)),
            (
                json!({"type": "number", "multipleOf": 0.25, "maximum": 0.5, "exclusiveMinimum": 0}),
                json!(0.25),
            ),
            (json!({"type": "number", "minimum": 1.2}), json!(2)),
            (
                json!({"type": "number", "minimum": 1.2, "maximum": 1.8}),
                json!(1.5),
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(valid_example(&schema), expected, "{schema}");
        }
        assert_eq!(
            example(&json!({"type": "integer", "minimum": 5, "maximum": 3})),
            None
        );
        assert_eq!(
            example(&json!({"type": "integer", "minimum": 1.2, "maximum": 1.8})),
            None
        );
    }

    #[test]
    fn objects_required_optional_and_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "b": {"type": "string"},
                "c": {"type": "boolean"},
            },
            "required": ["c"],
            "additionalProperties": false,
        });
        assert_eq!(valid_example(&schema), json!({"a": 1, "b": "b", "c": true}));
        // Optional properties stop at max_properties.
        let few = Limits {
            max_properties: 1,
            ..Limits::default()
        };
        assert_eq!(value_for(&schema, &few), Some(json!({"a": 1, "c": true})));
        // maxProperties drops optional ones; minProperties adds made-up ones.
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["b"],
                "maxProperties": 1,
            })),
            json!({"b": 1})
        );
        assert_eq!(
            valid_example(&json!({"type": "object", "minProperties": 2})),
            json!({"property1": "example", "property2": "example"})
        );
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "minProperties": 1,
            })),
            json!({"property1": 1})
        );
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "patternProperties": {"^x-[a-z]+$": {"type": "string"}},
                "additionalProperties": false,
                "minProperties": 1,
            })),
            json!({"x-a": "string"})
        );
        valid_example(&json!({
            "type": "object",
            "propertyNames": {"maxLength": 3},
            "properties": {"long_name": {"type": "string"}, "ok": {"type": "string"}},
        }));
        // Required but undeclared: from additionalProperties.
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "required": ["x"],
                "additionalProperties": {"type": "integer"},
            })),
            json!({"x": 1})
        );
        // A required property that cannot exist.
        assert_eq!(
            example(&json!({"type": "object", "required": ["x"], "additionalProperties": false})),
            None
        );
    }

    #[test]
    fn dependent_required_is_honoured() {
        let schema = json!({
            "type": "object",
            "properties": {"card": {"type": "string"}},
            "dependentRequired": {"card": ["billing_address"]},
        });
        assert_eq!(
            valid_example(&schema),
            json!({"card": "card", "billing_address": "billing_address"})
        );
    }

    #[test]
    fn arrays() {
        assert_eq!(
            valid_example(&json!({"type": "array", "items": {"type": "integer"}})),
            json!([1])
        );
        assert_eq!(
            valid_example(
                &json!({"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": true})
            ),
            json!([1, 2, 3])
        );
        assert_eq!(
            valid_example(
                &json!({"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 2, "uniqueItems": true})
            ),
            json!(["user@example.com", "user2@example.com"])
        );
        assert_eq!(
            valid_example(&json!({"type": "array", "items": {"type": "string"}, "minItems": 3})),
            json!(["string", "string", "string"])
        );
        assert_eq!(
            valid_example(&json!({"type": "array", "maxItems": 0})),
            json!([])
        );
        assert_eq!(
            valid_example(&json!({
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": {"type": "boolean"},
                "minItems": 3,
            })),
            json!(["string", 1, true])
        );
        assert_eq!(
            valid_example(&json!({
                "type": "array",
                "items": {"type": "integer"},
                "contains": {"minimum": 10},
                "minContains": 2,
            })),
            json!([10, 10])
        );
        valid_example(&json!({
            "type": "array",
            "items": {"enum": ["a", "b", "c"]},
            "minItems": 3,
            "uniqueItems": true,
        }));
        valid_example(&json!({
            "type": "array",
            "items": {"type": "boolean"},
            "minItems": 2,
            "uniqueItems": true,
        }));
        assert_eq!(
            example(&json!({"type": "array", "items": {"type": "boolean"}, "minItems": 3, "uniqueItems": true}))
                .map(|v| v.as_array().map(Vec::len)),
            Some(Some(3)),
            "impossible uniqueness still gives the best effort"
        );
        assert_eq!(
            example(&json!({"type": "array", "minItems": 2, "maxItems": 1})),
            None
        );
    }

    #[test]
    fn all_of_merges_its_members() {
        let schema = json!({
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"a": {"minimum": 3}, "b": {"type": "string"}}, "required": ["b"]},
                {"type": ["object", "null"]},
            ]
        });
        assert_eq!(valid_example(&schema), json!({"a": 3, "b": "b"}));
        assert_eq!(
            valid_example(
                &json!({"allOf": [{"type": "number"}, {"type": "integer", "maximum": -3}]})
            ),
            json!(-3)
        );
        assert_eq!(
            example(&json!({"allOf": [{"type": "string"}, {"type": "integer"}]})),
            None
        );
    }

    #[test]
    fn any_of_takes_the_first_member_that_works() {
        assert_eq!(
            valid_example(
                &json!({"anyOf": [{"type": "string", "maxLength": 5000}, {"enum": [""]}]})
            ),
            json!("string")
        );
        assert_eq!(
            valid_example(&json!({"anyOf": [{"type": "null"}, {"type": "integer"}]})),
            json!(1),
            "null last"
        );
        assert_eq!(
            valid_example(
                &json!({"anyOf": [{"type": "integer", "minimum": 5, "maximum": 1}, {"type": "boolean"}]})
            ),
            json!(true)
        );
        assert_eq!(
            valid_example(
                &json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})
            ),
            json!({"a": "a"})
        );
    }

    #[test]
    fn one_of_needs_exactly_one_member() {
        // 1 is both an integer and a number: the number member needs 1.5.
        assert_eq!(
            valid_example(&json!({"oneOf": [{"type": "integer"}, {"type": "number"}]})),
            json!(1.5)
        );
        assert_eq!(
            valid_example(
                &json!({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 100}]})
            ),
            json!("string")
        );
        valid_example(&json!({
            "type": "object",
            "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
            "oneOf": [
                {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                {"properties": {"kind": {"const": "b"}}, "required": ["kind", "size"]},
            ],
        }));
        valid_example(&json!({
            "oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"], "additionalProperties": false},
            ]
        }));
    }

    #[test]
    fn not_is_avoided() {
        assert_eq!(valid_example(&json!({"not": {"type": "string"}})), json!(1));
        assert_eq!(
            valid_example(&json!({"type": "string", "not": {"enum": ["string"]}})),
            json!("string-2")
        );
        assert_eq!(
            valid_example(&json!({"type": "integer", "not": {"const": 1}})),
            json!(2)
        );
        assert_eq!(
            valid_example(&json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "not": {"required": ["a", "b"]},
            })),
            json!({})
        );
    }

    #[test]
    fn if_then_else_best_effort() {
        let schema = json!({
            "type": "object",
            "properties": {"country": {"type": "string"}, "postal_code": {"type": "string"}},
            "required": ["country", "postal_code"],
            "if": {"properties": {"country": {"const": "country"}}},
            "then": {"properties": {"postal_code": {"pattern": "^[0-9]{5}$"}}},
            "else": {"required": ["postal_code"]},
        });
        assert_eq!(
            valid_example(&schema),
            json!({"country": "country", "postal_code": "00000"})
        );
        valid_example(&json!({
            "if": {"type": "string"},
            "then": {"minLength": 20},
            "else": {"type": "integer"},
        }));
    }

    #[test]
    fn refs_resolve_into_defs_and_any_local_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pet": {"$ref": "#/$defs/Pet"},
                "tag": {"$ref": "#/$defs/a~1b%20c"},
                "again": {"$ref": "#/properties/pet"},
            },
            "required": ["pet", "tag", "again"],
            "$defs": {
                "Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "a/b c": {"type": "integer", "minimum": 4},
            },
        });
        assert_eq!(
            valid_example(&schema),
            json!({"pet": {"name": "name"}, "tag": 4, "again": {"name": "name"}})
        );
        // A $ref next to other keywords: both apply.
        assert_eq!(
            valid_example(&json!({
                "$ref": "#/$defs/N",
                "maximum": 2,
                "$defs": {"N": {"type": "integer", "minimum": 2}},
            })),
            json!(2)
        );
    }

    fn tree() -> Value {
        json!({
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                        "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                    },
                    "required": ["value", "children"],
                }
            }
        })
    }

    fn depth(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn recursion_is_bounded() {
        let value = valid_example(&tree());
        // Arrays get an item down to max_depth (8); the last node's children are empty.
        assert_eq!(depth(&value), 10);
        for max_depth in [0, 1, 2, 3, 20, 1_000] {
            let limits = Limits {
                max_depth,
                ..Limits::default()
            };
            let value = value_for(&tree(), &limits).expect("value");
            let validator = jsonschema::draft202012::new(&tree()).expect("compiles");
            assert!(validator.is_valid(&value), "{max_depth}: {value}");
        }
        assert_eq!(
            value_for(
                &tree(),
                &Limits {
                    max_depth: 0,
                    max_properties: 16
                }
            ),
            Some(json!({"value": 1, "children": []}))
        );
    }

    #[test]
    fn mutual_recursion_terminates() {
        let schema = json!({
            "$ref": "#/$defs/A",
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}, "n": {"type": "integer"}}, "required": ["b"]},
                "B": {"type": "object", "properties": {"a": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}}, "required": ["a"]},
            }
        });
        valid_example(&schema);
        // Every A needs a B that needs an A: no finite value.
        let endless = json!({
            "$ref": "#/$defs/A",
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}, "required": ["b"]},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"]},
            }
        });
        assert_eq!(example(&endless), None);
    }

    #[test]
    fn determinism() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 2, "uniqueItems": true},
                "meta": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 3},
                "choice": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            },
        });
        let first = valid_example(&schema);
        for _ in 0..5 {
            assert_eq!(example(&schema), Some(first.clone()));
        }
        assert_eq!(valid_example(&tree()), valid_example(&tree()));
    }

    #[test]
    fn hostile_schemas_terminate() {
        let started = Instant::now();
        // Exponential alternatives: 2^40 paths, all ending in `false`.
        let mut defs = Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/D{}", i + 1);
            defs.insert(
                format!("D{i}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next}], "type": "object"}),
            );
        }
        defs.insert("D40".into(), json!(false));
        let exponential = json!({"$ref": "#/$defs/D0", "$defs": defs});
        let _ = example(&exponential);
        // Exponential allOf diamonds.
        let mut defs = Map::new();
        for i in 0..40 {
            let next = format!("#/$defs/A{}", i + 1);
            defs.insert(
                format!("A{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("A40".into(), json!({"type": "integer"}));
        // (jsonschema itself takes exponential time on this one: not checked with it.)
        assert_eq!(
            example(&json!({"$ref": "#/$defs/A0", "$defs": defs})),
            Some(json!(1))
        );
        // Cycles of references that consume no value.
        for schema in [
            json!({"$ref": "#"}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
            json!({"anyOf": [{"$ref": "#"}, {"type": "integer"}]}),
            json!({"not": {"$ref": "#"}}),
            json!({"oneOf": [{"$ref": "#"}, {"$ref": "#"}]}),
            json!({"$ref": "#/nowhere"}),
            json!({"$ref": 5, "type": 7, "properties": [], "items": 3, "required": {}}),
            json!({"type": "array", "minItems": 1_000_000_000_u64}),
            json!({"type": "string", "minLength": 1_000_000_000_u64}),
            json!({"type": "string", "pattern": "(((((((((a{1000}){1000}){1000}))))))))"}),
            json!({"type": "string", "pattern": "[z-a"}),
            json!({"type": "string", "pattern": "^((((((((()*)*)*)*)*)*)*)*)*$"}),
            json!({"type": "string", "pattern": "^(a|b|(c(d(e(f(g(h(i(j)*)*)*)*)*)*)*)*)+$", "minLength": 5000}),
            json!({"type": "array", "uniqueItems": true, "examples": [(0..5_000).collect::<Vec<u32>>()]}),
            json!({"type": "object", "properties": (0..5_000).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect::<Map<String, Value>>(), "required": (0..5_000).map(|i| format!("p{i}")).collect::<Vec<String>>()}),
            json!({"type": "integer", "minimum": 1e308, "multipleOf": 1e-308}),
            json!({"type": "number", "exclusiveMinimum": 1e308}),
            json!({"type": "object", "minProperties": 500, "propertyNames": {"pattern": "^$"}}),
        ] {
            let _ = example(&schema);
        }
        // Deep nesting of the schema itself.
        let mut deep = json!({"type": "integer"});
        for _ in 0..500 {
            deep = json!({"type": "array", "items": deep, "minItems": 1});
        }
        let _ = example(&deep);
        let mut deep = json!({"type": "integer"});
        for _ in 0..500 {
            deep = json!({"allOf": [deep]});
        }
        let _ = example(&deep);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    /// The built-in validator against `jsonschema`, on schemas and instances where they
    /// could plausibly disagree.
    #[test]
    fn the_validator_agrees_with_jsonschema() {
        let schemas = [
            json!({"type": "integer"}),
            json!({"type": ["string", "null"]}),
            json!({"multipleOf": 0.01}),
            json!({"multipleOf": 0.1}),
            json!({"multipleOf": 3}),
            json!({"minimum": 1, "exclusiveMaximum": 3}),
            json!({"enum": [1, "a", [1], {"a": 1}]}),
            json!({"const": {"a": [1.0, null]}}),
            json!({"uniqueItems": true}),
            json!({"minLength": 2, "maxLength": 3}),
            json!({"pattern": "^[a-z]+\\d?$"}),
            json!({"pattern": "b"}),
            json!({"minItems": 1, "maxItems": 2, "items": {"type": "integer"}}),
            json!({"prefixItems": [{"type": "string"}], "items": false}),
            json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
            json!({"contains": {"type": "string"}, "minContains": 0}),
            json!({"required": ["a"], "properties": {"a": {"type": "integer"}}}),
            json!({"properties": {"a": {}}, "additionalProperties": false}),
            json!({"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": {"type": "string"}}),
            json!({"propertyNames": {"maxLength": 1}}),
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"dependentSchemas": {"a": {"required": ["c"]}}}),
            json!({"minProperties": 1, "maxProperties": 1}),
            json!({"allOf": [{"type": "number"}, {"minimum": 2}]}),
            json!({"anyOf": [{"type": "string"}, {"minimum": 2}]}),
            json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
            json!({"not": {"type": "array"}}),
            json!({"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}}}}),
            json!({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": false}),
            json!({"prefixItems": [{}], "unevaluatedItems": false}),
        ];
        let instances = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(1.0),
            json!(2),
            json!(2.5),
            json!(3),
            json!(0.07),
            json!(0.3),
            json!(-6),
            json!(""),
            json!("a"),
            json!("ab"),
            json!("abc1"),
            json!("abcd"),
            json!([]),
            json!([1]),
            json!([1, 1.0]),
            json!(["a", 1]),
            json!(["a", "b"]),
            json!([[1], [1.0]]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 1.0}),
            json!({"a": [1.0, null]}),
            json!({"a": 1, "b": 2}),
            json!({"a": "x", "c": 1}),
            json!({"x1": 1, "y": "s"}),
            json!({"x1": "s"}),
            json!({"n": {"n": {}}}),
            json!({"n": {"n": 1}}),
        ];
        for schema in &schemas {
            let validator = jsonschema::draft202012::new(schema).expect("compiles");
            for instance in &instances {
                let mut generator = Generator::new(schema, &Limits::default());
                assert_eq!(
                    generator.valid(instance, schema, 0),
                    validator.is_valid(instance),
                    "{instance} against {schema}"
                );
            }
        }
    }

    #[test]
    fn the_stack_stays_small() {
        // Deep required recursion with several `anyOf`s per level, and long `not` chains,
        // in a thread with a small stack.
        let mut defs = Map::new();
        let groups: Vec<Value> = (0..8)
            .map(|_| json!({"anyOf": [{"$ref": "#/$defs/N"}, {"type": "object"}]}))
            .collect();
        defs.insert(
            "N".into(),
            json!({
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/N"}, "not": {"$ref": "#/$defs/Not"}},
                "required": ["next", "not"],
                "allOf": groups,
                "oneOf": [{"$ref": "#/$defs/N"}, {"required": ["x"]}],
            }),
        );
        let mut not = json!({"type": "integer"});
        for _ in 0..300 {
            not = json!({"not": not});
        }
        defs.insert("Not".into(), not);
        let schema = json!({"$ref": "#/$defs/N", "$defs": defs});
        let limits = Limits {
            max_depth: 1_000,
            max_properties: 1_000,
        };
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || value_for(&schema, &limits).map(|v| v.to_string().len()))
            .expect("thread")
            .join()
            .expect("no stack overflow");
    }

    // ----- real-world specs -----

    /// A path under `../shared/specs`; `None` (skip) when absent, a panic under CI.
    fn shared_spec(relative: &str) -> Option<PathBuf> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/specs")
            .join(relative);
        if path.exists() {
            return Some(path);
        }
        if std::env::var_os("CI").is_some() {
            panic!(
                "{} is missing; CI must have ../shared beside the repo",
                path.display()
            );
        }
        eprintln!("skipped: {} not present", path.display());
        None
    }

    struct Outcome {
        tools: usize,
        elapsed: Duration,
        input_failures: Vec<String>,
        output_failures: Vec<String>,
    }

    /// Generates an input and an output for every tool of a spec and validates them.
    fn generate_for_spec(path: &Path) -> Outcome {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let source = crate::spec::SpecSource::File(path.to_path_buf());
        let docs = runtime
            .block_on(crate::spec::load(&source))
            .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        let input = crate::catalog::ApiInput::new("api", Some(&docs));
        let (catalog, _) = crate::catalog::build(&[input], &crate::config::ToolSettings::default())
            .expect("catalog builds");
        let started = Instant::now();
        let generated: Vec<(Option<Value>, Option<Option<Value>>)> = catalog
            .tools()
            .iter()
            .map(|tool| {
                (
                    example(&tool.input_schema.to_value()),
                    tool.output_schema.as_ref().map(|s| example(&s.to_value())),
                )
            })
            .collect();
        let elapsed = started.elapsed();
        let mut input_failures = Vec::new();
        let mut output_failures = Vec::new();
        for (tool, (input, output)) in catalog.tools().iter().zip(&generated) {
            if let Some(problem) = problem(&tool.input_schema.to_value(), input.as_ref()) {
                input_failures.push(format!("{}: {problem}", tool.name));
            }
            if let (Some(schema), Some(output)) = (&tool.output_schema, output)
                && let Some(problem) = problem(&schema.to_value(), output.as_ref())
            {
                output_failures.push(format!("{}: {problem}", tool.name));
            }
        }
        Outcome {
            tools: generated.len(),
            elapsed,
            input_failures,
            output_failures,
        }
    }

    fn problem(schema: &Value, value: Option<&Value>) -> Option<String> {
        let Some(value) = value else {
            return Some("no value".into());
        };
        let validator = match jsonschema::draft202012::new(schema) {
            Ok(validator) => validator,
            Err(e) => return Some(format!("schema does not compile: {e}")),
        };
        validator
            .validate(value)
            .err()
            .map(|e| format!("{e} at {}", e.instance_path()))
    }

    fn assert_spec(relative: &str) {
        let Some(path) = shared_spec(relative) else {
            return;
        };
        let mut files = Vec::new();
        let mut stack = vec![path];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("readable dir") {
                    let entry = entry.expect("entry").path();
                    let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    // The parts of petstore-separate are not documents of their own.
                    let part = entry.parent().is_some_and(|p| p.ends_with("spec"))
                        && name != "swagger.yaml"
                        && name != "swagger.json";
                    if name != "common" && !part {
                        stack.push(entry);
                    }
                }
            } else {
                files.push(path);
            }
        }
        files.sort();
        let mut report = Vec::new();
        let mut failures = 0;
        for file in files {
            let outcome = generate_for_spec(&file);
            eprintln!(
                "{}: {} tools, values generated in {:?}, {} input and {} output failures",
                file.display(),
                outcome.tools,
                outcome.elapsed,
                outcome.input_failures.len(),
                outcome.output_failures.len()
            );
            failures += outcome.input_failures.len() + outcome.output_failures.len();
            for failure in outcome.input_failures.iter().take(10) {
                report.push(format!("{} input {failure}", file.display()));
            }
            for failure in outcome.output_failures.iter().take(10) {
                report.push(format!("{} output {failure}", file.display()));
            }
        }
        assert_eq!(failures, 0, "{failures} failures:\n{}", report.join("\n"));
    }

    #[test]
    fn real_oai_examples() {
        assert_spec("oai-examples");
        assert_spec("petstore3.yaml");
    }

    #[test]
    fn real_github() {
        assert_spec("real/github.json");
    }

    #[test]
    fn real_stripe() {
        assert_spec("real/stripe.json");
    }

    #[test]
    fn real_kubernetes() {
        assert_spec("real/kubernetes.json");
    }

    #[test]
    fn real_twilio() {
        assert_spec("real/twilio.json");
    }

    #[test]
    fn real_box() {
        assert_spec("real/box.json");
    }
}
