//! `restmcp selftest`, run as the real binary on temporary projects and on the shipped
//! configuration: every tool called over Streamable HTTP and over a child `restmcp stdio`,
//! against the mock upstream.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::overlays::project;
use crate::support::shared_spec;

/// Runs `restmcp selftest --json` in `dir`; the exit code, the report and stderr.
fn selftest(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .current_dir(dir)
        .args(["selftest", "--json"])
        .args(args)
        .env_remove("RESTMCP_CONFIG")
        .output()
        .expect("restmcp runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not a JSON report ({e}); stderr:\n{stderr}"));
    (output.status.code().expect("exited"), report, stderr)
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} is in the report: {report:#}"))
}

fn echo_config(extra: &str) -> String {
    format!("[apis.echo]\nspec = \"specs/echo.yaml\"\n{extra}")
}

#[test]
fn every_echo_tool_is_called_over_both_transports() {
    let dir = project(&echo_config(""), &[]);
    let (code, report, stderr) = selftest(dir.path(), &[]);
    let tools = report["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 16, "{report:#}");
    for transport in ["http", "stdio"] {
        let totals = &report["totals"][transport];
        assert_eq!(totals["tools"], 16, "{transport}: {totals}");
        let counted = ["ok", "failed", "skipped"]
            .iter()
            .map(|k| totals[k].as_u64().expect("a count"))
            .sum::<u64>();
        assert_eq!(counted, 16, "{transport}: {totals}");
        // Tools without arguments pass with any generator: calls went through.
        assert!(totals["ok"].as_u64() > Some(0), "{transport}: {totals}");
        assert!(totals["elapsed_ms"].is_u64());
        for tool in tools {
            let outcome = tool[transport]["outcome"].as_str().expect("an outcome");
            assert!(["ok", "failed", "skipped"].contains(&outcome), "{tool}");
            assert_eq!(
                tool[transport]["reason"].is_null(),
                outcome == "ok",
                "{tool}"
            );
        }
    }
    assert!(report["elapsed_ms"].is_u64());
    assert_eq!(tool(&report, "slow")["http"]["outcome"], "ok");
    assert_eq!(tool(&report, "slow")["stdio"]["outcome"], "ok");
    // Not a terminal: no progress line, and the stdio child's banner is not passed on.
    assert_eq!(stderr, "");
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["totals"]["http"]["failed"], 0);
    assert_eq!(report["totals"]["stdio"]["ok"], 16);
}

/// Two mistakes a user can make in YAML, each failing whatever arguments the generator
/// makes (so the test holds for the placeholder and for the real generator alike):
///
/// * `getItem`'s path parameter `id` hidden with an empty fixed value (an overlay `value`,
///   or a `value_env` whose variable is empty in CI): the request cannot be built.
/// * `search` requires a query parameter `filter` whose only valid value is `{}`, which
///   an exploded form parameter sends as nothing: a generator that fills it in gets the
///   mock's 400 ("required query parameter \"filter\" is missing"), one that leaves it
///   out gets the argument check's "missing required argument \"filter\"".
///
/// An overlay that merely makes a required query parameter optional (`required: false`)
/// is not used: the generator may fill optional arguments in, and then the request is right
/// (tests/it/mock.rs covers that mistake with a call that leaves the argument out).
#[test]
fn a_tool_whose_request_cannot_be_right_fails_and_the_exit_code_says_so() {
    let search = r#"
openapi: 3.0.3
info: {title: Search, version: "1"}
paths:
  /search:
    get:
      operationId: search
      parameters:
        - name: filter
          in: query
          required: true
          style: form
          explode: true
          schema: {type: object, additionalProperties: false}
      responses:
        "200": {description: Found}
"#;
    let overlay = "tools:\n  getItem:\n    arguments:\n      id: {value: \"\"}\n";
    let config = echo_config("[apis.search]\nspec = \"specs/search.yaml\"\n");
    let dir = project(
        &config,
        &[
            ("specs/search.yaml", search),
            ("specs/echo.overlay.yaml", overlay),
        ],
    );
    let (code, report, _) = selftest(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    for transport in ["http", "stdio"] {
        for (name, argument) in [("getItem", "\"id\""), ("search", "\"filter\"")] {
            let outcome = &tool(&report, name)[transport];
            assert_eq!(outcome["outcome"], "failed", "{name} over {transport}");
            let reason = outcome["reason"].as_str().expect("a reason");
            assert!(
                reason.contains(argument),
                "{name} over {transport}: {reason}"
            );
        }
        assert!(report["totals"][transport]["failed"].as_u64() >= Some(2));
    }

    let table = Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .current_dir(dir.path())
        .arg("selftest")
        .output()
        .expect("restmcp runs");
    assert_eq!(table.status.code(), Some(1));
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.starts_with("tool "), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("search ") && l.contains(" stdio ") && l.contains("failed")),
        "{table}"
    );
    assert!(table.contains("\nhttp:  17 tools: "), "{table}");
    assert!(
        table.ends_with(" s\n") && table.contains("selftest failed in "),
        "{table}"
    );
}

