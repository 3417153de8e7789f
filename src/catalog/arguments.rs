//! The argument map: for each tool, where every argument goes on the wire; and the
//! inputSchema object those arguments are the properties of ([`object_schema`]).
//!
//! It is exact and reversible: each argument of the input schema has one binding, each
//! binding one argument, and no two bindings share a location and wire name. The
//! dispatcher builds requests from it; it never appears in a tool schema. A binding hidden
//! from the model carries the [`FixedValue`] the server sends in its place.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::spec::{Encoding, ParamLocation, Style};

/// Where an argument travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
    /// One property of an object body whose properties are flattened into the arguments.
    BodyField,
    /// The whole request body, as the argument `body`.
    Body,
    /// The file name of a multipart file part: `wire_name` is the file property's wire
    /// name. An argument restmcp adds (`photo_filename`), not a part of its own.
    FileName,
}

impl Location {
    /// The place as messages name it: `path`, `query`, `header`, `cookie`, `body`,
    /// `file name`.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::BodyField | Location::Body => "body",
            Location::FileName => "file name",
        }
    }
}

impl From<ParamLocation> for Location {
    fn from(location: ParamLocation) -> Self {
        match location {
            ParamLocation::Path => Location::Path,
            ParamLocation::Query => Location::Query,
            ParamLocation::Header => Location::Header,
            ParamLocation::Cookie => Location::Cookie,
        }
    }
}

/// One argument's destination.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    /// The property name in the input schema.
    pub argument: String,
    pub location: Location,
    /// The name on the wire (parameter or body property name); empty for a whole body.
    pub wire_name: String,
    pub style: Style,
    pub explode: bool,
    pub allow_reserved: bool,
    /// Parameters declared with `content`: serialize the value in this media type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The operation requires it (an overlay may still make the argument optional for
    /// the model: the input schema's `required` is what the model sees).
    pub required: bool,
    /// The value is file content, given as base64 or a `data:` URI (schema `format: binary`
    /// or `contentEncoding: base64`), and is sent as raw bytes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    /// Set by an overlay, or for a path suffix's query parameter no parameter declares: the
    /// argument is hidden from the model and this value is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<FixedValue>,
    /// Sent when the model leaves the argument out: set by an overlay, or by synthesis for
    /// a parameter the path suffix gives a value or that can take only one value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
}

impl Binding {
    /// An optional argument sent at `location` under `wire_name`, serialized as OpenAPI
    /// serializes a parameter there by default (simple and not exploded in a path or a
    /// header, form and exploded anywhere else), with no content type, no fixed value and no
    /// default.
    pub fn new(
        argument: impl Into<String>,
        location: Location,
        wire_name: impl Into<String>,
    ) -> Binding {
        let simple = matches!(location, Location::Path | Location::Header);
        Binding {
            argument: argument.into(),
            location,
            wire_name: wire_name.into(),
            style: if simple { Style::Simple } else { Style::Form },
            explode: !simple,
            allow_reserved: false,
            content_type: None,
            required: false,
            binary: false,
            fixed: None,
            default: None,
        }
    }

    /// An optional argument sent as the header `wire_name` (see [`Binding::new`]).
    pub fn header(argument: impl Into<String>, wire_name: impl Into<String>) -> Binding {
        Binding::new(argument, Location::Header, wire_name)
    }

    /// The optional file name of the multipart file part `wire_name` (see
    /// [`Location::FileName`]).
    pub fn file_name(argument: impl Into<String>, wire_name: impl Into<String>) -> Binding {
        Binding::new(argument, Location::FileName, wire_name)
    }
}

/// How the request body is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BodyPlan {
    pub media_type: String,
    pub required: bool,
    /// True when the body's properties are individual arguments ([`Location::BodyField`]).
    pub flattened: bool,
    /// Per-property encoding of form and multipart bodies.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub encoding: BTreeMap<String, Encoding>,
    /// The properties of a multipart body sent as file parts, by wire name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, FilePart>,
}

/// How the model gives a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileContent {
    /// Base64 (standard or URL-safe) or a `data:` URI; the decoded bytes are sent.
    Base64,
    /// Text, sent as it is (UTF-8).
    Text,
    /// Bytes the description declares encoded in the part itself (`format: byte`, a
    /// `contentEncoding`): the encoded text, sent as it is.
    Encoded,
}

/// One multipart property sent as a file part (`Content-Disposition: form-data;
/// name="…"; filename="…"` and a `Content-Type`). An array property sends one part per
/// item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilePart {
    pub content: FileContent,
    /// The media types the description allows for the part: the encoding object's
    /// `contentType` (a type, a range such as `image/*`, or a comma-separated list), else
    /// the schema's `contentMediaType`. `None`: any (`application/octet-stream` unless a
    /// `data:` URI names one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_types: Option<String>,
    /// The property is an array of files.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub many: bool,
}

/// The inputSchema of a tool whose arguments are `properties`: an object of exactly those
/// properties, `required` naming the ones the model must give (left out when none).
pub fn object_schema(properties: Map<String, Value>, required: Vec<Value>) -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".into(), Value::from("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    schema
}

/// Every argument of one tool, in input-schema order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ArgumentMap {
    pub bindings: Vec<Binding>,
}

impl ArgumentMap {
    pub fn get(&self, argument: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.argument == argument)
    }

    /// The argument sent at `location` under `wire_name`: the reverse direction.
    pub fn by_wire(&self, location: Location, wire_name: &str) -> Option<&Binding> {
        self.bindings
            .iter()
            .find(|b| b.location == location && b.wire_name == wire_name)
    }

    /// Arguments whose name differs from their wire name, for `restmcp check`.
    pub fn renamed(&self) -> impl Iterator<Item = &Binding> {
        self.bindings.iter().filter(|b| {
            !matches!(b.location, Location::Body | Location::FileName) && b.argument != b.wire_name
        })
    }
}

/// A value the server sends for a hidden argument: an overlay's `value` or `value_env`,
/// or a fixed query parameter of a path suffix (`#Action=DescribeRegions`).
#[derive(Clone, PartialEq, Eq)]
pub enum FixedValue {
    Literal(Value),
    /// Read from the environment when the tool set was loaded; never shown.
    Env {
        name: String,
        value: String,
    },
}

impl FixedValue {
    pub fn value(&self) -> Value {
        match self {
            FixedValue::Literal(value) => value.clone(),
            FixedValue::Env { value, .. } => Value::String(value.clone()),
        }
    }

    /// The secret text to redact from results, if the value came from the environment.
    pub fn secret(&self) -> Option<&str> {
        match self {
            FixedValue::Env { value, .. } => Some(value),
            FixedValue::Literal(_) => None,
        }
    }
}

impl fmt::Debug for FixedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixedValue::Literal(value) => write!(f, "Literal({value})"),
            FixedValue::Env { name, .. } => write!(f, "Env(${name}, redacted)"),
        }
    }
}

impl serde::Serialize for FixedValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            FixedValue::Literal(value) => value.serialize(serializer),
            FixedValue::Env { name, .. } => serializer.serialize_str(&format!("${name}")),
        }
    }
}
