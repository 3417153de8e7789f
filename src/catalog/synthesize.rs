//! One operation → one tool (everything but its final name, which needs all the others):
//! its text (cleaned, see [`super::text`]), schemas, annotations and route. The route asks
//! for the path template without its `#` suffix; the suffix's `name=value` pairs become
//! default values of the declared query parameters they name, or fixed query parameters.
//! Request bodies (their argument forms, file parts) are in [`body`].

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::arguments::{
    ArgumentMap, Binding, BodyPlan, FileContent, FilePart, FixedValue, Location, object_schema,
};
use super::naming::{ArgumentNames, NameRequest, argument_name};

mod body;

use super::text::{clean, tidy_schema, truncate_text};
use super::{
    Annotations, FullInput, Hoisting, MockAnswer, MockSource, OutputPlan, Relaxation, Route,
    SchemaText, SharedSchemas,
};
use crate::schema::{Direction, Limit, NodeId, Notes, RefGraph, Scope, Session, hoist_unmeasured};
use crate::spec::{
    Operation, ParamLocation, Parameter, RequestBody, SpecVersion, Style, media, model::is_success,
    values,
};
pub use body::default_filename;
use body::{
    BodyForm, Fields, body_form, default_body_schema, describe_body, describe_file, file_part,
    filename_schema, flatten, followed, is_binary, raw_body_schema, xml_root,
};

/// A tool before naming.
pub(super) struct Draft {
    pub naming: NameRequest,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: SchemaText,
    pub output_schema: Option<SchemaText>,
    pub annotations: Annotations,
    pub route: Route,
    pub notes: Vec<String>,
    pub schema_notes: Notes,
    /// How the inputSchema was relaxed to fit its budget, when it was.
    pub relaxed: Option<Relaxation>,
    /// What hoisting repeated subtrees into `$defs` saved, when it saved anything.
    pub hoisted: Option<Hoisting>,
    /// Where the pieces that are not plain synthesis came from (see [`super::Tool`]).
    pub provenance: Vec<(String, String)>,
}

pub(super) struct Context<'a> {
    pub api: &'a str,
    pub version: SpecVersion,
    pub base_url: Option<&'a str>,
    pub max_description_length: usize,
    pub max_output_schema_bytes: usize,
    /// Size above which the inputSchema is relaxed; 0 = no limit.
    pub max_input_schema_bytes: usize,
    /// Shares the `$defs` of full input schemas between tools (see [`FullInput`]).
    pub shared: &'a SharedSchemas,
    /// Longest argument description; 0 = no limit.
    pub max_parameter_description_length: usize,
    pub mock: bool,
}

/// A synthesized schema tidied: descriptions trimmed to `max_description` (0 = no limit).
fn tidied(mut schema: Value, max_description: usize) -> Value {
    tidy_schema(&mut schema, max_description);
    schema
}

/// A tidied schema as published: its repeated subtrees hoisted into `$defs` where that
/// makes it smaller ([`hoist_unmeasured`]; the default dialect's form, which the client
/// dialects convert from), kept as text. Done here, on the synthesizing thread, so that
/// the trees of all the tools never exist at once. Returns the sizes before and after
/// hoisting.
/// An inputSchema's arguments stay in place (overlays, the mock upstream and `explain`
/// read their keywords there); an outputSchema's fields may move (its readers, the
/// `response.fields` projection and the validator, follow `$ref`s).
fn hoisted_text(mut schema: Value, scope: Scope) -> (SchemaText, (usize, usize)) {
    // Measured by its text: measuring it apart wrote every hoisted schema out twice.
    let (bytes_before, _) = hoist_unmeasured(&mut schema, scope);
    let text = SchemaText::new(&schema);
    let bytes_after = text.as_str().len();
    (text, (bytes_before, bytes_after))
}

/// The shared definitions of full input schemas one synthesizing thread has made (see
/// [`FullInput`]): each component is converted once per thread, whatever the number of
/// tools that reach it.
pub(super) type FullDefs = rustc_hash::FxHashMap<NodeId, SchemaText>;

/// One operation's tool, unnamed: its inputSchema within its budget, its outputSchema,
/// both hoisted; its route (with the mock answer of an API in mock mode), text and notes.
pub(super) fn synthesize<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    full_defs: &mut FullDefs,
    op: &Operation<'_>,
) -> Result<Draft, String> {
    let mut notes = op.notes.clone();
    let mut provenance = Vec::new();
    let budgeted = input(cx, graph, full_defs, op, &mut notes, &mut provenance)?;
    let (input_schema, arguments, body, mut schema_notes) = budgeted.input;
    let (input_schema, input_sizes) = hoisted_text(input_schema, Scope::InsideProperties);
    let output = published_output(cx, graph, op, &mut notes, &mut schema_notes);
    let hoisting = Hoisting {
        input_before: input_sizes.0,
        input_after: input_sizes.1,
        output_before: output.sizes.0,
        output_after: output.sizes.1,
    };
    let hoisted = (hoisting.saved() > 0).then_some(hoisting);
    let base_url = base_url(cx, op);
    let mock = cx
        .mock
        .then(|| Arc::new(mock_answer(cx, graph, op, output.relaxed_below)));
    route_notes(op, base_url.is_none(), &mut notes);
    Ok(Draft {
        naming: NameRequest {
            operation_id: op.operation_id.clone(),
            identity: op.label(),
            method: op.method.key(),
            path: op.path.clone(),
        },
        title: title(op),
        description: description(op, cx.max_description_length),
        input_schema,
        output_schema: output.schema,
        annotations: Annotations::of_method(op.method),
        route: Route {
            base_url,
            arguments,
            body,
            output: output.plan,
            accept: accept(op),
            security: op.security.clone(),
            long_running: long_running(op),
            mock,
            full_input: budgeted.full,
            ..Route::new(cx.api, op.method, op.http_path())
        },
        notes,
        schema_notes,
        relaxed: budgeted.relaxed,
        hoisted,
        provenance,
    })
}

