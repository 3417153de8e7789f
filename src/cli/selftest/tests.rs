use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};

use super::calls::judge;
use super::live::{CALL_TIMEOUT, call_timeout};
use super::plan::plan;
use super::reason::MAX_REASON_CHARS;
use super::report::MAX_TABLE_REASON_CHARS;
use super::transports::stdio_args;
use super::*;

fn summary() -> Summary {
    Summary {
        tools: vec![
            ToolReport {
                name: "getPetById".into(),
                http: Verdict::Ok,
                stdio: Verdict::Ok,
            },
            ToolReport {
                name: "findPetsByStatus".into(),
                http: Verdict::Failed(
                    "the mock upstream rejected the request: required query parameter \"status\" is missing".into(),
                ),
                stdio: Verdict::Ok,
            },
            ToolReport {
                name: "uploadFile".into(),
                http: Verdict::Skipped("no arguments could be generated from the inputSchema".into()),
                stdio: Verdict::Skipped("no arguments could be generated from the inputSchema".into()),
            },
        ],
        surface: Vec::new(),
        call_time: HashMap::from([
            (Transport::Http, Duration::from_millis(120)),
            (Transport::Stdio, Duration::from_millis(340)),
        ]),
        elapsed: Duration::from_millis(1500),
    }
}

#[test]
fn the_table_lists_only_what_was_not_ok_then_the_totals() {
    assert_eq!(
        summary().render(),
        "\
tool              transport  outcome  reason
findPetsByStatus  http       failed   the mock upstream rejected the request: required query parameter \"status\" is missing
uploadFile        http       skipped  no arguments could be generated from the inputSchema
uploadFile        stdio      skipped  no arguments could be generated from the inputSchema

http:  3 tools: 1 ok, 1 failed, 1 skipped in 0.12 s
stdio: 3 tools: 2 ok, 0 failed, 1 skipped in 0.34 s
selftest failed in 1.50 s
"
    );
}

#[test]
fn resources_and_prompts_get_a_table_and_totals_of_their_own() {
    let mut run = summary();
    run.tools.truncate(1);
    run.surface = vec![
        SurfaceReport {
            kind: Kind::Template,
            name: "petstore://pets/{petId}".into(),
            asked: Some("petstore://pets/0".into()),
            http: Verdict::Failed(
                "resources/read: JSON-RPC error -32002: resource not found".into(),
            ),
            stdio: Verdict::Ok,
        },
        SurfaceReport {
            kind: Kind::Prompt,
            name: "pet_report".into(),
            asked: None,
            http: Verdict::Ok,
            stdio: Verdict::Ok,
        },
    ];
    assert!(run.failed());
    assert_eq!(
        run.render(),
        "\
resource or prompt                                    transport  outcome  reason
template petstore://pets/{petId} (petstore://pets/0)  http       failed   resources/read: JSON-RPC error -32002: resource not found

http:  1 tools: 1 ok, 0 failed, 0 skipped in 0.12 s
stdio: 1 tools: 1 ok, 0 failed, 0 skipped in 0.34 s
http:  2 resources and prompts: 1 ok, 1 failed, 0 skipped
stdio: 2 resources and prompts: 2 ok, 0 failed, 0 skipped
selftest failed in 1.50 s
"
    );
    let json = run.to_json();
    assert_eq!(json["surface"][0]["kind"], "template");
    assert_eq!(json["surface"][0]["asked"], "petstore://pets/0");
    assert_eq!(json["totals"]["http"]["surface"]["failed"], 1);
    assert_eq!(json["totals"]["stdio"]["surface"]["items"], 2);
}

#[test]
fn a_clean_run_is_only_totals() {
    let mut clean = summary();
    clean.tools.truncate(1);
    assert!(!clean.failed());
    assert_eq!(
        clean.render(),
        "\
http:  1 tools: 1 ok, 0 failed, 0 skipped in 0.12 s
stdio: 1 tools: 1 ok, 0 failed, 0 skipped in 0.34 s
selftest passed in 1.50 s
"
    );
}

