use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::headers::*;
use super::*;
use crate::catalog::{
    ArgumentMap, BaseUrl, Binding, BodyPlan, FileContent, FilePart, Location, Route,
};
use crate::spec::{Encoding, Method, Style};

const BASE: &str = "https://api.example.com/v1";

fn param(name: &str, location: Location, style: Style, explode: bool) -> Binding {
    Binding {
        argument: name.to_string(),
        location,
        wire_name: name.to_string(),
        style,
        explode,
        allow_reserved: false,
        content_type: None,
        required: location == Location::Path,
        binary: false,
        fixed: None,
        default: None,
    }
}

fn field(name: &str) -> Binding {
    param(name, Location::BodyField, Style::Form, true)
}

fn whole(media_type: &str, binary: bool) -> Binding {
    Binding {
        argument: "body".to_string(),
        location: Location::Body,
        wire_name: String::new(),
        style: Style::Form,
        explode: true,
        allow_reserved: false,
        content_type: Some(media_type.to_string()),
        required: false,
        binary,
        fixed: None,
        default: None,
    }
}

fn route(path: &str, bindings: Vec<Binding>, body: Option<BodyPlan>) -> Route {
    Route {
        api: "pets".to_string(),
        method: Method::Post,
        path: path.to_string(),
        base_url: Some(BaseUrl::new(BASE)),
        arguments: ArgumentMap { bindings },
        body,
        output: None,
        accept: "*/*".to_string(),
        security: Vec::new(),
        timeout: None,
        max_response_bytes: None,
        max_result_tokens: None,
        response_fields: Vec::new(),
        confirm: Default::default(),
        idempotency: None,
        long_running: None,
        mock: None,
        ask: Vec::new(),
        full_input: None,
    }
}

fn plan(media_type: &str, flattened: bool) -> BodyPlan {
    BodyPlan {
        media_type: media_type.to_string(),
        required: false,
        flattened,
        encoding: BTreeMap::new(),
        files: BTreeMap::new(),
    }
}

fn file(content: FileContent, media_types: Option<&str>) -> FilePart {
    FilePart {
        content,
        media_types: media_types.map(str::to_string),
        many: false,
    }
}