/// The outputSchema as published, and what the rest of synthesis needs of it.
struct PublishedOutput {
    /// Tidied and hoisted.
    schema: Option<SchemaText>,
    plan: Option<OutputPlan>,
    /// Its size before and after hoisting ((0, 0) without one).
    sizes: (usize, usize),
    /// The depth the mock answer's schema is relaxed below (see [`mock_answer`]).
    relaxed_below: Option<usize>,
}

/// The outputSchema ([`output`]) tidied and hoisted; its translation notes merged into
/// `schema_notes`, or a note saying why there is none when it could not be made.
fn published_output<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    notes: &mut Vec<String>,
    schema_notes: &mut Notes,
) -> PublishedOutput {
    let mut relaxed_below = Some(MOCK_SCHEMA_DEPTH);
    let (schema, plan) = match output(cx, graph, op) {
        Ok(Some((schema, plan, output_notes, depth))) => {
            schema_notes.merge(output_notes);
            relaxed_below = depth;
            (Some(schema), Some(plan))
        }
        Ok(None) => (None, None),
        Err(problem) => {
            notes.push(format!("no outputSchema: {problem}"));
            (None, None)
        }
    };
    let (schema, sizes) = match schema {
        Some(schema) => {
            let (text, sizes) = hoisted_text(tidied(schema, 0), Scope::Everywhere);
            (Some(text), sizes)
        }
        None => (None, (0, 0)),
    };
    PublishedOutput {
        schema,
        plan,
        sizes,
        relaxed_below,
    }
}

/// Where the tool's requests go: the configured base URL (no trailing slash), else the
/// operation's first absolute server URL, else for an API in mock mode [`super::MOCK_BASE_URL`].
fn base_url(cx: &Context<'_>, op: &Operation<'_>) -> Option<super::BaseUrl> {
    match cx.base_url {
        Some(url) => Some(url.trim_end_matches('/').to_string()),
        None => op.servers.iter().find(|s| s.contains("://")).cloned(),
    }
    .or_else(|| cx.mock.then(|| super::MOCK_BASE_URL.to_string()))
    .map(super::BaseUrl::new)
}

/// Notes on how the tool's requests are sent: that it has no base URL, and the body media
/// types also accepted besides the one it is sent in.
fn route_notes(op: &Operation<'_>, no_base_url: bool, notes: &mut Vec<String>) {
    if no_base_url {
        notes.push(format!(
            "no absolute server URL (servers: {:?}); set base_url for this API in the config",
            op.servers
        ));
    }
    if let Some(body) = &op.request_body
        && !body.alternatives.is_empty()
    {
        notes.push(format!(
            "request body sent as {}; also accepted: {}",
            body.media_type,
            body.alternatives.join(", ")
        ));
    }
}

/// Where a long-running operation's final result is read: as its description marks it,
/// else the default for an operation documenting a 202; `None` for any other.
fn long_running(op: &Operation<'_>) -> Option<crate::spec::FinalState> {
    op.long_running.or_else(|| {
        op.responses
            .iter()
            .any(|response| response.status == "202")
            .then_some(crate::spec::FinalState::Default)
    })
}

type Input = (Value, ArgumentMap, Option<BodyPlan>, Notes);

/// The inputSchema as published (within its budget), and when it had to be relaxed to fit,
/// the full schema of the arguments that were relaxed and what was done.
struct Budgeted {
    /// The inputSchema tidied, before hoisting.
    input: Input,
    full: Option<Arc<FullInput>>,
    relaxed: Option<Relaxation>,
}

/// Depths tried, deepest first, when an inputSchema is over its budget: the deepest that
/// fits is published.
const INPUT_CUT_OFFS: [usize; 10] = [12, 10, 8, 6, 5, 4, 3, 2, 1, 0];

/// What one attempt at the inputSchema made: the schema tidied (with its argument map,
/// body plan and notes), and the notes and provenance its emission wrote.
type Attempt = (Input, Vec<String>, Vec<(String, String)>);

/// The inputSchema within `max_input_schema_bytes`. Most tools fit on the first attempt,
/// whose emission stops as soon as it passes the budget (so an oversized tool costs no
/// more than its budget to find out). One that does not is emitted again with deep levels
/// replaced by typed placeholders, deepest cut-off that fits first; its arguments whose
/// published schema lost something are kept in full, with the full `$defs` (shared between
/// tools), for the dispatcher to check values against.
fn input<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    full_defs: &mut FullDefs,
    op: &Operation<'_>,
    notes: &mut Vec<String>,
    provenance: &mut Vec<(String, String)>,
) -> Result<Budgeted, String> {
    let describe = cx.max_parameter_description_length;
    if cx.max_input_schema_bytes == 0 {
        let whole = input_at(cx, graph, op, notes, provenance, Emission::Whole)?;
        return Ok(unlimited(whole.input, describe));
    }
    let (chosen, depth) = deepest_fitting(cx, graph, op, notes, provenance)?;
    let Some((published, chosen_notes, chosen_provenance)) = chosen else {
        let whole = input_at(cx, graph, op, notes, provenance, Emission::Whole)?;
        return Ok(unlimited(whole.input, describe));
    };
    *notes = chosen_notes;
    *provenance = chosen_provenance;
    let Some(depth) = depth else {
        return Ok(Budgeted {
            input: published,
            full: None,
            relaxed: None,
        });
    };
    // Relaxed: the full schema, for the dispatcher. Same arguments, same bindings; its
    // definitions shared, so that each is converted once however many tools reach it.
    let (full_schema, defs) = full_schema(cx, graph, full_defs, op, notes, provenance, &published)?;
    let (schema, arguments, _, _) = &published;
    let full_arguments = full_arguments(arguments, schema, &full_schema);
    let relaxed = Relaxation {
        below_depth: depth,
        budget: cx.max_input_schema_bytes,
        full_bytes: crate::json::compact_value_len(&full_schema)
            + defs
                .iter()
                .map(|(name, text)| name.len() + 4 + text.as_str().len())
                .sum::<usize>(),
        published_bytes: crate::json::compact_value_len(schema),
        arguments: full_arguments
            .iter()
            .map(|(index, _)| arguments.bindings[*index].argument.clone())
            .collect(),
    };
    Ok(Budgeted {
        input: published,
        full: Some(Arc::new(FullInput {
            arguments: full_arguments,
            defs,
        })),
        relaxed: Some(relaxed),
    })
}

