//! The reload loop: on every [`Trigger`], load the configuration and every spec and overlay
//! again, off the request path, and swap the new tool set in only when all of it loaded.
//!
//! Calls in flight keep the snapshot they started with (an `Arc`), so they finish on the
//! old tool set. A reload that fails (bad YAML, an unresolved `$ref`, a duplicate name, a
//! missing environment variable) is logged with its file and position, and the last good
//! tool set stays served. So is one that takes longer than `reload.timeout_seconds` (a spec
//! URL that never answers): it is abandoned, and the loop goes on to the next trigger.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{CatalogDiff, Trigger, WatchSet, WatchSettings};
use crate::config::{Config, Overrides};
use crate::load::{self, Inputs, Loaded};
use crate::mcp::view::Presentation;
use crate::mcp::{ServerState, Snapshot};

/// What the reload loop needs to rebuild the tool set as the process first built it.
pub struct Reloader {
    pub config_path: PathBuf,
    pub overrides: Overrides,
    pub shared: Arc<ServerState>,
    /// The configuration currently served.
    pub config: Config,
}

/// Everything a tool set was built from, as the watcher wants it.
pub fn watch_set(config_path: &Path, overrides: &Overrides, inputs: &Inputs) -> WatchSet {
    let mut files = Vec::new();
    if overrides.spec.is_none() {
        files.push(config_path.to_path_buf());
    }
    files.extend(inputs.files.iter().cloned());
    WatchSet {
        files,
        dirs: inputs.dirs.clone(),
        urls: inputs.urls.clone(),
    }
}

impl Reloader {
    /// Watches `inputs` (and SIGHUP) and reloads on every change until `shutdown`; `ready`
    /// hears each time a loop of the watcher has taken its baselines (the files' and the
    /// URLs' loops, at start and after each change of what is watched). Files in
    /// `baseline`, taken before `inputs` were loaded, are compared with it: one changed
    /// since then is reloaded at once.
    pub async fn run(
        mut self,
        inputs: Inputs,
        shutdown: CancellationToken,
        ready: Option<mpsc::UnboundedSender<()>>,
        baseline: Option<super::Baseline>,
    ) {
        let settings = WatchSettings {
            file_interval: std::time::Duration::from_millis(self.config.reload.interval_ms),
            url_interval: std::time::Duration::from_secs(self.config.reload.url_interval_seconds),
            settle: std::time::Duration::from_millis(
                (self.config.reload.interval_ms / 2).clamp(50, 500),
            ),
        };
        let (tx, mut rx) = mpsc::channel(4);
        let (set_tx, set_rx) =
            watch::channel(watch_set(&self.config_path, &self.overrides, &inputs));
        tokio::spawn(super::watch_reporting(
            set_rx,
            settings,
            None,
            tx.clone(),
            shutdown.clone(),
            ready,
            baseline,
        ));
        tokio::spawn(super::on_hangup(tx, shutdown.clone()));
        loop {
            let trigger = tokio::select! {
                _ = shutdown.cancelled() => return,
                trigger = rx.recv() => match trigger {
                    Some(trigger) => trigger,
                    None => return,
                },
            };
            let why = match &trigger {
                Trigger::Signal => "SIGHUP".to_string(),
                Trigger::Changed(paths) => format!("changed: {}", paths.join(", ")),
            };
            let inputs = match self.reload(&why).await {
                Ok(inputs) => inputs,
                // Still watch what the failed configuration names, so that creating or
                // fixing one of those files is noticed.
                Err(Some(planned)) => {
                    let mut set = set_tx.borrow().clone();
                    let extra = watch_set(&self.config_path, &self.overrides, &planned);
                    for file in extra.files {
                        if !set.files.contains(&file) {
                            set.files.push(file);
                        }
                    }
                    let _ = set_tx.send(set);
                    continue;
                }
                Err(None) => continue,
            };
            let _ = set_tx.send(watch_set(&self.config_path, &self.overrides, &inputs));
        }
    }

