//! `restmcp init`: the way in for a person with an API description and nothing else. This
//! module owns both of its forms:
//!
//! * `init --spec FILE|URL`: loads the description exactly as `--spec` does for every other
//!   command, works out what a configuration for it needs ([`Description`]: the API's name,
//!   where calls go, the credentials each security scheme takes, what `discovery = "auto"`
//!   chooses), writes it as a commented `config.toml` at `--config` ([`render`]), refusing to
//!   replace a file without `--force`, then runs `restmcp check` on the written file and says
//!   what to do next. A description that does not load writes nothing.
//! * `init --client NAME`: what to paste into a desktop or editor client (Claude Desktop,
//!   Claude Code, Cursor, VS Code) so that it starts `restmcp stdio` on an existing
//!   configuration ([`client`]).
//!
//! Unlike the other commands, `init --spec` never reads the file at `--config`: that is the
//! file it writes.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::catalog::AutoChoice;
use crate::config::{Config, DiscoveryMode, Overrides};
use crate::load::{self, Loaded};
use crate::spec::SecurityScheme;

pub mod client;
pub mod render;

use super::args::{ClientKind, GlobalArgs};

/// What `restmcp init --spec` writes a configuration for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where the configuration goes (`--config`).
    pub config: PathBuf,
    /// The description, a file path or an http(s) URL, as given.
    pub spec: String,
    /// `--name`: the API's name instead of one made from the description's title.
    pub name: Option<String>,
    /// `--base-url`: where calls go, instead of the description's servers.
    pub base_url: Option<String>,
    /// `--force`: replace an existing file.
    pub force: bool,
    /// `--mock`: write `mock = true` even when a base URL is known.
    pub mock: bool,
}

/// What the configuration of one API description needs, as [`render::config`] writes it.
#[derive(Debug, Clone)]
pub struct Description {
    /// The description's `info.title`.
    pub title: String,
    /// The API's name: the key of `[apis.NAME]`.
    pub name: String,
    /// The `spec` value: the URL as given, or the file's path relative to the config's
    /// directory.
    pub spec: String,
    pub upstream: Upstream,
    /// `--mock` was given: answer from the description even with a base URL.
    pub mock: bool,
    /// The security schemes the description declares, by name.
    pub schemes: BTreeMap<String, SecurityScheme>,
    /// How many tools the API's operations became.
    pub tools: usize,
    /// A tool to name in examples (`restmcp explain TOOL`, `pinned`).
    pub example_tool: Option<String>,
    /// The mode `discovery = "auto"` settled on, and why.
    pub discovery: DiscoveryMode,
    pub chosen: Option<AutoChoice>,
}

/// Where the API's calls go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// `--base-url`.
    Given(String),
    /// From the description's servers (OpenAPI 3) or host and basePath (Swagger 2.0), as
    /// restmcp resolves them without a `base_url`.
    Servers(String),
    /// The description names no usable absolute URL; the text of the one it names, when it
    /// names one that is not usable (a server variable without a default, say).
    Unknown(Option<String>),
}

/// Runs `restmcp init`: a client snippet with `--client`, else a configuration for `--spec`.
pub fn run(
    global: &GlobalArgs,
    name: Option<String>,
    force: bool,
    client: Option<ClientKind>,
) -> anyhow::Result<ExitCode> {
    match (client, &global.spec) {
        (Some(_), Some(_)) => anyhow::bail!(
            "init --client prints what to paste into a client for the existing config at \
             --config; it takes no --spec (run `restmcp init --spec …` first)"
        ),
        (Some(kind), None) => client::print(kind, &global.config),
        (None, None) => anyhow::bail!(
            "init needs --spec FILE|URL (the API description to write a config for), or \
             --client NAME (what to paste into a client for an existing config)"
        ),
        (None, Some(spec)) => write(&Options {
            config: global.config.clone(),
            spec: spec.clone(),
            name,
            base_url: global.base_url.clone(),
            force,
            mock: global.mock,
        }),
    }
}