/// An inputSchema emitted with no budget, tidied, published as it is.
fn unlimited(input: Input, describe: usize) -> Budgeted {
    let (schema, arguments, body, schema_notes) = input;
    Budgeted {
        input: (tidied(schema, describe), arguments, body, schema_notes),
        full: None,
        relaxed: None,
    }
}

/// The deepest emission within `max_input_schema_bytes` and its cut-off depth: whole
/// when it fits (depth `None`), else the deepest cut-off that fits, by binary search (the
/// size only grows with depth). When not even the arguments alone fit (hundreds of them,
/// or long descriptions): the shallowest form, whole, over the budget (depth 0; `check`
/// shows by how much).
fn deepest_fitting<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    notes: &[String],
    provenance: &[(String, String)],
) -> Result<(Option<Attempt>, Option<usize>), String> {
    let budget = cx.max_input_schema_bytes;
    let within = |max_depth| Limit { max_depth, budget };
    let (fits, first) = attempt(cx, graph, op, notes, provenance, within(usize::MAX))?;
    if fits {
        return Ok((first, None));
    }
    let (mut lo, mut hi) = (0, INPUT_CUT_OFFS.len());
    let (mut chosen, mut depth) = (None, None);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let (fits, result) = attempt(
            cx,
            graph,
            op,
            notes,
            provenance,
            within(INPUT_CUT_OFFS[mid]),
        )?;
        if fits {
            depth = Some(INPUT_CUT_OFFS[mid]);
            chosen = result;
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if chosen.is_none() {
        let unbounded = Limit {
            max_depth: 0,
            budget: usize::MAX,
        };
        depth = Some(0);
        chosen = attempt(cx, graph, op, notes, provenance, unbounded)?.1;
    }
    Ok((chosen, depth))
}

/// One emission within `limit`, on copies of the notes and provenance so far: whether it
/// fits the limit's budget, and what it made; nothing when it passed the budget half-way
/// (nothing of it is worth finishing).
fn attempt<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    notes: &[String],
    provenance: &[(String, String)],
    limit: Limit,
) -> Result<(bool, Option<Attempt>), String> {
    let mut attempt_notes = notes.to_vec();
    let mut attempt_provenance = provenance.to_vec();
    let Emitted {
        input, exceeded, ..
    } = input_at(
        cx,
        graph,
        op,
        &mut attempt_notes,
        &mut attempt_provenance,
        Emission::Within(limit),
    )?;
    if exceeded {
        return Ok((false, None));
    }
    let (schema, arguments, body, schema_notes) = input;
    // Measured before hoisting, which only makes it smaller.
    let schema = tidied(schema, cx.max_parameter_description_length);
    let fits = crate::json::compact_value_len(&schema) <= limit.budget;
    let made = (schema, arguments, body, schema_notes);
    Ok((fits, Some((made, attempt_notes, attempt_provenance))))
}

/// The full inputSchema of a relaxed tool and the `$defs` it refers to: emitted with shared
/// definitions (each converted once per thread, see [`FullDefs`]) when that comes out with
/// the published arguments; else whole, with its own `$defs` interned.
fn full_schema<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    full_defs: &mut FullDefs,
    op: &Operation<'_>,
    notes: &[String],
    provenance: &[(String, String)],
    (published, arguments, _, _): &Input,
) -> Result<(Value, Vec<(String, SchemaText)>), String> {
    let describe = cx.max_parameter_description_length;
    let flatten = arguments
        .bindings
        .iter()
        .any(|b| b.location == Location::BodyField);
    let emission = Emission::Shared { flatten };
    let full = input_at(
        cx,
        graph,
        op,
        &mut notes.to_vec(),
        &mut provenance.to_vec(),
        emission,
    )?;
    let full_schema = tidied(full.input.0, describe);
    if same_arguments(published, &full_schema) {
        let defs = full.reached.into_iter().map(|(id, name)| {
            let text = full_defs.entry(id).or_insert_with(|| {
                let mut body =
                    Session::shared(graph, cx.version, Direction::Input).emit_definition(id);
                tidy_schema(&mut body, describe);
                cx.shared.intern(SchemaText::new(&body))
            });
            (name, text.clone())
        });
        return Ok((full_schema, defs.collect()));
    }
    // The shared form did not come out with the published arguments (a body that flattens
    // one way only): the full schema with its own `$defs`, as an unlimited budget would
    // have published it. Rare, and never an argument left unchecked.
    let whole = input_at(
        cx,
        graph,
        op,
        &mut notes.to_vec(),
        &mut provenance.to_vec(),
        Emission::Whole,
    )?;
    let mut full_schema = tidied(whole.input.0, describe);
    let mut defs = Vec::new();
    if let Some(Value::Object(own)) = full_schema
        .as_object_mut()
        .and_then(|map| map.remove("$defs"))
    {
        defs.extend(
            own.into_iter()
                .map(|(name, body)| (name, cx.shared.intern(SchemaText::new(&body)))),
        );
    }
    Ok((full_schema, defs))
}

