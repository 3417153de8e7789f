//! openai-strict's size limits, enforced on a converted schema as a whole.
//!
//! Structured Outputs caps a schema at 1,000 enum values, 15,000 characters for one string
//! enum of more than 250 values, 120,000 characters of property names, definition names,
//! enum and const values, and 5,000 object properties. These count the whole document
//! (each definition once), so they are checked after conversion: enums are dropped first
//! (largest first; the property keeps its type, its values are no longer listed), then
//! properties past the 5,000th. Each drop is noted. (Nesting depth depends on the path and
//! is handled during conversion.)

use serde_json::{Map, Value};

use super::marks::MARK_OPTIONAL;

const MAX_ENUM_VALUES: usize = 1_000;
const LARGE_ENUM: usize = 250;
const MAX_LARGE_ENUM_CHARS: usize = 15_000;
const MAX_CHARS: usize = 120_000;
const MAX_PROPERTIES: usize = 5_000;

/// One `enum` of the schema: where (a JSON pointer to its schema), a path for notes, and
/// its size.
struct Listed {
    pointer: String,
    label: String,
    values: usize,
    chars: usize,
}

pub(super) fn enforce(schema: &mut Value, notes: &mut Vec<String>) {
    let mut enums = Vec::new();
    let mut slots = Vec::new();
    let mut names_chars = 0;
    collect(schema, "", "", &mut enums, &mut slots, &mut names_chars);
    let mut kept: Vec<Listed> = Vec::new();
    for listed in enums {
        if listed.values > LARGE_ENUM && listed.chars > MAX_LARGE_ENUM_CHARS {
            drop_enum(
                schema,
                &listed,
                "openai-strict allows 15,000 characters for an enum of more than 250 values",
                notes,
            );
        } else {
            kept.push(listed);
        }
    }
    kept.sort_by(|a, b| b.values.cmp(&a.values).then(a.pointer.cmp(&b.pointer)));
    let mut total: usize = kept.iter().map(|l| l.values).sum();
    let mut chars: usize = names_chars + kept.iter().map(|l| l.chars).sum::<usize>();
    let mut remaining = Vec::new();
    for listed in kept {
        if total > MAX_ENUM_VALUES {
            total -= listed.values;
            chars -= listed.chars;
            drop_enum(
                schema,
                &listed,
                "openai-strict allows 1,000 enum values per schema",
                notes,
            );
        } else {
            remaining.push(listed);
        }
    }
    remaining.sort_by(|a, b| b.chars.cmp(&a.chars).then(a.pointer.cmp(&b.pointer)));
    for listed in remaining {
        if chars <= MAX_CHARS {
            break;
        }
        chars -= listed.chars;
        drop_enum(
            schema,
            &listed,
            "openai-strict allows 120,000 characters of names and values per schema",
            notes,
        );
    }
    if chars > MAX_CHARS {
        notes.push(format!(
            "the schema's property and definition names take {chars} characters, past openai-strict's 120,000; it will be rejected"
        ));
    }
    if slots.len() > MAX_PROPERTIES {
        let cut = slots.split_off(MAX_PROPERTIES);
        let shown: Vec<String> = cut
            .iter()
            .take(10)
            .map(|(_, l, _)| format!("`{l}`"))
            .collect();
        notes.push(format!(
            "{} properties past openai-strict's 5,000 per schema are left out: {}{}",
            cut.len(),
            shown.join(", "),
            if cut.len() > 10 { ", …" } else { "" }
        ));
        for (pointer, _, name) in cut.iter().rev() {
            if let Some(Value::Object(node)) = schema.pointer_mut(pointer) {
                remove_property(node, name);
            }
        }
    }
}

fn drop_enum(schema: &mut Value, listed: &Listed, why: &str, notes: &mut Vec<String>) {
    if let Some(Value::Object(node)) = schema.pointer_mut(&listed.pointer) {
        node.remove("enum");
    }
    notes.push(format!(
        "{}: its {} enum values are not listed ({why}); any value of its type is accepted",
        label(&listed.label),
        listed.values
    ));
}

fn label(path: &str) -> String {
    if path.is_empty() {
        "the arguments".into()
    } else {
        format!("`{path}`")
    }
}

fn remove_property(node: &mut Map<String, Value>, name: &str) {
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        properties.remove(name);
    }
    for key in ["required", MARK_OPTIONAL] {
        if let Some(Value::Array(names)) = node.get_mut(key) {
            names.retain(|n| n != name);
        }
    }
    if node
        .get(MARK_OPTIONAL)
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        node.remove(MARK_OPTIONAL);
    }
}

use crate::json::escape_token as escape;

/// Walks every schema of the document (root and `$defs`, each once).
fn collect(
    schema: &Value,
    pointer: &str,
    path: &str,
    enums: &mut Vec<Listed>,
    slots: &mut Vec<(String, String, String)>,
    chars: &mut usize,
) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(values)) = map.get("enum") {
        enums.push(Listed {
            pointer: pointer.to_string(),
            label: path.to_string(),
            values: values.len(),
            chars: values.iter().filter_map(Value::as_str).map(str::len).sum(),
        });
    }
    if let Some(Value::String(c)) = map.get("const") {
        *chars += c.len();
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (name, child) in properties {
            *chars += name.len();
            let child_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            slots.push((pointer.to_string(), child_path.clone(), name.clone()));
            let child_pointer = format!("{pointer}/properties/{}", escape(name));
            collect(child, &child_pointer, &child_path, enums, slots, chars);
        }
    }
    if let Some(items) = map.get("items") {
        collect(
            items,
            &format!("{pointer}/items"),
            &format!("{path}[]"),
            enums,
            slots,
            chars,
        );
    }
    if let Some(Value::Array(members)) = map.get("anyOf") {
        for (i, member) in members.iter().enumerate() {
            let member_path = format!("{path} (option {})", i + 1);
            collect(
                member,
                &format!("{pointer}/anyOf/{i}"),
                &member_path,
                enums,
                slots,
                chars,
            );
        }
    }
    if let Some(Value::Object(defs)) = map.get("$defs") {
        for (name, def) in defs {
            *chars += name.len();
            let def_pointer = format!("{pointer}/$defs/{}", escape(name));
            collect(def, &def_pointer, &format!("({name})"), enums, slots, chars);
        }
    }
}
