//! Client schema dialects: the same tool input schema, made acceptable to model APIs that
//! take only a subset of JSON Schema, and the way back for the arguments they send.
//!
//! restmcp publishes full JSON Schema 2020-12 ([`Dialect::Full`]). Some MCP clients hand
//! tool schemas straight to a model API that rejects whole requests over one keyword it
//! does not take, so for them a tool's `inputSchema` is rewritten into that API's subset:
//!
//! * [`Dialect::OpenaiStrict`]: OpenAI function calling with `strict: true`, whose rules are
//!   those of Structured Outputs, "Supported schemas"
//!   (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>, now
//!   served at <https://developers.openai.com/api/docs/guides/structured-outputs>):
//!   - the root is an object, never `anyOf`;
//!   - every object has `additionalProperties: false` and lists *all* its properties in
//!     `required`; an optional property becomes nullable (`"type": ["string", "null"]`, or
//!     `anyOf [.., {"type": "null"}]`), and [`restore_arguments`] turns that `null` back
//!     into "absent" (so an explicit `null` for an optional property cannot be sent: the
//!     alternative, sending `null` upstream for every property the model did not care
//!     about, would clear fields on every PATCH);
//!   - keywords: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
//!     `const`, `anyOf` (not at the root), `$ref`/`$defs`, `description`, `title`, and the
//!     listed "supported properties": strings `pattern` and `format` (only `date-time`,
//!     `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`), numbers
//!     `multipleOf`, `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`, arrays
//!     `minItems`, `maxItems`. `minLength`/`maxLength` are kept too: the page lists them
//!     among what fine-tuned models "additionally do not support", next to `pattern` and
//!     `format`, so base models take them;
//!   - unsupported: `allOf` (merged), `not`, `dependentRequired`, `dependentSchemas`, `if`,
//!     `then`, `else` (dropped with a note), `oneOf` (becomes `anyOf`: a value that fits
//!     several alternatives is no longer refused by the model API, restmcp's validation
//!     refuses it), `default` (rejected in practice: "'default' is not permitted"; moved
//!     into the description);
//!   - a `$ref` takes no sibling keyword (OpenAI's own SDK inlines the target when there are
//!     siblings, see `openai/lib/_pydantic.py`; so does this module); every schema has a
//!     `type` (or is an `anyOf`/`$ref`), every array has `items`;
//!   - limits: 5,000 object properties, 10 levels of object nesting, 1,000 enum values,
//!     15,000 characters for one string enum of more than 250 values, 120,000 characters of
//!     property names, definition names, enum and const values. An object nested too deep
//!     is left out; enums past a limit are dropped (largest first), each with a note.
//! * [`Dialect::Gemini`]: the Gemini API's `Schema` object, "a select subset of an OpenAPI
//!   3.0 schema object" (<https://ai.google.dev/api/caching#Schema>, function declarations
//!   in <https://ai.google.dev/gemini-api/docs/function-calling>):
//!   - keywords: `type`, `format`, `title`, `description`, `nullable`, `enum`, `maxItems`,
//!     `minItems`, `properties`, `required`, `minProperties`, `maxProperties`, `minLength`,
//!     `maxLength`, `pattern`, `example`, `anyOf`, `propertyOrdering`, `default`, `items`,
//!     `minimum`, `maximum`; nothing else (no `$ref`/`$defs`, no `additionalProperties`:
//!     "Unknown name" errors);
//!   - `type` is one value; a union with null becomes `nullable: true`, other unions
//!     `anyOf`; `oneOf` becomes `anyOf`, `allOf` is merged, `$ref`s are inlined (a recursive
//!     one is cut after [`GEMINI_RECURSION`] repetitions, with a note);
//!   - `enum` holds strings, for `type: string` only. A non-string enum (or `const`) becomes
//!     a string enum of the values' JSON text (`1`, `true`) and [`restore_arguments`] turns
//!     the chosen text back into the original value;
//!   - formats: `enum` and `date-time` for strings, `float`/`double` for numbers,
//!     `int32`/`int64` for integers ("otherwise requests will fail");
//!   - observed API rules: an object must have non-empty `properties` ("should be non-empty
//!     for OBJECT type"; the root is exempt, a client declares a tool without arguments by
//!     leaving `parameters` out), `required` names must be among its `properties`, an array
//!     needs `items`.
//!
//! Both keep descriptions and titles and stay as close to the original as the dialect lets
//! them. What a dialect cannot hold goes one of three ways:
//! 1. a constraint the model can still follow when it reads it (`default`, an unsupported
//!    `format`, `uniqueItems`, an exclusive bound in Gemini…) is appended to the
//!    description, e.g. "(default: 30; format: uri)";
//! 2. a value that has no form at all (a map with free keys, an any-value `{}`, a free-form
//!    object, a tuple, a recursion past the cut) is left out *where it is*: the property
//!    that holds it (or the `anyOf` alternative) disappears, with a note in
//!    [`Adapted::dropped`] that names its path and says when the API requires it;
//! 3. a keyword that restricts values but has no equivalent (`not`, `if`…) is dropped with
//!    a note.
//!
//! restmcp still validates the restored arguments against the *original* schema before it
//! calls the upstream, so a model that misses a constraint of kind 1 or 3 gets a tool error
//! it can correct, never a bad request upstream.
//!
//! Work is bounded whatever the input: at most 40 schemas nested inside one another are
//! converted and an output grows to at most 20,000 schema objects while references are
//! read through (past that Gemini leaves references out, openai-strict keeps plain
//! `$ref`s); the shared real-world specs stay far below both.
//!
//! Output schemas are not adapted: for [`Dialect::OpenaiStrict`] and [`Dialect::Gemini`] a
//! tool's `outputSchema` is simply not published ([`keeps_output_schema`]). The model APIs
//! take no output schema for a function, and a strict rewrite (every property required, no
//! extra keys) would make valid upstream results fail the client's check of
//! `structuredContent`.
//!
//! [`violations`] states each dialect's rules once more, as a checker written apart from
//! the conversion: the tests hold [`adapt_input`]'s output to it for every tool of the
//! shared real-world specs.
//!
//! Submodules, in the order a schema meets them:
//! * `merge`: one position brought to one flat schema (`$ref` read through, `allOf`
//!   merged);
//! * `convert`: the rewrite into a dialect, position by position, with the markers the way
//!   back needs;
//! * `limits`: openai-strict's size limits, enforced on a converted schema as a whole;
//! * `marks`: those private markers (`x-restmcp-*`), and their removal for publication;
//! * `restore`: arguments sent for the adapted schema → the original's;
//! * `rules`: each dialect's rules stated once more, as the checker behind [`violations`];
//! * `tests`: each rule on a small schema, and round trips.