/// The arguments of a relaxed tool checked against their full schema too, by binding
/// index: those whose published schema differs from the full one, and those that refer to
/// `$defs` even when their own text is the same (what they refer to may have been relaxed).
fn full_arguments(
    arguments: &ArgumentMap,
    published: &Value,
    full_schema: &Value,
) -> Vec<(usize, SchemaText)> {
    let mut full_arguments = Vec::new();
    for (index, binding) in arguments.bindings.iter().enumerate() {
        let (Some(whole), Some(cut)) = (
            full_schema["properties"].get(&binding.argument),
            published["properties"].get(&binding.argument),
        ) else {
            continue;
        };
        if whole != cut || values::holds_ref(cut) {
            full_arguments.push((index, SchemaText::new(whole)));
        }
    }
    full_arguments
}

/// True when `full` has an argument for each of `published`'s.
fn same_arguments(published: &Value, full: &Value) -> bool {
    match (
        published["properties"].as_object(),
        full["properties"].as_object(),
    ) {
        (Some(published), Some(full)) => published.keys().all(|name| full.contains_key(name)),
        (published, _) => published.is_none(),
    }
}

/// How [`input_at`] emits: whole, within a [`Limit`], or whole with shared definitions
/// (no `$defs` of its own: see [`Session::shared`]).
#[derive(Clone, Copy)]
enum Emission {
    Whole,
    Within(Limit),
    /// `flatten`: whether the published schema flattened the body into arguments; the
    /// full one must have the same arguments, so it does the same.
    Shared {
        flatten: bool,
    },
}

/// One emission of the inputSchema.
struct Emitted {
    input: Input,
    /// It passed its budget: the result is not to be used.
    exceeded: bool,
    /// With [`Emission::Shared`]: the definitions the schema refers to, directly or not,
    /// with their shared names (empty otherwise).
    reached: Vec<(NodeId, String)>,
}

/// The body as it travels: the operation's request body, how it is given ([`BodyForm`]),
/// and its declared schema with `$ref`s at its root followed.
type TravellingBody<'o, 'a> = (&'o RequestBody<'a>, BodyForm, Option<Value>);

/// The arguments of one inputSchema as they are claimed, body first, then parameters,
/// then file names.
#[derive(Default)]
struct Claimed {
    names: ArgumentNames,
    /// The body's arguments (its fields, or the whole `body`), in body order.
    properties: Map<String, Value>,
    /// Every required argument, in the order claimed (see [`order_required`]).
    required: Vec<Value>,
    /// The parameters' bindings, and the fixed query parameters' ahead of them.
    bindings: Vec<Binding>,
    /// The body's bindings, file names included.
    body_bindings: Vec<Binding>,
    /// Multipart file properties: (argument, wire name), in body order.
    file_fields: Vec<(String, String)>,
}

/// One emission of the inputSchema: the body's arguments, then the parameters', then the
/// path suffix's fixed query parameters and the file names, in one object schema.
fn input_at<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    notes: &mut Vec<String>,
    provenance: &mut Vec<(String, String)>,
    emission: Emission,
) -> Result<Emitted, String> {
    let body = travelling_body(graph, op, notes);
    let xml_root = body.as_ref().and_then(|body| xml_root_of(graph, body));
    let mut session = input_session(cx, graph, op, body.as_ref(), emission)?;
    let mut claimed = Claimed::default();
    // The body claims its names first: its properties are the API's own vocabulary, so on
    // a clash the parameter is the one renamed (`id` and `id__query`).
    let body_plan = body.map(|(body, form, declared)| {
        let schema = body_schema(&mut session, body, &form, xml_root, declared.as_ref());
        claim_body(&mut session, &mut claimed, body, form, schema, emission)
    });
    let param_properties = claim_parameters(&mut session, op, &mut claimed, notes, provenance);
    // The suffix's pairs no declared query parameter carries are sent with every call, as
    // hidden arguments with fixed values, ahead of the declared ones (where AWS puts them).
    let fixed = fixed_query(op, &mut claimed.names, notes, provenance);
    claimed.bindings.splice(0..0, fixed);
    let filename_arguments = match &body_plan {
        Some(plan) => claim_file_names(&mut claimed, plan),
        None => BTreeMap::new(),
    };
    let ordered = ordered_properties(param_properties, claimed.properties, filename_arguments);
    let mut bindings = claimed.bindings;
    bindings.extend(claimed.body_bindings);
    let required = order_required(claimed.required, &bindings);
    let defs = session.defs();
    let exceeded = session.exceeded();
    let reached = match emission {
        Emission::Shared { .. } => session.reached(),
        Emission::Whole | Emission::Within(_) => Vec::new(),
    };
    let schema_notes = session.into_notes();
    let mut schema = object_schema(ordered, required);
    if let Some(defs) = defs {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Emitted {
        input: (
            Value::Object(schema),
            ArgumentMap { bindings },
            body_plan,
            schema_notes,
        ),
        exceeded,
        reached,
    })
}

/// How the body travels, which decides whether its schema is translated at all: a body
/// sent as a raw document or as bytes is one string argument, whatever the schema says.
/// `None` when the operation has no body or restmcp cannot send it (a note says why).
fn travelling_body<'o, 'a>(
    graph: &mut RefGraph<'_>,
    op: &'o Operation<'a>,
    notes: &mut Vec<String>,
) -> Option<TravellingBody<'o, 'a>> {
    op.request_body.as_ref().and_then(|body| {
        let declared = body.schema.as_ref().map(|piece| followed(graph, piece));
        body_form(body, declared.as_ref(), notes).map(|form| (body, form, declared))
    })
}

/// The root element's name of an XML body sent as a document, when its schema names one.
fn xml_root_of(
    graph: &mut RefGraph<'_>,
    (body, form, _): &TravellingBody<'_, '_>,
) -> Option<String> {
    match form {
        BodyForm::Raw { binary: false } if media::is_xml(&body.media_type) => body
            .schema
            .as_ref()
            .and_then(|piece| xml_root(graph, piece)),
        _ => None,
    }
}

