//! `$ref`s and spec fetching stay in their place, and what is read is
//! bounded: each test builds a hostile spec and shows it refused with an error
//! that names the problem (and the key that loosens it), with nothing read, fetched or
//! connected to that the spec had no business reaching. Every server is on 127.0.0.1.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use restmcp::spec::{DocumentSet, LoadPolicy, SpecSource};
use url::Url;

/// What a [`Server`] answers on one path.
#[derive(Clone)]
enum Answer {
    Body(String),
    Redirect(String),
}

/// A minimal HTTP/1.1 server on 127.0.0.1 that counts the connections made to it, so a
/// test can show that a refused URL was never even connected to.
struct Server {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl Server {
    fn start(routes: &[(&str, Answer)]) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let routes: HashMap<String, Answer> = routes
            .iter()
            .map(|(path, answer)| (path.to_string(), answer.clone()))
            .collect();
        let counter = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&request);
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
                let response = match routes.get(&path) {
                    Some(Answer::Body(body)) => format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    ),
                    Some(Answer::Redirect(to)) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    None => {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_string()
                    }
                };
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Server { addr, connections }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// A one-operation OpenAPI 3.0 spec whose request body schema is `reference`.
fn spec_referencing(reference: &str) -> String {
    format!(
        r#"{{"openapi": "3.0.3", "info": {{"title": "T", "version": "1"}},
  "paths": {{"/things": {{"post": {{"operationId": "addThing",
    "requestBody": {{"content": {{"application/json": {{"schema": {{"$ref": "{reference}"}}}}}}}},
    "responses": {{"200": {{"description": "ok"}}}}}}}}}}}}"#
    )
}

async fn load(source: SpecSource, policy: &LoadPolicy) -> DocumentSet {
    tokio::time::timeout(
        Duration::from_secs(20),
        DocumentSet::load_edited(&source, policy, |_| Ok(())),
    )
    .await
    .expect("loading finishes promptly")
    .expect("the root spec loads")
}

/// The problem reported for following `reference` from the root document.
fn refused(docs: &DocumentSet, reference: &str) -> String {
    match docs.resolve(0, reference) {
        Ok(_) => panic!("{reference} resolved, but should have been refused"),
        Err(error) => format!("{}: {}", error.target, error.problem),
    }
}

fn url_source(url: &str) -> SpecSource {
    SpecSource::Url(Url::parse(url).expect("url"))
}

fn restmcp(args: &[&str], dir: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_restmcp"));
    command.args(args).current_dir(dir);
    for (key, _) in std::env::vars() {
        if key.starts_with("RESTMCP_") {
            command.env_remove(key);
        }
    }
    command.output().expect("restmcp runs")
}

const SECRET: &str = "sk-live-7f3a9c-TOP-SECRET";

/// A file holding a secret, shaped like a spec fragment so that it would parse (and its
/// content could travel into tools and messages) if it were read.
fn secret_document() -> String {
    format!("components:\n  schemas:\n    S:\n      type: string\n      description: {SECRET}\n")
}

#[test]
fn file_refs_outside_the_spec_directory_are_refused_and_never_printed_by_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).expect("mkdir");
    std::fs::write(dir.path().join("secrets.yaml"), secret_document()).expect("write");
    std::os::unix::fs::symlink(dir.path().join("secrets.yaml"), specs.join("link.yaml"))
        .expect("symlink");
    for reference in [
        "../secrets.yaml#/components/schemas/S",
        "link.yaml#/components/schemas/S",
    ] {
        std::fs::write(specs.join("api.json"), spec_referencing(reference)).expect("write");
        let output = restmcp(&["check", "--spec", "specs/api.json"], dir.path());
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
        assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET));
        assert!(stdout.contains("SKIPPED  POST /things"), "{stdout}");
        assert!(
            stdout.contains("outside the spec's directory"),
            "{reference}: {stdout}"
        );
        assert!(stdout.contains("loading.ref_dirs"), "{stdout}");
    }
}

