//! Hot reload: noticing that the configuration or a spec changed (or that SIGHUP arrived)
//! and saying so with a [`Trigger`]; loading everything again off the request path and
//! swapping the new tool set in only when all of it loaded (`swap`, the [`Reloader`]); and
//! [`CatalogDiff`] to log what a reload changed. Its files: `files` (polling, on the blocking
//! pool), `hash` (content hashes independent of how bytes arrive), `diff`, `swap`, `tests`.
//!
//! * [`watch`] polls a [`WatchSet`] of files, directories and spec URLs and sends one
//!   [`Trigger::Changed`] per settled burst of changes. The set can be replaced through a
//!   `tokio::sync::watch` channel after every reload; paths kept across the replacement
//!   keep their state, new ones are observed at once to set their baseline, and the
//!   replacement itself never triggers.
//! * [`on_hangup`] turns SIGHUP into [`Trigger::Signal`].
//! * [`CatalogDiff::between`] compares the old and new catalog by tool name.
//!
//! # Why polling, not inotify
//!
//! Files are polled every `file_interval` instead of watched with inotify (the `notify`
//! crate):
//!
//! * No extra dependency and its compile time; identical behaviour on every platform.
//! * Editors that save by writing a temporary file and renaming it over the original
//!   replace the inode an inotify watch was attached to; a poll just reads the path again.
//! * Kubernetes mounts a ConfigMap as `key -> ..data/key` with `..data` a symlink to a
//!   timestamped directory, and updates it by swapping `..data` atomically. Event-based
//!   watchers keep missing that: configmap-reload needed a fix because the swap is
//!   sometimes reported as Write rather than Create (jimmidyson/configmap-reload#190,
//!   #191), openshift/release-controller#802 silently ignored updates because it matched
//!   the wrong name in the event, parca-dev/parca#3230 found that fsnotify only reports
//!   the old version's deletion, cfg4k's file watcher did not notice the swap at all
//!   (jdiazcano/cfg4k#65), and a Rust gateway built on `notify` misses a symlink
//!   retargeted into a directory it was not watching (MikkoParkkola/mcp-gateway#453).
//!   Polling follows the symlinks on every look (`std::fs::metadata`, `File::open`), so
//!   a swap is just different content.
//!
//! A change is a different *content hash* (or existence), not a different mtime: an
//! editor rewriting the same bytes triggers nothing, and a ConfigMap update has been seen
//! to keep the files' mtime (kubernetes/kubernetes#24215). Hashing a 10 MB spec twice a
//! second would be wasteful, so a file is only read again when its metadata changed:
//! length, mtime and, on Unix, device, inode and ctime (a swapped-in file has a new
//! inode). A hash taken less than two seconds after the file's last change is not reused,
//! since a second write within the same timestamp tick could leave the metadata as it was.
//! Directories are compared by the names of the regular files in them (symlinks followed,
//! not recursive); edits inside a watched directory count only for files that are also
//! watched themselves. Every regular file counts, hidden ones and editor swap files
//! included. The hash is `FxHasher` (fast, not cryptographic: it detects edits, not
//! attacks). All file-system work runs on tokio's blocking pool.
//!
//! # Settling
//!
//! Editors and tools often write a file in several steps (truncate, write, write, rename).
//! After a change is seen, the watcher waits until nothing changed for `settle`, checks
//! once more, and only then compares everything with the state of the last trigger and
//! sends one [`Trigger::Changed`] naming every path that differs. A file written in bursts
//! thus triggers once with its final content; a file changed and changed back while
//! settling triggers nothing. So that a file written continuously still triggers, settling
//! never waits longer than ten times `settle` after the first change.
//!
//! # URLs
//!
//! Spec URLs are polled every `url_interval` with a conditional GET (`If-None-Match` with
//! the last ETag, `If-Modified-Since` with the last Last-Modified). `304` is unchanged; a
//! `200` body is hashed and triggers only when the hash differs from the last one, which
//! covers servers without validators. The first successful response of each URL is its
//! baseline. Errors and non-success statuses are logged (once while they persist) and
//! never trigger. URL polling runs concurrently with file polling, so a hanging server
//! does not delay file changes.

