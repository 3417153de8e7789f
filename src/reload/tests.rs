use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::*;
use crate::catalog::{self, ApiInput, Catalog, Tool};
use crate::config::ToolSettings;
use crate::spec::DocumentSet;

/// Long enough that a loaded CI machine still makes it; only reached when a test fails.
const PATIENCE: Duration = Duration::from_secs(5);
/// How long "nothing arrives" is watched: many file intervals and settles.
const QUIET: Duration = Duration::from_millis(400);

fn fast() -> WatchSettings {
    WatchSettings {
        file_interval: Duration::from_millis(20),
        url_interval: Duration::from_millis(30),
        settle: Duration::from_millis(100),
    }
}

struct Watcher {
    set: tokio::sync::watch::Sender<WatchSet>,
    triggers: mpsc::Receiver<Trigger>,
    ready: mpsc::UnboundedReceiver<()>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Watcher {
    /// Starts watching `set` and returns once the baselines are taken.
    async fn start(set: WatchSet, settings: WatchSettings) -> Watcher {
        Watcher::start_from(set, settings, None).await
    }

    /// Like [`Watcher::start`], comparing the files in `baseline` with it.
    async fn start_from(
        set: WatchSet,
        settings: WatchSettings,
        baseline: Option<Baseline>,
    ) -> Watcher {
        crate::http_client::install_crypto_provider();
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let (set_tx, set_rx) = tokio::sync::watch::channel(set);
        let (tx, triggers) = mpsc::channel(16);
        let (ready_tx, ready) = mpsc::unbounded_channel();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(watch_reporting(
            set_rx,
            settings,
            Some(client),
            tx,
            shutdown.clone(),
            Some(ready_tx),
            baseline,
        ));
        let mut watcher = Watcher {
            set: set_tx,
            triggers,
            ready,
            shutdown,
            task,
        };
        watcher.wait_ready().await;
        watcher
    }

    /// Both loops (files and URLs) report ready.
    async fn wait_ready(&mut self) {
        for _ in 0..2 {
            tokio::time::timeout(PATIENCE, self.ready.recv())
                .await
                .expect("watcher ready in time")
                .expect("watcher running");
        }
    }

    async fn replace(&mut self, set: WatchSet) {
        self.set.send(set).expect("watcher listens");
        self.wait_ready().await;
    }

    async fn next(&mut self) -> Trigger {
        tokio::time::timeout(PATIENCE, self.triggers.recv())
            .await
            .expect("a trigger in time")
            .expect("watcher running")
    }

    async fn assert_quiet(&mut self) {
        if let Ok(trigger) = tokio::time::timeout(QUIET, self.triggers.recv()).await {
            panic!("expected no trigger, got {trigger:?}");
        }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("watcher stops on shutdown")
            .expect("watcher did not panic");
    }
}

fn files(paths: &[&Path]) -> WatchSet {
    WatchSet {
        files: paths.iter().map(|p| p.to_path_buf()).collect(),
        ..WatchSet::default()
    }
}

fn changed(paths: &[&Path]) -> Trigger {
    Trigger::Changed(paths.iter().map(|p| p.display().to_string()).collect())
}

fn write(path: &Path, content: &str) {
    std::fs::write(path, content).expect("write");
}

#[tokio::test]
async fn an_edit_triggers_once_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    let other = dir.path().join("other.yaml");
    write(&spec, "openapi: 3.0.3\n");
    write(&other, "unchanged\n");
    let mut watcher = Watcher::start(files(&[&spec, &other]), fast()).await;

    write(&spec, "openapi: 3.1.0\n");
    assert_eq!(watcher.next().await, changed(&[&spec]));
    watcher.assert_quiet().await;
    watcher.stop().await;
}