#[tokio::test]
async fn ref_dirs_lets_file_refs_read_from_another_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let specs = dir.path().join("specs");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&specs).expect("mkdir");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::write(shared.join("schemas.yaml"), secret_document()).expect("write");
    let reference = "../shared/schemas.yaml#/components/schemas/S";
    std::fs::write(specs.join("api.json"), spec_referencing(reference)).expect("write");
    let source = SpecSource::File(specs.join("api.json"));

    let docs = load(source.clone(), &LoadPolicy::default()).await;
    assert!(refused(&docs, reference).contains("outside the spec's directory"));

    let policy = LoadPolicy {
        ref_dirs: vec![shared.clone()],
        ..LoadPolicy::default()
    };
    let docs = load(source, &policy).await;
    let resolved = docs.resolve(0, reference).expect("allowed by ref_dirs");
    assert_eq!(resolved.value["type"], "string");
}

#[tokio::test]
async fn a_fifo_ref_is_refused_at_once_instead_of_wedging_the_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe.yaml");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    std::fs::write(
        dir.path().join("api.json"),
        spec_referencing("pipe.yaml#/S"),
    )
    .expect("write");
    // `load` fails the test if this takes more than seconds.
    let docs = load(
        SpecSource::File(dir.path().join("api.json")),
        &LoadPolicy::default(),
    )
    .await;
    let problem = refused(&docs, "pipe.yaml#/S");
    assert!(problem.contains("not a regular file"), "{problem}");
}

#[tokio::test]
async fn http_refs_reach_only_the_specs_own_origin_and_never_connect_elsewhere() {
    let target = Server::start(&[("/x.yaml", Answer::Body(secret_document()))]);
    let elsewhere = format!("{}#/components/schemas/S", target.url("/x.yaml"));
    let by_name = format!(
        "http://localhost:{}/x.yaml#/components/schemas/S",
        target.addr.port()
    );
    let root = Server::start(&[
        ("/api.json", Answer::Body(spec_referencing(&elsewhere))),
        ("/by-name.json", Answer::Body(spec_referencing(&by_name))),
    ]);

    // Another origin than the spec's: refused before anything is resolved or connected.
    let docs = load(url_source(&root.url("/api.json")), &LoadPolicy::default()).await;
    let problem = refused(&docs, &elsewhere);
    assert!(problem.contains("not the spec's own origin"), "{problem}");
    assert!(problem.contains("loading.ref_origins"), "{problem}");
    assert_eq!(target.connections(), 0);

    // Listed in ref_origins, but its name resolves to loopback: still refused, unconnected.
    let listed = LoadPolicy {
        ref_origins: vec![format!("http://localhost:{}", target.addr.port())],
        ..LoadPolicy::default()
    };
    let docs = load(url_source(&root.url("/by-name.json")), &listed).await;
    let problem = refused(&docs, &by_name);
    assert!(
        problem.contains("loading.allow_private_addresses"),
        "{problem}"
    );
    assert_eq!(target.connections(), 0);

    // Both loosenings together: the operator allowed it, and it loads.
    let allowed = LoadPolicy {
        allow_private_addresses: true,
        ..listed
    };
    let docs = load(url_source(&root.url("/by-name.json")), &allowed).await;
    let resolved = docs.resolve(0, &by_name).expect("allowed by the config");
    assert_eq!(resolved.value["type"], "string");
    assert!(target.connections() >= 1);
}

#[tokio::test]
async fn a_spec_fetched_over_http_cannot_reference_local_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = dir.path().join("secrets.yaml");
    std::fs::write(&secret, secret_document()).expect("write");
    let reference = format!(
        "{}#/components/schemas/S",
        Url::from_file_path(&secret).expect("url")
    );
    let root = Server::start(&[("/api.json", Answer::Body(spec_referencing(&reference)))]);
    let policy = LoadPolicy {
        ref_dirs: vec![dir.path().to_path_buf()],
        ..LoadPolicy::default()
    };
    let docs = load(url_source(&root.url("/api.json")), &policy).await;
    let problem = refused(&docs, &reference);
    assert!(
        problem.contains("fetched over HTTP may not reference local files"),
        "{problem}"
    );
    assert!(!problem.contains(SECRET));
}

