//! Descriptions and titles as a model should read them: the HTML and Markdown noise API
//! descriptions carry (tags, entities, link targets, images, comments) taken out,
//! whitespace tidied, and lengths capped — every character of `tools/list` is paid for in
//! context. Text that was only noise is left out rather than published empty.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// HTML elements seen in API descriptions. Only these are taken as tags, so `List<String>`
/// or `<owner>` placeholders survive.
const TAGS: &str = "a|abbr|b|blockquote|br|center|code|dd|del|details|div|dl|dt|em|font|h[1-6]|hr|i|img|ins|kbd|li|ol|p|pre|s|section|small|span|strong|sub|summary|sup|table|tbody|td|th|thead|tr|tt|u|ul";

static COMMENT: LazyLock<Regex> = LazyLock::new(|| regex(r"(?s)<!--.*?-->"));
static BREAK: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)<(?:br\s*/?|/p|/li|/div|/section|/h[1-6]|/tr|/dt|/dd|hr\s*/?)>|<li(?:\s[^<>]*)?>")
});
static TAG: LazyLock<Regex> =
    LazyLock::new(|| regex(&format!(r"(?i)</?(?:{TAGS})(?:\s[^<>]*)?/?>")));
static IMAGE: LazyLock<Regex> = LazyLock::new(|| regex(r"!\[[^\]]*\]\([^)\s]*(?:\s[^)]*)?\)"));
static LINK: LazyLock<Regex> = LazyLock::new(|| regex(r"\[([^\]]+)\]\((?:[^)\s]+)(?:\s[^)]*)?\)"));
static BOLD: LazyLock<Regex> = LazyLock::new(|| regex(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__"));
static HEADING: LazyLock<Regex> = LazyLock::new(|| regex(r"(?m)^#{1,6}[ \t]+"));
static SPACES: LazyLock<Regex> = LazyLock::new(|| regex(r"[ \t]{2,}"));
static BLANK_LINES: LazyLock<Regex> = LazyLock::new(|| regex(r"\n{3,}"));
static NUMERIC_ENTITY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));"));

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the patterns are constants of this module, checked by its tests")
}

/// `text` without markup noise: the words a reader would see.
pub fn clean(text: &str) -> String {
    // Most descriptions are plain sentences: nothing below would change them.
    let plain = !text.contains(['<', '&', '[', '*', '_', '#', '\n', '\t', '\r'])
        && !text.contains("  ")
        && text.trim() == text;
    if plain {
        return text.to_string();
    }
    let text = COMMENT.replace_all(text, "");
    let text = BREAK.replace_all(&text, "\n");
    let text = TAG.replace_all(&text, "");
    let text = IMAGE.replace_all(&text, "");
    let text = LINK.replace_all(&text, "$1");
    let text = BOLD.replace_all(&text, "$1$2");
    let text = HEADING.replace_all(&text, "");
    let text = entities(&text);
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let text = SPACES.replace_all(&lines.join("\n"), " ").into_owned();
    BLANK_LINES.replace_all(&text, "\n\n").trim().to_string()
}

fn entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let text = NUMERIC_ENTITY.replace_all(text, |found: &regex::Captures<'_>| {
        let code = match (found.get(1), found.get(2)) {
            (Some(hex), _) => u32::from_str_radix(hex.as_str(), 16).ok(),
            (_, Some(decimal)) => decimal.as_str().parse::<u32>().ok(),
            _ => None,
        };
        match code.and_then(char::from_u32) {
            // A no-break space is a space to a reader; control characters are noise.
            Some('\u{a0}') => " ".to_string(),
            Some(c) if !c.is_control() || c == '\n' => c.to_string(),
            _ => String::new(),
        }
    });
    text.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Cleans every description and title in a JSON Schema, cutting descriptions to `max`
/// characters (0 = no limit); one that cleans to nothing is removed rather than published
/// empty. Values (`default`, `enum`, `const`, `examples`) are data, not prose, and are left
/// as they are.
pub fn tidy_schema(schema: &mut Value, max: usize) {
    match schema {
        Value::Object(map) => {
            let mut empty: Vec<&'static str> = Vec::new();
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("description", Value::String(text)) => {
                        *text = truncate_text(&clean(text), max);
                        if text.is_empty() {
                            empty.push("description");
                        }
                    }
                    ("title", Value::String(text)) => {
                        *text = clean(text);
                        if text.is_empty() {
                            empty.push("title");
                        }
                    }
                    ("default" | "enum" | "const" | "examples" | "example", _) => {}
                    (_, value) => tidy_schema(value, max),
                }
            }
            for key in empty {
                map.shift_remove(key);
            }
        }
        Value::Array(items) => {
            for item in items {
                tidy_schema(item, max);
            }
        }
        _ => {}
    }
}