#[test]
fn the_shipped_configuration_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = root.join("config.toml");
    let config = config.to_str().expect("a UTF-8 path");
    let (code, report, stderr) = selftest(root, &["--config", config]);
    assert!(report["totals"]["http"]["tools"].as_u64() > Some(0));
    assert_eq!(
        report["totals"]["http"]["tools"],
        report["totals"]["stdio"]["tools"]
    );
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    // Its 19 operations and the workflow buy-available-pet.
    assert_eq!(report["totals"]["http"]["ok"], 20);
    // Its three resources (two templates, read at made-up URIs) and its prompt (whose
    // petId comes from the completion the server offers) pass on both transports.
    let surface: Vec<(String, String, Option<String>)> = report["surface"]
        .as_array()
        .expect("surface")
        .iter()
        .map(|item| {
            for transport in ["http", "stdio"] {
                assert_eq!(item[transport]["outcome"], "ok", "{item}");
            }
            (
                item["kind"].as_str().expect("kind").to_string(),
                item["name"].as_str().expect("name").to_string(),
                item["asked"].as_str().map(str::to_string),
            )
        })
        .collect();
    let shown = |kind: &str, name: &str, asked: Option<&str>| {
        (
            kind.to_string(),
            name.to_string(),
            asked.map(str::to_string),
        )
    };
    assert_eq!(
        surface,
        [
            shown(
                "template",
                "petstore://pets{?status}",
                Some("petstore://pets?status=available")
            ),
            shown(
                "template",
                "petstore://pets/{petId}",
                surface[1]
                    .2
                    .as_deref()
                    .filter(|u| u.starts_with("petstore://pets/"))
            ),
            shown("resource", "petstore://store/inventory", None),
            shown("prompt", "pet_report", Some("petId=(completed)")),
        ]
    );
    for transport in ["http", "stdio"] {
        assert_eq!(report["totals"][transport]["surface"]["ok"], 4);
    }
}

/// Selftest passes on every API description under `../shared/specs`, GitHub's
/// 1,223 tools included.
#[test]
fn selftest_passes_on_every_shared_spec() {
    let Some(root) = shared_spec("") else {
        return;
    };
    let mut specs = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if is_api_description(&path) {
                specs.push(path);
            }
        }
    }
    specs.sort();
    assert!(specs.len() > 30, "{specs:?}");
    let empty = tempfile::tempdir().expect("tempdir");
    for spec in specs {
        let started = std::time::Instant::now();
        let (code, report, stderr) = selftest(
            empty.path(),
            &["--spec", spec.to_str().expect("UTF-8 path")],
        );
        let totals = &report["totals"];
        assert_eq!(code, 0, "{}: {totals}\n{stderr}", spec.display());
        eprintln!(
            "{}: {} tools ok in {:.1} s",
            spec.display(),
            totals["http"]["ok"],
            started.elapsed().as_secs_f64()
        );
    }
}

/// Files with a top-level `openapi` or `swagger` key (the shared folder also holds the
/// fragments that split specs refer to).
fn is_api_description(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(value) = restmcp::spec::parse::parse_document("x", text.as_bytes()) else {
        return false;
    };
    value.get("openapi").is_some() || value.get("swagger").is_some()
}