mod diff;
mod files;
mod hash;
mod swap;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ETAG, HeaderValue, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

pub use diff::CatalogDiff;
use files::FileWatch;
use hash::ContentHasher;
pub use swap::{Reloader, watch_set};

/// What to watch: files (which may not exist yet — creation counts as a change),
/// directories (a file added to or removed from them, non-recursive, counts; edits of
/// files inside do not unless they are also in `files`), and spec URLs (polled with
/// conditional GET).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchSet {
    pub files: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
    pub urls: Vec<String>,
}

/// How often to look, and how long a change must be quiet before it triggers.
#[derive(Debug, Clone, Copy)]
pub struct WatchSettings {
    pub file_interval: Duration,
    pub url_interval: Duration,
    pub settle: Duration,
}

/// Why a reload was triggered (for the log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// The paths and URLs that changed, as displayed, sorted. A directory contributes the
    /// files added to or removed from it; a URL is shown without credentials and with its
    /// query replaced by `?…`, as the query may carry a key.
    Changed(Vec<String>),
    /// SIGHUP.
    Signal,
}

/// Intervals are clamped to this range so that a zero (which `tokio::time::interval`
/// rejects) or an absurd setting cannot panic or overflow.
const MIN_INTERVAL: Duration = Duration::from_millis(1);
const MAX_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);
/// Settling ends at the latest this many `settle`s after the first change.
const MAX_SETTLE_FACTOR: u32 = 10;
/// A URL poll may take at least this long, else one interval.
const MIN_URL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs until `shutdown` is cancelled (or `tx`'s receiver is dropped); sends a
/// [`Trigger::Changed`] on `tx` when something changed. The watch set can be replaced at
/// any time through `set` (after a reload the set of files may differ) without producing
/// a spurious trigger. If `set`'s sender is dropped, the last set stays watched.
///
/// The first look at each path and URL is its baseline, unless `baseline` holds one taken
/// earlier. Take that [`Baseline`] before loading the configuration and specs it watches:
/// a change made while they load then causes one reload, where a first look after the load
/// would take the changed file as its baseline and never reload it. URLs are polled with
/// `client`, or the shared client ([`crate::http_client::shared`]), built at the first URL.
pub async fn watch(
    set: tokio::sync::watch::Receiver<WatchSet>,
    settings: WatchSettings,
    client: Option<reqwest::Client>,
    tx: mpsc::Sender<Trigger>,
    shutdown: CancellationToken,
    baseline: Option<Baseline>,
) {
    watch_reporting(set, settings, client, tx, shutdown, None, baseline).await;
}

/// The files and directories of a [`WatchSet`] looked at once, before what they hold is
/// loaded: the baselines [`watch`] compares with (its URLs get theirs when they are first
/// polled).
pub struct Baseline(FileWatch);

impl Baseline {
    /// Looks at `set`'s files and directories, on the blocking pool.
    pub async fn take(set: &WatchSet) -> Baseline {
        let mut files = FileWatch::new(set);
        let looked = tokio::task::spawn_blocking(move || {
            files.poll();
            files
        })
        .await;
        // Only a panic in the look gets here: the watcher's first look takes the baselines.
        Baseline(looked.unwrap_or_else(|_| FileWatch::new(set)))
    }
}

/// Tells whoever waits (the start, before its banner; tests) that a loop has taken its
/// baselines (at start and after each replacement of the watch set), so that they can
/// change files without racing it.
type Ready = Option<mpsc::UnboundedSender<()>>;

fn report_ready(ready: &Ready) {
    if let Some(ready) = ready {
        let _ = ready.send(());
    }
}

/// [`watch`], reporting each loop's readiness on `ready`.
async fn watch_reporting(
    set: tokio::sync::watch::Receiver<WatchSet>,
    settings: WatchSettings,
    client: Option<reqwest::Client>,
    tx: mpsc::Sender<Trigger>,
    shutdown: CancellationToken,
    ready: Ready,
    baseline: Option<Baseline>,
) {
    let stop = shutdown.child_token();
    let (url_tx, url_rx) = mpsc::channel(64);
    let urls = poll_urls(
        set.clone(),
        settings.url_interval.clamp(MIN_INTERVAL, MAX_INTERVAL),
        client,
        url_tx,
        stop.clone(),
        ready.clone(),
    );
    let files = async {
        poll_files(set, settings, url_rx, tx, stop.clone(), ready, baseline).await;
        // The trigger receiver is gone: nothing to poll URLs for either.
        stop.cancel();
    };
    tokio::join!(urls, files);
}

/// Changes seen and not yet reported.
struct Pending {
    first: Instant,
    last: Instant,
    urls: BTreeSet<String>,
}

impl Pending {
    fn mark(pending: &mut Option<Pending>) -> &mut Pending {
        let now = Instant::now();
        let entry = pending.get_or_insert_with(|| Pending {
            first: now,
            last: now,
            urls: BTreeSet::new(),
        });
        entry.last = now;
        entry
    }
}

/// The file side of [`watch`], and the one place that settles and sends triggers (URL
/// changes arrive on `url_changes`).
async fn poll_files(
    mut set: tokio::sync::watch::Receiver<WatchSet>,
    settings: WatchSettings,
    mut url_changes: mpsc::Receiver<String>,
    tx: mpsc::Sender<Trigger>,
    stop: CancellationToken,
    ready: Ready,
    baseline: Option<Baseline>,
) {
    let interval = settings.file_interval.clamp(MIN_INTERVAL, MAX_INTERVAL);
    let settle = settings.settle.min(MAX_INTERVAL);
    let max_settle = settle * MAX_SETTLE_FACTOR;
    let mut current = set.borrow_and_update().clone();
    let mut pending: Option<Pending> = None;
    let Some((mut files, changed)) = first_look(baseline, &current, &stop).await else {
        return;
    };
    if changed {
        Pending::mark(&mut pending);
    }
    report_ready(&ready);
    let mut tick = tokio::time::interval_at(Instant::now() + interval, interval);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut set_open = true;
    let mut urls_open = true;
    loop {
        let deadline = pending
            .as_ref()
            .map(|p| (p.last + settle).min(p.first + max_settle));
        let settled = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now));
        tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            _ = tx.closed() => return,
            changed = set.changed(), if set_open => {
                if changed.is_err() {
                    set_open = false;
                    continue;
                }
                let next = set.borrow_and_update().clone();
                if next != current {
                    current = next;
                    files.retarget(&current);
                    // New paths get their baseline now; kept ones may show a real change.
                    let Some((polled, changed)) = poll_blocking(files, &current, &stop).await else {
                        return;
                    };
                    files = polled;
                    if changed {
                        Pending::mark(&mut pending);
                    }
                }
                report_ready(&ready);
            }
            url = url_changes.recv(), if urls_open => match url {
                Some(url) => {
                    Pending::mark(&mut pending).urls.insert(url);
                }
                None => urls_open = false,
            },
            _ = settled, if deadline.is_some() => {
                let Some((polled, changed)) = poll_blocking(files, &current, &stop).await else {
                    return;
                };
                files = polled;
                if changed && pending.as_ref().is_some_and(|p| p.first.elapsed() < max_settle) {
                    Pending::mark(&mut pending);
                    continue;
                }
                let mut names = pending.take().map(|p| p.urls).unwrap_or_default();
                files.commit(&mut names);
                if names.is_empty() {
                    continue;
                }
                let trigger = Trigger::Changed(names.into_iter().collect());
                tokio::select! {
                    _ = stop.cancelled() => return,
                    sent = tx.send(trigger) => if sent.is_err() {
                        return;
                    },
                }
            }
            _ = tick.tick() => {
                let Some((polled, changed)) = poll_blocking(files, &current, &stop).await else {
                    return;
                };
                files = polled;
                if changed {
                    Pending::mark(&mut pending);
                }
            }
        }
    }
}

