//! `[loading]`: what a spec and the documents it references may reach, and how much of them
//! is read (the book's Security model, `docs/src/security.md`), with its defaults. Spec loading turns it into its own policy
//! (`spec::LoadPolicy::from_settings`).

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

/// What a spec and the documents it references may reach, and how much is read.
/// The spec the operator names is trusted as a location; what it references is not.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadingSettings {
    /// The largest single document (spec or referenced file/URL), in bytes.
    pub max_document_bytes: u64,
    /// The most bytes all documents of one API may have together; also the most bytes YAML
    /// aliases may add to them once expanded.
    pub max_api_bytes: u64,
    /// The most values YAML aliases may add (beyond what the text spells out) across all
    /// documents of one API: bounds a "billion laughs", also one split over files.
    pub max_yaml_alias_values: u64,
    /// Origins (`https://schemas.example.com`) `$ref`s may reach besides the root spec's
    /// own origin.
    pub ref_origins: Vec<String>,
    /// Let `$ref`s reach loopback, link-local, private and unspecified addresses (the root
    /// spec's own origin always may).
    pub allow_private_addresses: bool,
    /// Directories (relative to this file) file `$ref`s may read from besides the root
    /// spec's directory.
    pub ref_dirs: Vec<RelativePathBuf>,
    /// Give a `NAME.overlay.yaml` found beside its spec (and not named in `overlays`) the
    /// operator's powers. Off, such a file still shapes tools, with a spec's powers only:
    /// whoever can drop a file beside a spec is not the operator.
    pub trust_conventional_overlays: bool,
}

/// Default of `loading.max_document_bytes`: 64 MiB.
pub const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// Default of `loading.max_api_bytes`: 256 MiB.
pub const DEFAULT_MAX_API_BYTES: u64 = 256 << 20;
/// Default of `loading.max_yaml_alias_values`.
pub const DEFAULT_MAX_YAML_ALIAS_VALUES: u64 = 1_000_000;

impl Default for LoadingSettings {
    fn default() -> Self {
        LoadingSettings {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_api_bytes: DEFAULT_MAX_API_BYTES,
            max_yaml_alias_values: DEFAULT_MAX_YAML_ALIAS_VALUES,
            ref_origins: Vec::new(),
            allow_private_addresses: false,
            ref_dirs: Vec::new(),
            trust_conventional_overlays: false,
        }
    }
}
