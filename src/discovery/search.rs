//! Ranked keyword search over tools (BM25, Robertson–Spärck Jones with the usual k1 = 1.2,
//! b = 0.75), so a model can find the one operation it needs among thousands without
//! reading them all.
//!
//! A tool's text is its name (split at `_`, `-`, `/`, `.` and camelCase), title,
//! description, argument names and API name; name and title words count more, since they
//! say what the tool *is*. Words are lower-cased, a few English stop words dropped, and a
//! light suffix stripper maps `issues`/`issue` and `comments`/`comment` together.

use std::collections::HashMap;

use crate::catalog::Tool;

/// Field weights: a query word in the name or title is worth more than in the prose.
const NAME_WEIGHT: f64 = 3.0;
const TITLE_WEIGHT: f64 = 2.0;
const ARGUMENT_WEIGHT: f64 = 0.5;
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP_WORDS: [&str; 24] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of",
    "on", "or", "that", "the", "this", "to", "with", "via", "me",
];

/// An index over some of a catalog's tools, by their positions in the catalog.
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// Documents containing each term.
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

struct Doc {
    tool: usize,
    api: String,
    /// Weighted term frequencies.
    terms: HashMap<String, f64>,
    length: f64,
}

impl Doc {
    /// The weighted words of `tool`, at position `tool_at` in the catalog.
    fn of(tool_at: usize, tool: &Tool) -> Doc {
        let mut terms: HashMap<String, f64> = HashMap::new();
        let mut add = |text: &str, weight: f64| {
            for word in words(text) {
                *terms.entry(word).or_default() += weight;
            }
        };
        add(&tool.name, NAME_WEIGHT);
        if let Some(title) = &tool.title {
            add(title, TITLE_WEIGHT);
        }
        add(&tool.description, 1.0);
        add(&tool.route.api, 1.0);
        for name in argument_names(tool.input_schema.as_str()) {
            add(&name, ARGUMENT_WEIGHT);
        }
        let length = terms.values().sum();
        Doc {
            tool: tool_at,
            api: tool.route.api.clone(),
            terms,
            length,
        }
    }
}

/// The names of an input schema's top-level `properties`, read from its text without
/// building the schema's tree.
fn argument_names(schema: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Arguments {
        #[serde(default)]
        properties: Option<HashMap<String, serde::de::IgnoredAny>>,
    }
    serde_json::from_str::<Arguments>(schema)
        .ok()
        .and_then(|arguments| arguments.properties)
        .map(|properties| properties.into_keys().collect())
        .unwrap_or_default()
}