/// The watcher's first look at `current`: it sets the baselines, but of paths `baseline`
/// has, for which it may show a change, made while what they hold was loading. `None` when
/// `stop` came first.
async fn first_look(
    baseline: Option<Baseline>,
    current: &WatchSet,
    stop: &CancellationToken,
) -> Option<(FileWatch, bool)> {
    let files = match baseline {
        Some(Baseline(mut files)) => {
            files.retarget(current);
            files
        }
        None => FileWatch::new(current),
    };
    poll_blocking(files, current, stop).await
}

/// [`FileWatch::poll`] on the blocking pool: the watch and whether anything changed, or
/// `None` when `stop` came first.
async fn poll_blocking(
    mut files: FileWatch,
    current: &WatchSet,
    stop: &CancellationToken,
) -> Option<(FileWatch, bool)> {
    if files.is_empty() {
        return Some((files, false));
    }
    let task = tokio::task::spawn_blocking(move || {
        let changed = files.poll();
        (files, changed)
    });
    tokio::select! {
        _ = stop.cancelled() => None,
        joined = task => Some(joined.unwrap_or_else(|error| {
            // Only a panic in the poll gets here; start over with fresh baselines.
            tracing::error!("checking watched files failed: {error}");
            (FileWatch::new(current), false)
        })),
    }
}

