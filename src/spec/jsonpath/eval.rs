//! Selection (RFC 9535 §2.3, §2.5–§2.7): a parsed [`Query`] applied to a document. Nodes
//! carry their location as a chain of [`Step`]s shared with their parent, and [`select`]
//! returns those locations in document order without duplicates. Filter selectors are
//! evaluated by [`super::filter`], function calls by [`super::function`].

use std::rc::Rc;

use serde_json::Value;

use super::syntax::{Query, Segment, Selector};

/// One step of a normalized path (§2.7), borrowing member names from the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A location as a linked list towards the root, shared between a node and its children.
struct Link<'a> {
    parent: Option<Rc<Link<'a>>>,
    step: Step<'a>,
    /// Position of the step among its parent's children, for document order.
    ordinal: usize,
}

#[derive(Clone)]
pub(super) struct Node<'a> {
    pub(super) value: &'a Value,
    /// `None` for the root, and for every node when locations are not tracked.
    location: Option<Rc<Link<'a>>>,
}

/// Locations selected by `query` in `document`, deduplicated, in document order.
pub fn select<'a>(document: &'a Value, query: &'a Query) -> Vec<Vec<Step<'a>>> {
    let eval = Eval { root: document };
    let nodes = eval.query(query, document, true);
    let unwind = |node: &Node<'a>| {
        let mut steps = Vec::new();
        let mut ordinals = Vec::new();
        let mut link = node.location.as_deref();
        while let Some(current) = link {
            steps.push(current.step);
            ordinals.push(current.ordinal);
            link = current.parent.as_deref();
        }
        steps.reverse();
        ordinals.reverse();
        (ordinals, steps)
    };
    if query.keeps_document_order() {
        return nodes.iter().map(|node| unwind(node).1).collect();
    }
    // Ordinals identify a location as well as its steps do, and sort a parent before its
    // children, array elements by index and members in the order the document holds them;
    // sorted, duplicates are neighbours.
    let mut located: Vec<(Vec<usize>, Vec<Step<'a>>)> = nodes.iter().map(unwind).collect();
    located.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    located.dedup_by(|a, b| a.0 == b.0);
    located.into_iter().map(|(_, steps)| steps).collect()
}

pub(super) struct Eval<'a> {
    root: &'a Value,
}

