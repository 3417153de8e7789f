//! `apis.NAME.forward_headers`: headers of the incoming MCP request passed on upstream,
//! as they are written (a name, or `{ from, to }`), and those that may never be forwarded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One entry of `forward_headers`: a header name, or `{ from, to }` to rename it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged, try_from = "RawForwardHeader")]
pub enum ForwardHeader {
    Same(String),
    Renamed(HeaderRename),
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
pub struct HeaderRename {
    pub from: String,
    pub to: String,
}

/// What `forward_headers` entries are read as, so a wrong table gets a precise message.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawForwardHeader {
    Same(String),
    Table(BTreeMap<String, String>),
}

impl TryFrom<RawForwardHeader> for ForwardHeader {
    type Error = String;

    fn try_from(raw: RawForwardHeader) -> Result<Self, String> {
        match raw {
            RawForwardHeader::Same(name) => Ok(ForwardHeader::Same(name)),
            RawForwardHeader::Table(mut table) => {
                let from = table.remove("from");
                let to = table.remove("to");
                match (from, to, table.keys().next()) {
                    (Some(from), Some(to), None) => {
                        Ok(ForwardHeader::Renamed(HeaderRename { from, to }))
                    }
                    (_, _, Some(unknown)) => Err(format!(
                        "unknown key `{unknown}`: an entry is a header name or {{ from = \"…\", to = \"…\" }}"
                    )),
                    _ => Err(
                        "an entry is a header name or { from = \"…\", to = \"…\" } with both keys"
                            .to_string(),
                    ),
                }
            }
        }
    }
}

impl ForwardHeader {
    /// The incoming header's name.
    pub fn from(&self) -> &str {
        match self {
            ForwardHeader::Same(name) => name,
            ForwardHeader::Renamed(rename) => &rename.from,
        }
    }

    /// The name it is sent upstream under.
    pub fn to(&self) -> &str {
        match self {
            ForwardHeader::Same(name) => name,
            ForwardHeader::Renamed(rename) => &rename.to,
        }
    }
}

/// Headers that describe the connection or the message framing, which restmcp's HTTP
/// client owns: forwarding them would corrupt the upstream request.
///
/// The headers an argument may not set are `upstream::request`'s `FORBIDDEN_HEADERS`: the
/// same framing and connection names, without `expect` (a client's `Expect` describes its own
/// upload to restmcp; an argument's is sent as given) and with `proxy-authorization` (an
/// argument's value comes from the model; forwarding one is the operator's explicit choice).
pub(super) const UNFORWARDABLE: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-connection",
    "expect",
];