#[test]
fn skipped_tools_alone_do_not_fail_the_run() {
    let mut skipped = summary();
    skipped.tools.remove(1);
    assert!(!skipped.failed());
    assert!(summary().failed());
}

#[test]
fn the_json_report_has_every_tool_on_both_transports_and_the_totals() {
    assert_eq!(
        summary().to_json(),
        json!({
            "tools": [
                {"name": "getPetById",
                 "http": {"outcome": "ok", "reason": null},
                 "stdio": {"outcome": "ok", "reason": null}},
                {"name": "findPetsByStatus",
                 "http": {"outcome": "failed", "reason": "the mock upstream rejected the request: required query parameter \"status\" is missing"},
                 "stdio": {"outcome": "ok", "reason": null}},
                {"name": "uploadFile",
                 "http": {"outcome": "skipped", "reason": "no arguments could be generated from the inputSchema"},
                 "stdio": {"outcome": "skipped", "reason": "no arguments could be generated from the inputSchema"}},
            ],
            "totals": {
                "http": {"tools": 3, "ok": 1, "failed": 1, "skipped": 1, "elapsed_ms": 120},
                "stdio": {"tools": 3, "ok": 2, "failed": 0, "skipped": 1, "elapsed_ms": 340},
            },
            "elapsed_ms": 1500,
        })
    );
}

#[test]
fn the_mock_upstreams_problems_are_the_reason() {
    let text = "upstream API \"petstore\" answered 400 Bad Request: {\"error\":\"restmcp mock: the request does not match GET /pet/findByStatus\",\"problems\":[\"required query parameter \\\"status\\\" is missing\",\"the request body is required and missing\"]}\nHint: the upstream rejected the request; check the arguments.";
    assert_eq!(
        error_reason(text),
        "the mock upstream rejected the request: required query parameter \"status\" is missing; the request body is required and missing"
    );
}

#[test]
fn other_errors_give_their_first_line_with_the_list_it_introduces() {
    let text = "Invalid arguments for tool \"getPetById\"; no request was sent:\n- \"petId\" is a required property\n- unknown argument \"x\"\n\nHint: something";
    assert_eq!(
        error_reason(text),
        "Invalid arguments for tool \"getPetById\"; no request was sent: - \"petId\" is a required property - unknown argument \"x\""
    );
    assert_eq!(
        error_reason(
            "upstream API \"a\" answered 500 Internal Server Error with an empty body.\nHint: retry later"
        ),
        "upstream API \"a\" answered 500 Internal Server Error with an empty body."
    );
    assert_eq!(error_reason(""), "the result is an error, without text");
}

#[test]
fn long_reasons_are_cut() {
    let reason = error_reason(&"word ".repeat(1000));
    assert_eq!(reason.chars().count(), MAX_REASON_CHARS);
    assert!(reason.ends_with('…'));
    let mut long = summary();
    long.tools[1].http = Verdict::Failed(reason);
    let row = long.render().lines().nth(1).map(str::to_string);
    assert!(
        row.as_deref().is_some_and(
            |r| r.ends_with("word word…") && r.chars().count() < MAX_TABLE_REASON_CHARS + 40
        ),
        "{row:?}"
    );
}

