use serde_json::{Value, json};

use super::*;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn response<'a>(
    status: u16,
    reason: &'a str,
    content_type: Option<&'a str>,
    body: &'a [u8],
) -> HttpResponse<'a> {
    HttpResponse {
        status,
        reason,
        content_type,
        body,
        omitted: 0,
    }
}

fn ok(_: &Tape<'_>) -> Result<(), String> {
    Ok(())
}

fn plan(wrapped: bool) -> OutputPlan {
    OutputPlan {
        media_type: "application/json".into(),
        wrapped,
    }
}

/// [`super::to_result`], checked as every answer must be: a result marked
/// `text_is_structured` has a first text of that length that is its structured content,
/// compact (answers write that text for the structured content). The same answer mapped
/// for a caller that writes the structured content from the text (`from_text`) is the same
/// result, its structured content perhaps left in the text.
fn to_result(
    api: &str,
    response: &HttpResponse<'_>,
    shape: &Shape<'_>,
    check_output: &CheckOutput<'_>,
) -> ToolResult {
    let result = super::to_result(api, response, shape, check_output);
    if let Some(length) = result.text_is_structured {
        let Some(Content::Text { text }) = result.content.first() else {
            panic!("marked without a first text: {result:?}");
        };
        let structured = result
            .structured
            .as_ref()
            .expect("marked with structured content");
        assert_eq!(
            (text.len(), text.as_str()),
            (length, json::compact(structured).as_str())
        );
    }
    if !shape.from_text {
        let from_text = Shape {
            from_text: true,
            ..*shape
        };
        let mut left = super::to_result(api, response, &from_text, check_output);
        left.materialize();
        assert_eq!(
            (&left.content, &left.structured, left.is_error),
            (&result.content, &result.structured, result.is_error),
            "mapped for a caller that writes structured content from the text"
        );
        assert_eq!(
            left.text_is_structured.is_some(),
            result.text_is_structured.is_some()
        );
    }
    result
}

