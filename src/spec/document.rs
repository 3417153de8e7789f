//! The documents one API description is made of, and `$ref` resolution between them.
//!
//! An API may span several files or URLs. The root is loaded first; every document it
//! references is then loaded exactly once (breadth-first, by absolute URL), so resolution
//! afterwards is synchronous and cannot fail for I/O reasons mid-synthesis (what the root
//! document [deferred] is parsed there, from text already checked). A document that
//! could not be loaded is remembered with its error, which surfaces only if a `$ref` that
//! is actually used points into it. What may be loaded at all, and how much, is the
//! [`place`](super::place) module's to say: a refused reference is remembered the same way,
//! and what it names is never read.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use url::Url;

use super::SpecError;
use super::deferred::{self, Deferred};
use super::parse::{Allowance, parse_document_within};
use super::place::{LoadPolicy, Place};
use crate::config::ApiConfig;

/// Index of a document inside its [`DocumentSet`].
pub type DocId = usize;

/// One parsed document.
#[derive(Debug)]
pub struct Document {
    /// Absolute location (`file://` or `http(s)://`), the base for its relative references.
    pub url: Url,
    /// What messages call it: the path as configured, or the URL.
    pub name: String,
    /// The document, but for what was [`Deferred`]: a `$ref` reaches that through
    /// [`DocumentSet::resolve`], which parses it then.
    pub root: Value,
    deferred: Deferred,
}

impl Document {
    /// The path item under `key` of `paths`, whose entry in [`Document::root`] is `value`:
    /// `value` itself, or, where `value` holds the place of a [`Deferred`] item, that item
    /// parsed for the caller, who drops it when done.
    pub fn path_item<'a>(&'a self, key: &str, value: &'a Value) -> Cow<'a, Value> {
        match value {
            Value::Null => self.deferred.path_item(key),
            _ => None,
        }
        .unwrap_or(Cow::Borrowed(value))
    }

    /// Like [`Document::path_item`], a deferred item parsed for as long as the document
    /// lives (as a `$ref` to it parses it).
    pub fn path_item_kept<'a>(&'a self, key: &str, value: &'a Value) -> &'a Value {
        match value {
            Value::Null => self.deferred.get(&["paths".to_string()], key),
            _ => None,
        }
        .unwrap_or(value)
    }
}

/// A resolved reference: which document, where in it, and the value found there.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a, 'r> {
    pub doc: DocId,
    /// The fragment as written in the reference (still percent-encoded).
    pub pointer: &'r str,
    pub value: &'a Value,
}

/// Identity of a `$ref` target, for counting and cycle detection.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetKey {
    pub doc: DocId,
    pub pointer: String,
}

/// Where a spec comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecSource {
    File(std::path::PathBuf),
    Url(Url),
}

impl SpecSource {
    /// Interprets a configured string: `http(s)://…` is a URL, anything else a file path.
    pub fn parse(text: &str) -> Result<SpecSource, SpecError> {
        if text.starts_with("http://") || text.starts_with("https://") {
            Url::parse(text)
                .map(SpecSource::Url)
                .map_err(|e| SpecError::Read {
                    file: text.to_string(),
                    message: format!("not a valid URL: {e}"),
                })
        } else {
            Ok(SpecSource::File(text.into()))
        }
    }

    /// Where to load an API's spec from; `None` for an API of hand-written tools only.
    pub fn of_api(api: &ApiConfig) -> Option<Result<SpecSource, SpecError>> {
        let spec = api.spec.as_ref()?;
        Some(match api.spec_file() {
            Some(path) => Ok(SpecSource::File(path)),
            None => SpecSource::parse(&spec.original().to_string_lossy()),
        })
    }

    pub fn display_name(&self) -> String {
        match self {
            SpecSource::File(path) => path.display().to_string(),
            SpecSource::Url(url) => url.to_string(),
        }
    }
}

/// Why a reference could not be followed; the caller adds where the reference stood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefError {
    /// The target as an absolute location, `file#/pointer`.
    pub target: String,
    pub problem: String,
}

/// All documents of one API description.
#[derive(Debug)]
pub struct DocumentSet {
    docs: Vec<Document>,
    by_url: HashMap<Url, DocId>,
    /// Referenced documents that failed to load, with the reason.
    failed: HashMap<Url, String>,
}