#[test]
fn prisms_violations_are_the_reason() {
    let text = "upstream API \"petstore\" answered 422 Unprocessable Entity: {\"type\":\"https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY\",\"title\":\"Invalid request\",\"status\":422,\"detail\":\"Your request is not valid and no HTTP validation response was found in the spec, so Prism is generating this error for you.\",\"validation\":[{\"location\":[\"query\",\"status\"],\"severity\":\"Error\",\"code\":\"enum\",\"message\":\"must be equal to one of the allowed values: available, pending, sold\"},{\"location\":[\"body\"],\"severity\":\"Error\",\"code\":\"required\",\"message\":\"must have required property 'name'\"}]}\nHint: the upstream rejected the request; check the arguments.";
    assert_eq!(
        error_reason(text),
        "upstream API \"petstore\" answered 422 Unprocessable Entity: query.status: must be equal to one of the allowed values: available, pending, sold; body: must have required property 'name'"
    );
    let unauthorized = "upstream API \"a\" answered 401 Unauthorized: {\"type\":\"https://stoplight.io/prism/errors#UNAUTHORIZED\",\"title\":\"Invalid security scheme used\",\"status\":401,\"detail\":\"\"}\nHint: credentials";
    assert_eq!(
        error_reason(unauthorized),
        "upstream API \"a\" answered 401 Unauthorized: Invalid security scheme used"
    );
    let many: Vec<Value> = (0..10)
        .map(|i| json!({"location": ["query", format!("p{i}")], "message": "must be integer"}))
        .collect();
    let body = json!({"title": "Invalid request", "validation": many});
    let reason = error_reason(&format!(
        "upstream API \"a\" answered 422 Unprocessable Entity: {body}"
    ));
    assert!(
        reason.ends_with("query.p7: must be integer; and 2 more"),
        "{reason}"
    );
    // Not a problem body: the first line as it is.
    assert_eq!(
        error_reason("upstream API \"a\" answered 404 Not Found: [1,2]\nHint: x"),
        "upstream API \"a\" answered 404 Not Found: [1,2]"
    );
}

fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
    let mut tool = json!({"name": name, "inputSchema": input});
    if let Some(output) = output {
        tool["outputSchema"] = output;
    }
    serde_json::from_value(tool).expect("a tool")
}

fn result(value: Value) -> CallToolResult {
    serde_json::from_value(value).expect("a result")
}

#[test]
fn results_are_judged_by_is_error_and_the_output_schema() {
    let schema =
        json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}});
    let validator = jsonschema::validator_for(&schema).expect("compiles");
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    let ok = result(json!({"content": text("{}"), "structuredContent": {"id": 1}}));
    assert_eq!(judge(&ok, Some(&validator)), Verdict::Ok);
    assert_eq!(judge(&ok, None), Verdict::Ok);
    let missing = result(json!({"content": text("{}")}));
    assert_eq!(
        judge(&missing, Some(&validator)),
        Verdict::Failed("no structuredContent, though the tool has an outputSchema".into())
    );
    assert_eq!(judge(&missing, None), Verdict::Ok);
    let wrong = result(json!({"content": text("{}"), "structuredContent": {"id": "x"}}));
    let Verdict::Failed(reason) = judge(&wrong, Some(&validator)) else {
        panic!("a wrong structuredContent fails");
    };
    assert!(
        reason.starts_with("structuredContent at /id does not match the outputSchema"),
        "{reason}"
    );
    let error = result(json!({"content": text("boom\nmore"), "isError": true}));
    assert_eq!(judge(&error, None), Verdict::Failed("boom".into()));
}

#[test]
fn the_listings_must_agree_and_each_tool_is_called_on_both() {
    let input = json!({"type": "object"});
    let http = vec![
        tool("same", input.clone(), Some(json!({"type": "object"}))),
        tool("differs", input.clone(), None),
        tool("only_http", input.clone(), None),
    ];
    let stdio = vec![
        tool("same", input.clone(), Some(json!({"type": "object"}))),
        tool(
            "differs",
            json!({"type": "object", "properties": {"a": {}}}),
            None,
        ),
        tool("only_stdio", input, None),
    ];
    let (reports, jobs) = plan(Some(&http), Some(&stdio), &Default::default());
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["same", "differs", "only_http", "only_stdio"]);
    assert_eq!(
        reports[1].stdio,
        Verdict::Failed(
            "listed differently over stdio than over Streamable HTTP: inputSchema differ".into()
        )
    );
    assert_eq!(
        reports[2].stdio,
        Verdict::Failed("not in tools/list over stdio".into())
    );
    assert_eq!(
        reports[3].http,
        Verdict::Failed("not in tools/list over Streamable HTTP".into())
    );
    let calls: Vec<(usize, Transport)> = jobs.iter().map(|j| (j.row, j.transport)).collect();
    assert_eq!(
        calls,
        [
            (0, Transport::Http),
            (0, Transport::Stdio),
            (1, Transport::Http),
            (2, Transport::Http),
            (3, Transport::Stdio),
        ]
    );
    assert!(jobs[0].output.is_some() && jobs[2].output.is_none());
    // Both transports list the same outputSchema: one check, compiled once, when needed.
    let (http_check, stdio_check) = (
        jobs[0].output.as_ref().expect("output"),
        jobs[1].output.as_ref().expect("output"),
    );
    assert!(Arc::ptr_eq(http_check, stdio_check));
    assert!(http_check.validator().is_ok());
}

