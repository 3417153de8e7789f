//! `[loading]`: what a spec and the documents it references may reach, and how much of them
//! is read (issue #19).

use figment::value::magic::RelativePathBuf;
use serde::{Deserialize, Serialize};

use super::parse_origin;

/// What a spec and the documents it references may reach, and how much is read (issue #19).
/// The spec the operator names is trusted as a location; what it references is not.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadingSettings {
    /// The largest single document (spec or referenced file/URL), in bytes.
    pub max_document_bytes: u64,
    /// The most bytes all documents of one API may have together.
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
}

impl Default for LoadingSettings {
    fn default() -> Self {
        let policy = crate::spec::LoadPolicy::default();
        LoadingSettings {
            max_document_bytes: policy.max_document_bytes,
            max_api_bytes: policy.max_api_bytes,
            max_yaml_alias_values: policy.max_yaml_alias_values,
            ref_origins: Vec::new(),
            allow_private_addresses: false,
            ref_dirs: Vec::new(),
        }
    }
}

impl LoadingSettings {
    /// The policy spec loading applies (origins normalized, directories resolved).
    pub fn policy(&self) -> crate::spec::LoadPolicy {
        crate::spec::LoadPolicy {
            max_document_bytes: self.max_document_bytes,
            max_api_bytes: self.max_api_bytes,
            max_yaml_alias_values: self.max_yaml_alias_values,
            ref_origins: self
                .ref_origins
                .iter()
                .filter_map(|o| parse_origin(o).ok())
                .collect(),
            allow_private_addresses: self.allow_private_addresses,
            ref_dirs: self
                .ref_dirs
                .iter()
                .map(RelativePathBuf::relative)
                .collect(),
        }
    }
}
