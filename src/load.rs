//! From a [`Config`] to a ready [`Catalog`]: every API's spec and overlays loaded
//! (concurrently), OpenAPI Overlays applied to the spec, and the tools synthesized with the
//! restmcp overlays on top. This is the one entry point the CLI, the server and reloads
//! share; it also says which files and URLs the result depends on, for the watcher.

use std::path::PathBuf;

use serde_json::Value;

use crate::catalog::patch::{self, OverlayFile};
use crate::catalog::{self, ApiInput, Catalog, CatalogError, Report, Selection};
use crate::config::Config;
use crate::spec::{self, DocumentSet, SpecError, SpecSource};

/// The result of loading a configuration.
pub struct Loaded {
    pub catalog: Catalog,
    pub report: Report,
    /// What the result was built from.
    pub inputs: Inputs,
}

/// The files, directories and URLs a tool set was built from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    /// Spec documents (with the files they reference) and overlays, including conventional
    /// overlay files that do not exist yet.
    pub files: Vec<PathBuf>,
    /// `specs_dir`, where a new spec becomes a new API.
    pub dirs: Vec<PathBuf>,
    /// Spec documents loaded over HTTP.
    pub urls: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("API \"{api}\": {error}")]
    Spec { api: String, error: SpecError },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("loading a spec failed unexpectedly: {0}")]
    Task(String),
    #[error("{}{error}", workflows_key(set))]
    Workflows { set: String, error: String },
}

fn workflows_key(set: &str) -> String {
    match set {
        "" => String::new(),
        set => format!("workflows.{set}: "),
    }
}