#[test]
fn an_output_schema_that_does_not_compile_fails_the_tool_with_the_reason() {
    let broken = tool(
        "broken",
        json!({"type": "object"}),
        Some(json!({"type": "object", "properties": {"a": {"type": 12}}})),
    );
    let (_, jobs) = plan(Some(&[broken]), None, &Default::default());
    let check = jobs[0].output.as_ref().expect("output");
    let reason = check.validator().expect_err("does not compile");
    assert!(
        reason.starts_with("the outputSchema does not compile"),
        "{reason}"
    );
}

#[test]
fn a_transport_left_out_is_skipped_for_every_tool_and_never_called() {
    let tools = vec![
        tool("a", json!({"type": "object"}), None),
        tool("b", json!({"type": "object"}), None),
    ];
    let (reports, jobs) = plan(Some(&tools), None, &Default::default());
    assert_eq!(reports.len(), 2);
    for report in &reports {
        assert_eq!(report.http, Verdict::Ok);
        assert_eq!(
            report.stdio,
            Verdict::Skipped("not called (--transport http)".into())
        );
    }
    assert!(jobs.iter().all(|j| j.transport == Transport::Http) && jobs.len() == 2);
    let (reports, jobs) = plan(None, Some(&tools), &Default::default());
    assert_eq!(
        reports[0].http,
        Verdict::Skipped("not called (--transport stdio)".into())
    );
    assert!(jobs.iter().all(|j| j.transport == Transport::Stdio) && jobs.len() == 2);
    assert_eq!(Transport::from_key("stdio"), Some(Transport::Stdio));
    assert_eq!(Transport::from_key("sse"), None);
}

#[test]
fn a_live_call_may_take_the_longest_upstream_timeout_and_a_margin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = |toml: &str| {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, toml).expect("written");
        Config::load(&path, &Overrides::default()).expect("loads")
    };
    let slow = config(
        "[apis.a]\nspec = \"a.yaml\"\ntimeout_seconds = 100\ntool_timeouts = { report = 200 }\n\
         [apis.b]\nspec = \"b.yaml\"\n",
    );
    assert_eq!(call_timeout(&slow), Duration::from_secs(210));
    let quick = config("[apis.a]\nspec = \"a.yaml\"\ntimeout_seconds = 2\n");
    assert_eq!(call_timeout(&quick), CALL_TIMEOUT);
}

#[test]
fn the_child_gets_the_global_flags() {
    let options = Options {
        config: "cfg.toml".into(),
        overrides: Overrides {
            spec: Some("api.yaml".into()),
            base_url: Some("http://localhost:1".into()),
            max_name_length: Some(48),
            max_description_length: Some(0),
            max_result_tokens: Some(0),
            mock: false,
        },
        live: false,
        only: None,
        concurrency: CONCURRENCY,
        executable: "restmcp".into(),
        progress: false,
    };
    let live = Options {
        live: true,
        ..options.clone()
    };
    assert_eq!(
        stdio_args(&live)[..4],
        ["stdio", "--config", "cfg.toml", "--spec"].map(OsString::from)
    );
    assert_eq!(
        stdio_args(&options),
        [
            "stdio",
            "--mock",
            "--config",
            "cfg.toml",
            "--spec",
            "api.yaml",
            "--base-url",
            "http://localhost:1",
            "--max-name-length",
            "48",
            "--max-description-length",
            "0",
            "--max-result-tokens",
            "0"
        ]
        .map(OsString::from)
    );
}