fn map(r: &HttpResponse<'_>, output: Option<&OutputPlan>) -> ToolResult {
    to_result(
        "petstore",
        r,
        &Shape {
            output,
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &ok,
    )
}

fn text(t: &str) -> Content {
    Content::Text { text: t.into() }
}

fn only_text(result: &ToolResult) -> &str {
    match result.content.as_slice() {
        [Content::Text { text }] => text,
        other => panic!("expected one text, got {other:?}"),
    }
}

// ---- 2xx JSON ----

#[test]
fn json_object_without_output_is_structured_and_text() {
    let body = br#"{ "id": 1, "name": "Rex" }"#;
    let result = map(&response(200, "OK", Some("application/json"), body), None);
    assert_eq!(
        result,
        ToolResult {
            content: vec![text(r#"{"id":1,"name":"Rex"}"#)],
            structured: Some(json!({"id": 1, "name": "Rex"})),
            is_error: false,
            text_is_structured: Some(r#"{"id":1,"name":"Rex"}"#.len()),
        }
    );
}

#[test]
fn json_array_without_output_has_no_structured_content() {
    let result = map(
        &response(200, "OK", Some("application/json"), b"[1, 2]"),
        None,
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![text("[1,2]")],
            structured: None,
            is_error: false,
            text_is_structured: None,
        }
    );
}

#[test]
fn json_object_with_output_is_checked_and_returned() {
    let checked = std::cell::RefCell::new(Vec::new());
    let check = |v: &Tape<'_>| {
        checked.borrow_mut().push(v.to_value());
        Ok(())
    };
    let r = response(201, "Created", Some("application/json"), br#"{"id": 7}"#);
    let result = to_result(
        "petstore",
        &r,
        &Shape {
            output: Some(&plan(false)),
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &check,
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![text(r#"{"id":7}"#)],
            structured: Some(json!({"id": 7})),
            is_error: false,
            text_is_structured: Some(r#"{"id":7}"#.len()),
        }
    );
    // Checked once as a tree and once on the text (`to_result` maps it both ways).
    assert_eq!(checked.into_inner(), vec![json!({"id": 7}); 2]);
}

#[test]
fn json_array_is_wrapped_when_the_plan_wraps() {
    let checked = std::cell::RefCell::new(Vec::new());
    let check = |v: &Tape<'_>| {
        checked.borrow_mut().push(v.to_value());
        Ok(())
    };
    let r = response(
        200,
        "OK",
        Some("application/json"),
        br#"[{"id": 1}, {"id": 2}]"#,
    );
    let result = to_result(
        "petstore",
        &r,
        &Shape {
            output: Some(&plan(true)),
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &check,
    );
    let expected = json!({"result": [{"id": 1}, {"id": 2}]});
    assert_eq!(
        result,
        ToolResult {
            content: vec![text(r#"{"result":[{"id":1},{"id":2}]}"#)],
            structured: Some(expected.clone()),
            is_error: false,
            text_is_structured: Some(r#"{"result":[{"id":1},{"id":2}]}"#.len()),
        }
    );
    assert_eq!(checked.into_inner(), vec![expected; 2]);
}

#[test]
fn json_media_types_with_parameters_suffixes_and_case() {
    for content_type in [
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        "application/problem+json",
        "application/vnd.api+json; ext=\"x\"",
        "text/json",
        " application/json ",
    ] {
        let result = map(
            &response(200, "OK", Some(content_type), br#"{"a":true}"#),
            None,
        );
        assert_eq!(
            result.structured,
            Some(json!({"a": true})),
            "{content_type}"
        );
        assert_eq!(only_text(&result), r#"{"a":true}"#, "{content_type}");
        assert!(!result.is_error, "{content_type}");
    }
}

#[test]
fn json_lookalikes_are_text_not_structured() {
    for content_type in [
        "application/x-ndjson",
        "application/json-seq",
        "application/jsonl",
    ] {
        let body = b"{\"a\":1}\n{\"a\":2}\n";
        let result = map(&response(200, "OK", Some(content_type), body), None);
        assert_eq!(
            result,
            ToolResult::text("{\"a\":1}\n{\"a\":2}\n"),
            "{content_type}"
        );
    }
}

#[test]
fn invalid_json_is_an_error_with_an_excerpt() {
    let r = response(200, "OK", Some("application/json"), b"{\"id\": 1,");
    let result = map(&r, Some(&plan(false)));
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    let text = only_text(&result);
    assert!(
        text.starts_with(
            "upstream API \"petstore\" answered 200 OK with application/json, but the body \
             is not valid JSON ("
        ),
        "{text}"
    );
    assert!(
        text.ends_with("The request itself succeeded. Body: {\"id\": 1,"),
        "{text}"
    );
}

#[test]
fn invalid_json_excerpt_is_capped() {
    let mut body = b"<html>".to_vec();
    body.extend(std::iter::repeat_n(b'x', 10_000));
    let r = response(200, "OK", Some("application/json"), &body);
    let result = map(&r, None);
    assert!(result.is_error);
    let text = only_text(&result);
    assert!(
        text.ends_with(&format!(
            "Body: <html>{} … [body truncated; 10006 bytes in all]",
            "x".repeat(ERROR_EXCERPT - 6)
        )),
        "{text}"
    );
}

#[test]
fn output_check_failure_is_an_error_without_structured_content() {
    let check = |_: &Tape<'_>| Err("/name: 5 is not of type \"string\"".to_owned());
    let r = response(200, "OK", Some("application/json"), br#"{"name": 5}"#);
    let result = to_result(
        "petstore",
        &r,
        &Shape {
            output: Some(&plan(false)),
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &check,
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 200 OK and the request succeeded, but \
                     the response does not match the tool's outputSchema: /name: 5 is not of \
                     type \"string\". The response follows as text."
                ),
                text(r#"{"name":5}"#),
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

#[test]
fn output_check_failure_of_a_wrapped_value_shows_the_body_itself() {
    let check = |v: &Tape<'_>| {
        assert_eq!(v.to_value(), json!({"result": [1]}));
        Err("/result/0: 1 is not of type \"string\"".to_owned())
    };
    let r = response(200, "OK", Some("application/json"), b"[1]");
    let result = to_result(
        "petstore",
        &r,
        &Shape {
            output: Some(&plan(true)),
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &check,
    );
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    assert_eq!(result.content[1], text("[1]"));
    assert!(
        result.joined_text().contains(
            "does not match the tool's outputSchema: /result/0: 1 is not of type \"string\""
        ),
        "{}",
        result.joined_text()
    );
}

#[test]
fn a_non_object_root_for_an_unwrapped_plan_never_becomes_structured() {
    // Even if the checker let it through, MCP requires structuredContent to be an object.
    let r = response(200, "OK", Some("application/json"), b"[1, 2]");
    let result = map(&r, Some(&plan(false)));
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 200 OK and the request succeeded, but \
                     the response does not match the tool's outputSchema: the response root \
                     is an array, not an object. The response follows as text."
                ),
                text("[1,2]"),
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

// ---- 2xx without a body ----

#[test]
fn no_content_without_output() {
    let result = map(&response(204, "No Content", None, b""), None);
    assert_eq!(
        result,
        ToolResult::text("204 No Content: the request succeeded and returned no body.")
    );
}

#[test]
fn no_content_with_output_gives_an_empty_object() {
    let result = map(&response(204, "No Content", None, b""), Some(&plan(true)));
    assert_eq!(
        result,
        ToolResult {
            content: vec![text(
                "204 No Content: the request succeeded and returned no body."
            )],
            structured: Some(json!({})),
            is_error: false,
            text_is_structured: None,
        }
    );
}

#[test]
fn empty_json_body_is_no_body_not_invalid_json() {
    for body in [&b""[..], b" \r\n"] {
        let result = map(
            &response(200, "OK", Some("application/json"), body),
            Some(&plan(false)),
        );
        assert_eq!(
            result,
            ToolResult {
                content: vec![text("200 OK: the request succeeded and returned no body.")],
                structured: Some(json!({})),
                is_error: false,
                text_is_structured: None,
            }
        );
    }
}

#[test]
fn a_placeholder_the_schema_refuses_makes_an_error_that_keeps_the_data() {
    let check = |v: &Tape<'_>| {
        assert_eq!(v.to_value(), json!({}));
        Err("\"id\" is a required property".to_owned())
    };
    let r = response(204, "No Content", None, b"");
    let result = to_result(
        "petstore",
        &r,
        &Shape {
            output: Some(&plan(false)),
            fields: &[],
            bare: false,
            bound: None,
            from_text: false,
        },
        &check,
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 204 No Content and the request \
                     succeeded, but with no body there is no structured content matching the \
                     tool's outputSchema (\"id\" is a required property)."
                ),
                text("204 No Content: the request succeeded and returned no body."),
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

// ---- 2xx, other media types ----

#[test]
fn plain_text() {
    let result = map(
        &response(
            200,
            "OK",
            Some("text/plain; charset=utf-8"),
            "héllo\n".as_bytes(),
        ),
        None,
    );
    assert_eq!(result, ToolResult::text("héllo\n"));
}

#[test]
fn text_with_output_is_an_error_that_keeps_the_data() {
    let result = map(
        &response(200, "OK", Some("text/csv"), b"a,b\n1,2\n"),
        Some(&plan(false)),
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 200 OK with text/csv, not the JSON the \
                     tool's outputSchema describes; the request itself succeeded and the \
                     response follows."
                ),
                text("a,b\n1,2\n")
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

#[test]
fn xml_with_output_is_an_error_naming_the_media_type() {
    let result = map(
        &response(200, "OK", Some("application/xml"), b"<Pet><id>1</id></Pet>"),
        Some(&plan(false)),
    );
    assert!(result.is_error);
    assert_eq!(result.structured, None);
    assert_eq!(
        result.content,
        vec![
            text(
                "upstream API \"petstore\" answered 200 OK with application/xml, not the JSON \
                 the tool's outputSchema describes; the request itself succeeded and the \
                 response follows."
            ),
            text("<Pet><id>1</id></Pet>"),
        ]
    );
    // Without an outputSchema nothing is claimed, so XML is a plain success.
    assert_eq!(
        map(&response(200, "OK", Some("application/xml"), b"<a/>"), None),
        ToolResult::text("<a/>")
    );
}

#[test]
fn invalid_utf8_text_is_decoded_lossily() {
    let result = map(&response(200, "OK", Some("text/plain"), b"ab\xffcd"), None);
    assert_eq!(result, ToolResult::text("ab\u{fffd}cd"));
}

#[test]
fn textual_application_types() {
    for content_type in [
        "application/xml",
        "application/atom+xml",
        "image/svg+xml",
        "application/yaml",
        "application/x-yaml",
        "application/javascript",
        "application/x-www-form-urlencoded",
        "application/graphql",
    ] {
        let result = map(
            &response(200, "OK", Some(content_type), b"<a>x=1</a>"),
            None,
        );
        assert_eq!(result, ToolResult::text("<a>x=1</a>"), "{content_type}");
    }
}

#[test]
fn png_is_an_image() {
    let result = map(&response(200, "OK", Some("image/PNG; q=1"), PNG), None);
    assert_eq!(
        result,
        ToolResult {
            content: vec![Content::Image {
                data: "iVBORw0KGgoAAAANSUhEUg==".into(),
                mime_type: "image/png".into(),
            }],
            structured: None,
            is_error: false,
            text_is_structured: None,
        }
    );
}

#[test]
fn image_with_output_is_an_error_followed_by_the_image() {
    let result = map(
        &response(200, "OK", Some("image/jpeg"), b"\xff\xd8\xff"),
        Some(&plan(true)),
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 200 OK with image/jpeg, not the JSON the \
                     tool's outputSchema describes; the request itself succeeded and the \
                     response follows."
                ),
                Content::Image {
                    data: "/9j/".into(),
                    mime_type: "image/jpeg".into(),
                }
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

#[test]
fn mpeg_is_audio() {
    let result = map(&response(200, "OK", Some("audio/mpeg"), b"ID3\x04\0"), None);
    assert_eq!(
        result,
        ToolResult {
            content: vec![Content::Audio {
                data: "SUQzBAA=".into(),
                mime_type: "audio/mpeg".into(),
            }],
            structured: None,
            is_error: false,
            text_is_structured: None,
        }
    );
}

#[test]
fn pdf_is_an_embedded_resource() {
    let result = map(
        &response(200, "OK", Some("application/pdf"), b"%PDF-1.7"),
        None,
    );
    assert_eq!(
        result,
        ToolResult {
            content: vec![Content::Resource {
                uri: "restmcp://petstore/response".into(),
                mime_type: "application/pdf".into(),
                blob: "JVBERi0xLjc=".into(),
            }],
            structured: None,
            is_error: false,
            text_is_structured: None,
        }
    );
}

#[test]
fn explicit_binary_types_stay_binary_even_when_the_bytes_are_text() {
    for content_type in ["application/octet-stream", "application/zip", "video/mp4"] {
        let result = map(&response(200, "OK", Some(content_type), b"abc"), None);
        assert_eq!(
            result.content,
            vec![Content::Resource {
                uri: "restmcp://petstore/response".into(),
                mime_type: content_type.into(),
                blob: "YWJj".into(),
            }],
            "{content_type}"
        );
    }
}

#[test]
fn resource_uri_encodes_the_api_name() {
    let r = response(200, "OK", Some("application/zip"), b"PK\x03\x04");
    let result = to_result("Pet Store/v2", &r, &Shape::default(), &ok);
    let Content::Resource { uri, .. } = &result.content[0] else {
        panic!("{result:?}")
    };
    assert_eq!(uri, "restmcp://Pet%20Store%2Fv2/response");
}

#[test]
fn unknown_types_are_sniffed() {
    let text = map(
        &response(200, "OK", Some("application/vnd.acme.report"), b"total: 3"),
        None,
    );
    assert_eq!(text, ToolResult::text("total: 3"));
    let binary = map(
        &response(200, "OK", Some("application/vnd.acme.blob"), b"\0\x01\x02"),
        None,
    );
    assert_eq!(
        binary.content,
        vec![Content::Resource {
            uri: "restmcp://petstore/response".into(),
            mime_type: "application/vnd.acme.blob".into(),
            blob: "AAEC".into(),
        }]
    );
}

#[test]
fn missing_content_type_utf8_is_text() {
    let result = map(&response(200, "OK", None, "ok ✓\r\n".as_bytes()), None);
    assert_eq!(result, ToolResult::text("ok ✓\r\n"));
}

#[test]
fn missing_content_type_binary_is_an_octet_stream_resource() {
    for body in [&b"\xff\xfe\x00"[..], b"abc\0def"] {
        let result = map(&response(200, "OK", None, body), None);
        assert_eq!(
            result,
            ToolResult {
                content: vec![Content::Resource {
                    uri: "restmcp://petstore/response".into(),
                    mime_type: "application/octet-stream".into(),
                    blob: STANDARD.encode(body),
                }],
                structured: None,
                is_error: false,
                text_is_structured: None,
            }
        );
    }
}

#[test]
fn malformed_content_type_is_sniffed() {
    for content_type in ["", "json", "text/", "/plain", "a b/c", ";charset=utf-8"] {
        let result = map(&response(200, "OK", Some(content_type), b"{\"a\":1}"), None);
        assert_eq!(result, ToolResult::text("{\"a\":1}"), "{content_type:?}");
    }
}

// ---- truncation ----

#[test]
fn truncated_json_is_text_with_an_exact_marker() {
    let body = vec![b' '; 1_258_291]; // 1.2 MiB
    let mut r = response(200, "OK", Some("application/json"), &body);
    r.omitted = 2_306_868; // total 3_565_159 bytes = 3.4 MiB
    let result = map(&r, None);
    assert!(!result.is_error);
    assert_eq!(result.structured, None);
    assert_eq!(result.content.len(), 2);
    assert_eq!(result.content[0], text(&" ".repeat(1_258_291)));
    assert_eq!(
        result.content[1],
        text("[response truncated: 1.2 MiB of 3.4 MiB shown; 2306868 bytes omitted]")
    );
}

#[test]
fn truncated_json_with_output_is_an_error_with_a_hint_to_narrow() {
    let mut r = response(200, "OK", Some("application/json"), br#"[{"id":1},{"i"#);
    r.omitted = 100;
    let result = map(&r, Some(&plan(true)));
    assert_eq!(
        result,
        ToolResult {
            content: vec![
                text(
                    "upstream API \"petstore\" answered 200 OK with application/json, but the \
                     body (113 B) is larger than the response size cap (13 B read), so it \
                     cannot be the structured data the tool's outputSchema describes; the \
                     request itself succeeded and what was read follows. To get all of it, \
                     narrow the request (filters, fewer fields, a smaller page)."
                ),
                text(r#"[{"id":1},{"i"#),
                text("[response truncated: 13 B of 113 B shown; 100 bytes omitted]"),
            ],
            structured: None,
            is_error: true,
            text_is_structured: None,
        }
    );
}

// ---- scalar and array bodies, by protocol revision ----

fn map_bare(r: &HttpResponse<'_>, output: Option<&OutputPlan>, bare: bool) -> ToolResult {
    to_result(
        "petstore",
        r,
        &Shape {
            output,
            fields: &[],
            bare,
            bound: None,
            from_text: false,
        },
        &ok,
    )
}

#[test]
fn scalars_and_arrays_are_wrapped_before_2026_and_bare_on_it() {
    for (body, value) in [
        (&b"[1, 2]"[..], json!([1, 2])),
        (b"\"sold\"", json!("sold")),
        (b"42", json!(42)),
        (b"true", json!(true)),
        (b"null", json!(null)),
    ] {
        let r = response(200, "OK", Some("application/json"), body);
        // With a wrapping outputSchema: {"result": …}, then the value itself.
        let wrapped = json!({"result": value.clone()});
        assert_eq!(
            map_bare(&r, Some(&plan(true)), false),
            ToolResult::json(wrapped)
        );
        assert_eq!(
            map_bare(&r, Some(&plan(true)), true),
            ToolResult::json(value.clone())
        );
        // Without one: text only, then structured too.
        assert_eq!(
            map_bare(&r, None, false),
            ToolResult::text(value.to_string())
        );
        assert_eq!(map_bare(&r, None, true), ToolResult::json(value));
    }
}

#[test]
fn objects_are_the_same_on_every_revision() {
    let r = response(200, "OK", Some("application/json"), br#"{"id": 1}"#);
    for output in [None, Some(plan(false))] {
        assert_eq!(
            map_bare(&r, output.as_ref(), true),
            map_bare(&r, output.as_ref(), false)
        );
    }
}

#[test]
fn truncated_text_drops_a_character_cut_in_half() {
    // "é" is C3 A9; the cap fell between the two bytes.
    let mut r = response(200, "OK", Some("text/plain"), b"caf\xc3");
    r.omitted = 1;
    let result = map(&r, None);
    assert_eq!(
        result.content,
        vec![
            text("caf"),
            text("[response truncated: 4 B of 5 B shown; 1 bytes omitted]"),
        ]
    );
}

#[test]
fn truncated_binary_is_described_not_returned() {
    let mut r = response(200, "OK", Some("image/png"), PNG);
    r.omitted = 2048;
    let result = map(&r, None);
    assert_eq!(
        result,
        ToolResult::text(
            "200 OK: the request succeeded, but its image/png body (2.0 KiB) is larger than \
             the response size cap (16 B read), and a partial image/png cannot be returned."
        )
    );
}

#[test]
fn truncated_empty_body_is_not_no_body() {
    let mut r = response(200, "OK", Some("text/plain"), b"");
    r.omitted = 10;
    let result = map(&r, None);
    assert_eq!(
        result.content,
        vec![
            text(""),
            text("[response truncated: 0 B of 10 B shown; 10 bytes omitted]"),
        ]
    );
}

#[test]
fn human_sizes() {
    assert_eq!(human_size(0), "0 B");
    assert_eq!(human_size(1023), "1023 B");
    assert_eq!(human_size(1024), "1.0 KiB");
    assert_eq!(human_size(1536), "1.5 KiB");
    assert_eq!(human_size(3 << 30), "3.0 GiB");
    assert_eq!(human_size(u64::MAX), "16777216.0 TiB");
}

// ---- errors ----

#[test]
fn not_found_with_a_json_body() {
    let r = response(
        404,
        "Not Found",
        Some("application/problem+json"),
        b"{\n  \"title\": \"Pet not found\",\n  \"status\": 404\n}",
    );
    let result = map(&r, Some(&plan(false)));
    assert_eq!(
        result,
        ToolResult::error(
            "upstream API \"petstore\" answered 404 Not Found: \
             {\"title\":\"Pet not found\",\"status\":404}\n\
             Hint: the resource does not exist; check the identifiers in the arguments (list \
             or search for the resource first if unsure)."
        )
    );
}

#[test]
fn server_error_with_an_html_body() {
    let body = b"<html><body><h1>502 Bad Gateway</h1></body></html>";
    let r = response(500, "Internal Server Error", Some("text/html"), body);
    let result = map(&r, None);
    assert_eq!(
        result,
        ToolResult::error(
            "upstream API \"petstore\" answered 500 Internal Server Error: \
             <html><body><h1>502 Bad Gateway</h1></body></html>\n\
             Hint: the upstream failed; retrying after a short wait may help."
        )
    );
}

#[test]
fn rate_limited_hint() {
    let r = response(429, "Too Many Requests", Some("text/plain"), b"slow down");
    assert_eq!(
        map(&r, None),
        ToolResult::error(
            "upstream API \"petstore\" answered 429 Too Many Requests: slow down\n\
             Hint: rate limited by the upstream; wait before retrying."
        )
    );
}

#[test]
fn hints_for_common_statuses() {
    let cases: [(u16, &str); 7] = [
        (400, "check the arguments against the tool's inputSchema"),
        (422, "check the arguments against the tool's inputSchema"),
        (401, "not something the tool's arguments can fix"),
        (403, "lack permission"),
        (409, "conflicts with the resource's current state"),
        (503, "retrying after a short wait may help"),
        (301, "redirect that was not followed"),
    ];
    for (status, expected) in cases {
        let result = map(&response(status, "X", Some("text/plain"), b"e"), None);
        let text = only_text(&result);
        assert!(result.is_error && result.structured.is_none(), "{status}");
        assert!(
            text.starts_with(&format!(
                "upstream API \"petstore\" answered {status} X: e\nHint: "
            )),
            "{text}"
        );
        assert!(text.contains(expected), "{status}: {text}");
    }
}

#[test]
fn statuses_without_a_hint_or_a_reason() {
    for status in [0, 102, 418, 999] {
        let result = map(&response(status, "", None, b""), None);
        assert_eq!(
            result,
            ToolResult::error(format!(
                "upstream API \"petstore\" answered {status} with an empty body."
            ))
        );
    }
}

#[test]
fn binary_error_body_is_described() {
    let mut r = response(403, "Forbidden", Some("image/png"), PNG);
    r.omitted = 84;
    let result = map(&r, None);
    let text = only_text(&result);
    assert!(result.is_error);
    assert!(
        text.starts_with(
            "upstream API \"petstore\" answered 403 Forbidden: <100 bytes of image/png>\nHint: "
        ),
        "{text}"
    );
    assert!(!text.contains("PNG"), "{text}");
}

#[test]
fn binary_error_body_without_content_type_is_described() {
    let result = map(&response(502, "Bad Gateway", None, b"\0\x01\x02\x03"), None);
    assert!(
        only_text(&result)
            .starts_with("upstream API \"petstore\" answered 502 Bad Gateway: <4 bytes of application/octet-stream>\n"),
        "{}",
        only_text(&result)
    );
}

#[test]
fn huge_error_body_is_capped() {
    // Multi-byte characters straddle the cap: the excerpt must end on a boundary.
    let body = format!("x{}", "é".repeat(5000));
    let mut r = response(
        500,
        "Internal Server Error",
        Some("text/plain"),
        body.as_bytes(),
    );
    r.omitted = 1000;
    let result = map(&r, None);
    assert_eq!(
        result,
        ToolResult::error(format!(
            "upstream API \"petstore\" answered 500 Internal Server Error: x{} … [error body \
             truncated; 11001 bytes in all]\n\
             Hint: the upstream failed; retrying after a short wait may help.",
            "é".repeat(ERROR_EXCERPT / 2 - 1)
        ))
    );
}

#[test]
fn short_error_body_cut_by_the_size_cap_says_so() {
    let mut r = response(
        503,
        "Service Unavailable",
        Some("application/json"),
        b"{\"error\": \"down",
    );
    r.omitted = 20;
    assert_eq!(
        map(&r, None),
        ToolResult::error(
            "upstream API \"petstore\" answered 503 Service Unavailable: {\"error\": \"down … \
             [error body truncated; 35 bytes in all]\n\
             Hint: the upstream failed; retrying after a short wait may help."
        )
    );
}

#[test]
fn large_json_error_body_is_compacted_then_capped() {
    let items: Vec<Value> = (0..2000).map(|i| json!({"field": i})).collect();
    let body = serde_json::to_vec_pretty(&json!({"errors": items})).expect("serialize");
    let r = response(422, "Unprocessable Entity", Some("application/json"), &body);
    let result = map(&r, None);
    let text = only_text(&result);
    let prefix = "upstream API \"petstore\" answered 422 Unprocessable Entity: ";
    let compact = json!({"errors": items}).to_string();
    assert_eq!(
        text,
        format!(
            "{prefix}{} … [error body truncated; {} bytes in all]\n{}",
            &compact[..ERROR_EXCERPT],
            body.len(),
            hint(422).expect("hint")
        )
    );
}

#[test]
fn error_with_invalid_json_body_shows_the_text() {
    let r = response(400, "Bad Request", Some("application/json"), b"oops");
    let text = map(&r, None).joined_text();
    assert!(
        text.starts_with("upstream API \"petstore\" answered 400 Bad Request: oops\nHint: "),
        "{text}"
    );
}

#[test]
fn redirects_are_errors() {
    let r = response(302, "Found", Some("text/html"), b"moved");
    let result = map(&r, Some(&plan(false)));
    assert!(result.is_error);
    assert_eq!(result.structured, None);
}

// ---- robustness ----

#[test]
fn never_panics() {
    let bodies: [&[u8]; 9] = [
        b"",
        b"\0",
        b"\xff\xfe\xfd",
        b"\xf0\x9f",
        b"\xe2\x82\xac",
        b"{\"a\":",
        b"1e400",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        PNG,
    ];
    let types = [
        None,
        Some(""),
        Some(";"),
        Some("/"),
        Some("application/json"),
        Some("image/png"),
        Some("audio/"),
        Some("text/plain; charset=\"x"),
        Some("\u{0}/\u{7f}"),
        Some("é/ü"),
        Some("*/*"),
    ];
    let check_err = |_: &Tape<'_>| Err(String::new());
    for status in [
        0,
        1,
        100,
        200,
        204,
        206,
        299,
        300,
        404,
        500,
        599,
        600,
        999,
        u16::MAX,
    ] {
        for body in bodies {
            for content_type in types {
                for omitted in [0, 1, u64::MAX] {
                    let r = HttpResponse {
                        status,
                        reason: "",
                        content_type,
                        body,
                        omitted,
                    };
                    for output in [None, Some(plan(true)), Some(plan(false))] {
                        let a = to_result(
                            "",
                            &r,
                            &Shape {
                                output: output.as_ref(),
                                fields: &[],
                                bare: false,
                                bound: None,
                                from_text: false,
                            },
                            &ok,
                        );
                        let b = to_result(
                            "x",
                            &r,
                            &Shape {
                                output: output.as_ref(),
                                fields: &[],
                                bare: false,
                                bound: None,
                                from_text: false,
                            },
                            &check_err,
                        );
                        let c = to_result(
                            "x",
                            &r,
                            &Shape {
                                output: output.as_ref(),
                                fields: &[],
                                bare: true,
                                bound: None,
                                from_text: false,
                            },
                            &ok,
                        );
                        for (result, bare) in [(a, false), (b, false), (c, true)] {
                            assert!(!result.content.is_empty());
                            if let Some(s) = &result.structured {
                                assert!(s.is_object() || bare);
                                assert!(!result.is_error);
                            }
                            if output.is_some() && !result.is_error {
                                assert!(result.structured.is_some());
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---- multipart ----

#[test]
fn a_multipart_answer_is_one_block_per_part_by_its_type() {
    let body = b"--sep\r\nContent-Type: text/plain\r\n\r\nThe summary.\r\n\
--sep\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\0\0\0\rIHDR\r\n\
--sep\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\r\n--sep--\r\n";
    let r = response(200, "OK", Some("multipart/mixed; boundary=sep"), body);
    let result = map(&r, None);
    assert!(!result.is_error);
    assert_eq!(result.content.len(), 3, "{result:?}");
    assert_eq!(result.content[0], text("The summary."));
    assert_eq!(
        result.content[1],
        Content::Image {
            data: STANDARD.encode(PNG),
            mime_type: "image/png".into()
        }
    );
    assert!(matches!(
        &result.content[2],
        Content::Resource { mime_type, blob, .. }
            if mime_type == "application/pdf" && *blob == STANDARD.encode(b"%PDF-1.4")
    ));
    // Not well-formed: the body as the binary it then is.
    let broken = response(200, "OK", Some("multipart/mixed; boundary=other"), body);
    assert!(matches!(
        map(&broken, None).content.as_slice(),
        [Content::Resource { .. }]
    ));
}

/// The same answer, written compactly or not, with or without escapes and floats, maps to
/// the same result: a compact body is its own text, any other is written again.
#[test]
fn a_body_as_the_api_wrote_it_or_compact_maps_to_the_same_result() {
    let pairs: [(&[u8], &[u8]); 4] = [
        (
            br#"{"id":1,"name":"Rex","tags":["a"]}"#,
            br#"{ "id": 1, "name": "Rex", "tags": [ "a" ] }"#,
        ),
        (
            br#"[{"id":1},{"id":2}]"#,
            b"[\n  {\"id\": 1},\n  {\"id\": 2}\n]",
        ),
        (
            br#"{"price":1.5,"name":"caf\u00e9"}"#,
            br#"{"price":1.50,"name":"caf\u00e9"}"#,
        ),
        (br#"{"a":1,"a":2}"#, br#"{"a":2}"#),
    ];
    for (first, second) in pairs {
        for (output, bare) in [
            (None, false),
            (Some(plan(false)), false),
            (Some(plan(true)), false),
            (Some(plan(true)), true),
        ] {
            let results = [first, second].map(|body| {
                let r = response(200, "OK", Some("application/json"), body);
                let shape = Shape {
                    output: output.as_ref(),
                    fields: &[],
                    bare,
                    bound: None,
                    from_text: false,
                };
                to_result("petstore", &r, &shape, &ok)
            });
            assert_eq!(results[0], results[1], "{}", String::from_utf8_lossy(first));
            if let Some(structured) = &results[0].structured {
                assert_eq!(only_text(&results[0]), crate::json::compact(structured));
            }
        }
    }
    // A wrapped array's text is the structured `{"result": …}`.
    let r = response(200, "OK", Some("application/json"), br#"[1,2]"#);
    assert_eq!(
        only_text(&map(&r, Some(&plan(true)))),
        r#"{"result":[1,2]}"#
    );
}

/// A media type's type and subtype are RFC 9110 tokens: visible ASCII but its delimiters.
#[test]
fn a_media_type_is_made_of_tokens() {
    for byte in 0u8..=127 {
        let content_type = format!("text/a{}b", char::from(byte));
        let token = byte.is_ascii_graphic() && !b"/()<>@,;:\\\"[]?={}".contains(&byte);
        // `;` ends the essence before the byte: `text/a` is a media type.
        let expected = token || byte == b';';
        assert_eq!(essence(&content_type).is_some(), expected, "{byte:#04x}");
    }
    assert_eq!(
        essence(" Application/JSON ; charset=utf-8").as_deref(),
        Some("application/json")
    );
    assert_eq!(essence("application/"), None);
}

/// A compact answer that is projected or trimmed is no longer what was read: its text is
/// that of the result, never the upstream's (a list of numbers trimmed has as many members
/// as before, so only the guard before `compact_as_read` tells).
#[test]
fn a_projected_or_trimmed_answer_is_written_from_what_is_kept() {
    let paging = crate::upstream::paging::Paging::default();
    let fields = ["items.id".to_string()];
    let cases: [(&[u8], &[String], _); 2] = [
        (
            br#"{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"secret":"x"}"#,
            &fields,
            None,
        ),
        (
            br#"{"items":[1000001,1000002,1000003,1000004,1000005,1000006]}"#,
            &[],
            Some((30, &paging)),
        ),
    ];
    for (body, fields, bound) in cases {
        let r = response(200, "OK", Some("application/json"), body);
        let shape = Shape {
            output: None,
            fields,
            bare: false,
            bound,
            from_text: false,
        };
        let result = to_result("petstore", &r, &shape, &ok);
        let structured = result.structured.as_ref().expect("an object");
        let Content::Text { text } = &result.content[0] else {
            panic!("a text first: {result:?}");
        };
        assert_eq!(text, &crate::json::compact(structured));
        assert_ne!(text.as_bytes(), body);
    }
}
