//! Selection: which operations of an API become tools (`include`, `exclude`, `read_only`).

use crate::config::{Filter, Filters};
use crate::spec::Method;

/// One API's selection settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    pub read_only: bool,
    pub include: Option<&'a Filters>,
    pub exclude: Option<&'a Filters>,
}

/// What a filter looks at in an operation.
pub struct Candidate<'a> {
    pub method: Method,
    pub path: &'a str,
    pub operation_id: Option<&'a str>,
    pub tags: &'a [String],
}

impl Selection<'_> {
    /// `None` when the operation is kept, else why it is not.
    pub fn exclusion(&self, op: &Candidate<'_>) -> Option<String> {
        if self.read_only && !op.method.is_safe() {
            return Some(format!(
                "read_only keeps safe methods only, not {}",
                op.method
            ));
        }
        if let Some(include) = self.include
            && !include.0.iter().any(|f| matches(f, op))
        {
            return Some("not matched by include".into());
        }
        if let Some(exclude) = self.exclude
            && let Some(i) = exclude.0.iter().position(|f| matches(f, op))
        {
            return Some(if exclude.0.len() > 1 {
                format!("matched by exclude[{i}]")
            } else {
                "matched by exclude".into()
            });
        }
        None
    }
}

fn matches(filter: &Filter, op: &Candidate<'_>) -> bool {
    let label = format!("{} {}", op.method, op.path);
    (filter.tags.is_empty() || filter.tags.iter().any(|t| op.tags.contains(t)))
        && (filter.operations.is_empty()
            || filter
                .operations
                .iter()
                .any(|o| Some(o.as_str()) == op.operation_id || same_label(o, &label)))
        && (filter.paths.is_empty() || filter.paths.iter().any(|g| glob(g, op.path)))
        && (filter.methods.is_empty()
            || filter
                .methods
                .iter()
                .any(|m| m.eq_ignore_ascii_case(op.method.as_str())))
}

/// `get /pets` and `GET /pets` name the same operation.
pub fn same_label(key: &str, label: &str) -> bool {
    match (key.split_once(' '), label.split_once(' ')) {
        (Some((km, kp)), Some((lm, lp))) => km.eq_ignore_ascii_case(lm) && kp.trim() == lp,
        _ => false,
    }
}

/// Path globs: `*` matches within one segment, `**` across segments, `?` one character
/// other than `/`; everything else (including `{id}`) is literal.
pub fn glob(pattern: &str, path: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) if rest.first() == Some(&b'*') => {
                let rest = &rest[1..];
                // `/**/` may also match a single `/`.
                if rest.first() == Some(&b'/') && go(&rest[1..], s) {
                    return true;
                }
                (0..=s.len()).any(|i| go(rest, &s[i..]))
            }
            Some((b'*', rest)) => {
                let segment = s.iter().position(|&b| b == b'/').unwrap_or(s.len());
                (0..=segment).any(|i| go(rest, &s[i..]))
            }
            Some((b'?', rest)) => s.first().is_some_and(|&b| b != b'/') && go(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(pattern.as_bytes(), path.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_keep_single_stars_within_a_segment() {
        assert!(glob("/pets/*", "/pets/{petId}"));
        assert!(!glob("/pets/*", "/pets/{petId}/photos"));
        assert!(glob("/pets/**", "/pets/{petId}/photos"));
        assert!(glob("/pets/**", "/pets/x"));
        assert!(glob("/**/photos", "/pets/{id}/photos"));
        assert!(glob("/**/photos", "/photos"));
        assert!(glob("/store/inventory", "/store/inventory"));
        assert!(!glob("/store", "/store/inventory"));
        assert!(glob("/user?", "/users"));
    }

    fn filter(text: &str) -> Filters {
        let value: Filter = toml_like(text);
        Filters(vec![value])
    }

    fn toml_like(text: &str) -> Filter {
        serde_json::from_str(text).expect("filter json")
    }

    #[test]
    fn criteria_combine_with_and_and_lists_with_or() {
        let tags = vec!["pet".to_string()];
        let op = Candidate {
            method: Method::Get,
            path: "/pet/{petId}",
            operation_id: Some("getPetById"),
            tags: &tags,
        };
        let include = filter(r#"{"tags": ["store", "pet"], "methods": ["get"]}"#);
        let selection = Selection {
            include: Some(&include),
            ..Selection::default()
        };
        assert_eq!(selection.exclusion(&op), None);
        let include = filter(r#"{"tags": ["pet"], "methods": ["POST"]}"#);
        let selection = Selection {
            include: Some(&include),
            ..Selection::default()
        };
        assert!(selection.exclusion(&op).is_some());
        let exclude = filter(r#"{"operations": ["get /pet/{petId}"]}"#);
        let selection = Selection {
            exclude: Some(&exclude),
            ..Selection::default()
        };
        assert_eq!(
            selection.exclusion(&op).as_deref(),
            Some("matched by exclude")
        );
    }

    #[test]
    fn an_empty_include_list_includes_nothing() {
        let include: Filters = serde_json::from_str("[]").expect("filters");
        assert!(include.0.is_empty());
        let selection = Selection {
            include: Some(&include),
            ..Selection::default()
        };
        let op = Candidate {
            method: Method::Get,
            path: "/a",
            operation_id: None,
            tags: &[],
        };
        assert!(selection.exclusion(&op).is_some());
        let one: Filters = serde_json::from_str(r#"{"tags": ["a"]}"#).expect("filters");
        assert_eq!(one.0.len(), 1);
    }

    #[test]
    fn read_only_keeps_safe_methods() {
        let selection = Selection {
            read_only: true,
            ..Selection::default()
        };
        let post = Candidate {
            method: Method::Post,
            path: "/pet",
            operation_id: None,
            tags: &[],
        };
        assert!(selection.exclusion(&post).unwrap().contains("POST"));
        let head = Candidate {
            method: Method::Head,
            ..post
        };
        assert_eq!(selection.exclusion(&head), None);
    }
}
