//! Nothing echoes what it should not, and a reload that hangs is abandoned:
//!
//! * an upstream that echoes the API key back encoded (base64, hex, percent-encoded,
//!   upper-cased, as a JSON key, inside an error text) leaks none of it into the result;
//! * a config file that is a symlink to another file, or an overlay that is not one, is
//!   reported by path and line without quoting what the file holds;
//! * a reload whose spec URL never answers is abandoned after `reload.timeout_seconds`
//!   with an error, the tools stay, and the next SIGHUP and the next change are still seen.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

use crate::reload::Binary;

/// The API key: long, mixed case, and with characters every encoding treats differently.
const KEY: &str = "Zk9/qP+xR2 wT=77abcdEF";

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Percent-encoding written here rather than taken from restmcp: letters and digits and
/// the characters in `keep` stay, a space becomes `space`, everything else `%XX`.
fn percent(text: &str, keep: &str, space: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b' ' => space.to_string(),
            b if b.is_ascii_alphanumeric() || keep.as_bytes().contains(&b) => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// Every form of [`KEY`] the upstream echoes, named.
fn echoed_forms() -> Vec<(&'static str, String)> {
    echoed_forms_of(KEY)
}

fn echoed_forms_of(key: &str) -> Vec<(&'static str, String)> {
    vec![
        ("as sent", key.to_string()),
        ("base64", STANDARD.encode(key)),
        ("base64url", URL_SAFE_NO_PAD.encode(key)),
        ("hex", hex(key)),
        ("HEX", hex(key).to_uppercase()),
        ("form-encoded", percent(key, "*-._", "+")),
        ("path-encoded", percent(key, "-._~!$&'()*+,;=:@", "%20")),
        (
            "path-encoded, lower-case hex",
            percent(key, "-._~", "%20").to_lowercase(),
        ),
        ("upper-cased", key.to_uppercase()),
        ("lower-cased", key.to_lowercase()),
    ]
}

const SPEC: &str = r#"openapi: 3.0.3
info: {title: Echo, version: "1"}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
security: [{key: []}]
paths:
  /echo:
    get:
      operationId: echoKey
      responses:
        "200":
          description: The key, echoed
          content:
            application/json:
              schema: {type: object}
  /echo-error:
    get:
      operationId: echoKeyInAnError
      responses:
        "200":
          description: Never
"#;

/// An upstream that echoes the `X-API-Key` it received in every form, as JSON values,
/// JSON keys and inside a base64 text (`/echo`), or as a plain-text 400 (`/echo-error`).
async fn start_echoing_upstream() -> (String, Arc<AtomicUsize>) {
    let keyed = Arc::new(AtomicUsize::new(0));
    let seen = |headers: &HeaderMap, keyed: &AtomicUsize| {
        let key = headers
            .get("x-api-key")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        if key == KEY {
            keyed.fetch_add(1, Ordering::SeqCst);
        }
        key
    };
    let (for_json, for_error) = (keyed.clone(), keyed.clone());
    let app = Router::new()
        .route(
            "/echo",
            get(move |headers: HeaderMap| async move {
                let key = seen(&headers, &for_json);
                let mut body = serde_json::Map::new();
                for (name, form) in echoed_forms_of(&key) {
                    body.insert(name.to_string(), json!(form));
                }
                body.insert(key.clone(), json!("the key as a JSON key"));
                body.insert(
                    "nested".into(),
                    json!({ "authorization": STANDARD.encode(format!("Bearer {key}")) }),
                );
                axum::Json(serde_json::Value::Object(body))
            }),
        )
        .route(
            "/echo-error",
            get(move |headers: HeaderMap| async move {
                let key = seen(&headers, &for_error);
                let text: Vec<String> = echoed_forms_of(&key)
                    .into_iter()
                    .map(|(name, form)| format!("{name}: {form}"))
                    .collect();
                (StatusCode::BAD_REQUEST, text.join("\n")).into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, keyed)
}

async fn restmcp_call(dir: &Path, tool: &str) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(["call", tool, "--args", "{}", "--config"])
        .arg(dir.join("config.toml"))
        .env("ECHO_TEST_KEY", KEY)
        .env_remove("RESTMCP_CONFIG")
        .kill_on_drop(true)
        .output()
        .await
        .expect("run restmcp call")
}

/// What `leaked` finds of the key in `output`, ignoring case where the form allows it.
fn leaks(output: &str) -> Vec<&'static str> {
    let lower = output.to_lowercase();
    echoed_forms()
        .into_iter()
        .filter(|(_, form)| output.contains(form.as_str()) || lower.contains(&form.to_lowercase()))
        .map(|(name, _)| name)
        .collect()
}

#[tokio::test]
async fn an_upstream_echoing_the_key_encoded_leaks_none_of_it() {
    let (upstream, keyed) = start_echoing_upstream().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("spec.yaml"), SPEC).expect("spec");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[apis.echo]\nspec = \"spec.yaml\"\nbase_url = \"{upstream}\"\n\
             [apis.echo.auth.key]\nvalue_env = \"ECHO_TEST_KEY\"\n"
        ),
    )
    .expect("config");

    let output = restmcp_call(dir.path(), "echoKey").await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(keyed.load(Ordering::SeqCst), 1, "the upstream got the key");
    assert_eq!(leaks(&stdout), Vec::<&str>::new(), "{stdout}");
    assert!(
        !stdout.contains(&STANDARD.encode(format!("Bearer {KEY}"))[8..]),
        "the key inside a base64 text: {stdout}"
    );
    let result: serde_json::Value = serde_json::from_str(&stdout).expect("JSON result");
    let structured = &result["structuredContent"];
    assert_eq!(structured["base64"], "[REDACTED]", "{structured}");
    assert_eq!(structured["upper-cased"], "[REDACTED]", "{structured}");
    assert_eq!(
        structured["[REDACTED]"], "the key as a JSON key",
        "{structured}"
    );

    let output = restmcp_call(dir.path(), "echoKeyInAnError").await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "an error result: {stdout}");
    assert_eq!(keyed.load(Ordering::SeqCst), 2, "the upstream got the key");
    assert!(stdout.contains("HEX: [REDACTED]"), "{stdout}");
    assert_eq!(leaks(&stdout), Vec::<&str>::new(), "{stdout}");
}