#[tokio::test]
async fn redirects_stay_within_the_allowed_origins() {
    let target = Server::start(&[("/x.yaml", Answer::Body(secret_document()))]);
    let root = Server::start(&[
        (
            "/api.json",
            Answer::Body(spec_referencing("moved.yaml#/components/schemas/S")),
        ),
        ("/moved.yaml", Answer::Redirect(target.url("/x.yaml"))),
        ("/here.yaml", Answer::Redirect("/real.yaml".into())),
        ("/real.yaml", Answer::Body(secret_document())),
    ]);
    let docs = load(url_source(&root.url("/api.json")), &LoadPolicy::default()).await;
    let problem = refused(&docs, "moved.yaml#/components/schemas/S");
    assert!(problem.contains("redirect"), "{problem}");
    assert!(problem.contains("loading.ref_origins"), "{problem}");
    assert_eq!(target.connections(), 0);

    // The root spec itself is subject to the same rule; within its origin it is followed.
    let docs = load(url_source(&root.url("/here.yaml")), &LoadPolicy::default()).await;
    assert_eq!(
        docs.root().root["components"]["schemas"]["S"]["type"],
        "string"
    );
    let moved = tokio::time::timeout(
        Duration::from_secs(20),
        DocumentSet::load(&url_source(&root.url("/moved.yaml"))),
    )
    .await
    .expect("prompt");
    let message = moved.expect_err("refused").to_string();
    assert!(message.contains("redirect"), "{message}");
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn documents_over_the_size_caps_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let padding = format!("# {}\n", "x".repeat(8_000));
    std::fs::write(
        dir.path().join("big.yaml"),
        format!("{padding}{}", secret_document()),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("api.json"),
        spec_referencing("big.yaml#/components/schemas/S"),
    )
    .expect("write");
    let source = SpecSource::File(dir.path().join("api.json"));
    let small = LoadPolicy {
        max_document_bytes: 4_000,
        ..LoadPolicy::default()
    };
    let docs = load(source.clone(), &small).await;
    let problem = refused(&docs, "big.yaml#/components/schemas/S");
    assert!(problem.contains("loading.max_document_bytes"), "{problem}");
    assert!(problem.contains("4000"), "{problem}");

    let total = LoadPolicy {
        max_api_bytes: 6_000,
        ..LoadPolicy::default()
    };
    let docs = load(source.clone(), &total).await;
    let problem = refused(&docs, "big.yaml#/components/schemas/S");
    assert!(problem.contains("loading.max_api_bytes"), "{problem}");

    // The root spec is capped too, and nothing else of the API is then loaded.
    let tiny = LoadPolicy {
        max_document_bytes: 100,
        ..LoadPolicy::default()
    };
    let error = DocumentSet::load_edited(&source, &tiny, |_| Ok(()))
        .await
        .expect_err("root over the cap");
    assert!(
        error.to_string().contains("loading.max_document_bytes"),
        "{error}"
    );

    // With the defaults, it loads.
    let docs = load(source, &LoadPolicy::default()).await;
    assert!(docs.resolve(0, "big.yaml#/components/schemas/S").is_ok());
}

/// A YAML document of a few hundred bytes whose aliases expand to about 75,000 values.
fn alias_bomb() -> String {
    let mut text = String::from("l0: &l0 [a, a, a, a, a, a, a, a, a]\n");
    for level in 1..5 {
        let previous = format!("*l{}", level - 1);
        let items = [previous.as_str(); 9].join(", ");
        text.push_str(&format!("l{level}: &l{level} [{items}]\n"));
    }
    text.push_str("x: {type: string, description: bomb}\n");
    text
}