impl DocumentSet {
    /// Loads the root document and everything it references, transitively, under the
    /// default [`LoadPolicy`].
    pub async fn load(source: &SpecSource) -> Result<DocumentSet, SpecError> {
        DocumentSet::load_deferred(source, &LoadPolicy::default()).await
    }

    /// Like [`DocumentSet::load`] under `policy`. A JSON root document's components and
    /// extensions are parsed when a `$ref` first reaches them, its path items when they are
    /// read ([`Deferred`]).
    pub async fn load_deferred(
        source: &SpecSource,
        policy: &LoadPolicy,
    ) -> Result<DocumentSet, SpecError> {
        type Edit = fn(&mut Value) -> Result<(), SpecError>;
        DocumentSet::load_with(source, policy, None::<Edit>).await
    }

    /// Like [`DocumentSet::load`] under `policy`, with `edit` applied to the root document
    /// before its references are followed (OpenAPI Overlays edit the root this way). The
    /// root is parsed whole: an edit may select anything in it.
    pub async fn load_edited(
        source: &SpecSource,
        policy: &LoadPolicy,
        edit: impl FnOnce(&mut Value) -> Result<(), SpecError>,
    ) -> Result<DocumentSet, SpecError> {
        DocumentSet::load_with(source, policy, Some(edit)).await
    }

    async fn load_with(
        source: &SpecSource,
        policy: &LoadPolicy,
        edit: Option<impl FnOnce(&mut Value) -> Result<(), SpecError>>,
    ) -> Result<DocumentSet, SpecError> {
        let name = source.display_name();
        let root_url = match source {
            SpecSource::Url(url) => url.clone(),
            SpecSource::File(path) => file_url(path).map_err(|message| SpecError::Read {
                file: name.clone(),
                message,
            })?,
        };
        let mut place = Place::new(policy, &root_url);
        let bytes = place
            .read(&root_url)
            .await
            .map_err(|message| SpecError::Read {
                file: name.clone(),
                message,
            })?;
        let mut allowance = Allowance {
            alias_values: policy.max_yaml_alias_values,
            alias_bytes: policy.max_api_bytes,
            quote: true,
        };
        let (root, deferred) = match edit {
            Some(edit) => {
                let mut root = parse_document_within(&name, &bytes, &mut allowance)?;
                drop(bytes);
                edit(&mut root)?;
                (root, Deferred::default())
            }
            None => {
                let parsed = deferred::parse_document(&name, &bytes, &mut allowance)?;
                drop(bytes);
                parsed
            }
        };
        let mut set = DocumentSet::empty();
        set.insert(root_url, name, root, deferred);
        allowance.quote = false;
        set.load_referenced(&mut place, &mut allowance).await;
        Ok(set)
    }

    /// A set holding one already-parsed document (tests, benchmarks, in-memory specs).
    pub fn single(url: Url, name: String, root: Value) -> DocumentSet {
        let mut set = DocumentSet::empty();
        set.insert(url, name, root, Deferred::default());
        set
    }

    fn empty() -> DocumentSet {
        DocumentSet {
            docs: Vec::new(),
            by_url: HashMap::new(),
            failed: HashMap::new(),
        }
    }

    fn insert(&mut self, url: Url, name: String, root: Value, deferred: Deferred) -> DocId {
        let id = self.docs.len();
        self.by_url.insert(url.clone(), id);
        self.docs.push(Document {
            url,
            name,
            root,
            deferred,
        });
        id
    }

    async fn load_referenced(&mut self, place: &mut Place, allowance: &mut Allowance) {
        let mut next = 0;
        while next < self.docs.len() {
            let wanted = external_documents(&self.docs[next]);
            for url in wanted {
                if self.by_url.contains_key(&url) || self.failed.contains_key(&url) {
                    continue;
                }
                let name = self.display_name_for(&url);
                if let Err(problem) = place.admit(&self.docs[next].url, &url) {
                    let pointer = ref_pointer(&self.docs[next], &url).unwrap_or_default();
                    let reason = format!(
                        "{name}: {problem} (the $ref at {}#{pointer}/$ref)",
                        self.docs[next].name
                    );
                    tracing::warn!("{reason}");
                    self.failed.insert(url, reason);
                    continue;
                }
                let loaded = match place.read(&url).await {
                    Ok(bytes) => {
                        parse_document_within(&name, &bytes, allowance).map_err(|e| e.to_string())
                    }
                    Err(message) => Err(SpecError::Read {
                        file: name.clone(),
                        message,
                    }
                    .to_string()),
                };
                match loaded {
                    Ok(root) => {
                        self.insert(url, name, root, Deferred::default());
                    }
                    Err(reason) => {
                        self.failed.insert(url, reason);
                    }
                }
            }
            next += 1;
        }
    }

