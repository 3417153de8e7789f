//! The generator: for one schema position, the schemas that apply are flattened into one
//! [`Shape`] (`$ref`s and `allOf` read through), its `anyOf`/`oneOf` groups decided by
//! trying members in order, `examples`, `default`, `const` and `enum` values tried, then a
//! value of the first allowed type built from the keywords, `if`/`then`/`else` last (the
//! steps of [`super`]'s documentation). Candidates are checked with [`super::check`].

use rustc_hash::FxHashSet;
use serde_json::{Map, Value};

use super::Generator;
use super::check::{Mode, declares};
use super::format::{encode_base64, format_text};
use super::number::{
    Bounds, count, fractional_candidate, integral_candidate, is_multiple, number_value,
};
use super::pattern::{self, pattern_matches};
use super::text::{CANNED, fit_length, name_text, with_variant};
use crate::json;

/// Value nesting beyond `max_depth` at which generation gives up (an infinite required
/// recursion has no value).
const HARD_EXTRA: usize = 8;

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
pub(super) struct Ctx<'a> {
    /// Object/array nesting of the value.
    pub(super) depth: usize,
    /// The property (or the array's property) the value is for: text is derived from it.
    pub(super) name: Option<&'a str>,
    /// 0 for the natural value; others give different values (unique items, retries).
    pub(super) variant: u32,
    /// Nested generation calls (values and `anyOf`/`oneOf` decisions): bounds the stack.
    pub(super) frames: usize,
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

impl<'a> Generator<'a> {
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

    /// A value for the conjunction of `conj`, and whether it is known valid.
    pub(super) fn generate(&mut self, conj: &[&'a Value], ctx: Ctx<'a>) -> Option<(Value, bool)> {
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
                let duplicate = unique && items.iter().any(|item| json::equal(item, &candidate.0));
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

    fn local_ok(&mut self, value: &Value, shape: &Shape<'a>) -> bool {
        shape
            .parts
            .iter()
            .all(|part| self.check(value, part, Mode::Local, 0))
    }
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