/// `restmcp init --spec`: writes the configuration, checks it with `restmcp check`'s code,
/// and prints the next steps. The exit code is `check`'s.
pub fn write(options: &Options) -> anyhow::Result<ExitCode> {
    refuse_overwrite(&options.config, options.force)?;
    if let Some(name) = &options.name {
        check_name(name)?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let (api, loaded) = runtime.block_on(load_description(options))?;
    drop(runtime);
    let dir = config_dir(&options.config)?;
    let description = describe(options, &api, &loaded, &dir)?;
    let text = render::config(&description);
    std::fs::write(&options.config, &text)
        .with_context(|| format!("writing {}", options.config.display()))?;
    println!(
        "wrote {} for \"{}\" (API \"{}\", {} tools); checking it:\n",
        options.config.display(),
        render::one_line(&description.title),
        description.name,
        description.tools
    );
    let code = super::check(&options.config, &Overrides::default(), false)?;
    print!("{}", next_steps(&description, &options.config));
    std::io::stdout().flush()?;
    Ok(code)
}

/// Fails, naming the file and `--force`, when `path` exists and may not be replaced.
fn refuse_overwrite(path: &Path, force: bool) -> anyhow::Result<()> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        anyhow::bail!(
            "{} already exists; pass --force to replace it (or -c PATH to write elsewhere)",
            path.display()
        );
    }
    Ok(())
}

/// An API name the configuration accepts (see `apis.NAME`).
fn check_name(name: &str) -> anyhow::Result<()> {
    if render::is_api_name(name) {
        Ok(())
    } else {
        anyhow::bail!("--name \"{name}\": API names use a-z, 0-9, _ and -")
    }
}

/// Loads the description as `restmcp --spec SPEC check` does (the file at `--config` is not
/// read), returning the API's name in that configuration and what was loaded.
async fn load_description(options: &Options) -> anyhow::Result<(String, Loaded)> {
    let overrides = Overrides {
        spec: Some(options.spec.clone()),
        base_url: options.base_url.clone(),
        ..Overrides::default()
    };
    let config = Config::load(&options.config, &overrides)?;
    let api = config
        .apis
        .keys()
        .next()
        .cloned()
        .context("--spec names no API")?;
    let loaded = load::load(&config)
        .await
        .with_context(|| format!("loading {}; nothing was written", options.spec))?;
    Ok((api, loaded))
}

/// The directory the configuration goes in, created when missing, as an absolute path.
fn config_dir(config: &Path) -> anyhow::Result<PathBuf> {
    let dir = match config.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::canonicalize(dir).with_context(|| format!("finding {}", dir.display()))
}

/// What the configuration of the loaded description needs. `api` is its name in the
/// loaded configuration, `dir` the (absolute) directory the configuration goes in.
pub fn describe(
    options: &Options,
    api: &str,
    loaded: &Loaded,
    dir: &Path,
) -> anyhow::Result<Description> {
    let listing = loaded.catalog.listing(api);
    let title = listing.map(|l| l.title.clone()).unwrap_or_default();
    let name = match &options.name {
        Some(name) => name.clone(),
        None => render::api_name(&title).unwrap_or_else(|| api.replace('-', "_")),
    };
    let tools: Vec<_> = loaded
        .catalog
        .tools()
        .iter()
        .filter(|tool| tool.route.api == api)
        .collect();
    let example_tool = tools
        .iter()
        .find(|tool| tool.route.method == crate::spec::Method::Get)
        .or(tools.first())
        .map(|tool| tool.name.clone());
    let upstream = match &options.base_url {
        Some(url) => Upstream::Given(url.clone()),
        None => upstream_of(tools.iter().filter_map(|tool| tool.route.base_url.as_ref())),
    };
    Ok(Description {
        title,
        name,
        spec: spec_reference(&options.spec, dir)?,
        upstream,
        mock: options.mock,
        schemes: loaded
            .catalog
            .security_schemes(api)
            .cloned()
            .unwrap_or_default(),
        tools: tools.len(),
        example_tool,
        discovery: listing.map(|l| l.discovery).unwrap_or_default(),
        chosen: listing.and_then(|l| l.chosen),
    })
}