    /// Files referenced from a file are named relative to the root's directory when possible,
    /// so messages stay as short as the paths the user wrote.
    fn display_name_for(&self, url: &Url) -> String {
        if url.scheme() == "file"
            && let (Ok(target), Ok(root)) = (url.to_file_path(), self.docs[0].url.to_file_path())
        {
            let root_name = Path::new(&self.docs[0].name);
            if let (Some(root_dir), Some(name_dir)) = (root.parent(), root_name.parent())
                && let Ok(rest) = target.strip_prefix(root_dir)
            {
                return name_dir.join(rest).display().to_string();
            }
            return target.display().to_string();
        }
        url.to_string()
    }

    /// Every document of the set, the root first.
    pub fn documents(&self) -> &[Document] {
        &self.docs
    }

    pub fn root(&self) -> &Document {
        &self.docs[0]
    }

    pub fn doc(&self, id: DocId) -> &Document {
        &self.docs[id]
    }

    /// `value`, found in document `doc`, as a message may show it. A value of the root
    /// document (the spec the configuration names) is shown as JSON; a value of a
    /// referenced document only by its kind and file (`a string in notes.txt`): a `$ref`
    /// may reach any file of the spec's place, and `restmcp check` and errors never print
    /// what a referenced document holds.
    pub fn shown(&self, doc: DocId, value: &Value) -> String {
        if doc == 0 {
            return value.to_string();
        }
        let name = self
            .docs
            .get(doc)
            .map_or("a referenced document", |d| d.name.as_str());
        format!("{} in {name}", crate::json::kind(value))
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Resolves `reference` as written inside document `from`.
    pub fn resolve<'a, 'r>(
        &'a self,
        from: DocId,
        reference: &'r str,
    ) -> Result<Resolved<'a, 'r>, RefError> {
        let (location, fragment) = match reference.split_once('#') {
            Some((l, f)) => (l, f),
            None => (reference, ""),
        };
        let doc = if location.is_empty() {
            from
        } else {
            let url = self.docs[from].url.join(location).map_err(|e| RefError {
                target: reference.to_string(),
                problem: format!("not a valid reference: {e}"),
            })?;
            let mut url = url;
            url.set_fragment(None);
            match self.by_url.get(&url) {
                Some(id) => *id,
                None => {
                    let problem = match self.failed.get(&url) {
                        Some(reason) => format!("document could not be loaded: {reason}"),
                        None => "document was not loaded".to_string(),
                    };
                    return Err(RefError {
                        target: format!("{url}#{fragment}"),
                        problem,
                    });
                }
            }
        };
        let value = lookup(&self.docs[doc], fragment).map_err(|problem| RefError {
            target: format!("{}#{}", self.docs[doc].name, fragment),
            problem,
        })?;
        Ok(Resolved {
            doc,
            pointer: fragment,
            value,
        })
    }

    /// The absolute identity of a reference's target, equal for all spellings of it.
    pub fn key(&self, resolved: &Resolved<'_, '_>) -> TargetKey {
        TargetKey {
            doc: resolved.doc,
            pointer: decode_fragment(resolved.pointer),
        }
    }

    /// Follows `$ref` chains on a non-schema object (parameter, request body, response,
    /// path item) until a real object is reached.
    pub fn deref<'a>(
        &'a self,
        mut doc: DocId,
        mut value: &'a Value,
    ) -> Result<(DocId, &'a Value), RefError> {
        for _ in 0..32 {
            match value.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    let resolved = self.resolve(doc, reference)?;
                    doc = resolved.doc;
                    value = resolved.value;
                }
                None => return Ok((doc, value)),
            }
        }
        Err(RefError {
            target: self.docs[doc].name.clone(),
            problem: "more than 32 chained $refs (a reference cycle?)".to_string(),
        })
    }
}

fn file_url(path: &Path) -> Result<Url, String> {
    let absolute = std::path::absolute(path).map_err(|e| e.to_string())?;
    Url::from_file_path(&absolute)
        .map_err(|_| format!("cannot make a URL of {}", absolute.display()))
}