/// A multipart plan whose `files` are sent as file parts.
fn multipart_plan(files: Vec<(&str, FilePart)>) -> BodyPlan {
    let mut plan = plan("multipart/form-data", true);
    plan.files = files
        .into_iter()
        .map(|(name, file)| (name.to_string(), file))
        .collect();
    plan
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

fn ok(route: &Route, arguments: Value) -> HttpRequest {
    build(route, &args(arguments)).expect("request builds")
}

fn err(route: &Route, arguments: Value) -> RequestError {
    build(route, &args(arguments)).expect_err("request is refused")
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn body_text(request: &HttpRequest) -> String {
    String::from_utf8(request.body.clone().expect("a body")).expect("utf-8 body")
}

fn blue() -> Value {
    json!("blue")
}

fn colors() -> Value {
    json!(["blue", "black", "brown"])
}

fn rgb() -> Value {
    json!({"R": 100, "G": 200, "B": 150})
}

// ---------------------------------------------------------------------------------------
// Path: every row of the style examples table

fn path_url(style: Style, explode: bool, value: Value) -> String {
    let r = route(
        "/colors/{color}",
        vec![param("color", Location::Path, style, explode)],
        None,
    );
    ok(&r, json!({ "color": value })).url
}

#[track_caller]
fn assert_path(style: Style, explode: bool, value: Value, expected: &str) {
    assert_eq!(
        path_url(style, explode, value),
        format!("{BASE}/colors/{expected}"),
        "{style:?} explode={explode}"
    );
}

#[test]
fn path_simple_rows() {
    for explode in [false, true] {
        assert_path(Style::Simple, explode, blue(), "blue");
        assert_path(Style::Simple, explode, colors(), "blue,black,brown");
    }
    assert_path(Style::Simple, false, rgb(), "R,100,G,200,B,150");
    assert_path(Style::Simple, true, rgb(), "R=100,G=200,B=150");
}

#[test]
fn path_label_rows() {
    // RFC 6570 / OpenAPI 3.1.1 table: explode=false joins with commas.
    assert_path(Style::Label, false, blue(), ".blue");
    assert_path(Style::Label, false, colors(), ".blue,black,brown");
    assert_path(Style::Label, false, rgb(), ".R,100,G,200,B,150");
    assert_path(Style::Label, true, blue(), ".blue");
    assert_path(Style::Label, true, colors(), ".blue.black.brown");
    assert_path(Style::Label, true, rgb(), ".R=100.G=200.B=150");
}

#[test]
fn path_matrix_rows() {
    assert_path(Style::Matrix, false, blue(), ";color=blue");
    assert_path(Style::Matrix, false, colors(), ";color=blue,black,brown");
    assert_path(Style::Matrix, false, rgb(), ";color=R,100,G,200,B,150");
    assert_path(Style::Matrix, true, blue(), ";color=blue");
    assert_path(
        Style::Matrix,
        true,
        colors(),
        ";color=blue;color=black;color=brown",
    );
    assert_path(Style::Matrix, true, rgb(), ";R=100;G=200;B=150");
    // The table's "empty" column: an empty string is the bare name.
    assert_path(Style::Matrix, false, json!(""), ";color");
}

#[test]
fn path_scalars_print_as_json_does() {
    assert_path(Style::Simple, false, json!(42), "42");
    assert_path(Style::Simple, false, json!(-1.5), "-1%2E5");
    assert_path(Style::Simple, false, json!(true), "true");
    assert_path(Style::Simple, false, json!([1, false]), "1,false");
}

#[test]
fn path_with_several_parameters_and_literal_text() {
    let r = route(
        "/users/{userId}/files/{name}.json",
        vec![
            param("userId", Location::Path, Style::Simple, false),
            param("name", Location::Path, Style::Simple, false),
        ],
        None,
    );
    let request = ok(&r, json!({"userId": 7, "name": "report 2024"}));
    assert_eq!(
        request.url,
        format!("{BASE}/users/7/files/report%202024.json")
    );
    assert_eq!(request.method, Method::Post);
    assert_eq!(request.body, None);
}

#[test]
fn path_content_json_parameter() {
    let mut b = param("filter", Location::Path, Style::Simple, false);
    b.content_type = Some("application/json".to_string());
    let r = route("/q/{filter}", vec![b], None);
    let request = ok(&r, json!({"filter": {"a": [1, 2]}}));
    assert_eq!(request.url, format!("{BASE}/q/%7B%22a%22%3A%5B1%2C2%5D%7D"));
}

// ---------------------------------------------------------------------------------------
// Path: injection and traversal

/// Builds `/items/{id}/detail` with `value` and checks the value stayed one segment and
/// the origin and query are untouched.
#[track_caller]
fn one_segment(value: &str) -> String {
    let r = route(
        "/items/{id}/detail",
        vec![param("id", Location::Path, Style::Simple, false)],
        None,
    );
    let request = ok(&r, json!({ "id": value }));
    let url = url::Url::parse(&request.url).expect("absolute url");
    assert_eq!(url.scheme(), "https");
    assert_eq!(url.host_str(), Some("api.example.com"));
    assert_eq!(url.port(), None);
    assert_eq!(url.query(), None, "{value:?} added a query");
    assert_eq!(url.fragment(), None, "{value:?} added a fragment");
    let segments: Vec<&str> = url.path_segments().expect("segments").collect();
    assert_eq!(segments.len(), 4, "{value:?} → {}", url.path());
    assert_eq!(segments[0], "v1");
    assert_eq!(segments[1], "items");
    assert_eq!(segments[3], "detail");
    let decoded = percent_encoding::percent_decode_str(segments[2])
        .decode_utf8()
        .expect("utf-8");
    assert_eq!(decoded, value, "the segment decodes back to the value");
    segments[2].to_string()
}

#[test]
fn path_values_cannot_escape_their_segment() {
    assert_eq!(one_segment("../admin"), "%2E%2E%2Fadmin");
    assert_eq!(one_segment("a/b?x=1#f"), "a%2Fb%3Fx%3D1%23f");
    assert_eq!(one_segment("%2F"), "%252F");
    assert_eq!(one_segment("%2e%2e"), "%252e%252e");
    assert_eq!(one_segment("..\\..\\etc"), "%2E%2E%5C%2E%2E%5Cetc");
    assert_eq!(one_segment("a;b=c,d"), "a%3Bb%3Dc%2Cd");
    assert_eq!(
        one_segment("héllo wörld/ü"),
        "h%C3%A9llo%20w%C3%B6rld%2F%C3%BC"
    );
    assert_eq!(one_segment("@evil.com:80"), "%40evil%2Ecom%3A80");
    assert_eq!(one_segment("\r\n\t x"), "%0D%0A%09%20x");
    assert_eq!(one_segment("file.txt"), "file%2Etxt");
}

#[test]
fn dot_segments_and_empty_segments_are_refused() {
    let r = route(
        "/items/{id}",
        vec![param("id", Location::Path, Style::Simple, false)],
        None,
    );
    for value in ["..", ".", ""] {
        match err(&r, json!({ "id": value })) {
            RequestError::Argument { argument, .. } => assert_eq!(argument, "id"),
            other => panic!("{value:?}: unexpected {other:?}"),
        }
    }
    // Label with an empty value would be the segment ".", which URL parsers drop.
    let label = route(
        "/items/{id}",
        vec![param("id", Location::Path, Style::Label, false)],
        None,
    );
    assert!(matches!(
        err(&label, json!({"id": ""})),
        RequestError::Argument { .. }
    ));
    // "." as a label value would read ".%2E", a double-dot segment to WHATWG parsers.
    assert!(matches!(
        err(&label, json!({"id": "."})),
        RequestError::Argument { .. }
    ));
}

#[test]
fn a_path_template_with_a_dot_segment_is_refused() {
    let r = route(
        "/pets/../admin/{id}",
        vec![param("id", Location::Path, Style::Simple, false)],
        None,
    );
    match err(&r, json!({"id": 1})) {
        RequestError::Url { url, problem } => {
            assert_eq!(url, "/pets/../admin/1");
            assert!(problem.contains("dot segment"), "{problem}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn arguments_never_change_the_origin() {
    let r = route(
        "{id}",
        vec![param("id", Location::Path, Style::Simple, false)],
        None,
    );
    let request = ok(&r, json!({"id": "@evil.example:8080"}));
    assert_eq!(
        request.url,
        "https://api.example.com/v1/%40evil%2Eexample%3A8080"
    );
    let mut r = r;
    r.base_url = Some(BaseUrl::new("https://api.example.com"));
    let request = ok(&r, json!({"id": "/evil.example/x"}));
    assert_eq!(request.url, "https://api.example.com/%2Fevil%2Eexample%2Fx");
}

#[test]
fn missing_path_argument_is_refused() {
    let r = route(
        "/items/{id}",
        vec![param("id", Location::Path, Style::Simple, false)],
        None,
    );
    assert_eq!(
        err(&r, json!({})),
        RequestError::Argument {
            argument: "id".to_string(),
            problem: "is required: it is part of the URL path".to_string(),
        }
    );
    assert!(matches!(
        err(&r, json!({"id": null})),
        RequestError::Argument { .. }
    ));
}

#[test]
fn renamed_argument_uses_the_wire_name() {
    let mut b = param("pet_id", Location::Path, Style::Matrix, false);
    b.wire_name = "petId".to_string();
    let mut q = param("limit__query", Location::Query, Style::Form, true);
    q.wire_name = "limit".to_string();
    let r = route("/pets/{petId}", vec![b, q], None);
    let request = ok(&r, json!({"pet_id": 5, "limit__query": 10}));
    assert_eq!(request.url, format!("{BASE}/pets/;petId=5?limit=10"));
}

#[test]
fn base_url_problems() {
    let mut r = route("/x", vec![], None);
    r.base_url = None;
    assert_eq!(
        err(&r, json!({})),
        RequestError::NoBaseUrl {
            api: "pets".to_string()
        }
    );
    r.base_url = Some(BaseUrl::new("/relative/only"));
    assert!(matches!(
        err(&r, json!({})),
        RequestError::BadBaseUrl { .. }
    ));
    r.base_url = Some(BaseUrl::new("https://h.example/api?key=1"));
    assert!(matches!(
        err(&r, json!({})),
        RequestError::BadBaseUrl { .. }
    ));
    r.base_url = Some(BaseUrl::new("https://h.example:8443/api/"));
    assert_eq!(ok(&r, json!({})).url, "https://h.example:8443/api/x");
}

// ---------------------------------------------------------------------------------------
// Query: every row of the style examples table

fn query_url(style: Style, explode: bool, value: Value) -> String {
    let r = route(
        "/colors",
        vec![param("color", Location::Query, style, explode)],
        None,
    );
    ok(&r, json!({ "color": value })).url
}

#[track_caller]
fn assert_query(style: Style, explode: bool, value: Value, expected: &str) {
    assert_eq!(
        query_url(style, explode, value),
        format!("{BASE}/colors?{expected}"),
        "{style:?} explode={explode}"
    );
}

#[test]
fn query_form_rows() {
    assert_query(Style::Form, false, json!(""), "color=");
    assert_query(Style::Form, false, blue(), "color=blue");
    assert_query(Style::Form, false, colors(), "color=blue,black,brown");
    assert_query(Style::Form, false, rgb(), "color=R,100,G,200,B,150");
    assert_query(Style::Form, true, json!(""), "color=");
    assert_query(Style::Form, true, blue(), "color=blue");
    assert_query(
        Style::Form,
        true,
        colors(),
        "color=blue&color=black&color=brown",
    );
    assert_query(Style::Form, true, rgb(), "R=100&G=200&B=150");
}

#[test]
fn query_delimited_rows() {
    assert_query(
        Style::SpaceDelimited,
        false,
        colors(),
        "color=blue%20black%20brown",
    );
    assert_query(
        Style::SpaceDelimited,
        false,
        rgb(),
        "color=R%20100%20G%20200%20B%20150",
    );
    assert_query(
        Style::PipeDelimited,
        false,
        colors(),
        "color=blue|black|brown",
    );
    assert_query(
        Style::PipeDelimited,
        false,
        rgb(),
        "color=R|100|G|200|B|150",
    );
    assert_query(
        Style::TabDelimited,
        false,
        colors(),
        "color=blue%09black%09brown",
    );
    // A delimiter inside a value is encoded, so items stay apart.
    assert_query(
        Style::PipeDelimited,
        false,
        json!(["a|b", "c"]),
        "color=a%7Cb|c",
    );
    // explode=true repeats the parameter like form.
    assert_query(
        Style::PipeDelimited,
        true,
        json!(["a", "b"]),
        "color=a&color=b",
    );
}

#[test]
fn query_deep_object_rows() {
    assert_query(
        Style::DeepObject,
        true,
        rgb(),
        "color[R]=100&color[G]=200&color[B]=150",
    );
    assert_query(
        Style::DeepObject,
        true,
        json!({"a": {"b": {"c": 1}}, "list": ["x", {"y": true}], "gone": null}),
        "color[a][b][c]=1&color[list][0]=x&color[list][1][y]=true",
    );
    assert_query(
        Style::DeepObject,
        true,
        json!({"we ird&": "a b"}),
        "color[we%20ird%26]=a%20b",
    );
}

#[test]
fn query_values_are_encoded_as_components() {
    assert_query(
        Style::Form,
        true,
        json!("a b&c=d#e+f/g?h%i.j~k"),
        "color=a%20b%26c%3Dd%23e%2Bf%2Fg%3Fh%25i.j~k",
    );
    assert_query(Style::Form, false, json!(["a,b", "c"]), "color=a%2Cb,c");
    assert_query(Style::Form, true, json!("日本"), "color=%E6%97%A5%E6%9C%AC");
    assert_query(Style::Form, true, json!(3.25), "color=3.25");
    assert_query(Style::Form, true, json!(false), "color=false");
    // Nested values the form style cannot express are compact JSON.
    assert_query(
        Style::Form,
        true,
        json!([{"a": 1}]),
        "color=%7B%22a%22%3A1%7D",
    );
}

#[test]
fn query_allow_reserved() {
    let mut b = param("redirect", Location::Query, Style::Form, true);
    b.allow_reserved = true;
    let r = route("/go", vec![b], None);
    let request = ok(
        &r,
        json!({"redirect": "https://x.example/a/b?c=1&d=2#frag [ok] @!$()*,; 50% %2F +"}),
    );
    assert_eq!(
        request.url,
        format!(
            "{BASE}/go?redirect=https://x.example/a/b?c%3D1%26d%3D2%23frag%20[ok]%20@!$()*,;%2050%25%20%2F%20%2B"
        )
    );
    // Without allowReserved the same value is fully encoded.
    let plain = route(
        "/go",
        vec![param("redirect", Location::Query, Style::Form, true)],
        None,
    );
    let request = ok(&plain, json!({"redirect": "a/b:c"}));
    assert_eq!(request.url, format!("{BASE}/go?redirect=a%2Fb%3Ac"));
}

#[test]
fn query_content_json_parameter() {
    let mut b = param("filter", Location::Query, Style::Form, true);
    b.content_type = Some("application/json".to_string());
    let r = route("/q", vec![b], None);
    let request = ok(&r, json!({"filter": {"name": "a b", "n": [1]}}));
    assert_eq!(
        request.url,
        format!("{BASE}/q?filter=%7B%22name%22%3A%22a%20b%22%2C%22n%22%3A%5B1%5D%7D")
    );
}

#[test]
fn query_keeps_binding_order_and_skips_absent_and_null() {
    let r = route(
        "/s",
        vec![
            param("b", Location::Query, Style::Form, true),
            param("a", Location::Query, Style::Form, true),
            param("c", Location::Query, Style::Form, true),
            param("d", Location::Query, Style::Form, true),
        ],
        None,
    );
    let request = ok(&r, json!({"a": 1, "d": null, "b": "x"}));
    assert_eq!(request.url, format!("{BASE}/s?b=x&a=1"));
    let request = ok(&r, json!({}));
    assert_eq!(request.url, format!("{BASE}/s"));
}

#[test]
fn swagger2_collection_formats() {
    // pipes → pipeDelimited, tsv → tabDelimited, ssv → spaceDelimited (explode false),
    // multi → form explode, csv → form without explode.
    let r = route(
        "/find",
        vec![
            param("pipes", Location::Query, Style::PipeDelimited, false),
            param("tsv", Location::Query, Style::TabDelimited, false),
            param("ssv", Location::Query, Style::SpaceDelimited, false),
            param("multi", Location::Query, Style::Form, true),
            param("csv", Location::Query, Style::Form, false),
        ],
        None,
    );
    let request = ok(
        &r,
        json!({
            "pipes": [1, 2],
            "tsv": ["a", "b"],
            "ssv": ["c", "d"],
            "multi": ["e", "f"],
            "csv": ["g", "h"]
        }),
    );
    assert_eq!(
        request.url,
        format!("{BASE}/find?pipes=1|2&tsv=a%09b&ssv=c%20d&multi=e&multi=f&csv=g,h")
    );
}

// ---------------------------------------------------------------------------------------
// Headers and cookies

#[test]
fn header_styles() {
    let r = route(
        "/h",
        vec![
            param("X-Prim", Location::Header, Style::Simple, false),
            param("X-List", Location::Header, Style::Simple, false),
            param("X-Obj", Location::Header, Style::Simple, false),
            param("X-Obj-Exploded", Location::Header, Style::Simple, true),
            param("X-Absent", Location::Header, Style::Simple, false),
        ],
        None,
    );
    let request = ok(
        &r,
        json!({
            "X-Prim": "a b/c",
            "X-List": ["blue", "black", 3],
            "X-Obj": rgb(),
            "X-Obj-Exploded": rgb(),
            "X-Absent": null
        }),
    );
    assert_eq!(
        request.headers,
        vec![
            ("X-Prim".to_string(), "a b/c".to_string()),
            ("X-List".to_string(), "blue,black,3".to_string()),
            ("X-Obj".to_string(), "R,100,G,200,B,150".to_string()),
            (
                "X-Obj-Exploded".to_string(),
                "R=100,G=200,B=150".to_string()
            ),
        ]
    );
}

#[test]
fn header_injection_is_refused() {
    let r = route(
        "/h",
        vec![param("X-Trace", Location::Header, Style::Simple, false)],
        None,
    );
    for value in [
        json!("a\r\nX-Admin: 1"),
        json!("a\nb"),
        json!("a\rb"),
        json!("a\u{0}b"),
        json!(["ok", "bad\r\n"]),
        json!({"k": "v\n"}),
    ] {
        match err(&r, json!({ "X-Trace": value.clone() })) {
            RequestError::Argument { argument, problem } => {
                assert_eq!(argument, "X-Trace");
                assert!(problem.contains("control"), "{problem}");
            }
            other => panic!("{value}: unexpected {other:?}"),
        }
    }
    // A tab is allowed in a field value.
    assert_eq!(
        header(&ok(&r, json!({"X-Trace": "a\tb"})), "X-Trace"),
        Some("a\tb")
    );
}

#[test]
fn framing_and_hop_by_hop_headers_are_refused() {
    for name in [
        "Host",
        "content-length",
        "Transfer-Encoding",
        "CONNECTION",
        "Keep-Alive",
        "Proxy-Authorization",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Upgrade",
    ] {
        let r = route(
            "/h",
            vec![param(name, Location::Header, Style::Simple, false)],
            None,
        );
        match err(&r, json!({ name: "evil.example" })) {
            RequestError::Argument { problem, .. } => {
                assert!(problem.contains("cannot be set"), "{name}: {problem}")
            }
            other => panic!("{name}: unexpected {other:?}"),
        }
        // Absent, nothing is refused.
        assert!(build(&r, &Map::new()).is_ok());
    }
}

#[test]
fn header_content_json() {
    let mut b = param("X-Filter", Location::Header, Style::Simple, false);
    b.content_type = Some("application/json".to_string());
    let r = route("/h", vec![b], None);
    let request = ok(&r, json!({"X-Filter": {"a": "b c", "n": [1, 2]}}));
    assert_eq!(
        header(&request, "X-Filter"),
        Some(r#"{"a":"b c","n":[1,2]}"#)
    );
}

#[test]
fn cookies_form_one_header() {
    let r = route(
        "/c",
        vec![
            param("session", Location::Cookie, Style::Form, true),
            param("ids", Location::Cookie, Style::Form, false),
            param("prefs", Location::Cookie, Style::Form, false),
            param("absent", Location::Cookie, Style::Form, true),
            param("nasty", Location::Cookie, Style::Form, true),
        ],
        None,
    );
    let request = ok(
        &r,
        json!({
            "session": "abc123",
            "ids": ["x", "y"],
            "prefs": {"theme": "dark"},
            "nasty": "a; b=c, \"d\"\r\nSet-Cookie: x"
        }),
    );
    assert_eq!(
        request.headers,
        vec![(
            "Cookie".to_string(),
            "session=abc123; ids=x,y; prefs=theme,dark; nasty=a%3B%20b%3Dc%2C%20%22d%22%0D%0ASet-Cookie%3A%20x"
                .to_string()
        )]
    );
    let none = ok(&r, json!({}));
    assert!(none.headers.is_empty());
}

// ---------------------------------------------------------------------------------------
// JSON bodies

#[test]
fn json_body_flattened() {
    let r = route(
        "/pets",
        vec![
            param("verbose", Location::Query, Style::Form, true),
            field("name"),
            field("tag"),
            field("owner"),
            field("nickname"),
        ],
        Some(plan("application/json", true)),
    );
    let request = ok(
        &r,
        json!({"name": "Rex", "owner": {"id": 1}, "nickname": null, "verbose": true}),
    );
    assert_eq!(request.url, format!("{BASE}/pets?verbose=true"));
    assert_eq!(header(&request, "Content-Type"), Some("application/json"));
    // Binding order, absent fields omitted, explicit null kept (JSON can say null).
    assert_eq!(
        body_text(&request),
        r#"{"name":"Rex","owner":{"id":1},"nickname":null}"#
    );
}

#[test]
fn json_body_absent_and_required() {
    let mut r = route(
        "/pets",
        vec![field("name")],
        Some(plan("application/json", true)),
    );
    let request = ok(&r, json!({}));
    assert_eq!(request.body, None);
    assert_eq!(header(&request, "Content-Type"), None);
    r.body.as_mut().expect("plan").required = true;
    let request = ok(&r, json!({}));
    assert_eq!(body_text(&request), "{}");
    assert_eq!(header(&request, "Content-Type"), Some("application/json"));
}

#[test]
fn json_body_whole() {
    let r = route(
        "/batch",
        vec![whole("application/merge-patch+json", false)],
        Some(plan("application/merge-patch+json", false)),
    );
    let request = ok(&r, json!({"body": [1, {"a": "b"}, null]}));
    assert_eq!(body_text(&request), r#"[1,{"a":"b"},null]"#);
    assert_eq!(
        header(&request, "Content-Type"),
        Some("application/merge-patch+json")
    );
    assert_eq!(ok(&r, json!({})).body, None);

    let mut required = r.clone();
    required.body.as_mut().expect("plan").required = true;
    assert!(matches!(
        err(&required, json!({})),
        RequestError::Argument { .. }
    ));
}

#[test]
fn wildcard_body_is_sent_as_json() {
    for media_type in ["*/*", "application/*"] {
        let r = route(
            "/any",
            vec![whole(media_type, false)],
            Some(plan(media_type, false)),
        );
        let request = ok(&r, json!({"body": {"x": 1}}));
        assert_eq!(body_text(&request), r#"{"x":1}"#);
        assert_eq!(header(&request, "Content-Type"), Some("application/json"));
    }
}

// ---------------------------------------------------------------------------------------
// Form bodies

fn encoding(style: Style, explode: bool) -> Encoding {
    Encoding {
        content_type: None,
        style,
        explode,
        allow_reserved: false,
    }
}

#[test]
fn stripe_style_form_body() {
    let mut plan = plan("application/x-www-form-urlencoded", true);
    for name in ["metadata", "line_items", "expand"] {
        plan.encoding
            .insert(name.to_string(), encoding(Style::DeepObject, true));
    }
    let mut bindings = vec![field("customer")];
    for name in ["metadata", "line_items", "expand"] {
        bindings.push(param(name, Location::BodyField, Style::DeepObject, true));
    }
    bindings.push(field("description"));
    bindings.push(field("livemode"));
    bindings.push(field("coupon"));
    let r = route("/checkout/sessions", bindings, Some(plan));
    let request = ok(
        &r,
        json!({
            "customer": "cus_1",
            "metadata": {"order": 42, "note": null},
            "line_items": [{"price": "price_1", "quantity": 2}],
            "expand": ["customer"],
            "description": "a b+c&d=é",
            "livemode": false,
            "coupon": null
        }),
    );
    assert_eq!(
        header(&request, "Content-Type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        body_text(&request),
        "customer=cus_1&metadata[order]=42&line_items[0][price]=price_1\
         &line_items[0][quantity]=2&expand[0]=customer&description=a%20b%2Bc%26d%3D%C3%A9\
         &livemode=false"
    );
}

#[test]
fn form_body_arrays_and_nested_without_encoding() {
    let mut plan = plan("application/x-www-form-urlencoded", true);
    plan.encoding
        .insert("csv".to_string(), encoding(Style::Form, false));
    plan.encoding
        .insert("pipes".to_string(), encoding(Style::PipeDelimited, false));
    let r = route(
        "/f",
        vec![
            field("tags"),
            param("csv", Location::BodyField, Style::Form, false),
            param("pipes", Location::BodyField, Style::PipeDelimited, false),
            field("address"),
            field("rows"),
        ],
        Some(plan),
    );
    let request = ok(
        &r,
        json!({
            "tags": ["a", "b c"],
            "csv": ["x", "y"],
            "pipes": [1, 2],
            "address": {"city": "Köln", "geo": {"lat": 1.5}},
            "rows": [{"id": 1}, {"id": 2}]
        }),
    );
    assert_eq!(
        body_text(&request),
        "tags=a&tags=b%20c&csv=x,y&pipes=1|2&address[city]=K%C3%B6ln&address[geo][lat]=1.5\
         &rows[0][id]=1&rows[1][id]=2"
    );
}

#[test]
fn form_body_whole_object_uses_the_plan_encoding() {
    let mut plan = plan("application/x-www-form-urlencoded", false);
    plan.encoding
        .insert("ids".to_string(), encoding(Style::Form, false));
    let r = route(
        "/f",
        vec![whole("application/x-www-form-urlencoded", false)],
        Some(plan),
    );
    let request = ok(
        &r,
        json!({"body": {"ids": [1, 2], "tags": ["a", "b"], "meta": {"k": "v"}}}),
    );
    assert_eq!(body_text(&request), "ids=1,2&tags=a&tags=b&meta[k]=v");
    assert!(matches!(
        err(&r, json!({"body": 5})),
        RequestError::Argument { .. }
    ));
}

#[test]
fn form_body_required_but_empty() {
    let mut plan = plan("application/x-www-form-urlencoded", true);
    plan.required = true;
    let r = route("/f", vec![field("a")], Some(plan));
    let request = ok(&r, json!({}));
    assert_eq!(request.body, Some(Vec::new()));
    assert_eq!(
        header(&request, "Content-Type"),
        Some("application/x-www-form-urlencoded")
    );
}

// ---------------------------------------------------------------------------------------
// Multipart bodies

struct ParsedPart {
    headers: Vec<(String, String)>,
    data: Vec<u8>,
}

impl ParsedPart {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A strict RFC 7578 reader: CRLF everywhere, the closing delimiter last.
fn parse_multipart(request: &HttpRequest) -> Vec<ParsedPart> {
    let content_type = header(request, "Content-Type").expect("content type");
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .expect("multipart/form-data with a boundary");
    let body = request.body.clone().expect("a body");
    let delimiter = format!("--{boundary}");
    let closing = format!("--{boundary}--\r\n");
    assert!(body.ends_with(closing.as_bytes()), "closing delimiter last");
    let mut rest = &body[..body.len() - closing.len()];
    let mut parts = Vec::new();
    let opening = format!("{delimiter}\r\n");
    let separator = format!("\r\n{delimiter}\r\n");
    while !rest.is_empty() {
        assert!(
            rest.starts_with(opening.as_bytes()),
            "each part opens with the delimiter"
        );
        rest = &rest[opening.len()..];
        let head_end = find(rest, b"\r\n\r\n").expect("part headers end");
        let head = std::str::from_utf8(&rest[..head_end]).expect("ascii headers");
        let headers = head
            .split("\r\n")
            .map(|line| {
                let (n, v) = line.split_once(": ").expect("header line");
                (n.to_string(), v.to_string())
            })
            .collect();
        rest = &rest[head_end + 4..];
        let (data, next) = match find(rest, separator.as_bytes()) {
            Some(end) => (&rest[..end], &rest[end + 2..]),
            None => {
                assert!(rest.ends_with(b"\r\n"), "last part ends with CRLF");
                (&rest[..rest.len() - 2], &rest[rest.len()..])
            }
        };
        parts.push(ParsedPart {
            headers,
            data: data.to_vec(),
        });
        rest = next;
    }
    parts
}

#[test]
fn multipart_text_files_and_json() {
    let png: Vec<u8> = vec![0x89, b'P', b'N', b'G', 0, 13, 10, 255];
    let pdf: Vec<u8> = b"%PDF-1.7\r\n--not-a-boundary\r\n".to_vec();
    let mut doc = field("document");
    doc.content_type = Some("application/pdf".to_string());
    let r = route(
        "/upload",
        vec![
            field("title"),
            field("avatar"),
            doc,
            field("raw"),
            field("meta"),
            field("tags"),
            field("count"),
            field("skipped"),
        ],
        Some(multipart_plan(vec![
            ("avatar", file(FileContent::Base64, None)),
            (
                "document",
                file(FileContent::Base64, Some("application/pdf")),
            ),
            ("raw", file(FileContent::Base64, None)),
        ])),
    );
    let b64 = base64::engine::general_purpose::STANDARD;
    let request = ok(
        &r,
        json!({
            "title": "Hello \"world\"",
            "avatar": format!("data:image/png;base64,{}", b64.encode(&png)),
            "document": b64.encode(&pdf),
            "raw": b64.encode([1u8, 2, 3]),
            "meta": {"a": 1},
            "tags": ["x", "y"],
            "count": 3,
            "skipped": null
        }),
    );
    let parts = parse_multipart(&request);
    let dispositions: Vec<&str> = parts
        .iter()
        .map(|p| p.header("Content-Disposition").expect("disposition"))
        .collect();
    assert_eq!(
        dispositions,
        vec![
            r#"form-data; name="title""#,
            r#"form-data; name="avatar"; filename="avatar.png""#,
            r#"form-data; name="document"; filename="document.pdf""#,
            r#"form-data; name="raw"; filename="raw.bin""#,
            r#"form-data; name="meta""#,
            r#"form-data; name="tags""#,
            r#"form-data; name="tags""#,
            r#"form-data; name="count""#,
        ]
    );
    assert_eq!(parts[0].data, b"Hello \"world\"");
    assert_eq!(parts[0].header("Content-Type"), None);
    assert_eq!(parts[1].data, png);
    assert_eq!(parts[1].header("Content-Type"), Some("image/png"));
    assert_eq!(parts[2].data, pdf);
    assert_eq!(parts[2].header("Content-Type"), Some("application/pdf"));
    assert_eq!(parts[3].data, [1, 2, 3]);
    assert_eq!(
        parts[3].header("Content-Type"),
        Some("application/octet-stream")
    );
    assert_eq!(parts[4].data, br#"{"a":1}"#);
    assert_eq!(parts[4].header("Content-Type"), Some("application/json"));
    assert_eq!(parts[5].data, b"x");
    assert_eq!(parts[6].data, b"y");
    assert_eq!(parts[7].data, b"3");
}

#[test]
fn file_parts_are_named_by_the_model_or_after_their_media_type() {
    let mut name = param("photo_filename", Location::FileName, Style::Form, true);
    name.wire_name = "photo".to_string();
    let mut names = param("scans_filename", Location::FileName, Style::Form, true);
    names.wire_name = "scans".to_string();
    let mut scans = file(FileContent::Base64, Some("image/png, image/jpeg"));
    scans.many = true;
    let r = route(
        "/upload",
        vec![field("photo"), name, field("notes"), field("scans"), names],
        Some(multipart_plan(vec![
            ("photo", file(FileContent::Base64, Some("image/*"))),
            ("notes", file(FileContent::Text, Some("text/csv"))),
            ("scans", scans),
        ])),
    );
    let b64 = base64::engine::general_purpose::STANDARD;
    let request = ok(
        &r,
        json!({
            "photo": format!("data:image/gif;base64,{}", b64.encode(b"GIF89a")),
            "photo_filename": "../../etc/pass\"wd\r\nX-Evil: 1.gif",
            "notes": "a,b\n1,2\n",
            "scans": [
                format!("data:image/jpeg;base64,{}", b64.encode(b"JPEG")),
                b64.encode(b"PNG"),
                format!("data:text/html;base64,{}", b64.encode(b"<p>")),
            ],
            "scans_filename": ["C:\\scans\\one.jpg", null],
        }),
    );
    let parts = parse_multipart(&request);
    let seen: Vec<(Option<&str>, Option<&str>, &[u8])> = parts
        .iter()
        .map(|p| {
            (
                p.header("Content-Disposition"),
                p.header("Content-Type"),
                p.data.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            // A path is cut to its last segment, control characters go, `"` is escaped:
            // the header stays one line with one filename.
            (
                Some(r#"form-data; name="photo"; filename="pass%22wdX-Evil: 1.gif""#),
                Some("image/gif"),
                b"GIF89a".as_slice()
            ),
            (
                Some(r#"form-data; name="notes"; filename="notes.csv""#),
                Some("text/csv"),
                b"a,b\n1,2\n".as_slice()
            ),
            (
                Some(r#"form-data; name="scans"; filename="one.jpg""#),
                Some("image/jpeg"),
                b"JPEG".as_slice()
            ),
            (
                Some(r#"form-data; name="scans"; filename="scans.png""#),
                Some("image/png"),
                b"PNG".as_slice()
            ),
            // A data: URI's type outside what the description allows does not win.
            (
                Some(r#"form-data; name="scans"; filename="scans.png""#),
                Some("image/png"),
                b"<p>".as_slice()
            ),
        ]
    );
    // Names that are nothing once cleaned fall back to the derived one.
    for useless in ["", "..", "dir/", "\r\n"] {
        let request = ok(
            &r,
            json!({"photo": b64.encode(b"x"), "photo_filename": useless}),
        );
        assert_eq!(
            parse_multipart(&request)[0].header("Content-Disposition"),
            Some(r#"form-data; name="photo"; filename="photo.bin""#),
            "{useless:?}"
        );
    }
    // A text file is sent as given, even when it looks like a data: URI.
    let request = ok(&r, json!({"notes": "data:,x"}));
    assert_eq!(parse_multipart(&request)[0].data, b"data:,x");
    assert!(matches!(
        err(&r, json!({"notes": 5})),
        RequestError::Argument { argument, .. } if argument == "notes"
    ));
    assert!(matches!(
        err(&r, json!({"photo": "eA==", "photo_filename": 5})),
        RequestError::Argument { argument, .. } if argument == "photo_filename"
    ));
}

#[test]
fn a_whole_multipart_body_sends_its_declared_files_as_files() {
    let mut whole = whole("multipart/form-data", false);
    whole.required = true;
    let mut plan = multipart_plan(vec![("file", file(FileContent::Base64, Some("image/png")))]);
    plan.flattened = false;
    let r = route("/upload", vec![whole], Some(plan));
    let request = ok(&r, json!({"body": {"file": "iVBO", "note": "n"}}));
    let parts = parse_multipart(&request);
    assert_eq!(
        parts[0].header("Content-Disposition"),
        Some(r#"form-data; name="file"; filename="file.png""#)
    );
    assert_eq!(parts[0].header("Content-Type"), Some("image/png"));
    assert_eq!(parts[0].data, [0x89, 0x50, 0x4e]);
    assert_eq!(
        parts[1].header("Content-Disposition"),
        Some(r#"form-data; name="note""#)
    );
}

#[test]
fn multipart_boundary_is_fresh_and_absent_from_the_payload() {
    let r = route(
        "/upload",
        vec![field("text")],
        Some(plan("multipart/form-data", true)),
    );
    let first = ok(&r, json!({"text": "a"}));
    let second = ok(&r, json!({"text": "a"}));
    let boundary = |request: &HttpRequest| {
        header(request, "Content-Type")
            .and_then(|ct| ct.split_once("boundary="))
            .map(|(_, b)| b.to_string())
            .expect("boundary")
    };
    let (a, b) = (boundary(&first), boundary(&second));
    assert_ne!(a, b);
    assert!(a.len() >= 32 && a.len() <= 70, "{a}");
    assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'));
    // A payload quoting the previous boundary gets a different one.
    let third = ok(&r, json!({"text": format!("--{b}--\r\n")}));
    assert_ne!(boundary(&third), b);
    let parts = parse_multipart(&third);
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].data, format!("--{b}--\r\n").as_bytes());
}

#[test]
fn multipart_names_are_quoted_safely() {
    let mut b = field("x");
    b.wire_name = "we\"ird\r\nname".to_string();
    let r = route("/u", vec![b], Some(plan("multipart/form-data", true)));
    let parts = parse_multipart(&ok(&r, json!({"x": "v"})));
    assert_eq!(
        parts[0].header("Content-Disposition"),
        Some(r#"form-data; name="we%22ird%0D%0Aname""#)
    );
}

#[test]
fn invalid_base64_is_refused() {
    let r = route(
        "/upload",
        vec![field("file")],
        Some(multipart_plan(vec![(
            "file",
            file(FileContent::Base64, None),
        )])),
    );
    for value in [
        json!("not base64!!"),
        json!("data:image/png;base64,@@@"),
        json!("data:image/png;base64"),
        json!(12),
        json!({"a": 1}),
        json!([["nested"]]),
    ] {
        match err(&r, json!({ "file": value.clone() })) {
            RequestError::Argument { argument, .. } => assert_eq!(argument, "file"),
            other => panic!("{value}: unexpected {other:?}"),
        }
    }
    // Unpadded and URL-safe base64, and whitespace, are accepted.
    let parts = parse_multipart(&ok(&r, json!({"file": "_-8\n"})));
    assert_eq!(parts[0].data, [0xff, 0xef]);
}

// ---------------------------------------------------------------------------------------
// Other whole bodies

#[test]
fn binary_whole_body() {
    let r = route(
        "/blob",
        vec![whole("application/octet-stream", true)],
        Some(plan("application/octet-stream", false)),
    );
    let request = ok(&r, json!({"body": "AAEC/w=="}));
    assert_eq!(request.body, Some(vec![0, 1, 2, 255]));
    assert_eq!(
        header(&request, "Content-Type"),
        Some("application/octet-stream")
    );
    assert!(matches!(
        err(&r, json!({"body": "%%%"})),
        RequestError::Argument { .. }
    ));

    // A wildcard media type takes its type from the data URI.
    let r = route(
        "/img",
        vec![whole("image/*", true)],
        Some(plan("image/*", false)),
    );
    let request = ok(&r, json!({"body": "data:image/gif;base64,R0lG"}));
    assert_eq!(request.body, Some(b"GIF".to_vec()));
    assert_eq!(header(&request, "Content-Type"), Some("image/gif"));
}

#[test]
fn a_binary_body_is_never_sent_as_a_type_outside_its_range() {
    let r = route(
        "/img",
        vec![whole("image/*", true)],
        Some(plan("image/*", false)),
    );
    // Bare base64 names no type, and application/octet-stream is not an image/* type.
    assert!(matches!(
        err(&r, json!({"body": "R0lG"})),
        RequestError::Argument { problem, .. } if problem.contains("data: URI")
    ));
    assert!(matches!(
        err(&r, json!({"body": "data:text/plain;base64,R0lG"})),
        RequestError::Argument { problem, .. } if problem.contains("text/plain")
    ));
    // `*/*` takes anything, bytes without a type as application/octet-stream.
    let r = route("/any", vec![whole("*/*", true)], Some(plan("*/*", false)));
    let request = ok(&r, json!({"body": "R0lG"}));
    assert_eq!(
        header(&request, "Content-Type"),
        Some("application/octet-stream")
    );
    // A text range is sent as its plain member.
    let r = route(
        "/text",
        vec![whole("text/*", false)],
        Some(plan("text/*", false)),
    );
    assert_eq!(
        header(&ok(&r, json!({"body": "hi"})), "Content-Type"),
        Some("text/plain")
    );
}

#[test]
fn body_fields_are_never_sent_as_json_under_another_type() {
    let r = route(
        "/xml",
        vec![field("name")],
        Some(plan("application/xml", true)),
    );
    assert_eq!(
        err(&r, json!({"name": "x"})),
        RequestError::Body {
            media_type: "application/xml".to_string()
        }
    );
}

#[test]
fn content_type_and_accept_arguments_win() {
    let mut content_type = param("Content-Type", Location::Header, Style::Simple, false);
    content_type.argument = "content_type".to_string();
    let accept = param("Accept", Location::Header, Style::Simple, false);
    let r = route(
        "/pets",
        vec![content_type.clone(), accept, field("name")],
        Some(plan("application/json", true)),
    );
    let request = ok(
        &r,
        json!({"content_type": "application/json; charset=utf-8", "Accept": "application/xml", "name": "Rex"}),
    );
    assert_eq!(
        request.headers,
        vec![
            (
                "Content-Type".to_string(),
                "application/json; charset=utf-8".to_string()
            ),
            ("Accept".to_string(), "application/xml".to_string()),
        ]
    );
    assert_eq!(body_text(&request), r#"{"name":"Rex"}"#);
    // Without the argument, restmcp's own.
    let request = ok(&r, json!({"name": "Rex"}));
    assert_eq!(header(&request, "Content-Type"), Some("application/json"));
    let mut defaults = request.headers.clone();
    set_default_header(&mut defaults, "accept", "application/json".to_string());
    set_default_header(&mut defaults, "content-type", "text/plain".to_string());
    assert_eq!(header_in(&defaults, "Accept"), Some("application/json"));
    assert_eq!(
        header_in(&defaults, "Content-Type"),
        Some("application/json")
    );

    // A multipart type given as an argument gets the boundary the body was built with.
    let r = route(
        "/upload",
        vec![content_type, field("note")],
        Some(plan("multipart/form-data", true)),
    );
    let request = ok(
        &r,
        json!({"content_type": "multipart/form-data", "note": "n"}),
    );
    let sent = header(&request, "Content-Type").expect("content type");
    assert!(
        sent.starts_with("multipart/form-data; boundary=restmcp-"),
        "{sent}"
    );
    assert_eq!(parse_multipart(&request)[0].data, b"n");
}

fn header_in<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn text_whole_bodies() {
    for media_type in ["text/plain", "application/xml", "application/yaml"] {
        let r = route(
            "/t",
            vec![whole(media_type, false)],
            Some(plan(media_type, false)),
        );
        let request = ok(&r, json!({"body": "<a>é</a>"}));
        assert_eq!(body_text(&request), "<a>é</a>");
        assert_eq!(header(&request, "Content-Type"), Some(media_type));
        let request = ok(&r, json!({"body": {"not": "a string"}}));
        assert_eq!(body_text(&request), r#"{"not":"a string"}"#);
    }
}

#[test]
fn headers_cookies_and_content_type_together() {
    let r = route(
        "/pets/{id}",
        vec![
            param("id", Location::Path, Style::Simple, false),
            param("X-Request-Id", Location::Header, Style::Simple, false),
            param("session", Location::Cookie, Style::Form, true),
            field("name"),
        ],
        Some(plan("application/json", true)),
    );
    let request = ok(
        &r,
        json!({"id": 1, "X-Request-Id": "r1", "session": "s", "name": "Rex"}),
    );
    assert_eq!(request.url, format!("{BASE}/pets/1"));
    assert_eq!(
        request.headers,
        vec![
            ("X-Request-Id".to_string(), "r1".to_string()),
            ("Cookie".to_string(), "session=s".to_string()),
            ("Content-Type".to_string(), "application/json".to_string()),
        ]
    );
    assert_eq!(body_text(&request), r#"{"name":"Rex"}"#);
}

#[test]
fn unexpected_shapes_never_panic() {
    let values = [
        json!(null),
        json!(""),
        json!(0),
        json!(-0.0),
        json!(1e300),
        json!("💥"),
        json!([]),
        json!({}),
        json!([[[]]]),
        json!({"": {"": [null]}}),
        json!([null, null]),
        json!("data:"),
        json!("data:,"),
    ];
    let styles = [
        Style::Matrix,
        Style::Label,
        Style::Simple,
        Style::Form,
        Style::SpaceDelimited,
        Style::PipeDelimited,
        Style::TabDelimited,
        Style::DeepObject,
    ];
    let media_types = [
        "application/json",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "text/plain",
        "application/octet-stream",
        "*/*",
    ];
    for style in styles {
        for explode in [false, true] {
            for location in [
                Location::Path,
                Location::Query,
                Location::Header,
                Location::Cookie,
                Location::BodyField,
            ] {
                for media_type in media_types {
                    for binary in [false, true] {
                        let mut b = param("v", location, style, explode);
                        b.binary = binary;
                        let r = route("/x/{v}", vec![b], Some(plan(media_type, true)));
                        for value in &values {
                            let _ = build(&r, &args(json!({ "v": value })));
                        }
                        let mut w = whole(media_type, binary);
                        w.argument = "v".to_string();
                        let r = route("/x", vec![w], Some(plan(media_type, false)));
                        for value in &values {
                            let _ = build(&r, &args(json!({ "v": value })));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn url_crate_collapses_encoded_dot_segments() {
    // Why dot segments are refused: the WHATWG parser behind HTTP clients treats "%2E%2E"
    // as "..". If this stops holding, the refusal is still harmless.
    let url = url::Url::parse("https://h.example/a/%2E%2E/b").expect("url");
    assert_eq!(url.path(), "/b");
}

#[test]
fn a_simple_string_or_integer_is_written_as_expand_path_spells_it() {
    let values = [
        json!("plain"),
        json!("a b/c?d#e%f"),
        json!("."),
        json!(".."),
        json!(""),
        json!("ünï-cødé_~"),
        json!(0),
        json!(-42),
        json!(u64::MAX),
        json!(i64::MIN),
    ];
    for style in [Style::Simple, Style::Form] {
        let binding = param("id", Location::Path, style, false);
        for value in &values {
            let mut out = String::from("/x/");
            assert!(
                address::expand_simple_into(&mut out, &binding, value),
                "{value}"
            );
            assert_eq!(
                out,
                format!("/x/{}", address::expand_path(&binding, value)),
                "{value}"
            );
        }
    }
    // Left to expand_path: other styles, content, floats, booleans, lists, objects.
    let label = param("id", Location::Path, Style::Label, false);
    let mut out = String::new();
    assert!(!address::expand_simple_into(&mut out, &label, &json!("a")));
    let simple = param("id", Location::Path, Style::Simple, false);
    for value in [
        json!(1.5),
        json!(true),
        json!(["a"]),
        json!({"a": 1}),
        Value::Null,
    ] {
        assert!(
            !address::expand_simple_into(&mut out, &simple, &value),
            "{value}"
        );
    }
    assert!(out.is_empty());
}