/// A translation session for the inputSchema: the parameters' schemas and a body's given
/// by its schema analyzed, and the emission begun (within its limit, if it has one).
fn input_session<'d, 'g>(
    cx: &Context<'d>,
    graph: &'g mut RefGraph<'d>,
    op: &Operation<'_>,
    body: Option<&TravellingBody<'_, '_>>,
    emission: Emission,
) -> Result<Session<'d, 'g>, String> {
    let mut session = match emission {
        Emission::Shared { .. } => Session::shared(graph, cx.version, Direction::Input),
        _ => Session::new(graph, cx.version, Direction::Input),
    };
    for param in &op.parameters {
        session.analyze(&param.schema)?;
    }
    if let Some((body, BodyForm::Schema, _)) = body
        && let Some(schema) = &body.schema
    {
        session.analyze(schema)?;
    }
    session.begin(match emission {
        Emission::Within(limit) => Some(limit),
        Emission::Whole | Emission::Shared { .. } => None,
    });
    Ok(session)
}

/// The body's schema: translated from its own, a default for its media type when it has
/// none, or one string when it travels raw.
fn body_schema(
    session: &mut Session<'_, '_>,
    body: &RequestBody<'_>,
    form: &BodyForm,
    xml_root: Option<String>,
    declared: Option<&Value>,
) -> Value {
    match (form, &body.schema) {
        (BodyForm::Schema, Some(piece)) => {
            let from = session.notes.invalid.len();
            let schema = session.emit_root(piece);
            session.label_notes(from, "request body");
            schema
        }
        (BodyForm::Schema, None) => default_body_schema(&body.media_type),
        (BodyForm::Raw { binary }, _) => raw_body_schema(body, *binary, xml_root, declared),
    }
}

/// Claims the body's arguments, its fields when it flattens (never in a raw body, and in
/// a shared emission only as the published one did), else the one `body`; returns how
/// the body is sent.
fn claim_body(
    session: &mut Session<'_, '_>,
    claimed: &mut Claimed,
    body: &RequestBody<'_>,
    form: BodyForm,
    schema: Value,
    emission: Emission,
) -> BodyPlan {
    let multipart = media::classify(&body.media_type) == media::MediaKind::Multipart;
    let mut files = BTreeMap::new();
    let flattened = match (&form, emission) {
        (BodyForm::Raw { .. }, _) | (BodyForm::Schema, Emission::Shared { flatten: false }) => None,
        // Its parts are references here, where the published schema had them inline.
        (BodyForm::Schema, Emission::Shared { flatten: true }) => {
            flatten(&session.expand_parts(&schema))
        }
        (BodyForm::Schema, _) => flatten(&schema),
    };
    let flat = flattened.is_some();
    match flattened {
        Some(fields) => claim_body_fields(claimed, body, fields, multipart, &mut files),
        None => claim_whole_body(claimed, body, form, schema, multipart, &mut files),
    }
    BodyPlan {
        media_type: body.media_type.clone(),
        required: body.required,
        flattened: flat,
        encoding: body.encoding.clone(),
        files,
    }
}

/// Claims one argument per field of a flattened body; a multipart field that is a file
/// goes into `files` (by wire name) and [`Claimed::file_fields`].
fn claim_body_fields(
    claimed: &mut Claimed,
    body: &RequestBody<'_>,
    (fields, field_required): Fields,
    multipart: bool,
    files: &mut BTreeMap<String, FilePart>,
) {
    for (wire, mut field_schema) in fields {
        let argument = claimed.names.claim(&argument_name(&wire), "body");
        // The body's own `required` holds even when the body is optional
        // (`requestBody.required` left out, as in Twilio's and Box's descriptions): a body
        // sent without those properties is invalid, and with any of them required the
        // body is never empty.
        let is_required = field_required.contains(&wire);
        if is_required {
            claimed.required.push(json!(argument));
        }
        let encoding = body.encoding.get(&wire);
        let file = multipart
            .then(|| file_part(&mut field_schema, encoding))
            .flatten();
        let binary = match &file {
            Some(file) => file.content == FileContent::Base64,
            None => !multipart && is_binary(&field_schema),
        };
        if let Some(file) = file {
            files.insert(wire.clone(), file);
            claimed.file_fields.push((argument.clone(), wire.clone()));
        }
        claimed.body_bindings.push(Binding {
            style: encoding.map(|e| e.style).unwrap_or(Style::Form),
            explode: encoding.map(|e| e.explode).unwrap_or(true),
            allow_reserved: encoding.is_some_and(|e| e.allow_reserved),
            content_type: encoding.and_then(|e| e.content_type.clone()),
            required: is_required,
            binary,
            ..Binding::new(argument.clone(), Location::BodyField, wire.clone())
        });
        claimed.properties.insert(argument, field_schema);
    }
}

/// Claims the one `body` argument for a body that does not flatten; a multipart body's
/// declared file properties go into `files`.
fn claim_whole_body(
    claimed: &mut Claimed,
    body: &RequestBody<'_>,
    form: BodyForm,
    mut schema: Value,
    multipart: bool,
    files: &mut BTreeMap<String, FilePart>,
) {
    let argument = claimed.names.claim("body", "body");
    if multipart {
        // The parts of a whole multipart body are the members of one object: its declared
        // file properties are sent as files, named after them.
        if let Some(Value::Object(members)) = schema.get_mut("properties") {
            for (wire, member) in members.iter_mut() {
                if let Some(file) = file_part(member, body.encoding.get(wire)) {
                    describe_file(member, &file, wire, None);
                    files.insert(wire.clone(), file);
                }
            }
        }
    }
    let binary = match form {
        BodyForm::Raw { binary } => binary,
        BodyForm::Schema => !multipart && is_binary(&schema),
    };
    claimed
        .properties
        .insert(argument.clone(), describe_body(schema, body));
    if body.required {
        claimed.required.push(json!(argument));
    }
    claimed.body_bindings.push(Binding {
        content_type: Some(body.media_type.clone()),
        required: body.required,
        binary,
        ..Binding::new(argument, Location::Body, "")
    });
}

