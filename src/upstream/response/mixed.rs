//! `multipart/*` answers (RFC 2046; `multipart/mixed`, `related`, `alternative`…, not
//! `form-data`) read into their parts, each with its own media type, so that a result can
//! give one content block per part. Pure and bounded: at most [`MAX_PARTS`] parts, each
//! part's headers at most [`MAX_HEADERS`] bytes; a body that is not well-formed multipart
//! gives `None`, and the caller maps it as the binary body it then is.

/// The most parts read; a body with more is not read as parts.
pub const MAX_PARTS: usize = 64;

/// The most bytes of one part's headers.
const MAX_HEADERS: usize = 8 * 1024;

/// One part: its media type (default `text/plain`, RFC 2046 5.1) and its body.
#[derive(Debug, PartialEq, Eq)]
pub struct Part<'b> {
    pub content_type: String,
    pub body: &'b [u8],
}

/// The `boundary` parameter of a multipart Content-Type.
fn boundary(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("boundary") {
            return None;
        }
        let value = value.trim().trim_matches('"');
        (!value.is_empty() && value.len() <= 70).then(|| value.to_string())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The parts of `body` under `content_type`, when it is well-formed multipart.
pub fn parts<'b>(content_type: &str, body: &'b [u8]) -> Option<Vec<Part<'b>>> {
    let delimiter = format!("--{}", boundary(content_type)?).into_bytes();
    // The first delimiter: at the start, or after a preamble ending in a line break.
    let first = find(body, &delimiter)?;
    if first > 0 && body[first - 1] != b'\n' {
        return None;
    }
    let mut rest = &body[first + delimiter.len()..];
    let mut parts = Vec::new();
    loop {
        if rest.starts_with(b"--") {
            return Some(parts);
        }
        if parts.len() == MAX_PARTS {
            return None;
        }
        // The rest of the delimiter line (transport padding), then the part.
        let line_end = find(rest, b"\n")?;
        rest = &rest[line_end + 1..];
        let (head, after) = split_head(rest)?;
        let end = find(after, &delimiter)?;
        let mut part_body = &after[..end];
        // The line break before the next delimiter belongs to it.
        part_body = part_body.strip_suffix(b"\n").unwrap_or(part_body);
        part_body = part_body.strip_suffix(b"\r").unwrap_or(part_body);
        parts.push(Part {
            content_type: content_type_of(head).unwrap_or_else(|| "text/plain".into()),
            body: part_body,
        });
        rest = &after[end + delimiter.len()..];
    }
}

/// A part's headers and what follows them (CRLF CRLF, or LF LF from lenient servers).
fn split_head(part: &[u8]) -> Option<(&[u8], &[u8])> {
    if part.starts_with(b"\r\n") {
        return Some((&[], &part[2..]));
    }
    if part.starts_with(b"\n") {
        return Some((&[], &part[1..]));
    }
    let window = &part[..part.len().min(MAX_HEADERS)];
    if let Some(at) = find(window, b"\r\n\r\n") {
        return Some((&part[..at], &part[at + 4..]));
    }
    let at = find(window, b"\n\n")?;
    Some((&part[..at], &part[at + 2..]))
}

/// The Content-Type a part's headers give.
fn content_type_of(head: &[u8]) -> Option<String> {
    let head = std::str::from_utf8(head).ok()?;
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-type")
            .then(|| value.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_with_their_types_and_bodies() {
        let body = b"preamble\r\n--b1\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n\
--b1\r\n\r\nplain text\r\n--b1\r\ncontent-type: image/png\r\n\r\n\x89PNG\r\n--b1--\r\n";
        let parts = parts("multipart/mixed; boundary=\"b1\"", body).expect("parts");
        assert_eq!(
            parts,
            [
                Part {
                    content_type: "application/json".into(),
                    body: b"{\"a\":1}"
                },
                Part {
                    content_type: "text/plain".into(),
                    body: b"plain text"
                },
                Part {
                    content_type: "image/png".into(),
                    body: b"\x89PNG"
                },
            ]
        );
    }

    #[test]
    fn malformed_multipart_is_not_read_as_parts() {
        for (content_type, body) in [
            ("multipart/mixed", &b"--x\r\n\r\na\r\n--x--"[..]),
            ("multipart/mixed; boundary=x", b"no delimiter at all"),
            ("multipart/mixed; boundary=x", b"--x\r\n\r\nunterminated"),
            ("multipart/mixed; boundary=x", b"junk--x\r\n\r\na\r\n--x--"),
        ] {
            assert_eq!(parts(content_type, body), None, "{body:?}");
        }
        let many: Vec<u8> = (0..=MAX_PARTS)
            .flat_map(|_| b"--x\r\n\r\na\r\n".to_vec())
            .chain(b"--x--".to_vec())
            .collect();
        assert_eq!(parts("multipart/mixed; boundary=x", &many), None);
    }
}