/// `restmcp check --config CONFIG` in `dir`.
fn check(dir: &Path, config: &Path) -> (bool, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .arg("check")
        .arg("--config")
        .arg(config)
        .current_dir(dir)
        .env_remove("RESTMCP_CONFIG")
        .output()
        .expect("run restmcp check");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A file that is no configuration: its second line is a secret and a TOML syntax error.
const SHADOW: &str = "# not a config\nroot:$6$Kq2sEcReThAsH9x$abc:19000:0:99999:7:::\n";
const SHADOW_SECRET: &str = "Kq2sEcReThAsH9x";

#[cfg(unix)]
#[test]
fn a_config_error_names_the_file_and_line_without_quoting_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::fs::write(elsewhere.join("shadow"), SHADOW).expect("shadow");
    std::os::unix::fs::symlink(elsewhere.join("shadow"), dir.path().join("config.toml"))
        .expect("symlink");
    let (ok, text) = check(dir.path(), &dir.path().join("config.toml"));
    assert!(!ok, "{text}");
    assert!(text.contains("config.toml"), "names the file: {text}");
    assert!(text.contains("line 2"), "and the line: {text}");
    assert!(
        !text.contains(SHADOW_SECRET),
        "quotes nothing of it: {text}"
    );
    assert!(!text.contains("root:"), "quotes nothing of it: {text}");

    // An overlay path naming such a file: the same.
    std::fs::remove_file(dir.path().join("config.toml")).expect("rm");
    std::fs::write(dir.path().join("spec.yaml"), SPEC).expect("spec");
    std::fs::write(
        dir.path().join("config.toml"),
        "[apis.echo]\nspec = \"spec.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n\
         overlays = [\"elsewhere/shadow\"]\n",
    )
    .expect("config");
    let (ok, text) = check(dir.path(), &dir.path().join("config.toml"));
    assert!(!ok, "{text}");
    assert!(text.contains("elsewhere/shadow"), "names the file: {text}");
    assert!(
        !text.contains(SHADOW_SECRET),
        "quotes nothing of it: {text}"
    );
}

/// A loopback listener that accepts connections and never answers (nor closes them).
async fn start_hanging_listener() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/spec.yaml", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    url
}

const TOOL_SPEC: &str = "openapi: 3.0.3\ninfo: {title: A, version: \"1\"}\npaths:\n";

fn operation(id: &str) -> String {
    format!(
        "  /{id}:\n    get:\n      operationId: {id}\n      responses:\n        \"200\": {{description: ok}}\n"
    )
}