/// Claims one argument per parameter, in location order (path, query, header, cookie),
/// renamed when the body took its name (with a note), filled in where restmcp can (see
/// [`filled_in`]); returns their schemas in that order.
fn claim_parameters(
    session: &mut Session<'_, '_>,
    op: &Operation<'_>,
    claimed: &mut Claimed,
    notes: &mut Vec<String>,
    provenance: &mut Vec<(String, String)>,
) -> Vec<(String, Value)> {
    let mut params: Vec<&Parameter<'_>> = op.parameters.iter().collect();
    params.sort_by_key(|p| p.location);
    let mut param_properties = Vec::new();
    for param in params {
        let wanted = argument_name(&param.name);
        let argument = claimed.names.claim(&wanted, param.location.as_str());
        if argument != wanted {
            notes.push(format!(
                "{} parameter \"{}\" is argument \"{argument}\" (\"{wanted}\" is taken)",
                param.location.as_str(),
                param.name
            ));
        }
        let mut schema = parameter_schema(session, param, &argument);
        let default = filled_in(op, param, &schema, notes);
        if let Some((value, from_suffix)) = &default {
            if let Value::Object(map) = &mut schema {
                map.insert("default".into(), value.clone());
            }
            if *from_suffix && let Some(suffix) = &op.suffix {
                provenance.push((
                    format!("arguments.{argument}"),
                    format!(
                        "spec (parameter; its default is from the path suffix \"#{}\")",
                        suffix.text
                    ),
                ));
            }
        }
        // A value restmcp fills in need not come from the model.
        if param.required && default.is_none() {
            claimed.required.push(json!(argument));
        }
        claimed.bindings.push(Binding {
            argument: argument.clone(),
            location: param.location.into(),
            wire_name: param.name.clone(),
            style: param.style,
            explode: param.explode,
            allow_reserved: param.allow_reserved,
            content_type: param.content_type.clone(),
            required: param.required,
            binary: is_binary(&schema),
            fixed: None,
            default: default.map(|(value, _)| value),
        });
        param_properties.push((argument, schema));
    }
    param_properties
}

/// Every file part may be named by the model: claims an optional `{argument}_filename`
/// per file field, after all the operation's own names so that it never takes one of
/// them, and describes the file with it. Returns (name, schema) by file argument.
fn claim_file_names(claimed: &mut Claimed, plan: &BodyPlan) -> BTreeMap<String, (String, Value)> {
    let mut filename_arguments = BTreeMap::new();
    for (argument, wire) in &claimed.file_fields {
        let Some(file) = plan.files.get(wire) else {
            continue;
        };
        let name = claimed
            .names
            .claim(&format!("{argument}_filename"), "filename");
        if let Some(schema) = claimed.properties.get_mut(argument) {
            describe_file(schema, file, wire, Some(&name));
        }
        filename_arguments.insert(
            argument.clone(),
            (name.clone(), filename_schema(file, argument, wire)),
        );
        claimed
            .body_bindings
            .push(Binding::file_name(name, wire.clone()));
    }
    filename_arguments
}

/// Parameters first in the schema (path, query, header, cookie), then the body: the order
/// a person reads an HTTP request in. A file's name follows the file.
fn ordered_properties(
    param_properties: Vec<(String, Value)>,
    body_properties: Map<String, Value>,
    mut filename_arguments: BTreeMap<String, (String, Value)>,
) -> Map<String, Value> {
    let mut ordered = Map::new();
    for (argument, schema) in param_properties {
        ordered.insert(argument, schema);
    }
    for (argument, schema) in body_properties {
        let filename = filename_arguments.remove(&argument);
        ordered.insert(argument, schema);
        if let Some((name, schema)) = filename {
            ordered.insert(name, schema);
        }
    }
    ordered
}

/// `required` in binding order, so it reads like the properties.
fn order_required(required: Vec<Value>, bindings: &[Binding]) -> Vec<Value> {
    bindings
        .iter()
        .filter(|b| required.iter().any(|r| r.as_str() == Some(&b.argument)))
        .map(|b| json!(b.argument))
        .collect()
}

fn parameter_schema(session: &mut Session<'_, '_>, param: &Parameter<'_>, argument: &str) -> Value {
    let from = session.notes.invalid.len();
    let mut schema = match session.emit_root(&param.schema) {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        other => other,
    };
    session.label_notes(from, &format!("argument \"{argument}\""));
    if let Value::Object(map) = &mut schema {
        if let Some(description) = &param.description {
            map.insert("description".into(), json!(description));
        }
        if param.deprecated {
            map.insert("deprecated".into(), json!(true));
        }
        if let Some(example) = &param.example {
            map.entry("examples")
                .or_insert_with(|| Value::Array(vec![example.clone()]));
        }
    }
    schema
}