impl<'a> Eval<'a> {
    /// §2.1.2: the nodelist a query produces, from `current` for `@` queries.
    pub(super) fn query(&self, query: &'a Query, current: &'a Value, track: bool) -> Vec<Node<'a>> {
        let start = if query.absolute { self.root } else { current };
        let mut nodes = vec![Node {
            value: start,
            location: None,
        }];
        for segment in &query.segments {
            if nodes.is_empty() {
                break;
            }
            nodes = self.segment(segment, nodes, track);
        }
        nodes
    }

    /// The value of a singular query, without building a nodelist.
    pub(super) fn singular(&self, query: &'a Query, current: &'a Value) -> Option<&'a Value> {
        let start = if query.absolute { self.root } else { current };
        query.segments.iter().try_fold(start, |node, segment| {
            match (segment.selectors.as_slice(), node) {
                ([Selector::Name(name)], Value::Object(map)) => map.get(name),
                ([Selector::Index(index)], Value::Array(items)) => {
                    normalize_index(*index, items.len()).and_then(|i| items.get(i))
                }
                _ => None,
            }
        })
    }

    /// §2.5.1.2 child segment and §2.5.2.2 descendant segment semantics.
    fn segment(&self, segment: &'a Segment, input: Vec<Node<'a>>, track: bool) -> Vec<Node<'a>> {
        let mut out = Vec::new();
        for node in input {
            if segment.descendant {
                // Pre-order with an explicit stack: a node before its descendants, children
                // in document order, so depth is not bounded by the call stack.
                let mut stack = vec![node];
                while let Some(visited) = stack.pop() {
                    for selector in &segment.selectors {
                        self.selector(selector, &visited, &mut out, track);
                    }
                    let mut children = Vec::new();
                    push_children(&visited, &mut children, track);
                    stack.extend(children.into_iter().rev());
                }
            } else {
                for selector in &segment.selectors {
                    self.selector(selector, &node, &mut out, track);
                }
            }
        }
        out
    }

    /// §2.3 selector semantics.
    fn selector(
        &self,
        selector: &'a Selector,
        node: &Node<'a>,
        out: &mut Vec<Node<'a>>,
        track: bool,
    ) {
        match (selector, node.value) {
            // §2.3.1.2: the member with that name, if the node is an object that has it.
            (Selector::Name(name), Value::Object(map)) => {
                if let Some((key, value)) = map.get_key_value(name) {
                    // The position is only needed to sort, and costs a scan of the keys.
                    let ordinal = if track {
                        map.keys().position(|k| k == key).unwrap_or(usize::MAX)
                    } else {
                        0
                    };
                    out.push(child(node, Step::Key(key), ordinal, value, track));
                }
            }
            // §2.3.2.2: every child of an object or array.
            (Selector::Wildcard, _) => push_children(node, out, track),
            // §2.3.3.2: negative indices count from the end.
            (Selector::Index(index), Value::Array(items)) => {
                if let Some(i) = normalize_index(*index, items.len())
                    && let Some(value) = items.get(i)
                {
                    out.push(child(node, Step::Index(i), i, value, track));
                }
            }
            (Selector::Slice { start, end, step }, Value::Array(items)) => {
                for i in slice_indices(*start, *end, *step, items.len()) {
                    if let Some(value) = items.get(i) {
                        out.push(child(node, Step::Index(i), i, value, track));
                    }
                }
            }
            // §2.3.5.2: the children for which the logical expression is true.
            (Selector::Filter(filter), Value::Object(_) | Value::Array(_)) => {
                let mut children = Vec::new();
                push_children(node, &mut children, track);
                out.extend(
                    children
                        .into_iter()
                        .filter(|candidate| self.logical(filter, candidate.value)),
                );
            }
            _ => {}
        }
    }
}

fn child<'a>(
    parent: &Node<'a>,
    step: Step<'a>,
    ordinal: usize,
    value: &'a Value,
    track: bool,
) -> Node<'a> {
    let location = track.then(|| {
        Rc::new(Link {
            parent: parent.location.clone(),
            step,
            ordinal,
        })
    });
    Node { value, location }
}

pub(super) fn push_children<'a>(node: &Node<'a>, out: &mut Vec<Node<'a>>, track: bool) {
    match node.value {
        Value::Object(map) => {
            for (ordinal, (key, value)) in map.iter().enumerate() {
                out.push(child(node, Step::Key(key), ordinal, value, track));
            }
        }
        Value::Array(items) => {
            for (index, value) in items.iter().enumerate() {
                out.push(child(node, Step::Index(index), index, value, track));
            }
        }
        _ => {}
    }
}

/// §2.3.3.2: `i` for `i >= 0`, `len + i` for negative `i`; `None` when out of range.
fn normalize_index(index: i64, len: usize) -> Option<usize> {
    let i = if index >= 0 {
        usize::try_from(index).ok()?
    } else {
        len.checked_sub(usize::try_from(index.unsigned_abs()).ok()?)?
    };
    (i < len).then_some(i)
}

/// §2.3.4.2.2 slice semantics (the `Normalize` and `Bounds` functions).
pub(super) fn slice_indices(
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> Vec<usize> {
    let step = step.unwrap_or(1);
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let normalize = |i: i64| if i >= 0 { i } else { len.saturating_add(i) };
    let mut out = Vec::new();
    if step > 0 {
        let lower = start.map_or(0, normalize).max(0).min(len);
        let upper = end.map_or(len, normalize).max(0).min(len);
        let mut i = lower;
        while i < upper {
            out.extend(usize::try_from(i).ok());
            i = i.saturating_add(step);
        }
    } else if step < 0 {
        let upper = start.map_or(len - 1, normalize).max(-1).min(len - 1);
        let lower = end
            .map_or(len.saturating_neg().saturating_sub(1), normalize)
            .max(-1)
            .min(len - 1);
        let mut i = upper;
        while lower < i {
            out.extend(usize::try_from(i).ok());
            i = i.saturating_add(step);
        }
    }
    out
}