/// Every distinct document URL referenced from `doc`, excluding itself. Example and
/// extension values are data, not references, so their subtrees are skipped.
fn external_documents(doc: &Document) -> Vec<Url> {
    let mut found = Vec::new();
    let mut stack = vec![&doc.root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if key == "$ref" {
                        if let Some(reference) = child.as_str() {
                            let location = reference.split('#').next().unwrap_or("");
                            if !location.is_empty()
                                && let Ok(mut url) = doc.url.join(location)
                            {
                                url.set_fragment(None);
                                if url != doc.url && !found.contains(&url) {
                                    found.push(url);
                                }
                            }
                        }
                    } else if !(key == "example" || key == "examples" || key.starts_with("x-")) {
                        stack.push(child);
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    found
}

/// The JSON pointer of the first `$ref` in `doc` that names the document `target`, for
/// messages (found again only when needed: most loads refuse nothing).
fn ref_pointer(doc: &Document, target: &Url) -> Option<String> {
    fn walk(value: &Value, doc: &Url, target: &Url, at: &mut String) -> bool {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if key == "$ref" {
                        let location = child.as_str().and_then(|r| r.split('#').next());
                        if let Some(mut url) = location
                            .filter(|l| !l.is_empty())
                            .and_then(|l| doc.join(l).ok())
                        {
                            url.set_fragment(None);
                            if url == *target {
                                return true;
                            }
                        }
                    } else if !(key == "example" || key == "examples" || key.starts_with("x-")) {
                        let len = at.len();
                        at.push('/');
                        at.push_str(&crate::json::escape_token(key));
                        if walk(child, doc, target, at) {
                            return true;
                        }
                        at.truncate(len);
                    }
                }
                false
            }
            Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                let found = walk(item, doc, target, at);
                if !found {
                    at.truncate(len);
                }
                found
            }),
            _ => false,
        }
    }
    let mut at = String::new();
    walk(&doc.root, &doc.url, target, &mut at).then_some(at)
}

