//! Packaging: the Kubernetes example in `deploy/kubernetes` and the `Dockerfile`
//! are wired to what restmcp actually reads. The ConfigMap's config loads and builds tools,
//! the probes hit `/healthz` and `/readyz` on `server.listen`'s port, every variable the
//! config names comes from a Secret key that exists, `--config` points into the mounted
//! ConfigMap, and the image runs `restmcp serve` as a non-root user.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser as _;
use restmcp::cli::args::{Cli, Command as Subcommand};
use restmcp::config::{Config, Overrides};
use restmcp::upstream::Authenticator;
use serde_json::Value;

use crate::support::runtime;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kubernetes_dir() -> PathBuf {
    repo().join("deploy/kubernetes")
}

/// Every YAML document of every `.yaml` file in `deploy/kubernetes`, by file name.
fn manifest_files() -> BTreeMap<String, Vec<Value>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(kubernetes_dir()).expect("deploy/kubernetes exists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read manifest");
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"));
        let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
        assert!(!documents.is_empty(), "{name} has no document");
        files.insert(name, documents);
    }
    files
}

/// The Kubernetes objects (everything but the kustomization).
struct Manifests {
    objects: Vec<Value>,
}

impl Manifests {
    fn load() -> Manifests {
        let objects = manifest_files()
            .into_iter()
            .filter(|(name, _)| name != "kustomization.yaml")
            .flat_map(|(_, documents)| documents)
            .collect();
        Manifests { objects }
    }

    /// The one object of `kind`.
    fn one(&self, kind: &str) -> &Value {
        let found: Vec<&Value> = self.objects.iter().filter(|o| o["kind"] == kind).collect();
        assert_eq!(found.len(), 1, "expected exactly one {kind}");
        found[0]
    }

    fn named(&self, kind: &str, name: &str) -> &Value {
        self.objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} named {name} in deploy/kubernetes"))
    }

    fn pod_spec(&self) -> &Value {
        &self.one("Deployment")["spec"]["template"]["spec"]
    }

    /// The container running restmcp (its image names restmcp).
    fn restmcp(&self) -> &Value {
        let containers = self.pod_spec()["containers"]
            .as_array()
            .expect("containers");
        let found: Vec<&Value> = containers
            .iter()
            .filter(|c| str_of(&c["image"]).contains("restmcp"))
            .collect();
        assert_eq!(found.len(), 1, "expected one restmcp container");
        found[0]
    }
}

fn str_of(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("expected a string, found {value}"))
}

/// The restmcp command line the container runs (image entrypoint `restmcp`, then `args`).
fn container_cli(container: &Value) -> Cli {
    assert!(
        container.get("command").is_none(),
        "the restmcp container should keep the image's entrypoint"
    );
    let mut argv = vec!["restmcp".to_string()];
    if let Some(args) = container["args"].as_array() {
        argv.extend(args.iter().map(|a| str_of(a).to_string()));
    }
    Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("restmcp rejects {argv:?}: {e}"))
}

/// The ConfigMap's files laid out in `root` as the pod mounts them; returns the path of the
/// config file `--config` names.
fn mount_config(manifests: &Manifests, root: &Path) -> PathBuf {
    let container = manifests.restmcp();
    let config_path = container_cli(container).global.config;
    assert!(
        config_path.is_absolute(),
        "--config should be absolute: {config_path:?}"
    );
    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let mount = mounts
        .iter()
        .find(|m| config_path.parent() == Some(Path::new(str_of(&m["mountPath"]))))
        .unwrap_or_else(|| panic!("no volume is mounted where --config {config_path:?} is"));
    assert!(
        mount.get("subPath").is_none(),
        "a subPath mount is never updated, so reload would not see ConfigMap changes"
    );
    let volumes = manifests.pod_spec()["volumes"].as_array().expect("volumes");
    let volume = volumes
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap_or_else(|| panic!("no volume named {}", mount["name"]));
    let config_map = manifests.named("ConfigMap", str_of(&volume["configMap"]["name"]));
    let data = config_map["data"].as_object().expect("ConfigMap data");
    // Without `items`, every key becomes a file of its own name.
    let files: Vec<(String, String)> = match volume["configMap"]["items"].as_array() {
        Some(items) => items
            .iter()
            .map(|i| (str_of(&i["key"]).into(), str_of(&i["path"]).into()))
            .collect(),
        None => data.keys().map(|k| (k.clone(), k.clone())).collect(),
    };
    let dir = root.join(config_path.parent().unwrap().strip_prefix("/").unwrap());
    for (key, path) in files {
        let content = str_of(
            data.get(&key)
                .unwrap_or_else(|| panic!("ConfigMap has no key {key}")),
        );
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).expect("mkdir");
        std::fs::write(target, content).expect("write");
    }
    root.join(config_path.strip_prefix("/").unwrap())
}

