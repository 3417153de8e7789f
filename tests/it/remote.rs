//! Specs served over HTTP: relative `$ref`s and server URLs resolve against the URL of
//! the document that holds them, and each document is fetched once. The
//! server is in-process on 127.0.0.1:0; no traffic leaves the machine.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::routing::get;
use restmcp::spec::{self, SpecSource};
use url::Url;

use crate::support::{assert_tools_are_valid, build, count_operations, fixture};

type Hits = Arc<Mutex<HashMap<String, usize>>>;

/// Serves tests/fixtures at /fixtures/…, counting requests per path.
async fn serve_fixtures() -> (SocketAddr, Hits) {
    let hits: Hits = Arc::default();
    async fn file(
        State(hits): State<Hits>,
        UrlPath(path): UrlPath<String>,
    ) -> Result<Vec<u8>, StatusCode> {
        *hits.lock().expect("lock").entry(path.clone()).or_default() += 1;
        if path.contains("..") {
            return Err(StatusCode::FORBIDDEN);
        }
        std::fs::read(fixture(&path)).map_err(|_| StatusCode::NOT_FOUND)
    }
    let app = Router::new()
        .route("/fixtures/{*path}", get(file))
        .route(
            "/relative.json",
            get(|| async {
                r#"{"openapi": "3.0.3", "info": {"title": "R", "version": "1"},
                    "servers": [{"url": "/v1/"}],
                    "paths": {"/things": {"get": {"operationId": "listThings"}}}}"#
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, hits)
}

#[tokio::test]
async fn a_spec_split_over_files_loads_from_a_url_fetching_each_document_once() {
    let (addr, hits) = serve_fixtures().await;
    let url = Url::parse(&format!(
        "http://{addr}/fixtures/petstore-v2-separate/spec/swagger.yaml"
    ))
    .expect("url");
    let docs = spec::load(&SpecSource::Url(url)).await.expect("loads");
    let (catalog, report) = build(&docs);
    assert_eq!(report.skipped(), 0, "{}", report.render());
    assert_eq!(catalog.len(), count_operations(&docs));
    assert_tools_are_valid(&catalog);
    let hits = hits.lock().expect("lock").clone();
    let mut fetched: Vec<(&str, usize)> = hits.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    fetched.sort();
    assert_eq!(
        fetched,
        [
            ("petstore-v2-separate/common/Error.yaml", 1),
            ("petstore-v2-separate/spec/NewPet.yaml", 1),
            ("petstore-v2-separate/spec/Pet.yaml", 1),
            ("petstore-v2-separate/spec/parameters.yaml", 1),
            ("petstore-v2-separate/spec/swagger.yaml", 1),
        ]
    );
}

#[tokio::test]
async fn relative_server_urls_resolve_against_the_spec_url() {
    let (addr, _) = serve_fixtures().await;
    let url = Url::parse(&format!("http://{addr}/relative.json")).expect("url");
    let docs = spec::load(&SpecSource::Url(url)).await.expect("loads");
    let (catalog, _) = build(&docs);
    let tool = catalog.get("listThings").expect("tool");
    assert_eq!(
        tool.route.base_url.as_deref(),
        Some(format!("http://{addr}/v1").as_str())
    );
}

#[tokio::test]
async fn an_unreachable_spec_url_is_a_clear_error() {
    let (addr, _) = serve_fixtures().await;
    let url = Url::parse(&format!("http://{addr}/fixtures/nothing-here.yaml")).expect("url");
    let error = spec::load(&SpecSource::Url(url.clone()))
        .await
        .expect_err("404");
    assert_eq!(
        error.to_string(),
        format!("{url}: cannot read: HTTP 404 Not Found")
    );
}