#[tokio::test]
async fn a_yaml_alias_bomb_split_over_files_is_bounded_by_one_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.yaml"), alias_bomb()).expect("write");
    std::fs::write(dir.path().join("b.yaml"), alias_bomb()).expect("write");
    assert!(alias_bomb().len() < 1_000);
    let one = spec_referencing("a.yaml#/x");
    std::fs::write(dir.path().join("one.json"), &one).expect("write");
    let both = one.replace(
        r#""responses""#,
        r#""parameters": [{"name": "q", "in": "query", "schema": {"$ref": "b.yaml#/x"}}], "responses""#,
    );
    std::fs::write(dir.path().join("both.json"), &both).expect("write");
    // A budget smaller than the default (a million) keeps the test fast; it is the same rule.
    let budget = LoadPolicy {
        max_yaml_alias_values: 100_000,
        ..LoadPolicy::default()
    };

    // Each file alone stays within the budget.
    let docs = load(SpecSource::File(dir.path().join("one.json")), &budget).await;
    assert!(docs.resolve(0, "a.yaml#/x").is_ok());

    // Together they do not: one of them is refused, naming the key.
    let docs = load(SpecSource::File(dir.path().join("both.json")), &budget).await;
    let outcomes = [docs.resolve(0, "a.yaml#/x"), docs.resolve(0, "b.yaml#/x")];
    let problems: Vec<String> = outcomes
        .iter()
        .filter_map(|outcome| outcome.as_ref().err())
        .map(|error| error.problem.clone())
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("loading.max_yaml_alias_values"),
        "{problems:?}"
    );

    // Raising the key lets both load.
    let raised = LoadPolicy {
        max_yaml_alias_values: 200_000,
        ..LoadPolicy::default()
    };
    let docs = load(SpecSource::File(dir.path().join("both.json")), &raised).await;
    assert!(docs.resolve(0, "a.yaml#/x").is_ok() && docs.resolve(0, "b.yaml#/x").is_ok());

    // A billion laughs in one small file is refused once the budget is spent, without
    // expanding the rest (`load` fails the test if this is not prompt).
    let mut laughs = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..9 {
        let previous = format!("*l{}", level - 1);
        laughs.push_str(&format!(
            "l{level}: &l{level} [{}]\n",
            [previous.as_str(); 10].join(", ")
        ));
    }
    laughs.push_str("x: {type: string}\n");
    std::fs::write(dir.path().join("a.yaml"), laughs).expect("write");
    let docs = load(SpecSource::File(dir.path().join("one.json")), &budget).await;
    let problem = refused(&docs, "a.yaml#/x");
    assert!(
        problem.contains("loading.max_yaml_alias_values"),
        "{problem}"
    );
}

/// A file inside the spec's directory that is not a schema (a text file,
/// a YAML file of settings) is read when the spec references it, but `restmcp check` says
/// what it found there by kind and file, never by its contents.
#[test]
fn files_a_spec_references_in_its_directory_are_described_by_check_never_quoted() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("notes.txt"),
        format!("password = {SECRET}\nsecond line\n"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("settings.yaml"),
        format!(
            "things:\n  type: {SECRET}-type\n  maxLength: {SECRET}-length\n  items: {SECRET}-items\n\
             param:\n  name: token\n  in: {SECRET}-in\n\
             example:\n  value: {{$ref: 7}}\n"
        ),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("api.yaml"),
        r##"openapi: 3.0.3
info: {title: T, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /a:
    get:
      operationId: getA
      parameters:
        - {name: q, in: query, schema: {$ref: "./notes.txt"}}
        - {name: r, in: query, schema: {$ref: "./settings.yaml#/things"}}
        - name: s
          in: query
          schema: {type: string, example: {$ref: "./settings.yaml#/example"}}
      responses: {"200": {description: ok}}
  /b:
    get:
      operationId: getB
      parameters: [{$ref: "./settings.yaml#/param"}]
      responses: {"200": {description: ok}}
"##,
    )
    .expect("write");
    for json in [false, true] {
        let mut args = vec!["check", "--spec", "api.yaml"];
        if json {
            args.push("--json");
        }
        let output = restmcp(&args, dir.path());
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stdout.contains(SECRET) && !stderr.contains(SECRET),
            "json: {json}\n{stdout}{stderr}"
        );
        for said in [
            "a string in notes.txt is not a schema; replaced by {}",
            "type: a string in settings.yaml removed",
            "maxLength: a string in settings.yaml removed",
            "items: a string in settings.yaml removed",
            "has \\\"in\\\": a string in settings.yaml",
            "\\\"$ref\\\": a number in settings.yaml is not a reference",
        ] {
            let said = if json {
                said.to_string()
            } else {
                said.replace("\\\"", "\"")
            };
            assert!(
                stdout.contains(&said),
                "json: {json}, says {said}:\n{stdout}"
            );
        }
    }
}

