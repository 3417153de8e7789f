//! The text of the configuration `restmcp init` writes for a [`Description`]: every line a
//! TOML line the configuration loader accepts (values, or comments saying what a key does
//! and what to do), and the names it makes: the API's name from the description's title
//! ([`api_name`]) and the environment variables credentials are read from
//! ([`env_names`]).

use std::fmt::Write as _;

use crate::catalog::thousands;
use crate::config::{ApiKeyLocation, DiscoveryMode};
use crate::spec::{HttpAuthScheme, SecurityScheme};

use super::{Description, Upstream};

/// Words of a title that say nothing about which API it is: "Swagger Petstore - OpenAPI
/// 3.0" is `petstore`, "GitHub v3 REST API" is `github`.
const NOISE: [&str; 9] = [
    "swagger",
    "openapi",
    "api",
    "apis",
    "rest",
    "restful",
    "spec",
    "specification",
    "official",
];

/// The longest name made from a title, in bytes (cut at a word).
const MAX_NAME: usize = 32;

/// The whole configuration file.
pub fn config(d: &Description) -> String {
    let mut out = String::new();
    header(d, &mut out);
    api_table(d, &mut out);
    tools_comment(d, &mut out);
    auth_section(d, &mut out);
    out
}

/// An API name from a title: its first run of words that are not [`NOISE`] or versions
/// (`v3`, `3.0`), lower-case ASCII joined by `_` ("GitHub's official OpenAPI spec + Octokit
/// extension" is `github`); `None` when there is no such word.
pub fn api_name(title: &str) -> Option<String> {
    let title = title.replace("'s", "").replace("\u{2019}s", "");
    let mut name = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
    {
        if NOISE.contains(&word.as_str()) || is_version(&word) {
            if name.is_empty() {
                continue;
            }
            break;
        }
        if !name.is_empty() && name.len() + 1 + word.len() > MAX_NAME {
            break;
        }
        if !name.is_empty() {
            name.push('_');
        }
        name.push_str(&word);
    }
    name.truncate(MAX_NAME);
    (!name.is_empty()).then_some(name)
}

/// `3`, `v3`, `v1beta`… : a version, not a name.
fn is_version(word: &str) -> bool {
    let digits = word.strip_prefix('v').unwrap_or(word);
    digits.starts_with(|c: char| c.is_ascii_digit())
}

/// True for a name `[apis.NAME]` accepts: `a-z`, `0-9`, `_` and `-`.
pub fn is_api_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Every environment variable the written configuration names, in file order.
pub fn env_names(d: &Description) -> Vec<String> {
    d.schemes
        .iter()
        .filter_map(|(scheme, declared)| credential(&d.name, scheme, declared))
        .flat_map(|keys| keys.into_iter().map(|(_, variable)| variable))
        .collect()
}

/// The `*_env` keys restmcp fills a declared scheme from, with the variable each names;
/// `None` for a scheme restmcp cannot fill from the environment.
fn credential(
    api: &str,
    scheme: &str,
    declared: &SecurityScheme,
) -> Option<Vec<(&'static str, String)>> {
    let base = env_base(api, scheme);
    let with = |suffix: &str| {
        if base.split('_').any(|word| word == suffix) {
            base.clone()
        } else {
            format!("{base}_{suffix}")
        }
    };
    Some(match declared {
        SecurityScheme::ApiKey { .. } => vec![("value_env", with("KEY"))],
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Bearer,
            ..
        } => vec![("token_env", with("TOKEN"))],
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Basic,
            ..
        } => vec![
            ("username_env", format!("{base}_USERNAME")),
            ("password_env", format!("{base}_PASSWORD")),
        ],
        SecurityScheme::OAuth2 { .. } => vec![
            ("client_id_env", format!("{base}_CLIENT_ID")),
            ("client_secret_env", format!("{base}_CLIENT_SECRET")),
        ],
        SecurityScheme::Unsupported { .. } => return None,
    })
}

/// `PETSTORE_API_KEY` for scheme `api_key` of API `petstore`: the API's name and the
/// scheme's, upper-case, words split at `_`, `-` and camelCase humps; a scheme whose name
/// starts with the API's (`petstore_auth`) does not repeat it.
pub fn env_base(api: &str, scheme: &str) -> String {
    let api = screaming(api);
    let scheme = screaming(scheme);
    let scheme = scheme
        .strip_prefix(&api)
        .filter(|rest| rest.is_empty() || rest.starts_with('_'))
        .map(|rest| rest.trim_start_matches('_').to_string())
        .unwrap_or(scheme);
    if scheme.is_empty() {
        api
    } else {
        format!("{api}_{scheme}")
    }
}

/// `bearerAuth` → `BEARER_AUTH`; anything but ASCII letters and digits separates words.
fn screaming(text: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_end_matches('_').to_string()
}

