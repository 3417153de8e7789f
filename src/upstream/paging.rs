//! Bounded results that stay usable (`docs/src/changing-the-world.md`, "Bounded results that
//! stay usable"). A JSON
//! result over the tool's budget (`apis.NAME.max_result_tokens`, estimated as compact JSON bytes / 3) is not cut
//! mid-value: the list in it (the body itself, or its largest top-level array: `items`,
//! `data`, `value`…) keeps whole items up to the budget, and the result says so with
//! `{"truncated": {"returned", "of", "total"?, "next"?}}`, where `next` holds the paging
//! arguments of the operation's own parameters that fetch exactly the items left out:
//! - `offset`/`skip`/`start` (with the page size set to what fits);
//! - `page` with a page size (`per_page`, `limit`, `page_size`…): the size becomes what fits
//!   and the page the one that starts after the last item returned;
//! - Stripe-style `starting_after` with the last item's `id`.
//!
//! Without such parameters the result says how many items were left out and `next` is
//! absent. [`Paging::clamp`] lowers page-size arguments to `apis.NAME.max_page_size`.

use serde_json::{Map, Value, json};

use crate::catalog::{Route, arguments::Location};

/// Query parameter names (lowercase) that hold a page number.
const PAGE: &[&str] = &[
    "page",
    "page_number",
    "pagenumber",
    "pageindex",
    "page_index",
];
/// … a page size.
const SIZE: &[&str] = &[
    "per_page",
    "perpage",
    "page_size",
    "pagesize",
    "limit",
    "size",
    "top",
    "$top",
    "max_results",
    "maxresults",
    "pagelen",
    "count",
    "first",
];
/// … an offset into the whole list.
const OFFSET: &[&str] = &[
    "offset",
    "skip",
    "$skip",
    "start",
    "start_index",
    "startindex",
    "from",
];
/// … the id of the last item seen (Stripe's cursors).
const AFTER: &[&str] = &["starting_after"];
/// Top-level numbers that give the whole list's length.
const TOTAL: &[&str] = &[
    "total",
    "total_count",
    "totalcount",
    "@odata.count",
    "total_results",
];

/// Estimated bytes per token of compact JSON (punctuation and short keys tokenize densely).
pub const BYTES_PER_TOKEN: u64 = 3;

/// The paging arguments an operation takes: (argument name, its value in this call).
#[derive(Debug, Default)]
pub struct Paging {
    page: Option<(String, Option<u64>)>,
    size: Option<(String, Option<u64>)>,
    offset: Option<(String, Option<u64>)>,
    after: Option<String>,
}

impl Paging {
    /// The paging arguments of `route`'s query parameters, with their values in
    /// `arguments`.
    pub fn of(route: &Route, arguments: &Map<String, Value>) -> Paging {
        let mut paging = Paging::default();
        for binding in &route.arguments.bindings {
            if binding.location != Location::Query || binding.fixed.is_some() {
                continue;
            }
            let wire = binding.wire_name.to_ascii_lowercase();
            let value = arguments.get(&binding.argument).and_then(as_count);
            let named = || (binding.argument.clone(), value);
            if PAGE.contains(&wire.as_str()) && paging.page.is_none() {
                paging.page = Some(named());
            } else if SIZE.contains(&wire.as_str()) && paging.size.is_none() {
                paging.size = Some(named());
            } else if OFFSET.contains(&wire.as_str()) && paging.offset.is_none() {
                paging.offset = Some(named());
            } else if AFTER.contains(&wire.as_str()) {
                paging.after = Some(binding.argument.clone());
            }
        }
        paging
    }

    /// Lowers the page-size argument to `max` when it asks for more; says what it did.
    pub fn clamp(&self, arguments: &mut Map<String, Value>, max: u64) -> Option<String> {
        let (name, Some(value)) = self.size.as_ref()? else {
            return None;
        };
        if *value <= max {
            return None;
        }
        arguments.insert(name.clone(), json!(max));
        Some(format!(
            "{name} was lowered from {value} to {max} (the API's max_page_size)."
        ))
    }
}

