//! The forms a secret may be echoed in, each searched for by redaction: as it is; base64
//! (standard and URL-safe, padded or not, and the run of characters that depends on the
//! secret's bytes alone at each of the three byte alignments, for a secret inside a longer
//! encoded text); hex; percent-encoded as a query value, a form field, a path segment and
//! by JavaScript's `encodeURIComponent` and Python's `quote`; escaped as a JSON string; in
//! any ASCII letter case. A secret shorter than [`MIN_ENCODED_LEN`] bytes has one form,
//! itself, matched exactly.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use url::form_urlencoded;

/// Secrets shorter than this are matched only exactly (see the module documentation).
pub(super) const MIN_ENCODED_LEN: usize = 8;

/// RFC 3986 unreserved characters stay; everything else is encoded (a query value, as
/// the API-key placement writes it).
pub(super) const UNRESERVED: &AsciiSet = super::QUERY_VALUE;

/// What Python's `urllib.parse.quote` (safe `/`, the default) leaves alone: werkzeug and
/// most Python frameworks write echoed URLs with it (seen from httpbin).
const PYTHON_QUOTE: &AsciiSet = &UNRESERVED.remove(b'/');

/// What JavaScript's `encodeURIComponent` leaves alone.
pub(super) const URI_COMPONENT: &AsciiSet = &UNRESERVED
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// A path segment as the WHATWG URL standard encodes it (plus `%`, so the result decodes).
pub(super) const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'%');

/// One form of a secret to look for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Form {
    pub(super) bytes: Vec<u8>,
    /// Matched ignoring ASCII case.
    fold: bool,
}

impl Form {
    /// Whether `found` (as long as the form) is this form.
    pub(super) fn matches(&self, found: &[u8]) -> bool {
        if self.fold {
            found.eq_ignore_ascii_case(&self.bytes)
        } else {
            found == self.bytes.as_slice()
        }
    }
}

/// Every form of `secret` to search for (see the module documentation).
pub(super) fn forms_of(secret: &str) -> Vec<Form> {
    let bytes = secret.as_bytes();
    if bytes.is_empty() {
        return Vec::new();
    }
    if bytes.len() < MIN_ENCODED_LEN {
        return vec![Form {
            bytes: bytes.to_vec(),
            fold: false,
        }];
    }
    let folded = |text: String| Form {
        bytes: text.into_bytes(),
        fold: true,
    };
    let exact = |text: String| Form {
        bytes: text.into_bytes(),
        fold: false,
    };
    let mut forms = vec![folded(secret.to_string())];
    forms.push(folded(
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    ));
    for set in [
        UNRESERVED,
        PYTHON_QUOTE,
        URI_COMPONENT,
        PATH_SEGMENT,
        NON_ALPHANUMERIC,
    ] {
        forms.push(folded(utf8_percent_encode(secret, set).to_string()));
    }
    forms.push(folded(form_urlencoded::byte_serialize(bytes).collect()));
    if let Ok(json) = serde_json::to_string(secret) {
        let inner = &json[1..json.len() - 1];
        forms.push(folded(inner.to_string()));
        // PHP's json_encode and some Java encoders also escape `/`.
        if inner.contains('/') {
            forms.push(folded(inner.replace('/', "\\/")));
        }
    }
    for engine in [STANDARD, URL_SAFE] {
        forms.push(exact(engine.encode(bytes)));
    }
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        forms.push(exact(engine.encode(bytes)));
        for offset in 0..3 {
            // The secret `offset` bytes into a group of three: encode it behind that many
            // zero bytes and keep only the characters made of the secret's bits alone
            // (inside a longer text, the last one or two may mix in the next bytes).
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(bytes);
            let encoded = engine.encode(&shifted);
            let first = (8 * offset).div_ceil(6);
            let last = 8 * (offset + bytes.len()) / 6;
            if let Some(core) = encoded.get(first..last) {
                forms.push(exact(core.to_string()));
            }
        }
    }
    forms
}