    /// One reload: the new inputs when it succeeded, else the files the new configuration
    /// names (when it could be read). Loading runs in a task of its own, given
    /// `reload.timeout_seconds` (of the configuration served now): when it takes longer it
    /// is abandoned (aborted at its next await) and logged as an error.
    pub async fn reload(&mut self, why: &str) -> Result<Inputs, Option<Inputs>> {
        let started = Instant::now();
        let budget = Duration::from_secs(self.config.reload.timeout_seconds);
        let planned = Arc::new(Mutex::new(None));
        let task = tokio::spawn(build(
            self.config_path.clone(),
            self.overrides.clone(),
            planned.clone(),
        ));
        let abort = task.abort_handle();
        let (config, loaded) = match tokio::time::timeout(budget, task).await {
            Ok(Ok(Ok(built))) => built,
            Ok(Ok(Err(failed))) => return Err(self.failed(why, &failed.error, failed.planned)),
            Ok(Err(error)) => return Err(self.failed(why, &error.to_string(), None)),
            Err(_) => {
                abort.abort();
                let planned = planned
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                let error = format!(
                    "abandoned after {} s, the reload budget (reload.timeout_seconds); \
                     something it loads does not answer (a spec URL, a file that blocks)",
                    budget.as_secs()
                );
                return Err(self.failed(why, &error, planned));
            }
        };
        let skipped = loaded.report.skipped();
        let inputs = loaded.inputs.clone();
        let mut catalog = loaded.catalog;
        let spec_based = |api: &str| config.apis.get(api).is_some_and(|a| a.base_url.is_none());
        for kept in catalog.keep_origins(self.shared.current().catalog(), spec_based) {
            tracing::warn!("reload: {kept}");
        }
        let catalog = Arc::new(catalog);
        let snapshot = match Snapshot::from_loaded(catalog.clone(), &config) {
            Ok(snapshot) => snapshot,
            Err(error) => return Err(self.failed(why, &error, None)),
        };
        let old = self.shared.current();
        let diff = CatalogDiff::between(old.catalog(), &catalog);
        if config.server != self.config.server {
            tracing::warn!(
                "reload: [server] settings changed; they take effect at the next restart"
            );
        }
        let tools = catalog.len();
        let presentation_changed =
            Presentation::from_config(&config) != Presentation::from_config(&self.config);
        if diff.is_empty() && !presentation_changed {
            self.shared.swap(snapshot);
            tracing::info!(
                "reload ({why}): tools unchanged ({tools} tools), in {} ms",
                started.elapsed().as_millis()
            );
        } else {
            self.shared.replace(snapshot).await;
            tracing::info!(
                "reload ({why}): {diff}; now {tools} tools, in {} ms",
                started.elapsed().as_millis()
            );
        }
        self.shared.tell_surface_changes(&old).await;
        if skipped > 0 {
            tracing::warn!(
                "reload: {skipped} operation(s) could not be mapped; run `restmcp check` for the reasons"
            );
        }
        self.config = config;
        self.shared.metrics().record_reload(None, tools);
        Ok(inputs)
    }

    fn failed(&self, why: &str, error: &str, planned: Option<Inputs>) -> Option<Inputs> {
        let tools = self.shared.current().catalog().len();
        self.shared.metrics().record_reload(Some(error), tools);
        tracing::error!("reload ({why}) failed; still serving the previous {tools} tools: {error}");
        planned
    }
}

/// Why [`build`] failed, and the inputs the new configuration names (when it was read).
struct BuildFailed {
    error: String,
    planned: Option<Inputs>,
}

/// Reads the configuration at `path` and loads everything it names: the part of a reload
/// that reads files and URLs, and so the part that can hang. As soon as the configuration
/// is read, the inputs it names are left in `planned`, so that a reload abandoned while
/// loading still watches them.
async fn build(
    path: PathBuf,
    overrides: Overrides,
    planned: Arc<Mutex<Option<Inputs>>>,
) -> Result<(Config, Loaded), BuildFailed> {
    let failed = |error: String, planned: Option<Inputs>| BuildFailed { error, planned };
    let config = tokio::task::spawn_blocking(move || Config::load(&path, &overrides)).await;
    let config = match config {
        Ok(Ok(config)) => config,
        Ok(Err(error)) => return Err(failed(error.to_string(), None)),
        Err(error) => return Err(failed(error.to_string(), None)),
    };
    *planned.lock().unwrap_or_else(PoisonError::into_inner) = Some(load::planned_inputs(&config));
    match load::load(&config).await {
        Ok(loaded) => Ok((config, loaded)),
        Err(error) => {
            let planned = load::planned_inputs(&config);
            Err(failed(error.to_string(), Some(planned)))
        }
    }
}