/// A value as a count, when it is one (an integer, or a string holding one).
fn as_count(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// What [`bound`] did to a body.
#[derive(Debug, PartialEq)]
pub struct Trimmed {
    /// The `{"truncated": …}` object the result carries.
    pub note: Value,
}

/// Trims `body` to `max_bytes` of compact JSON by keeping whole items of its list, and
/// says how to get the rest; `None` when it fits or holds no list to trim.
pub fn bound(body: &mut Value, max_bytes: u64, paging: &Paging) -> Option<Trimmed> {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let whole = crate::json::compact_value_len(body);
    if whole <= max {
        return None;
    }
    let total = body.as_object().and_then(|object| {
        object
            .iter()
            .find(|(key, _)| TOTAL.contains(&key.to_ascii_lowercase().as_str()))
            .and_then(|(_, value)| value.as_u64())
    });
    let list = list_of(body)?;
    let of = list.len();
    let outside = whole - crate::json::compact_len(&*list);
    // Whole items while they fit (at least one, so the result is never an empty page).
    let mut kept = 0;
    let mut size = outside + 2;
    for item in list.iter() {
        let grown = size + crate::json::compact_value_len(item) + usize::from(kept > 0);
        if kept > 0 && grown > max {
            break;
        }
        size = grown;
        kept += 1;
    }
    if kept >= of {
        return None;
    }
    let (kept, next) = next_page(paging, list, kept);
    list.truncate(kept);
    let mut note = Map::new();
    note.insert("returned".into(), json!(kept));
    note.insert("of".into(), json!(of));
    if let Some(total) = total {
        note.insert("total".into(), json!(total));
    }
    match next {
        Some(next) => {
            let by_page = paging.offset.is_none()
                && paging
                    .page
                    .as_ref()
                    .is_some_and(|(name, _)| next.contains_key(name));
            note.insert("next".into(), Value::Object(next));
            if by_page {
                note.insert(
                    "hint".into(),
                    json!("Later pages follow at this page size: page + 1, and so on."),
                );
            }
        }
        None => {
            note.insert(
                "hint".into(),
                json!(
                    "The operation has no paging parameters restmcp can continue from; \
                     narrow the request to get the items left out."
                ),
            );
        }
    }
    note.insert(
        "why".into(),
        json!(format!(
            "the result is over this tool's budget of about {} tokens",
            max_bytes / BYTES_PER_TOKEN
        )),
    );
    Some(Trimmed {
        note: json!({ "truncated": Value::Object(note) }),
    })
}

/// The list to trim: the body when it is an array, else its largest top-level array.
fn list_of(body: &mut Value) -> Option<&mut Vec<Value>> {
    match body {
        Value::Array(items) => Some(items),
        Value::Object(object) => object
            .values_mut()
            .filter_map(|value| match value {
                Value::Array(items) if !items.is_empty() => Some(items),
                _ => None,
            })
            .max_by_key(|items| crate::json::compact_len(&**items)),
        _ => None,
    }
}

/// The arguments that fetch the items after the first `kept`, and how many of them to keep
/// so that they do exactly. An offset or a cursor keeps the page size the call asked for:
/// the next answer is bounded the same way and says where to go on. A page number cannot
/// say "after item k" at the old page size, so `next` changes it to one that lands right
/// after the items kept; later pages follow at that size (page + 1, which fits the budget).
fn next_page(paging: &Paging, list: &[Value], kept: usize) -> (usize, Option<Map<String, Value>>) {
    let mut next = Map::new();
    let asked_size = |next: &mut Map<String, Value>| {
        if let Some((size, Some(asked))) = &paging.size {
            next.insert(size.clone(), json!(asked));
        }
    };
    if let Some((offset, at)) = &paging.offset {
        next.insert(offset.clone(), json!(at.unwrap_or(0) + kept as u64));
        asked_size(&mut next);
        return (kept, Some(next));
    }
    if let (Some((page, at)), Some((size, asked))) = (&paging.page, &paging.size) {
        let page_number = at.unwrap_or(1).max(1);
        // Items before this page: its number times the page size asked for (or, when the
        // call left it to the API, the length of the page it answered).
        let before = (page_number - 1) * asked.unwrap_or(list.len() as u64);
        let (keep, size_next) = landing(before, kept as u64);
        next.insert(page.clone(), json!((before + keep) / size_next + 1));
        next.insert(size.clone(), json!(size_next));
        return (keep as usize, Some(next));
    }
    if let Some(after) = &paging.after
        && let Some(id) = list
            .get(kept.saturating_sub(1))
            .and_then(|item| item.get("id"))
    {
        next.insert(after.clone(), id.clone());
        asked_size(&mut next);
        return (kept, Some(next));
    }
    (kept, None)
}

/// For a page-number API: how many of the `fits` items to keep (`keep`) and the page size
/// of the next call (`size`, at most `fits`) such that a page of that size starts right
/// after them: `size` divides `before + keep`. The largest such `size` wins (fewer calls),
/// keeping at least half of what fits.
fn landing(before: u64, fits: u64) -> (u64, u64) {
    let fits = fits.max(1);
    let mut best = (fits, 1);
    for keep in (fits.div_ceil(2)..=fits).rev() {
        let size = (1..=fits)
            .rev()
            .find(|d| (before + keep).is_multiple_of(*d))
            .unwrap_or(1);
        if size > best.1 {
            best = (keep, size);
        }
        if size == fits {
            break;
        }
    }
    best
}

/// The target of a `Link` header's `rel="next"` (RFC 8288), resolved against `base`.
pub fn link_next(header: &str, base: &url::Url) -> Option<url::Url> {
    let mut rest = header;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>')? + open;
        let target = &rest[open + 1..close];
        // The parameters run to the next link (a `<` after a comma).
        let after = &rest[close + 1..];
        let end = after
            .match_indices(',')
            .find(|(at, _)| after[at + 1..].trim_start().starts_with('<'))
            .map_or(after.len(), |(at, _)| at);
        let next = after[..end].split(';').any(|parameter| {
            let Some((name, value)) = parameter.split_once('=') else {
                return false;
            };
            name.trim().eq_ignore_ascii_case("rel")
                && value
                    .trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case("next"))
        });
        if next {
            return base.join(target.trim()).ok();
        }
        rest = &after[end..];
    }
    None
}