/// A URI fragment holding a JSON pointer: percent-decoded, then `~1` and `~0` unescaped per
/// segment (RFC 6901 §3 and §6). What the document deferred is parsed when the pointer
/// first reaches it.
fn lookup<'a>(doc: &'a Document, fragment: &str) -> Result<&'a Value, String> {
    let root = &doc.root;
    if fragment.is_empty() {
        return Ok(root);
    }
    let decoded = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
    let Some(rest) = decoded.strip_prefix('/') else {
        return Err(format!(
            "\"#{fragment}\" is not a JSON pointer (named anchors are not supported)"
        ));
    };
    let mut current = root;
    // The first two segments: where a deferred value may stand below them.
    let mut parents: Vec<String> = Vec::new();
    for raw in rest.split('/') {
        let segment = crate::json::unescape_token(raw).into_owned();
        let found = match current {
            Value::Object(map) => map.get(&segment),
            Value::Array(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        // A deferred path item has a `null` in its place.
        current = match found {
            None | Some(Value::Null) if !doc.deferred.is_empty() && parents.len() <= 2 => {
                doc.deferred.get(&parents, &segment).or(found)
            }
            _ => found,
        }
        .ok_or_else(|| format!("no \"{segment}\" at this location"))?;
        if parents.len() < 3 {
            parents.push(segment);
        }
    }
    Ok(current)
}

fn decode_fragment(fragment: &str) -> String {
    percent_encoding::percent_decode_str(fragment)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(root: Value) -> DocumentSet {
        DocumentSet::single(
            Url::parse("file:///specs/api.yaml").expect("url"),
            "api.yaml".into(),
            root,
        )
    }

    #[test]
    fn pointer_unescapes_tilde_slash_and_percent() {
        let docs = set(json!({"paths": {"/pets/{id}": {"get": 1}}, "a~b": {"c d": 2}}));
        let r = docs
            .resolve(0, "#/paths/~1pets~1%7Bid%7D/get")
            .expect("resolves");
        assert_eq!(r.value, &json!(1));
        let r = docs.resolve(0, "#/a~0b/c%20d").expect("resolves");
        assert_eq!(r.value, &json!(2));
    }

    #[test]
    fn a_pointer_reaches_into_a_deferred_path_item() {
        let text =
            br##"{"paths": {"/pets/{id}": {"get": {"operationId": "getPet"}}, "/none": null}}"##;
        let mut allowance = Allowance {
            alias_values: u64::MAX,
            alias_bytes: u64::MAX,
            quote: true,
        };
        let (root, deferred) =
            deferred::parse_document("api.json", text, &mut allowance).expect("parses");
        let mut docs = DocumentSet::empty();
        let url = Url::parse("file:///specs/api.json").expect("url");
        docs.insert(url, "api.json".into(), root, deferred);
        let r = docs
            .resolve(0, "#/paths/~1pets~1%7Bid%7D/get/operationId")
            .expect("resolves");
        assert_eq!(r.value, &json!("getPet"));
        assert!(docs.root().root["paths"]["/pets/{id}"].is_null());
        assert_eq!(
            docs.resolve(0, "#/paths/~1none").expect("null").value,
            &json!(null)
        );
        let err = docs.resolve(0, "#/paths/~1gone").unwrap_err();
        assert_eq!(err.problem, "no \"/gone\" at this location");
    }

    /// A description whose 200 path items are each kept as text until read.
    fn deferred_paths() -> DocumentSet {
        let paths: Vec<String> = (0..200)
            .map(|i| {
                format!(r#""/p{i}": {{"get": {{"operationId": "op{i}", "responses": {{}}}}}}"#)
            })
            .collect();
        let text = format!(
            r#"{{"openapi": "3.1.0", "info": {{"title": "t", "version": "1"}}, "paths": {{{}}}}}"#,
            paths.join(",")
        );
        let mut allowance = Allowance {
            alias_values: u64::MAX,
            alias_bytes: u64::MAX,
            quote: true,
        };
        let (root, deferred) =
            deferred::parse_document("api.json", text.as_bytes(), &mut allowance).expect("parses");
        assert!(
            root["paths"]["/p0"].is_null(),
            "the path items are deferred"
        );
        let mut docs = DocumentSet::empty();
        let url = Url::parse("file:///specs/api.json").expect("url");
        docs.insert(url, "api.json".into(), root, deferred);
        docs
    }

    #[test]
    fn parts_read_ahead_come_in_order_and_stop_when_asked() {
        let docs = deferred_paths();
        let whole: Vec<String> = crate::spec::normalize(&docs)
            .expect("normalizes")
            .operations
            .iter()
            .map(|op| op.label())
            .collect();
        assert_eq!(whole.len(), 200);
        let mut parts = Vec::new();
        let walked = crate::spec::normalize_in_parts(&docs, 7, |_, ops, _| {
            parts.push(ops.iter().map(|op| op.label()).collect::<Vec<_>>());
            Ok::<(), ()>(())
        });
        assert!(matches!(walked, Ok(Ok(_))));
        assert_eq!(parts.len(), 29, "200 path items, 7 at a time");
        assert_eq!(
            parts.concat(),
            whole,
            "every operation once, in document order"
        );
        let mut seen = 0;
        let stopped = crate::spec::normalize_in_parts(&docs, 7, |_, _, _| {
            seen += 1;
            if seen == 3 { Err("enough") } else { Ok(()) }
        });
        assert!(matches!(stopped, Ok(Err("enough"))));
        assert_eq!(seen, 3, "no part is handed on after the first error");
    }

    #[test]
    fn missing_target_names_target_and_problem() {
        let docs = set(json!({"components": {"schemas": {}}}));
        let err = docs.resolve(0, "#/components/schemas/Pet").unwrap_err();
        assert_eq!(err.target, "api.yaml#/components/schemas/Pet");
        assert!(err.problem.contains("\"Pet\""), "{}", err.problem);
    }

    #[test]
    fn unloaded_document_is_reported_not_panicked() {
        let docs = set(json!({}));
        let err = docs.resolve(0, "other.yaml#/X").unwrap_err();
        assert!(err.target.starts_with("file:///specs/other.yaml"));
        assert_eq!(err.problem, "document was not loaded");
    }

    #[test]
    fn deref_stops_on_cycles() {
        let docs = set(json!({"a": {"$ref": "#/b"}, "b": {"$ref": "#/a"}}));
        let err = docs.deref(0, &docs.root().root["a"]).unwrap_err();
        assert!(err.problem.contains("cycle"));
    }
}