mod convert;
mod limits;
mod marks;
mod merge;
mod restore;
mod rules;

use serde_json::{Map, Value};

use crate::config::Dialect;

/// How many times a `$ref` may repeat along one path when Gemini schemas are inlined: a
/// recursive structure keeps this many levels of itself, then the recursive property is
/// left out with a note.
pub const GEMINI_RECURSION: usize = 2;

/// The same input schema made acceptable to the dialect, plus a human note for each thing
/// that had to be dropped or changed in a way the model can notice, with its path (e.g.
/// "`metadata.labels`: a map (additionalProperties) has no form in gemini; left out").
#[derive(Debug, Clone, PartialEq)]
pub struct Adapted {
    pub schema: Value,
    pub dropped: Vec<String>,
}

/// `input_schema` made acceptable to `dialect`. [`Dialect::Full`] returns it unchanged.
/// Never fails: what cannot be expressed is left out and named in [`Adapted::dropped`].
pub fn adapt_input(dialect: Dialect, input_schema: &Value) -> Adapted {
    if dialect == Dialect::Full {
        return Adapted {
            schema: input_schema.clone(),
            dropped: Vec::new(),
        };
    }
    let converted = convert::convert(dialect, input_schema);
    Adapted {
        schema: marks::strip_markers(converted.schema),
        dropped: converted.notes,
    }
}

/// Arguments as the model sent them for `dialect`'s schema → the arguments the original
/// schema expects: in openai-strict a `null` for a property that was optional means
/// "absent"; in gemini the text of a converted enum value becomes the value again.
/// Values valid against the adapted schema come back valid against the original one,
/// save what the dialect could only describe or loosen (a `maxLength` in words, `oneOf`
/// as `anyOf`), which restmcp's own validation against the original then reports.
/// Anything it does not recognize is passed through untouched.
///
/// It adapts `original_input_schema` again to know what was changed; a caller on a hot
/// path may keep the result per tool.
pub fn restore_arguments(
    dialect: Dialect,
    original_input_schema: &Value,
    arguments: Map<String, Value>,
) -> Map<String, Value> {
    if dialect == Dialect::Full {
        return arguments;
    }
    let marked = convert::convert(dialect, original_input_schema).schema;
    restore::restore(&marked, arguments)
}

/// What [`restore_arguments`] needs to know about one tool, worked out once.
#[derive(Debug, Clone)]
pub struct Restorer {
    marked: Value,
}

impl Restorer {
    /// [`restore_arguments`] for the tool this was made for.
    pub fn restore(&self, arguments: Map<String, Value>) -> Map<String, Value> {
        restore::restore(&self.marked, arguments)
    }
}

/// [`adapt_input`], and the [`Restorer`] for calls made against the result (`None` for
/// [`Dialect::Full`], which changes nothing), from one conversion.
pub fn adapt_for_calls(dialect: Dialect, input_schema: &Value) -> (Adapted, Option<Restorer>) {
    if dialect == Dialect::Full {
        return (adapt_input(dialect, input_schema), None);
    }
    let converted = convert::convert(dialect, input_schema);
    let restorer = Restorer {
        marked: converted.schema.clone(),
    };
    let adapted = Adapted {
        schema: marks::strip_markers(converted.schema),
        dropped: converted.notes,
    };
    (adapted, Some(restorer))
}

/// Every rule of `dialect` that `schema` breaks, one line each (empty = acceptable).
pub fn violations(dialect: Dialect, schema: &Value) -> Vec<String> {
    match dialect {
        Dialect::Full => rules::full(schema),
        Dialect::OpenaiStrict => rules::openai_strict(schema),
        Dialect::Gemini => rules::gemini(schema),
    }
}

/// Whether a tool's `outputSchema` is published to clients of `dialect` (only for
/// [`Dialect::Full`]; see the module documentation).
pub fn keeps_output_schema(dialect: Dialect) -> bool {
    dialect == Dialect::Full
}

#[cfg(test)]
mod tests;