/// Reads every `[workflows.NAME]` document (a file that cannot be read or parsed is an
/// error naming it, as a spec's is) and maps its sources to APIs: `sources` first, then
/// an OpenAPI source whose `url` is the file an API's `spec` names. Also gives the files
/// read, for the watcher.
fn read_workflows<'c>(
    config: &'c Config,
    catalog: &Catalog,
) -> Result<(Vec<catalog::workflow::WorkflowInput<'c>>, Vec<PathBuf>), LoadError> {
    let mut inputs = Vec::new();
    let mut files = Vec::new();
    for (set, settings) in &config.workflows {
        let fail = |error: String| LoadError::Workflows {
            set: set.clone(),
            error,
        };
        let path = settings.file.relative();
        files.push(path.clone());
        let shown = path.display().to_string();
        let cap = config.loading.max_document_bytes;
        let bytes = spec::place::read_regular_file(&path, cap)
            .map_err(|error| fail(format!("{shown}: {error}")))?;
        if bytes.len() as u64 > cap {
            return Err(fail(format!(
                "{shown} is larger than loading.max_document_bytes ({cap} bytes)"
            )));
        }
        let value =
            spec::parse::parse_document(&shown, &bytes).map_err(|error| fail(error.to_string()))?;
        let document = spec::arazzo::document::read(&value);
        let mut apis = std::collections::BTreeMap::new();
        for (source, api) in &settings.sources {
            let known = config.apis.contains_key(api)
                || catalog.tools().iter().any(|tool| &tool.route.api == api);
            if !known {
                return Err(fail(format!(
                    "sources.{source} = \"{api}\": there is no [apis.{api}]"
                )));
            }
            if !document.sources.iter().any(|s| &s.name == source) {
                return Err(fail(format!(
                    "sources.{source}: {shown} has no sourceDescription \"{source}\" (it has {})",
                    document
                        .sources
                        .iter()
                        .map(|s| format!("\"{}\"", s.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            apis.insert(source.clone(), api.clone());
        }
        for source in &document.sources {
            if apis.contains_key(&source.name) {
                continue;
            }
            if let Some(api) = api_of_url(config, &path, &source.url) {
                apis.insert(source.name.clone(), api);
            }
        }
        inputs.push(catalog::workflow::WorkflowInput {
            set,
            settings,
            file: shown,
            document,
            apis,
        });
    }
    Ok((inputs, files))
}

/// The API whose `spec` is the file a source's `url` names (relative to the Arazzo
/// document), if one is.
fn api_of_url(config: &Config, document: &std::path::Path, url: &str) -> Option<String> {
    if url.contains("://") {
        return config
            .apis
            .iter()
            .find(|(_, api)| matches!(SpecSource::of_api(api), Some(Ok(SpecSource::Url(u))) if u.as_str() == url))
            .map(|(name, _)| name.clone());
    }
    let named = document.parent()?.join(url).canonicalize().ok()?;
    config
        .apis
        .iter()
        .find(|(_, api)| match SpecSource::of_api(api) {
            Some(Ok(SpecSource::File(path))) => path.canonicalize().ok().as_ref() == Some(&named),
            _ => false,
        })
        .map(|(name, _)| name.clone())
}

/// One API's documents after loading.
struct LoadedApi {
    docs: Option<DocumentSet>,
    /// Things to report about loading (OpenAPI Overlay actions that selected nothing).
    notes: Vec<String>,
    overlays: Vec<(String, OverlayFile)>,
    files: Vec<PathBuf>,
}

/// Loads every configured API and synthesizes the catalog.
pub async fn load(config: &Config) -> Result<Loaded, LoadError> {
    let mut apis = load_apis(config).await?;
    let mut inputs = inputs_of(config, &apis);
    let api_inputs = api_inputs(config, &apis);
    let (mut catalog, mut report) = catalog::build(&api_inputs, &config.tools)?;
    let prompts = catalog::prompt::gather(&config.prompts, &api_inputs, &catalog)?;
    catalog.set_prompts(prompts);
    drop(api_inputs);
    let (workflow_inputs, workflow_files) = read_workflows(config, &catalog)?;
    let (workflow_tools, workflow_reports) =
        catalog::workflow::build(workflow_inputs, &catalog, &config.tools);
    catalog
        .add_workflows(workflow_tools)
        .map_err(|error| LoadError::Workflows {
            set: String::new(),
            error,
        })?;
    report.workflows = workflow_reports;
    // The parsed documents are the largest thing loading holds (GitHub's 13 MB spec: a
    // start-up peak of 85 MB parsed whole, 67 MB with what no `$ref` reaches left as
    // text, 63 MB with its path items read a part at a time); the tools no longer need
    // them, and what follows allocates.
    for (_, api) in &mut apis {
        api.docs = None;
    }
    complete_report(config, &catalog, &mut report, &apis);
    // What is served: listed tools and the discovery tools, not every tool.
    report.list_bytes = crate::discovery::served_list_bytes(&catalog);
    for file in workflow_files {
        if !inputs.files.contains(&file) {
            inputs.files.push(file);
        }
    }
    Ok(Loaded {
        catalog,
        report,
        inputs,
    })
}

/// Every configured API's spec and overlays, loaded concurrently, in configuration order.
async fn load_apis(config: &Config) -> Result<Vec<(&String, LoadedApi)>, LoadError> {
    let mut tasks = tokio::task::JoinSet::new();
    for (index, (name, api)) in config.apis.iter().enumerate() {
        let source = SpecSource::of_api(api)
            .transpose()
            .map_err(|error| LoadError::Spec {
                api: name.clone(),
                error,
            })?;
        let trusted = config.loading.trust_conventional_overlays;
        let overlay_files: Vec<(PathBuf, bool)> = api
            .overlay_files()
            .into_iter()
            .map(|(file, listed)| (file, listed || trusted))
            .collect();
        let mut watched: Vec<PathBuf> = overlay_files.iter().map(|(f, _)| f.clone()).collect();
        if let Some(conventional) = api.conventional_overlay()
            && !watched.contains(&conventional)
        {
            watched.push(conventional);
        }
        let policy = spec::LoadPolicy::from_settings(&config.loading);
        tasks.spawn(async move {
            let result = load_api(source, &policy, overlay_files, watched).await;
            (index, result)
        });
    }
    let names: Vec<&String> = config.apis.keys().collect();
    let mut loaded: Vec<Option<LoadedApi>> = names.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        let (index, result) = joined.map_err(|e| LoadError::Task(e.to_string()))?;
        let api = result.map_err(|error| LoadError::Spec {
            api: names[index].clone(),
            error,
        })?;
        loaded[index] = Some(api);
    }
    Ok(names
        .into_iter()
        .zip(loaded)
        .filter_map(|(name, api)| api.map(|a| (name, a)))
        .collect())
}

/// What the loaded APIs were built from: `specs_dir`, the overlay files and every spec
/// document's file or URL, each once.
fn inputs_of(config: &Config, apis: &[(&String, LoadedApi)]) -> Inputs {
    let mut inputs = Inputs::default();
    if let Some(dir) = &config.specs_dir {
        inputs.dirs.push(dir.relative());
    }
    for (_, api) in apis {
        for file in &api.files {
            if !inputs.files.contains(file) {
                inputs.files.push(file.clone());
            }
        }
        for doc in api.docs.iter().flat_map(|d| d.documents()) {
            match doc.url.scheme() {
                "file" => {
                    if let Ok(path) = doc.url.to_file_path()
                        && !inputs.files.contains(&path)
                    {
                        inputs.files.push(path);
                    }
                }
                _ => inputs.urls.push(doc.url.to_string()),
            }
        }
    }
    inputs
}

/// Each loaded API with its settings, as the catalog builder takes it.
fn api_inputs<'a>(config: &'a Config, apis: &'a [(&String, LoadedApi)]) -> Vec<ApiInput<'a>> {
    apis.iter()
        .map(|(name, loaded)| {
            let api = &config.apis[name.as_str()];
            ApiInput {
                name,
                docs: loaded.docs.as_ref(),
                base_url: api.base_url.as_deref(),
                prefix: api.prefix.as_deref().unwrap_or(""),
                selection: Selection {
                    read_only: api.read_only,
                    include: api.include.as_ref(),
                    exclude: api.exclude.as_ref(),
                },
                overlays: &loaded.overlays,
                mock: api.mock,
                discovery: api.discovery,
                pinned: &api.pinned,
                max_description_length: api.max_description_length,
                max_parameter_description_length: api.max_parameter_description_length,
                accept: api.accept.as_deref(),
                confirm: api.confirm.as_ref(),
                idempotency_header: api.idempotency_header.as_deref(),
                long_running: &api.long_running,
            }
        })
        .collect()
}

/// Adds to each API's report what loading knows and the catalog alone does not: loading
/// notes, a token passthrough warning, the discovery budget and the scopes its tools need.
fn complete_report(
    config: &Config,
    catalog: &Catalog,
    report: &mut Report,
    apis: &[(&String, LoadedApi)],
) {
    for (api_report, (_, loaded)) in report.apis.iter_mut().zip(apis) {
        api_report.notes.extend(loaded.notes.iter().cloned());
        if let Some(note) = config
            .apis
            .get(&api_report.name)
            .and_then(|api| passthrough_note(&api_report.name, api))
        {
            api_report.notes.push(note);
        }
        api_report.budget = Some(crate::discovery::budget(catalog, &api_report.name));
        for tool in catalog
            .tools()
            .iter()
            .filter(|tool| tool.route.api == api_report.name)
        {
            let scopes: std::collections::BTreeSet<String> = catalog
                .required_scopes(tool)
                .into_iter()
                .flatten()
                .collect();
            for scope in scopes {
                *api_report.scopes.entry(scope).or_default() += 1;
            }
        }
    }
}

/// A warning when an API forwards the MCP client's own `Authorization` header: the token a
/// client got for restmcp would reach the upstream (token passthrough, which the MCP
/// Authorization specification forbids); `token_exchange` is the way to act for the user.
fn passthrough_note(name: &str, api: &crate::config::ApiConfig) -> Option<String> {
    let rule = api
        .forward_headers
        .iter()
        .find(|rule| rule.from().eq_ignore_ascii_case("authorization"))?;
    Some(format!(
        "warning: apis.{name}.forward_headers passes the MCP client's own Authorization header on (as {}): \
         a token issued for restmcp reaches the upstream (token passthrough, which the MCP \
         Authorization specification forbids); to act for the user, exchange it instead \
         (apis.{name}.auth.SCHEME.token_exchange)",
        rule.to()
    ))
}

/// The files and directories `config` names, without loading anything: what to watch when
/// loading failed.
pub fn planned_inputs(config: &Config) -> Inputs {
    let mut inputs = Inputs::default();
    if let Some(dir) = &config.specs_dir {
        inputs.dirs.push(dir.relative());
    }
    for api in config.apis.values() {
        match SpecSource::of_api(api) {
            Some(Ok(SpecSource::File(path))) => inputs.files.push(path),
            Some(Ok(SpecSource::Url(url))) => inputs.urls.push(url.to_string()),
            _ => {}
        }
        inputs
            .files
            .extend(api.overlays.iter().map(|o| o.relative()));
        inputs.files.extend(api.conventional_overlay());
    }
    inputs
        .files
        .extend(config.workflows.values().map(|w| w.file.relative()));
    inputs
}

/// A spec (if any) with its OpenAPI Overlays applied, and the restmcp overlays read; each
/// overlay file comes with whether it has the operator's powers (else a spec's).
async fn load_api(
    source: Option<SpecSource>,
    policy: &spec::LoadPolicy,
    overlay_files: Vec<(PathBuf, bool)>,
    watched: Vec<PathBuf>,
) -> Result<LoadedApi, SpecError> {
    let mut openapi_overlays: Vec<(String, Value)> = Vec::new();
    let mut overlays: Vec<(String, OverlayFile)> = Vec::new();
    for (path, trusted) in &overlay_files {
        let name = path.display().to_string();
        // Overlays are the operator's, but a FIFO or device put in their place must not
        // wedge a load (or a reload) all the same: only a regular file is read.
        let (opened, cap) = (path.clone(), policy.max_document_bytes);
        let bytes =
            tokio::task::spawn_blocking(move || spec::place::read_regular_file(&opened, cap))
                .await
                .map_err(|e| e.to_string())
                .and_then(|read| read)
                .and_then(|bytes| match bytes.len() as u64 > cap {
                    true => Err(format!(
                        "larger than {cap} bytes (loading.max_document_bytes)"
                    )),
                    false => Ok(bytes),
                })
                .map_err(|message| SpecError::Read {
                    file: name.clone(),
                    message,
                })?;
        let value = spec::parse::parse_document(&name, &bytes)?;
        if spec::overlay::is_openapi_overlay(&value) {
            // It edits the spec, and what it writes there has a spec's powers whoever wrote it.
            openapi_overlays.push((name, value));
        } else {
            let mut overlay = patch::parse_file(&name, &bytes)?;
            overlay.unlisted = !trusted;
            overlays.push((name.clone(), overlay));
        }
    }
    let mut notes = Vec::new();
    let docs = match source {
        Some(source) if openapi_overlays.is_empty() => {
            Some(DocumentSet::load_deferred(&source, policy).await?)
        }
        Some(source) => Some(
            DocumentSet::load_edited(&source, policy, |root| {
                for (name, overlay) in &openapi_overlays {
                    let outcome =
                        spec::overlay::apply(root, overlay).map_err(|e| SpecError::Overlay {
                            file: name.clone(),
                            message: e.to_string(),
                        })?;
                    for warning in outcome.warnings {
                        tracing::warn!("{name}: {warning}");
                        notes.push(format!("{name}: {warning}"));
                    }
                }
                Ok(())
            })
            .await?,
        ),
        None => {
            if let Some((name, _)) = openapi_overlays.first() {
                return Err(SpecError::Overlay {
                    file: name.clone(),
                    message: ": an OpenAPI Overlay needs an API with a `spec` to apply to".into(),
                });
            }
            None
        }
    };
    Ok(LoadedApi {
        docs,
        notes,
        overlays,
        files: watched,
    })
}

/// Up to how many tools an API's dialects that no client of it gets are still checked (as
/// a count) by `restmcp check`. Converting is bounded per tool but not cheap (about a
/// millisecond a tool for schemas like Microsoft Graph's): for its 11,422 tools, the two
/// dialects nobody asked for took 20 s of a 25 s `check`.
pub const UNCONFIGURED_DIALECT_TOOLS: usize = 2_000;

/// Fills each API's report with what the `openai-strict` and `gemini` dialects drop from its
/// tools (for `restmcp check`; serving adapts lazily, per client).
pub fn report_dialects(loaded: &mut Loaded, config: &Config) {
    use crate::config::Dialect;
    for api_report in &mut loaded.report.apis {
        let api = api_report.name.as_str();
        let tools: Vec<&crate::catalog::Tool> = loaded
            .catalog
            .tools()
            .iter()
            .filter(|tool| tool.route.api == api)
            .collect();
        for dialect in [Dialect::OpenaiStrict, Dialect::Gemini] {
            let configured = dialect_configured(config, dialect, api);
            let checked = configured || tools.len() <= UNCONFIGURED_DIALECT_TOOLS;
            let dropped = match checked {
                false => Vec::new(),
                true => crate::parallel::on_all_cores(&tools, |tool| {
                    let schema = tool.input_schema.to_value();
                    let adapted = crate::schema::dialect::adapt_input(dialect, &schema);
                    (!adapted.dropped.is_empty()).then(|| (tool.name.clone(), adapted.dropped))
                })
                .into_iter()
                .flatten()
                .collect(),
            };
            api_report
                .dialects
                .push(crate::catalog::report::DialectReport {
                    dialect: dialect.as_str().to_string(),
                    configured,
                    checked,
                    tools: dropped,
                });
        }
    }
}

/// True when some client may get API `api`'s tools in `dialect`: it is the API's dialect
/// (else `tools.dialect`), or a client rule's.
fn dialect_configured(config: &Config, dialect: crate::config::Dialect, api: &str) -> bool {
    let of_api = config
        .apis
        .get(api)
        .and_then(|api| api.dialect)
        .unwrap_or(config.tools.dialect);
    of_api == dialect
        || config
            .tools
            .clients
            .iter()
            .any(|rule| rule.dialect == Some(dialect))
}