/// Cuts `text` to at most `max` characters at a word boundary, marking the cut with `…`.
pub fn truncate_text(text: &str, max: usize) -> String {
    if max == 0 || text.chars().count() <= max {
        return text.to_string();
    }
    let limit = max.saturating_sub(1);
    let cut: String = text.chars().take(limit).collect();
    let at_word = match cut.rfind(char::is_whitespace) {
        Some(i) if i > limit / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn html_and_markdown_noise_is_removed() {
        assert_eq!(
            clean(
                "<p>Lists the <b>issues</b> of a repository.</p><p>See <a href=\"https://docs.example.com/x\">the docs</a>.</p>"
            ),
            "Lists the issues of a repository.\nSee the docs."
        );
        assert_eq!(
            clean(
                "Creates a comment. See [Creating a comment](https://docs.github.com/rest/x \"title\") and ![diagram](https://x/y.png)\n\n\n\n**Note**: rate limits apply &amp; more."
            ),
            "Creates a comment. See Creating a comment and\n\nNote: rate limits apply & more."
        );
        assert_eq!(
            clean("## Heading\nText   with   spaces  \n<!-- hidden -->"),
            "Heading\nText with spaces"
        );
        assert_eq!(
            clean("Item one<br/>Item two<br>three"),
            "Item one\nItem two\nthree"
        );
    }

    #[test]
    fn type_placeholders_and_snake_case_survive() {
        assert_eq!(
            clean("Returns List<String> for <owner>/<repo>"),
            "Returns List<String> for <owner>/<repo>"
        );
        assert_eq!(
            clean("the created_at__gte filter, a_b_c"),
            "the created_at__gte filter, a_b_c"
        );
        assert_eq!(clean("plain"), "plain");
    }

    #[test]
    fn schemas_get_clean_capped_descriptions_but_values_stay() {
        let mut schema = json!({
            "type": "object",
            "description": "<p>Top</p>",
            "properties": {
                "q": {"type": "string", "description": "A [search](https://x) query, as long as you like it to be", "default": "<b>x</b>"},
                "description": {"type": "string", "description": "the description field"}
            },
            "examples": [{"description": "<p>kept</p>"}]
        });
        tidy_schema(&mut schema, 20);
        assert_eq!(schema["description"], "Top");
        assert_eq!(
            schema["properties"]["q"]["description"],
            "A search query, as…"
        );
        assert_eq!(schema["properties"]["q"]["default"], "<b>x</b>");
        assert_eq!(
            schema["properties"]["description"]["description"],
            "the description…"
        );
        assert_eq!(schema["examples"][0]["description"], "<p>kept</p>");
    }

    #[test]
    fn markup_only_text_cleans_to_nothing() {
        assert_eq!(clean("&nbsp; <i class=\"fa fa-lg fa-unlock-alt\"></i>"), "");
        assert_eq!(
            clean("List user private tests&nbsp; <i class=\"fa fa-lg fa-unlock-alt\"></i>"),
            "List user private tests"
        );
        assert_eq!(
            clean(
                "<section class=\"body-param\"><strong>session_ids</strong> (required)<br/></section>"
            ),
            "session_ids (required)"
        );
        assert_eq!(clean("&#160;&#xA0;<b></b>"), "");
        assert_eq!(clean("caf&#233; &#x2014; &#0; &amp;#60;"), "café — &#60;");
    }

    #[test]
    fn descriptions_and_titles_that_clean_to_nothing_are_removed() {
        let mut schema = json!({
            "type": "object",
            "title": "<b>Thing</b>",
            "properties": {
                "a": {"type": "string", "description": "&nbsp; <i class=\"fa fa-lock\"></i>", "title": "<span></span>"},
                "title": {"type": "string", "description": "&#160;"},
                "description": {"type": "string", "description": "kept"}
            }
        });
        tidy_schema(&mut schema, 0);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "title": "Thing",
                "properties": {
                    "a": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string", "description": "kept"}
                }
            })
        );
    }
}