/// A large scalar aliased many times is few values and many bytes
/// (3 MB of YAML took 2.3 GB): the expansion is charged in bytes too, to
/// `loading.max_api_bytes`, shared by the documents of one load.
#[tokio::test]
async fn a_large_scalar_aliased_many_times_is_bounded_in_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A 1 MB scalar and 2,300 aliases of it: 3 MB of text, 2.3 GB expanded, yet only
    // 2,300 values (far under the million values the other key allows).
    let mut bomb = format!("big: &big {}\nlist:\n", "x".repeat(1_000_000));
    for _ in 0..2_300 {
        bomb.push_str("  - *big\n");
    }
    bomb.push_str("x: {type: string}\n");
    assert!(bomb.len() < 1_100_000);
    std::fs::write(dir.path().join("a.yaml"), &bomb).expect("write");
    std::fs::write(dir.path().join("one.json"), spec_referencing("a.yaml#/x")).expect("write");
    let started = std::time::Instant::now();
    let docs = load(
        SpecSource::File(dir.path().join("one.json")),
        &LoadPolicy::default(),
    )
    .await;
    let problem = refused(&docs, "a.yaml#/x");
    assert!(problem.contains("loading.max_api_bytes"), "{problem}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "refused once the budget is spent, not after expanding it all: {:?}",
        started.elapsed()
    );

    // A few aliases of it stay within the budget and load.
    let mut fine = format!("big: &big {}\nlist:\n", "x".repeat(1_000_000));
    for _ in 0..20 {
        fine.push_str("  - *big\n");
    }
    fine.push_str("x: {type: string}\n");
    std::fs::write(dir.path().join("a.yaml"), &fine).expect("write");
    let docs = load(
        SpecSource::File(dir.path().join("one.json")),
        &LoadPolicy::default(),
    )
    .await;
    assert!(docs.resolve(0, "a.yaml#/x").is_ok());

    // Split over two files, the one budget is spent by the sum: 99 aliases of 1.5 MB each
    // (under the parser's own alias-to-anchor ratio) are within 256 MiB, 2 × 99 are not.
    let mut half = format!("big: &big {}\nlist:\n", "x".repeat(1_500_000));
    for _ in 0..99 {
        half.push_str("  - *big\n");
    }
    half.push_str("x: {type: string}\n");
    std::fs::write(dir.path().join("a.yaml"), &half).expect("write");
    std::fs::write(dir.path().join("b.yaml"), &half).expect("write");
    let both = spec_referencing("a.yaml#/x").replace(
        r#""responses""#,
        r#""parameters": [{"name": "q", "in": "query", "schema": {"$ref": "b.yaml#/x"}}], "responses""#,
    );
    std::fs::write(dir.path().join("both.json"), &both).expect("write");
    let docs = load(
        SpecSource::File(dir.path().join("one.json")),
        &LoadPolicy::default(),
    )
    .await;
    let alone = docs
        .resolve(0, "a.yaml#/x")
        .map(|_| ())
        .map_err(|e| e.problem.clone());
    assert!(alone.is_ok(), "one alone fits: {alone:?}");
    let docs = load(
        SpecSource::File(dir.path().join("both.json")),
        &LoadPolicy::default(),
    )
    .await;
    let problems: Vec<String> = [docs.resolve(0, "a.yaml#/x"), docs.resolve(0, "b.yaml#/x")]
        .iter()
        .filter_map(|outcome| outcome.as_ref().err())
        .map(|error| error.problem.clone())
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("loading.max_api_bytes"),
        "{problems:?}"
    );
}
