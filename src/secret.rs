//! Values that never print: a [`Secret`] shows as [`REDACTED`] in `Debug` and `Display`,
//! so a credential or an access token cannot reach a log or a message by accident. Used by
//! upstream credentials (`upstream::auth`) and the HTTP guard's bearer tokens alike.

use std::fmt;

/// What replaces a secret in any text restmcp returns or logs.
pub const REDACTED: &str = "[REDACTED]";

/// A credential value. It prints as `[REDACTED]`, so it cannot reach a log or a message by
/// accident; [`Secret::expose`] is the one way to the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}