fn load_mounted_config(manifests: &Manifests) -> (tempfile::TempDir, Config) {
    let root = tempfile::tempdir().expect("tempdir");
    let path = mount_config(manifests, root.path());
    let config = Config::load(&path, &Overrides::default())
        .unwrap_or_else(|e| panic!("the ConfigMap's config does not load: {e}"));
    (root, config)
}

#[test]
fn kustomization_lists_every_manifest() {
    let files = manifest_files();
    let kustomization = &files["kustomization.yaml"][0];
    let mut listed: Vec<&str> = kustomization["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(str_of)
        .collect();
    listed.sort();
    let present: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|n| *n != "kustomization.yaml")
        .collect();
    assert_eq!(listed, present);
    for (name, documents) in &files {
        for document in documents {
            assert!(
                document["apiVersion"].is_string() && document["kind"].is_string(),
                "{name}: a document without apiVersion and kind"
            );
        }
    }
}

#[test]
fn the_configmap_config_loads_and_builds_tools_from_the_shipped_spec() {
    let manifests = Manifests::load();
    let (_root, config) = load_mounted_config(&manifests);
    assert!(
        config.reload.enabled,
        "ConfigMap updates should be reloaded"
    );
    assert!(!config.apis.is_empty());
    for (name, api) in &config.apis {
        assert!(!api.mock, "apis.{name} is mocked in the deployment example");
        assert!(api.spec.is_some(), "apis.{name} has no spec");
    }
    let loaded = runtime()
        .block_on(restmcp::load::load(&config))
        .unwrap_or_else(|e| panic!("the shipped spec does not load: {e}"));
    assert!(loaded.catalog.len() >= 4, "{}", loaded.report.render());
    assert_eq!(loaded.report.skipped(), 0, "{}", loaded.report.render());
}