/// Where calls go without a `base_url`: the base URL most of the tools resolved from the
/// description (the operations' own servers may differ from the document's), when it is
/// a usable absolute URL.
fn upstream_of<'a>(base_urls: impl Iterator<Item = &'a crate::catalog::BaseUrl>) -> Upstream {
    let mut counts: Vec<(&crate::catalog::BaseUrl, usize)> = Vec::new();
    for url in base_urls {
        match counts.iter_mut().find(|(seen, _)| ***seen == **url) {
            Some((_, n)) => *n += 1,
            None => counts.push((url, 1)),
        }
    }
    // The first of the most common: max_by_key keeps the last of equals.
    let Some((url, _)) = counts.iter().rev().max_by_key(|(_, n)| *n) else {
        return Upstream::Unknown(None);
    };
    let text = url.to_string();
    if url.parsed().is_ok() && !text.contains(['{', '}']) {
        Upstream::Servers(text)
    } else {
        Upstream::Unknown(Some(text))
    }
}

/// The `spec` value: a URL as given; a file as its path relative to `dir` (absolute when
/// the two share nothing but the root), so the configuration works from any directory.
fn spec_reference(spec: &str, dir: &Path) -> anyhow::Result<String> {
    if spec.starts_with("http://") || spec.starts_with("https://") {
        return Ok(spec.to_string());
    }
    let file = std::fs::canonicalize(spec).with_context(|| format!("finding {spec}"))?;
    Ok(relative_to(&file, dir).to_string_lossy().into_owned())
}

/// `target` as a path relative to `base` (both absolute); `target` itself when they share
/// no more than the root (or a Windows prefix).
pub fn relative_to(target: &Path, base: &Path) -> PathBuf {
    let target_parts: Vec<Component> = target.components().collect();
    let base_parts: Vec<Component> = base.components().collect();
    let common = target_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let shares_a_directory = target_parts[..common]
        .iter()
        .any(|part| matches!(part, Component::Normal(_)));
    if !shares_a_directory {
        return target.to_path_buf();
    }
    let mut relative = PathBuf::new();
    for _ in common..base_parts.len() {
        relative.push("..");
    }
    for part in &target_parts[common..] {
        relative.push(part);
    }
    relative
}

/// What to run after `init`: serve, stdio, a client snippet; the variables to set first.
fn next_steps(description: &Description, config: &Path) -> String {
    let flag = if config == Path::new("config.toml") {
        String::new()
    } else {
        format!(" -c {}", client::shell_word(&config.to_string_lossy()))
    };
    let mut out = String::from("\nnext steps:\n");
    let variables = render::env_names(description);
    if !variables.is_empty() && !description.mock_written() {
        out.push_str(&format!(
            "  export {}   # the credentials restmcp reads at start (see {})\n",
            variables
                .iter()
                .map(|name| format!("{name}=…"))
                .collect::<Vec<_>>()
                .join(" "),
            config.display()
        ));
    }
    out.push_str(&format!(
        "  restmcp{flag} call {} --args '{{…}}'   # one call, from the shell\n",
        description.example_tool.as_deref().unwrap_or("TOOL")
    ));
    out.push_str(&format!(
        "  restmcp{flag} serve                  # MCP over Streamable HTTP at http://127.0.0.1:8080/mcp\n"
    ));
    out.push_str(&format!(
        "  restmcp{flag} stdio                  # MCP over stdin/stdout, for a client that starts restmcp\n"
    ));
    out.push_str(&format!(
        "  restmcp{flag} init --client claude-desktop   # or claude-code, cursor, vscode: what to paste into a client\n"
    ));
    out
}

impl Description {
    /// The written configuration says `mock = true`: no base URL, or `--mock`.
    pub fn mock_written(&self) -> bool {
        self.mock || matches!(self.upstream, Upstream::Unknown(_))
    }
}

#[cfg(test)]
mod tests;