/// The value restmcp sends for a parameter the model leaves out, and whether it came from
/// the path suffix: the suffix's value for a query parameter it names
/// (`#Action=DescribeLoadBalancers` and a declared `Action`), else the only value a
/// required parameter can take (a one-member `enum`, or `const`: AWS declares `Action` and
/// `Version` so).
fn filled_in(
    op: &Operation<'_>,
    param: &Parameter<'_>,
    schema: &Value,
    notes: &mut Vec<String>,
) -> Option<(Value, bool)> {
    let from_suffix = op.suffix.as_ref().and_then(|suffix| {
        suffix
            .pairs
            .iter()
            .find(|(name, _)| names_parameter(name, param))
    });
    if let Some((name, text)) = from_suffix {
        let value = typed(text, schema);
        let allowed = match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(members)), _) => members.contains(&value),
            (_, Some(only)) => *only == value,
            _ => true,
        };
        if allowed {
            return Some((value, true));
        }
        notes.push(format!(
            "path suffix sets {name}={text}, which {} parameter \"{}\" does not allow; not filled in",
            param.location.as_str(),
            param.name
        ));
        return None;
    }
    if !param.required {
        return None;
    }
    match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(members)), _) if members.len() == 1 && !members[0].is_null() => {
            Some((members[0].clone(), false))
        }
        (None, Some(only)) if !only.is_null() => Some((only.clone(), false)),
        _ => None,
    }
}

/// Whether a suffix pair's `name` names `param`: a header's name in any letter case (HTTP
/// field names are case-insensitive; AWS writes `X-Amz-Target` in both places), any other
/// exactly.
fn names_parameter(name: &str, param: &Parameter<'_>) -> bool {
    match param.location {
        ParamLocation::Header => name.eq_ignore_ascii_case(&param.name),
        _ => name == param.name,
    }
}

/// A suffix value as the parameter's schema types it: `5` is a number for an integer
/// parameter (the query text is the same either way; the schema's `default` reads right).
fn typed(text: &str, schema: &Value) -> Value {
    let parsed = match schema.get("type").and_then(Value::as_str) {
        Some("integer") => text.parse::<i64>().ok().map(Value::from),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        Some("boolean") => text.parse::<bool>().ok().map(Value::Bool),
        _ => None,
    };
    parsed.unwrap_or_else(|| Value::String(text.to_string()))
}

/// Bindings for the path suffix's `name=value` pairs that no declared parameter carries
/// (wherever it is: a pair naming a header, path or cookie parameter fills that one, see
/// [`filled_in`], and is not sent as a query parameter too): hidden from the model, sent
/// with every call. Notes say what the suffix did.
fn fixed_query(
    op: &Operation<'_>,
    names: &mut ArgumentNames,
    notes: &mut Vec<String>,
    provenance: &mut Vec<(String, String)>,
) -> Vec<Binding> {
    let Some(suffix) = &op.suffix else {
        return Vec::new();
    };
    let mut bindings: Vec<Binding> = Vec::new();
    let mut described = Vec::new();
    for (name, value) in &suffix.pairs {
        if let Some(param) = op.parameters.iter().find(|p| names_parameter(name, p)) {
            described.push(format!(
                "{name}={value} is the default of {} parameter \"{}\"",
                param.location.as_str(),
                param.name
            ));
            continue;
        }
        if bindings.iter().any(|b| b.wire_name == *name) {
            continue;
        }
        let argument = names.claim(&argument_name(name), "query");
        provenance.push((
            format!("arguments.{argument}"),
            format!("spec (path suffix \"#{}\")", suffix.text),
        ));
        described.push(format!("{name}={value} is sent as a fixed query parameter"));
        bindings.push(Binding {
            required: true,
            fixed: Some(FixedValue::Literal(Value::String(value.clone()))),
            ..Binding::new(argument, Location::Query, name.clone())
        });
    }
    let mut note = format!(
        "path suffix \"#{}\" is not part of the request path (requests go to {})",
        suffix.text,
        op.http_path()
    );
    if described.is_empty() {
        note.push_str(": it only names the operation");
    } else {
        note.push_str(": ");
        note.push_str(&described.join("; "));
    }
    notes.push(note);
    bindings
}

/// The outputSchema, its plan, what translation changed, and the depth below which it was
/// relaxed to fit its budget (`None`: not relaxed).
type Output = (Value, OutputPlan, Notes, Option<usize>);

