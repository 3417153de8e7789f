//! What a reload changed in the tool set.

use std::collections::HashSet;
use std::fmt;

use crate::catalog::{Catalog, Tool};

/// The difference between two tool sets, by tool name. Each list is in catalog order
/// (`added` and `changed` in the new catalog's, `removed` in the old one's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Same name, but a different MCP wire form ([`Tool::mcp`]) or a different route.
    pub changed: Vec<String>,
}

impl CatalogDiff {
    pub fn between(old: &Catalog, new: &Catalog) -> CatalogDiff {
        let mut diff = CatalogDiff::default();
        let mut buffers = (Vec::new(), Vec::new());
        for tool in new.tools() {
            match old.get(&tool.name) {
                None => diff.added.push(tool.name.clone()),
                Some(before) => {
                    if differs(before, tool, &mut buffers) {
                        diff.changed.push(tool.name.clone());
                    }
                }
            }
        }
        let kept: HashSet<&str> = new.tools().iter().map(|t| t.name.as_str()).collect();
        diff.removed = old
            .tools()
            .iter()
            .filter(|t| !kept.contains(t.name.as_str()))
            .map(|t| t.name.clone())
            .collect();
        diff
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Whether two tools with the same name differ on the wire or in where calls go. Both
/// sides are compared as serialized bytes: the MCP form is exactly what `tools/list`
/// sends, so any difference a client could see counts (also a new key order) and a field
/// added to [`crate::catalog::McpTool`] later is covered without touching this. The whole
/// [`crate::catalog::Route`] is compared, not only method, path, API and base URL: an
/// argument moved from the query to a header changes the call but not the input schema.
fn differs(old: &Tool, new: &Tool, (a, b): &mut (Vec<u8>, Vec<u8>)) -> bool {
    let same = |a: &mut Vec<u8>, b: &mut Vec<u8>, ser: &dyn Fn(&mut Vec<u8>, &Tool) -> bool| {
        a.clear();
        b.clear();
        // Serializing plain data into memory cannot fail; if it did, call it changed.
        ser(a, old) && ser(b, new) && a == b
    };
    let mcp = |out: &mut Vec<u8>, tool: &Tool| serde_json::to_writer(out, &tool.mcp()).is_ok();
    let route = |out: &mut Vec<u8>, tool: &Tool| serde_json::to_writer(out, &tool.route).is_ok();
    !(same(a, b, &mcp) && same(a, b, &route))
}

/// At most this many names are listed per group.
const LISTED: usize = 10;

impl fmt::Display for CatalogDiff {
    /// `2 added (a, b), 1 removed (c), 0 changed`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let groups = [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ];
        for (i, (label, names)) in groups.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} {label}", names.len())?;
            if names.is_empty() {
                continue;
            }
            f.write_str(" (")?;
            for (j, name) in names.iter().take(LISTED).enumerate() {
                if j > 0 {
                    f.write_str(", ")?;
                }
                f.write_str(name)?;
            }
            if names.len() > LISTED {
                write!(f, ", … and {} more", names.len() - LISTED)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}