fn config(extra: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n[reload]\ninterval_ms = 100\ntimeout_seconds = 1\n\
         [apis.a]\nspec = \"a.yaml\"\nbase_url = \"http://127.0.0.1:9\"\n{extra}"
    )
}

fn count(log: &str, needle: &str) -> usize {
    log.matches(needle).count()
}

#[tokio::test]
async fn a_hanging_reload_is_abandoned_and_the_next_change_is_seen() {
    restmcp::http_client::install_crypto_provider();
    let hanging = start_hanging_listener().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("a.yaml"),
        format!("{TOOL_SPEC}{}", operation("first")),
    )
    .expect("spec");
    std::fs::write(dir.path().join("config.toml"), config("")).expect("config");
    let mut binary = Binary::start(dir.path()).await;
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(binary.url.clone()))
            .await
            .expect("initialize");
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(
        names(client.list_all_tools().await.expect("tools/list")),
        ["first"]
    );
    // Let the watcher take its baseline of the files.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // An API whose spec URL never answers: the reload is abandoned after its budget.
    std::fs::write(
        dir.path().join("config.toml"),
        config(&format!(
            "[apis.b]\nspec = \"{hanging}\"\nbase_url = \"http://127.0.0.1:9\"\n"
        )),
    )
    .expect("config");
    const ABANDONED: &str = "abandoned after 1 s, the reload budget (reload.timeout_seconds)";
    assert!(
        binary
            .wait_for_log(ABANDONED, Duration::from_secs(15))
            .await,
        "the hanging reload is abandoned:\n{}",
        binary.log()
    );
    let log = binary.log();
    assert!(log.contains("ERROR"), "at error level:\n{log}");
    assert!(
        log.contains("still serving the previous 1 tools"),
        "the tools stay:\n{log}"
    );
    assert_eq!(
        names(client.list_all_tools().await.expect("tools/list")),
        ["first"]
    );

    // SIGHUP still starts a reload (which hangs on the same URL, and is abandoned again).
    #[cfg(unix)]
    {
        let pid = binary.child.id().expect("pid").to_string();
        let status = std::process::Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(15);
        while count(&binary.log(), ABANDONED) < 2 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let log = binary.log();
        assert!(
            log.contains("reload (SIGHUP) failed") && count(&log, ABANDONED) == 2,
            "SIGHUP reloads after an abandoned reload:\n{log}"
        );
    }

    // The next change is seen and loads.
    std::fs::write(dir.path().join("config.toml"), config("")).expect("config");
    std::fs::write(
        dir.path().join("a.yaml"),
        format!("{TOOL_SPEC}{}{}", operation("first"), operation("second")),
    )
    .expect("spec");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut now = Vec::new();
    while Instant::now() < deadline {
        now = names(client.list_all_tools().await.expect("tools/list"));
        if now.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(now, ["first", "second"], "log:\n{}", binary.log());
    assert!(
        binary.log().contains("1 added (second)"),
        "{}",
        binary.log()
    );
    let _ = client.cancel().await;
    let _ = binary.child.kill().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_reload_blocked_on_a_fifo_does_not_keep_restmcp_from_stopping() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("a.yaml"),
        format!("{TOOL_SPEC}{}", operation("first")),
    )
    .expect("spec");
    std::fs::write(dir.path().join("config.toml"), config("")).expect("config");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let mut binary = Binary::start(dir.path()).await;
    // Let the watcher take its baseline of the files.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // An overlay that is a FIFO nobody writes to: opening it blocks (unless refused).
    std::fs::write(
        dir.path().join("config.toml"),
        config("overlays = [\"pipe\"]\n"),
    )
    .expect("config");
    assert!(
        binary
            .wait_for_log(
                "failed; still serving the previous 1 tools",
                Duration::from_secs(15)
            )
            .await,
        "the reload fails or is abandoned:\n{}",
        binary.log()
    );
    assert!(
        binary.log().contains("not a regular file"),
        "an overlay that is a FIFO is refused, not opened:\n{}",
        binary.log()
    );
    let pid = binary.child.id().expect("pid").to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let exited = tokio::time::timeout(Duration::from_secs(10), binary.child.wait()).await;
    assert!(
        exited.is_ok_and(|status| status.is_ok_and(|s| s.success())),
        "restmcp exits after SIGTERM:\n{}",
        binary.log()
    );
}