#[test]
fn a_configuration_that_does_not_load_is_an_error_not_a_report() {
    let dir = project(&echo_config("prefix = \"no spaces allowed\"\n"), &[]);
    let output = Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .current_dir(dir.path())
        .arg("selftest")
        .output()
        .expect("restmcp runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
}

/// A runtime whose workers keep serving in-process upstreams while the test waits for the
/// restmcp child.
fn serving_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn live_config(base_url: &str) -> String {
    echo_config(&format!("base_url = \"{base_url}\"\n"))
}

/// `selftest --live` calls the configured upstream (restmcp's echo upstream here, in place
/// of a staging server), over one transport when asked, and warns that every operation is
/// called.
#[test]
fn live_calls_go_to_the_configured_upstream_over_the_transport_asked_for() {
    let runtime = serving_runtime();
    let upstream = runtime.block_on(crate::upstream::start());
    let dir = project(&live_config(&upstream.url()), &[]);
    let (_, report, stderr) = selftest(dir.path(), &["--live", "--transport", "http"]);
    assert!(
        stderr.starts_with("selftest --live: calling every operation of the configured upstreams with generated arguments, writes included, once over Streamable HTTP"),
        "{stderr}"
    );
    let tools = report["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 16, "{report:#}");
    // The five operations under /echo/ (the upstream counts those, not its /_/ routes)
    // were each sent there once.
    let calls = upstream
        .counters
        .all
        .load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(calls, 5, "{report:#}");
    assert_eq!(tool(&report, "getItem")["http"]["outcome"], "ok");
    for tool in tools {
        assert_eq!(
            tool["stdio"],
            serde_json::json!({"outcome": "skipped", "reason": "not called (--transport http)"}),
            "{tool}"
        );
    }
    assert_eq!(report["totals"]["stdio"]["skipped"], 16);
}

/// A validating upstream (Prism) answers a request it finds invalid with an RFC 9457
/// problem listing the violations: the row names the status and each violation, and the
/// exit code is 1. Without `--live` the same configuration is mocked and passes.
#[test]
fn a_live_upstreams_violations_are_the_reason_a_call_failed() {
    use axum::http::{StatusCode, header};
    let runtime = serving_runtime();
    let addr = runtime.block_on(async {
        let problem = serde_json::json!({
            "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
            "title": "Invalid request",
            "status": 422,
            "detail": "Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.",
            "validation": [
                {"location": ["query", "limit"], "severity": "Error", "code": "type", "message": "must be integer"},
                {"location": ["body"], "severity": "Error", "code": "required", "message": "must have required property 'name'"}
            ]
        });
        let app = axum::Router::new().fallback(move || {
            let body = problem.to_string();
            async move {
                (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    [(header::CONTENT_TYPE, "application/problem+json")],
                    body,
                )
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    let dir = project(&live_config(&format!("http://{addr}")), &[]);
    let (code, report, _) = selftest(dir.path(), &["--live", "--transport", "http"]);
    assert_eq!(code, 1);
    assert_eq!(
        tool(&report, "getItem")["http"]["reason"],
        "upstream API \"echo\" answered 422 Unprocessable Entity: query.limit: must be integer; body: must have required property 'name'"
    );
    let (code, report, _) = selftest(dir.path(), &["--transport", "http"]);
    assert_eq!(code, 0, "{report:#}");
}

/// A description whose request bodies are relaxed to fit the inputSchema budget
/// (tests/fixtures/deep-entities.json): selftest makes its arguments from the full schemas,
/// so every call passes the full check, over both transports, and the mock accepts it.
#[test]
fn relaxed_tools_are_called_with_arguments_the_full_schema_accepts() {
    let empty = tempfile::tempdir().expect("tempdir");
    let spec = crate::support::fixture("deep-entities.json");
    let (code, report, stderr) = selftest(
        empty.path(),
        &["--spec", spec.to_str().expect("UTF-8 path")],
    );
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    for name in ["updateUser", "createGroup"] {
        let row = tool(&report, name);
        assert_eq!(row["http"]["outcome"], "ok", "{row:#}");
        assert_eq!(row["stdio"]["outcome"], "ok", "{row:#}");
    }
}

/// Both legs serve the configuration's presentation: with a schema dialect set (for one
/// API, or for every tool), the Streamable HTTP leg lists what the stdio child lists, so no
/// tool is "listed differently" and every call is judged against the same listing.
#[test]
fn both_transports_list_the_configured_dialect() {
    for config in [
        echo_config("dialect = \"gemini\"\n"),
        format!(
            "[tools]\ndialect = \"openai-strict\"\n\n{}",
            echo_config("")
        ),
    ] {
        let dir = project(&config, &[]);
        let (code, report, _) = selftest(dir.path(), &[]);
        let listed_differently: Vec<&Value> = report["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter(|tool| {
                tool["stdio"]["reason"]
                    .as_str()
                    .is_some_and(|reason| reason.starts_with("listed differently"))
            })
            .collect();
        assert!(
            listed_differently.is_empty(),
            "{config}\n{listed_differently:#?}"
        );
        assert_eq!(code, 0, "{config}\n{report:#}");
    }
}