/// A container port given by number or by name.
fn port_number(container: &Value, port: &Value) -> u64 {
    if let Some(number) = port.as_u64() {
        return number;
    }
    let name = str_of(port);
    container["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or_else(|| panic!("the container has no port named {name}"))
}

#[test]
fn the_sidecar_listens_probes_and_is_reachable_where_the_config_says() {
    let manifests = Manifests::load();
    let (_root, config) = load_mounted_config(&manifests);
    let container = manifests.restmcp();
    assert!(
        matches!(
            container_cli(container).command,
            None | Some(Subcommand::Serve)
        ),
        "the restmcp container should run `restmcp serve`"
    );
    let listen: SocketAddr = config.server.listen.parse().expect("server.listen");
    assert!(
        listen.ip().is_unspecified(),
        "server.listen {listen} is not reachable from the kubelet or the Service"
    );
    assert!(
        container["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .any(|p| p["containerPort"].as_u64() == Some(listen.port().into())),
        "no containerPort {}",
        listen.port()
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert_eq!(
            port_number(container, &get["port"]),
            u64::from(listen.port()),
            "{probe} port"
        );
    }

    let deployment = manifests.one("Deployment");
    let grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .unwrap_or(30);
    assert!(
        grace > config.server.shutdown_grace_seconds,
        "terminationGracePeriodSeconds {grace} must exceed server.shutdown_grace_seconds {}",
        config.server.shutdown_grace_seconds
    );

    let service = manifests.one("Service");
    let pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .expect("pod labels");
    for (key, value) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(pod_labels.get(key), Some(value), "Service selector {key}");
    }
    assert!(
        service["spec"]["ports"]
            .as_array()
            .expect("Service ports")
            .iter()
            .any(|p| port_number(container, &p["targetPort"]) == u64::from(listen.port())),
        "the Service does not target the MCP port"
    );
    let service_name = str_of(&service["metadata"]["name"]);
    assert!(
        config.server.allowed_hosts.is_empty()
            || config
                .server
                .allowed_hosts
                .iter()
                .any(|h| h == service_name),
        "clients using the Service name {service_name} would get 403: not in server.allowed_hosts {:?}",
        config.server.allowed_hosts
    );

    let security = &container["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert!(
        security["capabilities"]["drop"]
            .as_array()
            .is_some_and(|d| d.iter().any(|c| c == "ALL")),
        "capabilities are not all dropped"
    );
}

#[test]
fn every_variable_the_config_reads_comes_from_a_secret_key_that_exists() {
    let manifests = Manifests::load();
    let (_root, config) = load_mounted_config(&manifests);
    let mut needed: Vec<(String, String)> = Vec::new();
    let auth = config
        .server
        .auth
        .as_ref()
        .expect("the example requires a token on /mcp");
    for name in &auth.tokens_env {
        needed.push(("server.auth.tokens_env".into(), name.clone()));
    }
    for (api_name, api) in &config.apis {
        for (scheme, credential) in &api.auth {
            for (key, name) in credential.env_keys() {
                needed.push((format!("apis.{api_name}.auth.{scheme}.{key}"), name.into()));
            }
        }
    }
    assert!(needed.len() >= 2, "{needed:?}");
    let env = manifests.restmcp()["env"].as_array().expect("env");
    // The container's environment as the kubelet resolves it from the Secrets.
    let mut resolved: BTreeMap<String, String> = BTreeMap::new();
    for (key, name) in needed {
        let entry = env
            .iter()
            .find(|e| e["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{key} names {name}, which the container does not set"));
        let reference = &entry["valueFrom"]["secretKeyRef"];
        assert!(
            reference.is_object(),
            "{name} ({key}) is not taken from a Secret"
        );
        let secret = manifests.named("Secret", str_of(&reference["name"]));
        let secret_key = str_of(&reference["key"]);
        let value = secret["stringData"]
            .get(secret_key)
            .or_else(|| secret["data"].get(secret_key))
            .unwrap_or_else(|| {
                panic!(
                    "{name} ({key}) refers to key {secret_key}, which Secret {} lacks",
                    secret["metadata"]["name"]
                )
            });
        resolved.insert(name, str_of(value).into());
    }
    // With that environment, the upstream credentials start: every configured scheme is
    // one the spec declares (or has a `type`) and every variable is set.
    let loaded = runtime()
        .block_on(restmcp::load::load(&config))
        .expect("the spec loads");
    if let Err(e) = Authenticator::new(&loaded.catalog, &config, |name| resolved.get(name).cloned())
    {
        panic!("the upstream credentials do not start: {e}");
    }
}

/// One stage of the Dockerfile: its base image and its instructions (continuation lines
/// joined, comments dropped), as (INSTRUCTION, rest).
struct Stage {
    from: String,
    instructions: Vec<(String, String)>,
}

fn dockerfile_stages() -> Vec<Stage> {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).expect("Dockerfile");
    let mut logical: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stages: Vec<Stage> = Vec::new();
    for line in logical {
        let (instruction, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let instruction = instruction.to_ascii_uppercase();
        let rest = rest.trim().to_string();
        if instruction == "FROM" {
            stages.push(Stage {
                from: rest.split_whitespace().next().unwrap_or_default().into(),
                instructions: Vec::new(),
            });
        } else if let Some(stage) = stages.last_mut() {
            stage.instructions.push((instruction, rest));
        }
    }
    stages
}

impl Stage {
    fn last(&self, instruction: &str) -> Option<&str> {
        self.instructions
            .iter()
            .rev()
            .find(|(i, _)| i == instruction)
            .map(|(_, rest)| rest.as_str())
    }

    fn all<'a>(&'a self, instruction: &'a str) -> impl Iterator<Item = &'a str> {
        self.instructions
            .iter()
            .filter(move |(i, _)| i == instruction)
            .map(|(_, rest)| rest.as_str())
    }

    /// `ENV K=V K2=V2` (values without spaces) and `ENV K V`.
    fn env(&self) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        for rest in self.all("ENV") {
            if !rest.contains('=')
                || rest
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| !w.contains('='))
            {
                let (key, value) = rest.split_once(char::is_whitespace).expect("ENV K V");
                vars.push((key.into(), value.trim().trim_matches('"').into()));
                continue;
            }
            for pair in rest.split_whitespace() {
                let (key, value) = pair.split_once('=').expect("ENV K=V");
                vars.push((key.into(), value.trim_matches('"').into()));
            }
        }
        vars
    }
}

