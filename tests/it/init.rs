//! `restmcp init` from the command line: the file it writes for the shipped Petstore and for
//! GitHub's description (which `discovery = "auto"` serves in search mode), its refusals
//! (an existing file, a description that does not load) and the client snippets.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::shared_spec;

fn restmcp(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_restmcp"))
        .args(args)
        .current_dir(dir)
        .env_remove("RESTMCP_CONFIG")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run restmcp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn petstore() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("specs/petstore.yaml")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn init_writes_a_config_for_the_petstore_that_check_passes_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = petstore();
    let out = restmcp(
        dir.path(),
        &["init", "--spec", &spec, "-c", "conf/petstore.toml"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("19 of 19 operations mapped"),
        "the check report: {stdout}"
    );
    assert!(
        stdout.contains("restmcp -c conf/petstore.toml serve"),
        "{stdout}"
    );
    let config = dir.path().join("conf/petstore.toml");
    let written = std::fs::read_to_string(&config).expect("written");
    let check = restmcp(dir.path(), &["check", "-c", "conf/petstore.toml"]);
    assert!(check.status.success(), "{}", text(&check.stderr));

    let again = restmcp(
        dir.path(),
        &[
            "init",
            "--spec",
            &spec,
            "-c",
            "conf/petstore.toml",
            "--name",
            "other",
        ],
    );
    assert!(!again.status.success());
    let stderr = text(&again.stderr);
    assert!(
        stderr.contains("conf/petstore.toml already exists"),
        "{stderr}"
    );
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).expect("kept"), written);

    let forced = restmcp(
        dir.path(),
        &[
            "init",
            "--spec",
            &spec,
            "-c",
            "conf/petstore.toml",
            "--name",
            "other",
            "--force",
        ],
    );
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert!(
        std::fs::read_to_string(&config)
            .expect("replaced")
            .contains("[apis.other]")
    );
}

#[test]
fn a_description_that_does_not_load_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("broken.yaml"), "openapi: 3.0.3\npaths: [\n").expect("write");
    let out = restmcp(dir.path(), &["init", "--spec", "broken.yaml"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("broken.yaml"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("config.toml").exists());
}

#[test]
fn init_needs_a_spec_or_a_client_and_a_client_needs_a_config() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = restmcp(dir.path(), &["init"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--spec FILE|URL"),
        "{}",
        text(&out.stderr)
    );
    let out = restmcp(dir.path(), &["init", "--client", "cursor"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("restmcp init --spec"),
        "{}",
        text(&out.stderr)
    );
    let out = restmcp(dir.path(), &["init", "--client", "emacs"]);
    assert!(!out.status.success());
}

#[test]
fn client_snippets_name_the_binary_the_config_and_every_variable_it_reads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = petstore();
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[server.auth]\ntokens_env = [\"MCP_TOKEN\"]\n\n[apis.one]\nspec = {spec:?}\nmock = true\n\n\
             [apis.one.auth.api_key]\nvalue_env = \"ONE_KEY\"\n\n[apis.two]\nspec = {spec:?}\nmock = true\nprefix = \"two_\"\n"
        ),
    )
    .expect("write");
    let config = std::fs::canonicalize(dir.path().join("config.toml")).expect("config");
    let args = json!(["stdio", "--config", config.to_string_lossy()]);
    let env = json!({"MCP_TOKEN": "<value>", "ONE_KEY": "<value>"});
    for (client, servers, typed) in [
        ("claude-desktop", "mcpServers", false),
        ("cursor", "mcpServers", false),
        ("vscode", "servers", true),
    ] {
        let out = restmcp(dir.path(), &["init", "--client", client]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let snippet: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let server = &snippet[servers]["restmcp"];
        assert_eq!(server["args"], args, "{client}: {snippet}");
        assert_eq!(server["env"], env, "{client}: {snippet}");
        assert_eq!(server["type"] == "stdio", typed, "{client}: {snippet}");
        assert!(
            Path::new(server["command"].as_str().expect("command")).is_absolute(),
            "{snippet}"
        );
        assert!(
            text(&out.stderr).contains("<value>"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = restmcp(dir.path(), &["init", "--client", "claude-code"]);
    let command = text(&out.stdout);
    assert!(
        command.starts_with(
            "claude mcp add --transport stdio --env MCP_TOKEN=\"$MCP_TOKEN\" --env ONE_KEY=\"$ONE_KEY\" restmcp -- /"
        ),
        "{command}"
    );
    assert!(
        command
            .trim_end()
            .ends_with(&format!("stdio --config {}", config.display())),
        "{command}"
    );
}

#[test]
fn githubs_description_gets_a_config_served_in_search_mode() {
    let Some(spec) = shared_spec("real/github.json") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let out = restmcp(dir.path(), &["init", "--spec", &spec.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(dir.path().join("config.toml")).expect("written");
    assert!(written.contains("[apis.github]\n"), "{written}");
    assert!(
        written
            .contains("base_url = \"https://api.github.com\"   # from the description's servers"),
        "{written}"
    );
    assert!(
        written.contains("discovery = \"auto\" (the default) serves them in search mode (≈ "),
        "{written}"
    );
    assert!(
        written.contains("over tools.auto_budget_tokens (25,000)"),
        "{written}"
    );
    assert!(written.contains("# pinned = [\""), "{written}");
    assert!(
        text(&out.stdout).contains("\"auto\" chose \"search\""),
        "{}",
        text(&out.stdout)
    );
}
