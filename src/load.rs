//! From a [`Config`] to a ready [`Catalog`]: every API's spec loaded (concurrently) and
//! synthesized. This is the one entry point the CLI, the server and reloads share.

use crate::catalog::{self, ApiInput, Catalog, CatalogError, Report};
use crate::config::Config;
use crate::spec::{self, DocumentSet, SpecError};

/// The result of loading a configuration.
pub struct Loaded {
    pub catalog: Catalog,
    pub report: Report,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("API \"{api}\": {error}")]
    Spec { api: String, error: SpecError },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("loading a spec failed unexpectedly: {0}")]
    Task(String),
}

/// Loads every configured API and synthesizes the catalog.
pub async fn load(config: &Config) -> Result<Loaded, LoadError> {
    let mut tasks = tokio::task::JoinSet::new();
    for (index, (name, api)) in config.apis.iter().enumerate() {
        let source = api.source().map_err(|error| LoadError::Spec {
            api: name.clone(),
            error,
        })?;
        tasks.spawn(async move { (index, spec::load(&source).await) });
    }
    let names: Vec<&String> = config.apis.keys().collect();
    let mut loaded: Vec<Option<DocumentSet>> = names.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        let (index, result) = joined.map_err(|e| LoadError::Task(e.to_string()))?;
        let docs = result.map_err(|error| LoadError::Spec {
            api: names[index].clone(),
            error,
        })?;
        loaded[index] = Some(docs);
    }
    let documents: Vec<(&String, DocumentSet)> = names
        .into_iter()
        .zip(loaded)
        .filter_map(|(name, docs)| docs.map(|d| (name, d)))
        .collect();
    let inputs: Vec<ApiInput<'_>> = documents
        .iter()
        .map(|(name, docs)| {
            let api = &config.apis[name.as_str()];
            ApiInput {
                name,
                docs,
                base_url: api.base_url.as_deref(),
                prefix: api.prefix.as_deref().unwrap_or(""),
            }
        })
        .collect();
    let (catalog, report) = catalog::build(&inputs, &config.tools)?;
    Ok(Loaded { catalog, report })
}