/// What the start does: the baseline of the files the configuration names is taken before
/// the load, and the watcher starts after it with every file the load read.
#[tokio::test]
async fn a_file_changed_since_an_earlier_baseline_triggers_and_a_new_file_gets_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    let referenced = dir.path().join("schemas.yaml");
    let untouched = dir.path().join("overlay.yaml");
    write(&spec, "openapi: 3.0.3\n");
    write(&referenced, "schemas: {}\n");
    write(&untouched, "tools: {}\n");
    let baseline = Baseline::take(&files(&[&spec, &untouched])).await;
    // Edited while loading.
    write(&spec, "openapi: 3.1.0\n");
    let all = files(&[&spec, &referenced, &untouched]);
    let mut watcher = Watcher::start_from(all, fast(), Some(baseline)).await;
    assert_eq!(watcher.next().await, changed(&[&spec]));
    watcher.assert_quiet().await;

    write(&referenced, "schemas: {a: {}}\n");
    assert_eq!(watcher.next().await, changed(&[&referenced]));
    watcher.stop().await;
}

#[tokio::test]
async fn rewriting_the_same_bytes_triggers_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    write(&spec, "openapi: 3.0.3\n");
    let mut watcher = Watcher::start(files(&[&spec]), fast()).await;

    for _ in 0..3 {
        write(&spec, "openapi: 3.0.3\n");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    // Replaced by a new file (new inode) with the same content, as editors save.
    let temporary = dir.path().join("spec.yaml.tmp");
    write(&temporary, "openapi: 3.0.3\n");
    std::fs::rename(&temporary, &spec).expect("rename");
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[tokio::test]
async fn creating_and_deleting_a_watched_file_trigger() {
    let dir = tempfile::tempdir().expect("tempdir");
    let overlay = dir.path().join("overlay.toml");
    let mut watcher = Watcher::start(files(&[&overlay]), fast()).await;
    watcher.assert_quiet().await;

    write(&overlay, "[tools]\n");
    assert_eq!(watcher.next().await, changed(&[&overlay]));
    std::fs::remove_file(&overlay).expect("remove");
    assert_eq!(watcher.next().await, changed(&[&overlay]));
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[tokio::test]
async fn files_added_to_or_removed_from_a_watched_directory_trigger_edits_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).expect("mkdir");
    let first = specs.join("a.yaml");
    write(&first, "a\n");
    let set = WatchSet {
        dirs: vec![specs.clone()],
        ..WatchSet::default()
    };
    let mut watcher = Watcher::start(set, fast()).await;

    let second = specs.join("b.yaml");
    write(&second, "b\n");
    assert_eq!(watcher.next().await, changed(&[&second]));
    // Not in `files`: editing a file in the directory is not a change of the directory.
    write(&first, "a, edited\n");
    // Nor is a subdirectory: only regular files are listed.
    std::fs::create_dir(specs.join("nested")).expect("mkdir");
    watcher.assert_quiet().await;
    std::fs::remove_file(&first).expect("remove");
    assert_eq!(watcher.next().await, changed(&[&first]));
    watcher.stop().await;
}

#[tokio::test]
async fn replacing_the_watch_set_does_not_trigger_and_the_new_files_are_watched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    let old_spec = dir.path().join("old.yaml");
    let new_spec = dir.path().join("new.yaml");
    write(&config, "config\n");
    write(&old_spec, "old\n");
    write(&new_spec, "new\n");
    let mut watcher = Watcher::start(files(&[&config, &old_spec]), fast()).await;

    watcher.replace(files(&[&config, &new_spec])).await;
    watcher.assert_quiet().await;
    // No longer watched.
    write(&old_spec, "old, edited\n");
    watcher.assert_quiet().await;
    write(&new_spec, "new, edited\n");
    assert_eq!(watcher.next().await, changed(&[&new_spec]));
    // Kept across the replacement.
    write(&config, "config, edited\n");
    assert_eq!(watcher.next().await, changed(&[&config]));
    watcher.stop().await;
}

