//! RFC 9535 JSONPath: a query parsed once, then the *locations* of the nodes it selects.
//!
//! A self-contained engine behind a narrow API. [`parse_query`] turns the text of a query
//! into a [`Query`], or a [`PathError`] that names the character at fault; [`select`]
//! returns the locations a query selects in a document, each a list of [`Step`]s;
//! [`pointer()`] spells a location as an RFC 6901 JSON pointer; [`select_pointers`] does all
//! three at once. Locations rather than values, because the OpenAPI Overlay actions of
//! [`super::overlay`] (`update`, `remove`) change the document in place.
//!
//! Submodules, one concept each:
//!
//! * [`syntax`]: the query tree (queries, segments, selectors, filter expressions,
//!   function calls), the parse error and the parser's reading position: the leaf the
//!   other files build on;
//! * [`parse`]: the query grammar (§2.1–§2.3, §2.5): segments, selectors, string and
//!   integer literals;
//! * [`eval`]: selection (§2.3, §2.5–§2.7): segments and selectors applied to a document,
//!   and the nodes' locations in document order;
//! * [`filter`]: filter expressions (§2.3.5): `||`, `&&`, `!`, existence tests and
//!   comparisons, parsed and evaluated (it extends the parser and the evaluator);
//! * [`function`]: the function extensions (§2.4) `length()`, `count()`, `match()`,
//!   `search()` and `value()`, their well-typedness, and I-Regexp patterns (RFC 9485).
//!
//! The parser follows the RFC 9535 grammar (§2.1–§2.7) with two deliberate extensions that
//! real overlays, including the Overlay specification's own examples (`@.x-oai-traits`),
//! depend on: a member-name shorthand may contain `-` after its first character
//! (`.x-internal`), and may start with `$` (`..$ref`). Function extensions (§2.4) are
//! `length()`, `count()`, `match()`, `search()` and `value()`; the I-Regexp patterns of
//! `match()`/`search()` (RFC 9485) run on the `regex` crate, translated as RFC 9485 §5.4
//! describes for RE2-style engines (`.` becomes `[^\n\r]`, `match()` anchors both ends).
//! Patterns outside I-Regexp that the crate accepts (`\d`, `(?i)`) are not rejected.
//!
//! Nodes are reported in document order without duplicates (RFC 9535 nodelists may repeat
//! a node and follow selector order), which is what the overlay's `update` and `remove`
//! need.

use std::fmt::Write as _;

use serde_json::Value;

use crate::json::escape_token;

mod eval;
mod filter;
mod function;
mod parse;
mod syntax;
#[cfg(test)]
pub(crate) mod tests;

pub use eval::{Step, select};
pub use parse::parse_query;
pub use syntax::{PathError, Query};

/// JSON pointers (RFC 6901) of the nodes `path` selects in `document`, in document order
/// and without duplicates. The error reads `invalid JSONPath at character N: problem`.
pub fn select_pointers(document: &Value, path: &str) -> Result<Vec<String>, String> {
    let query = parse_query(path).map_err(|e| e.describe(path))?;
    Ok(select(document, &query)
        .iter()
        .map(|steps| pointer(steps))
        .collect())
}

/// RFC 6901 pointer of a location; the root is the empty string.
pub fn pointer(steps: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in steps {
        out.push('/');
        match step {
            Step::Key(key) => out.push_str(&escape_token(key)),
            Step::Index(index) => {
                let _ = write!(out, "{index}");
            }
        }
    }
    out
}