/// An exec-form (JSON array) ENTRYPOINT or CMD.
fn exec_form(stage: &Stage, instruction: &str) -> Vec<String> {
    let Some(rest) = stage.last(instruction) else {
        return Vec::new();
    };
    serde_json::from_str(rest).unwrap_or_else(|e| {
        panic!("{instruction} {rest} is not the exec form (a JSON array; there is no shell): {e}")
    })
}

#[test]
fn the_image_runs_restmcp_serve_as_a_non_root_user() {
    let stages = dockerfile_stages();
    let last = stages.last().expect("a FROM");
    let user = last.last("USER").expect("the final stage sets USER");
    let uid = user.split(':').next().unwrap();
    assert!(
        !matches!(uid, "root" | "0") && uid.parse::<u32>().is_ok(),
        "USER {user} should be a numeric non-root user (runAsNonRoot can only verify numbers)"
    );

    let entrypoint = exec_form(last, "ENTRYPOINT");
    let argv: Vec<String> = entrypoint
        .iter()
        .chain(&exec_form(last, "CMD"))
        .cloned()
        .collect();
    let binary = argv.first().expect("an ENTRYPOINT");
    assert_eq!(
        Path::new(binary).file_name().and_then(|n| n.to_str()),
        Some("restmcp")
    );
    assert!(
        last.all("COPY")
            .any(|copy| copy.starts_with("--from=") && copy.ends_with(&format!(" {binary}"))),
        "no COPY --from=… puts the binary at {binary}"
    );
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    assert!(
        matches!(cli.command, None | Some(Subcommand::Serve)),
        "{argv:?} is not `restmcp serve`"
    );

    let env = last.env();
    let listen = env
        .iter()
        .find(|(k, _)| k == "RESTMCP_SERVER__LISTEN")
        .map(|(_, v)| v.parse::<SocketAddr>().expect("RESTMCP_SERVER__LISTEN"))
        .expect("the image sets RESTMCP_SERVER__LISTEN (the default is loopback)");
    assert!(listen.ip().is_unspecified(), "{listen}");
    assert!(
        last.all("EXPOSE").any(|e| e
            .split_whitespace()
            .any(|p| p.trim_end_matches("/tcp") == listen.port().to_string())),
        "port {} is not EXPOSEd",
        listen.port()
    );
    assert!(
        stages[..stages.len() - 1]
            .iter()
            .any(|s| s.from.contains("alpine") || s.all("RUN").any(|r| r.contains("musl"))),
        "the binary should be built against musl, to run in a static image"
    );
}

/// The final stage's files copied from the build context, laid out under a temporary root
/// as the image has them, and `restmcp check` run there with the image's environment and
/// default config (the image's WORKDIR): what `docker run IMAGE check` would do.
#[test]
fn the_image_layout_and_environment_load_the_shipped_config() {
    let stages = dockerfile_stages();
    let last = stages.last().expect("a FROM");
    let workdir = last.last("WORKDIR").expect("a WORKDIR");
    assert!(workdir.starts_with('/'), "WORKDIR {workdir}");
    let root = tempfile::tempdir().expect("tempdir");
    let inside = |path: &str| -> PathBuf {
        let absolute = if path.starts_with('/') {
            PathBuf::from(path)
        } else {
            Path::new(workdir).join(path)
        };
        root.path().join(absolute.strip_prefix("/").unwrap())
    };
    std::fs::create_dir_all(inside(".")).expect("workdir");
    for copy in last.all("COPY").filter(|c| !c.starts_with("--from=")) {
        let words: Vec<&str> = copy
            .split_whitespace()
            .filter(|w| !w.starts_with("--"))
            .collect();
        let (destination, sources) = words.split_last().expect("COPY SRC DEST");
        for source in sources {
            let from = repo().join(source);
            let to = if destination.ends_with('/') || sources.len() > 1 {
                inside(destination).join(Path::new(source).file_name().unwrap())
            } else {
                inside(destination)
            };
            copy_tree(&from, &to);
        }
    }
    let mut command = Command::new(env!("CARGO_BIN_EXE_restmcp"));
    command.arg("check").current_dir(inside("."));
    for (key, _) in std::env::vars() {
        if key.starts_with("RESTMCP_") {
            command.env_remove(key);
        }
    }
    command.envs(last.env());
    let output = command.output().expect("restmcp runs");
    assert!(
        output.status.success(),
        "restmcp check in the image's WORKDIR failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir") {
            let entry = entry.expect("entry");
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).expect("mkdir");
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
}