#[tokio::test]
async fn rapid_writes_while_settling_make_one_trigger() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    let config = dir.path().join("config.toml");
    write(&spec, "v0\n");
    write(&config, "c0\n");
    let settings = WatchSettings {
        settle: Duration::from_millis(300),
        ..fast()
    };
    let mut watcher = Watcher::start(files(&[&spec, &config]), settings).await;

    for i in 1..=5 {
        write(&spec, &format!("version {i}\n"));
        if i == 3 {
            write(&config, "c1\n");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut expected = [spec.as_path(), config.as_path()];
    expected.sort();
    assert_eq!(watcher.next().await, changed(&expected));
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[tokio::test]
async fn a_file_changed_and_restored_while_settling_triggers_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    write(&spec, "original\n");
    let settings = WatchSettings {
        settle: Duration::from_millis(200),
        ..fast()
    };
    let mut watcher = Watcher::start(files(&[&spec]), settings).await;

    write(&spec, "half-written\n");
    tokio::time::sleep(Duration::from_millis(60)).await;
    write(&spec, "original\n");
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_kubernetes_configmap_symlink_swap_triggers() {
    use std::os::unix::fs::symlink;

    let dir = tempfile::tempdir().expect("tempdir");
    let volume = dir.path().join("cfg");
    let first = volume.join("..2026_01_01_00_00_00.000000001");
    std::fs::create_dir_all(&first).expect("mkdir");
    write(&first.join("config.toml"), "port = 1\n");
    symlink("..2026_01_01_00_00_00.000000001", volume.join("..data")).expect("symlink");
    let config = volume.join("config.toml");
    symlink("..data/config.toml", &config).expect("symlink");
    let set = WatchSet {
        files: vec![config.clone()],
        dirs: vec![volume.clone()],
        urls: Vec::new(),
    };
    let mut watcher = Watcher::start(set, fast()).await;

    // What the kubelet does: a new timestamped directory, a new `..data` symlink renamed
    // over the old one, then the old directory removed. Same length, and the old mtime
    // (kubernetes/kubernetes#24215): only the content differs.
    let second = volume.join("..2026_01_01_00_05_00.000000002");
    std::fs::create_dir(&second).expect("mkdir");
    write(&second.join("config.toml"), "port = 2\n");
    let mtime = std::fs::metadata(first.join("config.toml"))
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::File::options()
        .write(true)
        .open(second.join("config.toml"))
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
    symlink("..2026_01_01_00_05_00.000000002", volume.join("..data_tmp")).expect("symlink");
    std::fs::rename(volume.join("..data_tmp"), volume.join("..data")).expect("swap");
    std::fs::remove_dir_all(&first).expect("remove old");

    // The directory's listing (`config.toml`) is unchanged, so only the file is named.
    assert_eq!(watcher.next().await, changed(&[&config]));
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[test]
fn the_content_hash_does_not_depend_on_how_the_bytes_arrive() {
    let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let whole = hash::hash_bytes(&bytes);
    for piece in [1, 7, 4096, 65_535, 65_536, 65_537, 150_000] {
        let mut hasher = hash::ContentHasher::new();
        for chunk in bytes.chunks(piece) {
            hasher.update(chunk);
        }
        assert_eq!(hasher.finish(), whole, "pieces of {piece}");
    }
    assert_ne!(hash::hash_bytes(&bytes[1..]), whole);
    assert_ne!(hash::hash_bytes(b""), hash::hash_bytes(b"\0"));
}

/// A spec server: the current body and optional ETag, and what it was asked.
#[derive(Clone, Default)]
struct SpecServer {
    current: Arc<Mutex<(String, Option<String>)>>,
    if_none_match: Arc<Mutex<Vec<String>>>,
    requests: Arc<AtomicUsize>,
}

impl SpecServer {
    fn set(&self, body: &str, etag: Option<&str>) {
        *self.current.lock().expect("lock") = (body.to_string(), etag.map(str::to_string));
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Serves on 127.0.0.1; returns the spec's URL.
    async fn start(&self) -> String {
        use axum::http::{HeaderMap, StatusCode, header};
        use axum::response::{IntoResponse, Response};

        async fn spec(
            axum::extract::State(server): axum::extract::State<SpecServer>,
            headers: HeaderMap,
        ) -> Response {
            server.requests.fetch_add(1, Ordering::SeqCst);
            let (body, etag) = server.current.lock().expect("lock").clone();
            if let Some(sent) = headers
                .get(header::IF_NONE_MATCH)
                .and_then(|v| v.to_str().ok())
            {
                server
                    .if_none_match
                    .lock()
                    .expect("lock")
                    .push(sent.to_string());
                if etag.as_deref() == Some(sent) {
                    return StatusCode::NOT_MODIFIED.into_response();
                }
            }
            match etag {
                Some(etag) => ([(header::ETAG, etag)], body).into_response(),
                None => body.into_response(),
            }
        }

        let app = axum::Router::new()
            .route("/openapi.json", axum::routing::get(spec))
            .with_state(self.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{address}/openapi.json")
    }

    /// Waits until `n` more requests arrived (polls happened).
    async fn wait_requests(&self, n: usize) {
        let target = self.requests() + n;
        tokio::time::timeout(PATIENCE, async {
            while self.requests() < target {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("polled in time");
    }
}

fn urls(urls: &[&str]) -> WatchSet {
    WatchSet {
        urls: urls.iter().map(|u| u.to_string()).collect(),
        ..WatchSet::default()
    }
}

#[tokio::test]
async fn a_url_with_an_etag_is_polled_conditionally_and_triggers_when_it_changes() {
    let server = SpecServer::default();
    server.set(r#"{"openapi":"3.0.3"}"#, Some("\"v1\""));
    let url = server.start().await;
    let mut watcher = Watcher::start(urls(&[&url]), fast()).await;
    assert_eq!(server.requests(), 1, "the baseline");

    server.wait_requests(3).await;
    watcher.assert_quiet().await;
    let sent = server.if_none_match.lock().expect("lock").clone();
    assert!(!sent.is_empty(), "polls are conditional");
    assert!(sent.iter().all(|s| s == "\"v1\""), "{sent:?}");

    server.set(r#"{"openapi":"3.1.0"}"#, Some("\"v2\""));
    assert_eq!(watcher.next().await, Trigger::Changed(vec![url.clone()]));
    server.wait_requests(3).await;
    watcher.assert_quiet().await;
    assert_eq!(
        server.if_none_match.lock().expect("lock").last(),
        Some(&"\"v2\"".to_string())
    );
    watcher.stop().await;
}

#[tokio::test]
async fn a_url_without_validators_triggers_only_when_its_body_changes() {
    let server = SpecServer::default();
    server.set(r#"{"openapi":"3.0.3"}"#, None);
    let url = server.start().await;
    let mut watcher = Watcher::start(urls(&[&url]), fast()).await;

    server.wait_requests(4).await;
    watcher.assert_quiet().await;
    assert!(server.if_none_match.lock().expect("lock").is_empty());

    server.set(r#"{"openapi":"3.1.0"}"#, None);
    assert_eq!(watcher.next().await, Trigger::Changed(vec![url.clone()]));
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[tokio::test]
async fn an_unreachable_url_does_not_trigger() {
    // Bind and drop: nothing listens on the port afterwards.
    let address = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port");
    let url = format!("http://{address}/openapi.json");
    let mut watcher = Watcher::start(urls(&[&url, "not a url"]), fast()).await;
    watcher.assert_quiet().await;
    watcher.stop().await;
}

#[test]
fn urls_are_displayed_without_credentials_or_query() {
    assert_eq!(
        display_url("https://user:secret@api.example.test/spec.json?key=abc#x"),
        "https://api.example.test/spec.json?…"
    );
    assert_eq!(
        display_url("http://127.0.0.1:8080/openapi.json"),
        "http://127.0.0.1:8080/openapi.json"
    );
    assert_eq!(display_url("not a url"), "not a url");
}

#[tokio::test]
async fn the_watcher_survives_zero_intervals_and_stops_on_shutdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.yaml");
    write(&spec, "a\n");
    let settings = WatchSettings {
        file_interval: Duration::ZERO,
        url_interval: Duration::ZERO,
        settle: Duration::ZERO,
    };
    let mut watcher = Watcher::start(files(&[&spec]), settings).await;
    write(&spec, "b\n");
    assert_eq!(watcher.next().await, changed(&[&spec]));
    watcher.stop().await;
}

#[cfg(unix)]
#[tokio::test]
async fn sighup_sends_a_signal_trigger() {
    use tokio::signal::unix::{SignalKind, signal};

    // Installing a handler first means a SIGHUP can never take the test process down,
    // even if it arrives before `on_hangup` has installed its own.
    let _installed = signal(SignalKind::hangup()).expect("SIGHUP handler");
    let (tx, mut rx) = mpsc::channel(4);
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(on_hangup(tx, shutdown.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;

    // Repeated until seen, in case the first one beat `on_hangup`'s registration.
    let received = tokio::time::timeout(PATIENCE, async {
        loop {
            let status = std::process::Command::new("kill")
                .args(["-HUP", &std::process::id().to_string()])
                .status()
                .expect("kill runs");
            assert!(status.success());
            if let Ok(trigger) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
                return trigger;
            }
        }
    })
    .await
    .expect("SIGHUP seen in time");
    assert_eq!(received, Some(Trigger::Signal));

    shutdown.cancel();
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("stops on shutdown")
        .expect("no panic");
}

fn catalog(paths: Value) -> Catalog {
    let docs = DocumentSet::single(
        Url::parse("file:///specs/api.json").expect("url"),
        "api.json".into(),
        json!({
            "openapi": "3.0.3",
            "info": {"title": "Pets", "version": "1"},
            "servers": [{"url": "https://api.example.test/v1"}],
            "paths": paths,
        }),
    );
    let input = ApiInput::new("pets", Some(&docs));
    catalog::build(&[input], &ToolSettings::default())
        .expect("catalog builds")
        .0
}

fn operation(id: &str, summary: &str) -> Value {
    json!({"operationId": id, "summary": summary, "responses": {"200": {"description": "ok"}}})
}

#[test]
fn catalog_diff_names_added_removed_and_changed_tools() {
    let id = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}]);
    let old = catalog(json!({
        "/pets": {"get": operation("listPets", "List pets")},
        "/pets/{id}": {
            "parameters": id,
            "get": operation("getPet", "Get a pet"),
            "delete": operation("deletePet", "Delete a pet"),
        },
        "/ping": {"get": operation("ping", "Ping")},
        "/status": {"get": operation("status", "Status")},
    }));
    let new = catalog(json!({
        "/pets": {
            "get": operation("listPets", "List pets"),
            "post": operation("createPet", "Create a pet"),
        },
        "/pets/{id}": {
            "parameters": id,
            "get": operation("getPet", "Get one pet by its id"),
        },
        // Same wire form, different route.
        "/health": {"get": operation("ping", "Ping")},
        "/status": {"get": operation("status", "Status")},
    }));
    assert_eq!(
        old.get("ping").map(Tool::to_mcp),
        new.get("ping").map(Tool::to_mcp)
    );

    let diff = CatalogDiff::between(&old, &new);
    assert_eq!(
        diff,
        CatalogDiff {
            added: vec!["createPet".into()],
            removed: vec!["deletePet".into()],
            changed: vec!["getPet".into(), "ping".into()],
        }
    );
    assert!(!diff.is_empty());
    assert_eq!(
        diff.to_string(),
        "1 added (createPet), 1 removed (deletePet), 2 changed (getPet, ping)"
    );

    let same = CatalogDiff::between(&old, &old.clone());
    assert!(same.is_empty());
    assert_eq!(same.to_string(), "0 added, 0 removed, 0 changed");
    let rebuilt = catalog(json!({
        "/pets": {"get": operation("listPets", "List pets")},
        "/pets/{id}": {
            "parameters": id,
            "get": operation("getPet", "Get a pet"),
            "delete": operation("deletePet", "Delete a pet"),
        },
        "/ping": {"get": operation("ping", "Ping")},
        "/status": {"get": operation("status", "Status")},
    }));
    assert!(CatalogDiff::between(&old, &rebuilt).is_empty());
}

#[test]
fn catalog_diff_display_lists_at_most_ten_names_per_group() {
    let names = |n: usize| (1..=n).map(|i| format!("t{i}")).collect::<Vec<_>>();
    let diff = CatalogDiff {
        added: names(12),
        removed: names(10),
        changed: Vec::new(),
    };
    assert_eq!(
        diff.to_string(),
        "12 added (t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, … and 2 more), \
         10 removed (t1, t2, t3, t4, t5, t6, t7, t8, t9, t10), 0 changed"
    );
}

#[tokio::test]
async fn the_watcher_stops_when_nobody_listens() {
    let watcher = Watcher::start(WatchSet::default(), fast()).await;
    drop(watcher.triggers);
    tokio::time::timeout(PATIENCE, watcher.task)
        .await
        .expect("stops once the receiver is gone")
        .expect("no panic");
}