impl SearchIndex {
    /// Indexes `tools` (each with its position in the catalog).
    pub fn new<'t>(tools: impl IntoIterator<Item = (usize, &'t Tool)>) -> SearchIndex {
        let tools: Vec<(usize, &Tool)> = tools.into_iter().collect();
        // Each tool's words are its own: worked out on every core (Microsoft Graph beta's
        // 22,000 tools took 0.35 s on one).
        let docs = crate::parallel::on_all_cores(&tools, |(at, tool)| Doc::of(*at, tool));
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for doc in &docs {
            for term in doc.terms.keys() {
                match document_frequency.get_mut(term) {
                    Some(count) => *count += 1,
                    None => {
                        document_frequency.insert(term.clone(), 1);
                    }
                }
            }
        }
        let average_length = if docs.is_empty() {
            1.0
        } else {
            docs.iter().map(|d| d.length).sum::<f64>() / docs.len() as f64
        };
        SearchIndex {
            docs,
            document_frequency,
            average_length: average_length.max(1.0),
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The best `limit` tools for `query` (catalog positions, best first), optionally only
    /// those of API `api`. Ties keep catalog order, so results are stable.
    pub fn search(&self, query: &str, limit: usize, api: Option<&str>) -> Vec<(usize, f64)> {
        let mut query_terms = words(query);
        query_terms.sort();
        query_terms.dedup();
        let total = self.docs.len() as f64;
        let weights: Vec<(&str, f64)> = query_terms
            .iter()
            .filter_map(|term| {
                let n = *self.document_frequency.get(term)? as f64;
                let idf = ((total - n + 0.5) / (n + 0.5) + 1.0).ln();
                Some((term.as_str(), idf))
            })
            .collect();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .filter(|doc| api.is_none_or(|api| doc.api == api))
            .filter_map(|doc| {
                let norm = K1 * (1.0 - B + B * doc.length / self.average_length);
                let score: f64 = weights
                    .iter()
                    .filter_map(|(term, idf)| {
                        let tf = *doc.terms.get(*term)?;
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (score > 0.0).then_some((doc.tool, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
    }
}

/// The search terms of `text`.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let lower = word.to_lowercase();
            if !STOP_WORDS.contains(&lower.as_str()) {
                out.push(stem(&lower));
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            // camelCase → camel case
            if c.is_uppercase() && previous_lower {
                flush(&mut word, &mut out);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        } else {
            previous_lower = false;
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A light English suffix stripper: enough that singular and plural, and a verb and its
/// -ing/-ed forms, meet (`issues`/`issue`, `repositories`/`repository`,
/// `creating`/`created`/`create`, `matches`/`match`; `status` stays whole).
fn stem(word: &str) -> String {
    let long = |rest: &str, min: usize| rest.chars().count() >= min;
    if let Some(rest) = word.strip_suffix("ies").filter(|r| long(r, 3)) {
        return format!("{rest}y");
    }
    let mut stem = word;
    if let Some(rest) = stem.strip_suffix("sses") {
        stem = &word[..rest.len() + 2];
    } else if let Some(rest) = ["shes", "ches", "xes"]
        .iter()
        .find_map(|suffix| stem.strip_suffix(suffix).map(|r| (r, suffix)))
        .map(|(r, suffix)| &word[..r.len() + suffix.len() - 2])
    {
        stem = rest;
    } else if let Some(rest) = stem
        .strip_suffix('s')
        .filter(|r| long(r, 3) && !r.ends_with(['s', 'u', 'i']))
    {
        stem = rest;
    } else if let Some(rest) = stem
        .strip_suffix("ing")
        .or_else(|| stem.strip_suffix("ed"))
        .filter(|r| long(r, 3))
    {
        stem = rest;
    }
    stem.strip_suffix('e')
        .filter(|r| long(r, 3))
        .unwrap_or(stem)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 100 operations (more than one thread's share, so the index is built on every core),
    /// one of which alone has an argument named `shipmentCarrier`: a search for the words
    /// of that name finds it alone, and every tool keeps its position in the catalog.
    #[test]
    fn argument_names_are_found_and_positions_kept() {
        let mut paths = serde_json::Map::new();
        for n in 0..100 {
            let parameter = match n {
                57 => "shipmentCarrier",
                _ => "page",
            };
            paths.insert(
                format!("/things{n}"),
                json!({"get": {
                    "operationId": format!("listThings{n}"),
                    "parameters": [{"name": parameter, "in": "query", "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "ok"}},
                }}),
            );
        }
        let spec = json!({
            "openapi": "3.0.3",
            "info": {"title": "T", "version": "1"},
            "servers": [{"url": "https://api.example.test/"}],
            "paths": paths,
        });
        let docs = crate::spec::DocumentSet::single(
            url::Url::parse("file:///specs/api.json").expect("url"),
            "api.json".into(),
            spec,
        );
        let input = crate::catalog::ApiInput::new("t", Some(&docs));
        let settings = crate::config::ToolSettings::default();
        let (catalog, _) = crate::catalog::build(&[input], &settings).expect("builds");
        let index = SearchIndex::new(catalog.tools().iter().enumerate());
        assert_eq!(index.len(), 100);
        let found = index.search("carrier shipment", 3, None);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(catalog.tools()[found[0].0].name, "listThings57");
        let doc_positions: Vec<usize> = index.docs.iter().map(|doc| doc.tool).collect();
        assert_eq!(doc_positions, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn words_split_names_and_meet_across_forms() {
        assert_eq!(
            words("issues/create-comment getPetById"),
            words("issue create comment get pet id")
        );
        assert_eq!(words("issue create comment").len(), 3);
        assert_eq!(words("an issue comment"), words("Issue Comments"));
        for (a, b) in [
            ("issues", "issue"),
            ("repositories", "repository"),
            ("creating", "create"),
            ("created", "create"),
            ("matches", "match"),
            ("addresses", "address"),
            ("listing", "list"),
            ("updates", "update"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("analysis"), "analysis");
        assert_ne!(stem("user"), stem("us"));
    }
}