fn header(d: &Description, out: &mut String) {
    let title = if d.title.is_empty() {
        String::new()
    } else {
        format!(" for \"{}\"", one_line(&d.title))
    };
    let _ = writeln!(
        out,
        "# restmcp configuration{title}, written by `restmcp init`."
    );
    out.push_str(
        "# `restmcp check` reports how each operation became a tool. Every key is described in the\n\
         # restmcp book (docs/src/configuration.md); `restmcp schema config` prints their JSON Schema.\n",
    );
    let _ = writeln!(
        out,
        "# RESTMCP_* environment variables override this file (RESTMCP_APIS__{}__BASE_URL=…),\n\
         # and command-line flags override both.\n",
        d.name.to_ascii_uppercase().replace('-', "_")
    );
    out.push_str(
        "# [server]\n\
         # listen = \"127.0.0.1:8080\"   # `restmcp serve` answers MCP at http://127.0.0.1:8080/mcp\n\n",
    );
}

fn api_table(d: &Description, out: &mut String) {
    let _ = writeln!(out, "[apis.{}]", d.name);
    let _ = writeln!(out, "spec = {}", toml_string(&d.spec));
    match &d.upstream {
        Upstream::Given(url) => {
            let _ = writeln!(
                out,
                "base_url = {}   # given to restmcp init",
                toml_string(url)
            );
        }
        Upstream::Servers(url) => {
            let _ = writeln!(
                out,
                "base_url = {}   # from the description's servers",
                toml_string(url)
            );
        }
        Upstream::Unknown(server) => {
            let why = match server {
                Some(server) => format!(
                    "the description's server {} is not a usable URL",
                    toml_string(&one_line(server))
                ),
                None => "the description names no absolute server URL".to_string(),
            };
            let _ = writeln!(
                out,
                "# base_url = \"https://…\"   # {why}: set the API's address"
            );
            out.push_str(
                "mock = true   # until then, answer calls from the description itself (its examples, or\n\
                 \x20             # values made from its schemas); remove it once base_url is set\n",
            );
            return;
        }
    }
    if d.mock {
        out.push_str(
            "mock = true   # answer calls from the description itself (its examples, or values made\n\
             \x20             # from its schemas) instead of calling base_url; remove it to call the API\n",
        );
    } else {
        out.push_str(
            "# mock = true   # answer calls from the description itself (its examples, or values made\n\
             #               # from its schemas) instead of calling base_url; no credentials needed\n",
        );
    }
}

/// How many tools, what `discovery = "auto"` chose and why, and how to look at and shape
/// them.
fn tools_comment(d: &Description, out: &mut String) {
    let count = thousands(d.tools);
    let why = d
        .chosen
        .map(|choice| choice.reason())
        .unwrap_or_else(|| "as configured".to_string());
    out.push('\n');
    match d.discovery {
        DiscoveryMode::Search => {
            let _ = writeln!(
                out,
                "# {count} tools. discovery = \"auto\" (the default) serves them in search mode ({why}):\n\
                 # tools/list holds search_tools and call_tool, and the model finds the others through\n\
                 # them. Tools it should always see are listed too when pinned:"
            );
            let pinned = d.example_tool.as_deref().unwrap_or("TOOL");
            let _ = writeln!(out, "# pinned = [{}]", toml_string(pinned));
        }
        DiscoveryMode::Meta => {
            let _ = writeln!(
                out,
                "# {count} tools, found through list_operations, describe_operation and call_operation ({why})."
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "# {count} tools. discovery = \"auto\" (the default) lists all {count} ({why})."
            );
        }
    }
    out.push_str(
        "# discovery = \"search\"   # \"all\" lists every tool; \"search\" and \"meta\" let the model find\n\
         #                        # them (docs/src/large-apis.md)\n\
         # read_only = true       # only GET, HEAD, OPTIONS and TRACE operations become tools\n",
    );
    let _ = writeln!(
        out,
        "# overlays = [\"{}.overlay.yaml\"]   # rename, describe, hide or add tools (docs/src/shaping-tools.md)",
        d.name
    );
    let example = d.example_tool.as_deref().unwrap_or("TOOL");
    let _ = writeln!(
        out,
        "# `restmcp tools` lists the tools, `restmcp explain {example}` shows one and where each part\n\
         # of it came from, `restmcp check` how every operation was mapped."
    );
}