/// The arguments that fetch the page a `rel="next"` link names, when every query parameter
/// of it that differs from this call's (`called`) is one of the route's query arguments
/// and the link stays on the called path; `None` otherwise. Values are given as the
/// route's `input` schema types them (a number where it wants one).
pub fn next_from_link(
    route: &Route,
    input: &Value,
    called: &url::Url,
    next: &url::Url,
) -> Option<Map<String, Value>> {
    if next.origin() != called.origin() || next.path() != called.path() {
        return None;
    }
    let before: std::collections::HashMap<String, String> =
        called.query_pairs().into_owned().collect();
    let mut arguments = Map::new();
    for (name, value) in next.query_pairs() {
        if before.get(name.as_ref()) == Some(&value.to_string()) {
            continue;
        }
        let binding = route.arguments.bindings.iter().find(|binding| {
            binding.location == Location::Query
                && binding.fixed.is_none()
                && binding.wire_name == name
        })?;
        let kind = input
            .pointer(&format!(
                "/properties/{}/type",
                crate::json::escape_token(&binding.argument)
            ))
            .and_then(Value::as_str);
        let typed = match kind {
            Some("integer") | Some("number") => value.parse::<i64>().ok().map(Value::from),
            _ => None,
        };
        arguments.insert(
            binding.argument.clone(),
            typed.unwrap_or_else(|| Value::String(value.into_owned())),
        );
    }
    (!arguments.is_empty()).then_some(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"id": format!("it_{i}"), "text": "x".repeat(90)}))
            .collect()
    }

    fn paging(page: Option<u64>, size: Option<u64>, offset: bool, after: bool) -> Paging {
        Paging {
            page: page.map(|p| ("page".to_string(), Some(p))),
            size: size.map(|s| ("per_page".to_string(), Some(s))),
            offset: offset.then(|| ("offset".to_string(), Some(20))),
            after: after.then(|| "starting_after".to_string()),
        }
    }

    #[test]
    fn a_list_over_budget_keeps_whole_items_and_says_where_to_go_on() {
        let mut body = json!({"total_count": 1000, "items": items(100)});
        let note = bound(&mut body, 2_000, &paging(None, Some(100), true, false)).expect("trimmed");
        let kept = body["items"].as_array().expect("items").len();
        assert!(kept > 10 && kept < 20, "{kept}");
        assert!(crate::json::compact_len(&body) <= 2_000);
        assert_eq!(
            note.note,
            json!({"truncated": {"returned": kept, "of": 100, "total": 1000,
                "next": {"offset": 20 + kept, "per_page": 100},
                "why": "the result is over this tool's budget of about 666 tokens"}})
        );
    }

    #[test]
    fn a_page_number_continues_after_the_last_item_returned() {
        // Page 3 of 100: items 200..300; the next page must start exactly after the kept ones.
        let mut body = json!(items(100));
        let note =
            bound(&mut body, 2_000, &paging(Some(3), Some(100), false, false)).expect("trimmed");
        let kept = body.as_array().expect("array").len() as u64;
        let next = &note.note["truncated"]["next"];
        let (page, size) = (
            next["page"].as_u64().expect("page"),
            next["per_page"].as_u64().expect("size"),
        );
        assert!(size <= 2 * kept, "{next}");
        assert_eq!((page - 1) * size, 200 + kept, "{next}");
        // A prime number of items before the page does not shrink the next page to one.
        assert_eq!(landing(13, 12), (11, 12));
        assert_eq!(landing(0, 12), (12, 12));
        let (keep, size) = landing(200, 17);
        assert!(
            keep >= 9 && size >= 9 && (200 + keep) % size == 0,
            "{keep} {size}"
        );
    }

    #[test]
    fn stripe_cursors_continue_from_the_last_id_and_small_results_are_untouched() {
        let mut body = json!({"object": "list", "data": items(50), "has_more": true});
        let note = bound(&mut body, 1_500, &paging(None, Some(50), false, true)).expect("trimmed");
        let kept = body["data"].as_array().expect("data").len();
        assert_eq!(
            note.note["truncated"]["next"],
            json!({"starting_after": format!("it_{}", kept - 1), "per_page": 50})
        );
        let mut small = json!(items(3));
        assert_eq!(bound(&mut small, 2_000, &Paging::default()), None);
        // No list, nothing to trim; no paging, a hint instead of `next`.
        let mut object = json!({"text": "y".repeat(5_000)});
        assert_eq!(bound(&mut object, 100, &Paging::default()), None);
        let mut list = json!(items(40));
        let note = bound(&mut list, 1_000, &Paging::default()).expect("trimmed");
        assert!(note.note["truncated"].get("next").is_none());
        assert!(note.note["truncated"]["hint"].is_string());
    }

    #[test]
    fn page_sizes_are_clamped_to_the_maximum() {
        let paging = paging(None, Some(500), false, false);
        let mut arguments = Map::new();
        arguments.insert("per_page".into(), json!(500));
        let said = paging.clamp(&mut arguments, 100).expect("lowered");
        assert_eq!(arguments["per_page"], json!(100));
        assert!(said.contains("from 500 to 100"), "{said}");
        assert_eq!(paging.clamp(&mut arguments, 1_000), None);
    }

    #[test]
    fn the_next_link_is_found_among_others_and_resolved() {
        let base =
            url::Url::parse("https://api.example.test/repos/o/r/issues?page=1").expect("url");
        let github = "<https://api.example.test/repos/o/r/issues?page=2&per_page=30>; rel=\"next\", \
                      <https://api.example.test/repos/o/r/issues?page=9&per_page=30>; rel=\"last\"";
        assert_eq!(
            link_next(github, &base).map(|u| u.to_string()).as_deref(),
            Some("https://api.example.test/repos/o/r/issues?page=2&per_page=30")
        );
        // rel with several values, unquoted, a relative target, a comma inside the URL.
        let other = "</items?cursor=a,b>; title=\"x, y\"; rel=\"prev next\"";
        assert_eq!(
            link_next(other, &base).map(|u| u.to_string()).as_deref(),
            Some("https://api.example.test/items?cursor=a,b")
        );
        assert_eq!(link_next("<https://a.test/?p=0>; rel=prev", &base), None);
        assert_eq!(link_next("rel=next", &base), None);
        assert_eq!(link_next("<unclosed; rel=next", &base), None);
    }
}