/// What is known of one watched URL.
#[derive(Debug, Default)]
struct UrlState {
    etag: Option<HeaderValue>,
    last_modified: Option<HeaderValue>,
    /// Hash of the last 200 body; `None` until the first one (the baseline).
    hash: Option<u64>,
    /// The last error, so that a lasting one is logged once.
    error: Option<String>,
}

/// The URL side of [`watch`]: sends the displayed URL on `changes` when its body changed.
async fn poll_urls(
    mut set: tokio::sync::watch::Receiver<WatchSet>,
    interval: Duration,
    client: Option<reqwest::Client>,
    changes: mpsc::Sender<String>,
    stop: CancellationToken,
    ready: Ready,
) {
    let timeout = interval.max(MIN_URL_TIMEOUT);
    let mut urls: BTreeMap<String, UrlState> = BTreeMap::new();
    retarget_urls(&mut urls, &set.borrow_and_update().urls);
    // The first round takes the baselines.
    let round = UrlRound {
        client: client.as_ref(),
        changes: &changes,
        stop: &stop,
        timeout,
    };
    if !round.run(&mut urls, false).await {
        return;
    }
    report_ready(&ready);
    let mut tick = tokio::time::interval_at(Instant::now() + interval, interval);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut set_open = true;
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            changed = set.changed(), if set_open => {
                if changed.is_err() {
                    set_open = false;
                    continue;
                }
                retarget_urls(&mut urls, &set.borrow_and_update().urls);
                // New URLs get their baseline at once.
                if !round.run(&mut urls, true).await {
                    return;
                }
                report_ready(&ready);
            }
            _ = tick.tick() => {
                if !round.run(&mut urls, false).await {
                    return;
                }
            }
        }
    }
}

/// One pass over the watched URLs.
struct UrlRound<'a> {
    /// The client to poll with; `None`: the shared one ([`crate::http_client::shared`]).
    client: Option<&'a reqwest::Client>,
    changes: &'a mpsc::Sender<String>,
    stop: &'a CancellationToken,
    timeout: Duration,
}