fn auth_section(d: &Description, out: &mut String) {
    out.push('\n');
    if d.schemes.is_empty() {
        let _ = writeln!(
            out,
            "# The description declares no security scheme. For an API that needs credentials all\n\
             # the same, add a scheme of the config's own, sent with every call (docs/src/authentication.md):\n\
             # [apis.{0}.auth.token]\n\
             # type = \"bearer\"\n\
             # token_env = \"{1}_TOKEN\"",
            d.name,
            screaming(&d.name)
        );
        return;
    }
    out.push_str(
        "# Credentials: one table per security scheme the description declares. Secrets never go\n\
         # here: each *_env key names the environment variable that holds one, read when restmcp\n\
         # starts (a missing or empty one stops it, naming it). They are sent only to base_url.\n\
         # While any table is set, a call that needs only schemes left out is refused before it is\n\
         # sent, naming the keys to set; with no table at all, calls go without credentials.\n\
         # (docs/src/authentication.md)\n",
    );
    if d.mock_written() {
        out.push_str("# In mock mode none of them is read.\n");
    }
    for (scheme, declared) in &d.schemes {
        out.push('\n');
        scheme_table(d, scheme, declared, out);
    }
}

fn scheme_table(d: &Description, scheme: &str, declared: &SecurityScheme, out: &mut String) {
    let table = format!("[apis.{}.auth.{}]", d.name, toml_key(scheme));
    let label = one_line(scheme);
    match credential(&d.name, scheme, declared) {
        Some(keys) => {
            let _ = writeln!(out, "# {label}: {}", describe(declared));
            out.push_str(&table);
            out.push('\n');
            for (key, variable) in keys {
                let _ = writeln!(out, "{key} = {}", toml_string(&variable));
            }
            if let SecurityScheme::OAuth2 { token_url, .. } = declared {
                let _ = writeln!(
                    out,
                    "# token_url = {}   # the description's; set it to use another, or when\n\
                     #                  # restmcp refuses that one (not https, or another site than base_url)",
                    toml_string(&one_line(token_url))
                );
            }
        }
        None => unsupported(d, scheme, declared, &table, out),
    }
}

/// A scheme restmcp cannot fill from the environment: what it is, and what to do instead.
fn unsupported(
    d: &Description,
    scheme: &str,
    declared: &SecurityScheme,
    table: &str,
    out: &mut String,
) {
    let label = one_line(scheme);
    let kind = declared.describe();
    let base = env_base(&d.name, scheme);
    if kind == "oauth2" {
        let _ = writeln!(
            out,
            "# {label}: oauth2 without a client credentials flow (a user logs in, by authorization\n\
             # code or implicit), which restmcp cannot do by itself. If the authorization server grants\n\
             # restmcp a client of its own (client credentials), uncomment this and set token_url:\n\
             # {table}\n\
             # client_id_env = \"{base}_CLIENT_ID\"\n\
             # client_secret_env = \"{base}_CLIENT_SECRET\"\n\
             # token_url = \"https://…/token\"\n\
             # To call the API as the MCP client's user, exchange their token for one (token_exchange):\n\
             # \"Acting for the user\" in docs/src/authentication.md."
        );
    } else if kind == "openIdConnect" {
        let _ = writeln!(
            out,
            "# {label}: OpenID Connect, which restmcp cannot log in with by itself. To send a token you\n\
             # hold, add a scheme of the config's own (sent with every call):\n\
             # [apis.{0}.auth.token]\n\
             # type = \"bearer\"\n\
             # token_env = \"{base}_TOKEN\"\n\
             # To call the API as the MCP client's user, see \"Acting for the user\" in\n\
             # docs/src/authentication.md.",
            d.name
        );
    } else {
        let _ = writeln!(
            out,
            "# {label}: {}, which restmcp cannot send. Operations that accept only it are refused\n\
             # while other schemes are configured; see docs/src/authentication.md.",
            one_line(&kind)
        );
    }
}

/// What a scheme the environment fills is, for its comment.
fn describe(declared: &SecurityScheme) -> String {
    match declared {
        SecurityScheme::ApiKey { name, location } => {
            let place = match location {
                ApiKeyLocation::Header => "header",
                ApiKeyLocation::Query => "query parameter",
                ApiKeyLocation::Cookie => "cookie",
            };
            format!("an API key, sent in the {place} \"{}\"", one_line(name))
        }
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Bearer,
            ..
        } => "a bearer token, sent as Authorization: Bearer".into(),
        SecurityScheme::Http {
            scheme: HttpAuthScheme::Basic,
            ..
        } => "a user name and password, sent as Authorization: Basic".into(),
        SecurityScheme::OAuth2 { .. } => {
            "oauth2 client credentials: restmcp gets (and renews) tokens with this client".into()
        }
        SecurityScheme::Unsupported { kind } => one_line(kind),
    }
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key: bare when it can be, else quoted.
pub fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_string()
    } else {
        toml_string(key)
    }
}

/// Text that may stand in a comment (or one line of output): control characters, which
/// TOML comments may not hold, become spaces.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}