/// The first 2xx response with a JSON schema becomes the outputSchema; a root that is not
/// an object is wrapped as `{"result": …}`, because MCP requires an object there.
fn output<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
) -> Result<Option<Output>, String> {
    let Some((media_type, piece)) = op.responses.iter().find_map(|r| {
        if !is_success(&r.status) {
            return None;
        }
        let (media_type, schema) = r.json.as_ref()?;
        Some((media_type.clone(), schema.as_ref()?))
    }) else {
        return Ok(None);
    };
    let mut session = Session::new(graph, cx.version, Direction::Output);
    session.analyze(piece)?;
    // Output schemas are lenient, so one too large for its budget is relaxed rather than
    // refused: levels below a cut-off depth accept anything. The deepest cut-off that fits
    // is found by binary search (size only grows with depth).
    let budget = cx.max_output_schema_bytes;
    let mut attempt = |max_depth: Option<usize>| {
        let limit = Limit {
            max_depth: max_depth.unwrap_or(usize::MAX),
            budget,
        };
        session.begin((budget > 0).then_some(limit));
        let root = session.emit_root(piece);
        let defs = session.defs();
        (
            !session.exceeded(),
            (root, defs, session.notes.clone(), max_depth),
        )
    };
    let (fits, mut chosen) = attempt(None);
    if !fits && budget > 0 {
        const CUT_OFFS: [usize; 7] = [8, 6, 4, 3, 2, 1, 0];
        let (mut lo, mut hi) = (0, CUT_OFFS.len());
        let mut best = None;
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (fits, result) = attempt(Some(CUT_OFFS[mid]));
            if fits {
                best = Some(result);
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        chosen = match best {
            Some(result) => result,
            None => attempt(Some(0)).1,
        };
    }
    let (root, defs, mut notes, max_depth) = chosen;
    if let Some(depth) = max_depth {
        notes.invalid.push(format!(
            "outputSchema relaxed below depth {depth} to stay within {budget} bytes"
        ));
    }
    let is_object = root.get("type").and_then(Value::as_str) == Some("object");
    let mut schema = if is_object {
        root
    } else {
        json!({"type": "object", "properties": {"result": root}})
    };
    if let (Some(defs), Value::Object(map)) = (defs, &mut schema) {
        map.insert("$defs".into(), Value::Object(defs));
    }
    Ok(Some((
        schema,
        OutputPlan {
            media_type,
            wrapped: !is_object,
        },
        notes,
        max_depth,
    )))
}

/// Depth below which a mock response schema accepts anything when the tool has no
/// outputSchema to follow (see [`mock_answer`]).
const MOCK_SCHEMA_DEPTH: usize = 8;

/// What the mock upstream answers: the 2xx response the outputSchema comes from (else the
/// first documented 2xx response, else `default`), with the spec's example, or a value generated from the response schema as
/// the spec states it (strict, unlike the lenient outputSchema).
///
/// The response schema is relaxed below the same depth as the outputSchema (`relaxed_below`),
/// so that generated values have the shape the outputSchema checks, and so that Stripe's
/// fully expanded response schemas (megabytes per operation) are not spelled out.
fn mock_answer<'d>(
    cx: &Context<'d>,
    graph: &mut RefGraph<'d>,
    op: &Operation<'_>,
    relaxed_below: Option<usize>,
) -> MockAnswer {
    // The success the outputSchema describes (a mock answer in another media type would be
    // an error result for such a tool), else the first success. No success documented:
    // `default` describes the usual answer; error responses are not what a mock should
    // give a well-formed request.
    let response = op
        .responses
        .iter()
        .find(|r| is_success(&r.status) && r.json.as_ref().is_some_and(|(_, s)| s.is_some()))
        .or_else(|| op.responses.iter().find(|r| is_success(&r.status)))
        .or_else(|| {
            op.responses
                .iter()
                .find(|r| r.status.eq_ignore_ascii_case("default"))
        });
    let status = response
        .and_then(|r| r.status.parse::<u16>().ok())
        .filter(|code| (200..300).contains(code))
        .unwrap_or(200);
    let Some(response) = response else {
        return MockAnswer {
            status,
            media_type: None,
            body: Vec::new(),
            source: MockSource::Empty,
        };
    };
    if let Some((media_type, schema)) = &response.json {
        let strict_schema = schema.as_ref().and_then(|piece| {
            let mut session = Session::new(graph, cx.version, Direction::Response);
            session.analyze(piece).ok()?;
            session.begin(relaxed_below.map(|max_depth| Limit {
                max_depth,
                budget: usize::MAX,
            }));
            let mut root = session.emit_root(piece);
            if let (Some(defs), Value::Object(map)) = (session.defs(), &mut root) {
                map.insert("$defs".into(), Value::Object(defs));
            }
            Some(root)
        });
        let (value, source) = match (strict_schema, &response.example) {
            // The generator returns a valid example as it is, and replaces one the schema
            // refutes (GitHub documents `null` for object responses, for one).
            (Some(mut root), Some(example)) => {
                if let Value::Object(map) = &mut root {
                    map.insert("examples".into(), json!([example]));
                }
                let value = crate::schema::example::example(&root);
                let source = if value.as_ref() == Some(example) {
                    MockSource::Example
                } else {
                    MockSource::Generated
                };
                (value, source)
            }
            (Some(root), None) => (
                crate::schema::example::example(&root),
                MockSource::Generated,
            ),
            (None, Some(example)) => (Some(example.clone()), MockSource::Example),
            (None, None) => (None, MockSource::Generated),
        };
        let value = value.unwrap_or_else(|| json!({}));
        return MockAnswer {
            status,
            media_type: Some(media_type.clone()),
            body: serde_json::to_vec(&value).unwrap_or_default(),
            source,
        };
    }
    match response.media_types.first() {
        Some(media_type) => {
            let body = if media::classify(media_type) == media::MediaKind::Other
                && !media_type.starts_with("text/")
            {
                Vec::new()
            } else {
                b"example".to_vec()
            };
            MockAnswer {
                status,
                media_type: Some(media_type.clone()),
                body,
                source: MockSource::Generated,
            }
        }
        None => MockAnswer {
            status,
            media_type: None,
            body: Vec::new(),
            source: MockSource::Empty,
        },
    }
}

/// The `Accept` header of the tool's requests, from the media types the operation documents
/// for its answers: its 2xx and `default` responses' (in that order), and Swagger 2.0's
/// `produces` (see [`media::accept`]).
fn accept(op: &Operation<'_>) -> String {
    let answers = op
        .responses
        .iter()
        .filter(|r| is_success(&r.status) || r.status.eq_ignore_ascii_case("default"))
        .flat_map(|r| r.media_types.iter());
    media::accept(answers.chain(op.produces.iter()).map(String::as_str))
}

fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The summary as plain text on one line; none when nothing readable is left of it.
fn title(op: &Operation<'_>) -> Option<String> {
    op.summary
        .as_deref()
        .map(|summary| single_line(&clean(summary)))
        .filter(|title| !title.is_empty())
}

/// Summary and description as plain text, deprecation marked, cut at a word boundary to
/// the configured length (0 = no limit); never empty: `METHOD /path` when the spec says
/// nothing readable (a description made only of markup cleans to nothing).
fn description(op: &Operation<'_>, max_len: usize) -> String {
    let cleaned =
        |text: &Option<String>| text.as_deref().map(clean).filter(|text| !text.is_empty());
    let mut text = match (cleaned(&op.summary), cleaned(&op.description)) {
        (Some(summary), Some(description)) if description.starts_with(summary.as_str()) => {
            description
        }
        (Some(summary), Some(description)) => format!("{summary}\n\n{description}"),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => op.label(),
    };
    if op.deprecated {
        text = format!("[DEPRECATED] {text}");
    }
    truncate_text(&text, max_len)
}