impl UrlRound<'_> {
    /// Polls every URL (only those without a baseline if `only_new`) and reports the
    /// changed ones; false when it is time to stop.
    async fn run(&self, urls: &mut BTreeMap<String, UrlState>, only_new: bool) -> bool {
        for (url, state) in urls.iter_mut() {
            if only_new && state.hash.is_some() {
                continue;
            }
            let changed = tokio::select! {
                _ = self.stop.cancelled() => return false,
                changed = poll_url(self.client, url, state, self.timeout) => changed,
            };
            if changed {
                tokio::select! {
                    _ = self.stop.cancelled() => return false,
                    sent = self.changes.send(display_url(url)) => if sent.is_err() {
                        return false;
                    },
                }
            }
        }
        true
    }
}

fn retarget_urls(urls: &mut BTreeMap<String, UrlState>, wanted: &[String]) {
    let wanted: BTreeSet<&String> = wanted.iter().collect();
    urls.retain(|url, _| wanted.contains(url));
    for url in wanted {
        urls.entry(url.clone()).or_default();
    }
}

/// One conditional GET; true if the body differs from the last one seen.
async fn poll_url(
    client: Option<&reqwest::Client>,
    url: &str,
    state: &mut UrlState,
    timeout: Duration,
) -> bool {
    let outcome = async {
        // The shared client is built at the first URL polled: building it reads the
        // system's certificates, which a start that watches only files need not wait for.
        let client = match client {
            Some(client) => client,
            None => crate::http_client::shared()?,
        };
        let mut request = client.get(url).timeout(timeout);
        if state.hash.is_some() {
            if let Some(etag) = &state.etag {
                request = request.header(IF_NONE_MATCH, etag.clone());
            }
            if let Some(last_modified) = &state.last_modified {
                request = request.header(IF_MODIFIED_SINCE, last_modified.clone());
            }
        }
        let describe = |e: reqwest::Error| crate::http_client::describe_error(&e);
        let mut response = request.send().await.map_err(describe)?;
        let status = response.status();
        if status == StatusCode::NOT_MODIFIED {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let etag = response.headers().get(ETAG).cloned();
        let last_modified = response.headers().get(LAST_MODIFIED).cloned();
        let mut hasher = ContentHasher::new();
        while let Some(chunk) = response.chunk().await.map_err(describe)? {
            hasher.update(&chunk);
        }
        Ok(Some((hasher.finish(), etag, last_modified)))
    }
    .await;
    match outcome {
        Err(message) => {
            if state.error.as_deref() != Some(message.as_str()) {
                tracing::warn!(
                    url = %display_url(url),
                    "cannot check watched spec URL for changes: {message}"
                );
            }
            state.error = Some(message);
            false
        }
        Ok(observed) => {
            if state.error.take().is_some() {
                tracing::info!(url = %display_url(url), "watched spec URL can be fetched again");
            }
            let Some((hash, etag, last_modified)) = observed else {
                return false;
            };
            state.etag = etag;
            state.last_modified = last_modified;
            state.hash.replace(hash).is_some_and(|old| old != hash)
        }
    }
}

/// `url` for logs: without user name and password, and with any query shown as `?…`.
fn display_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_string();
    };
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_fragment(None);
    let had_query = parsed.query().is_some();
    parsed.set_query(None);
    if had_query {
        format!("{parsed}?…")
    } else {
        parsed.to_string()
    }
}

/// SIGHUP (Unix) → [`Trigger::Signal`] on `tx` until `shutdown`; elsewhere it only waits
/// for `shutdown`. Note that once the handler is installed, SIGHUP no longer terminates the
/// process, also after this returns (tokio keeps its handler for the process's lifetime).
pub async fn on_hangup(tx: mpsc::Sender<Trigger>, shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangup = match signal(SignalKind::hangup()) {
            Ok(hangup) => hangup,
            Err(error) => {
                tracing::warn!("cannot listen for SIGHUP, reload on signal is off: {error}");
                return;
            }
        };
        loop {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return,
                received = hangup.recv() => {
                    if received.is_none() {
                        return;
                    }
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        sent = tx.send(Trigger::Signal) => if sent.is_err() {
                            return;
                        },
                    }
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        drop(tx);
        shutdown.cancelled().await;
    }
}

#[cfg(test)]
mod tests;
