//! Where a spec's documents may come from, and how one is read (the book's Security
//! model, `docs/src/security.md`: "`$ref`s and spec fetching stay in their place").
//!
//! The operator names the root spec (a file or URL); that location is trusted. Everything
//! the spec references is not: [`Place`] admits a `$ref`'d file only under the root's
//! directory (or `loading.ref_dirs`), after symlinks are resolved, and never from a spec
//! fetched over HTTP; a `$ref`'d URL only at the root's origin (or `loading.ref_origins`),
//! and never at a loopback, link-local, private or unspecified address (checked on the
//! resolved address, redirects included) unless it is the root's own origin or
//! `loading.allow_private_addresses` is set. Files are read only if they are regular files,
//! opened without blocking (a FIFO never wedges a load); every document is read to at most
//! `loading.max_document_bytes`, and one API's documents together to `loading.max_api_bytes`.

use std::io::Read as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use figment::value::magic::RelativePathBuf;
use url::Url;

use crate::config::{
    DEFAULT_MAX_API_BYTES, DEFAULT_MAX_DOCUMENT_BYTES, LoadingSettings, parse_origin,
};

use super::parse::DEFAULT_ALIAS_VALUES;

/// The operator's limits and loosenings for loading specs (`[loading]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadPolicy {
    /// The largest single document, in bytes.
    pub max_document_bytes: u64,
    /// The most bytes all documents of one API may have together.
    pub max_api_bytes: u64,
    /// The most values YAML aliases may add across all documents of one API.
    pub max_yaml_alias_values: u64,
    /// Origins (`scheme://host:port`) refs may reach besides the root spec's own.
    pub ref_origins: Vec<String>,
    /// Whether refs may reach loopback, link-local, private and unspecified addresses.
    pub allow_private_addresses: bool,
    /// Directories file refs may read from besides the root spec's directory.
    pub ref_dirs: Vec<PathBuf>,
}

impl Default for LoadPolicy {
    fn default() -> Self {
        LoadPolicy {
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_api_bytes: DEFAULT_MAX_API_BYTES,
            max_yaml_alias_values: DEFAULT_ALIAS_VALUES,
            ref_origins: Vec::new(),
            allow_private_addresses: false,
            ref_dirs: Vec::new(),
        }
    }
}

impl LoadPolicy {
    /// The policy the `[loading]` settings ask for (origins normalized, directories resolved).
    pub fn from_settings(settings: &LoadingSettings) -> LoadPolicy {
        LoadPolicy {
            max_document_bytes: settings.max_document_bytes,
            max_api_bytes: settings.max_api_bytes,
            max_yaml_alias_values: settings.max_yaml_alias_values,
            ref_origins: settings
                .ref_origins
                .iter()
                .filter_map(|o| parse_origin(o).ok())
                .collect(),
            allow_private_addresses: settings.allow_private_addresses,
            ref_dirs: settings
                .ref_dirs
                .iter()
                .map(RelativePathBuf::relative)
                .collect(),
        }
    }
}

/// One load's view of the policy: the root's place, and the bytes read so far.
pub(super) struct Place {
    policy: LoadPolicy,
    /// The root's origin when it was fetched over HTTP.
    root_origin: Option<String>,
    /// Canonical directories file refs may read from.
    dirs: Vec<PathBuf>,
    /// Origins refs may reach.
    origins: Vec<String>,
    client: Option<reqwest::Client>,
    read_total: u64,
}

impl Place {
    pub(super) fn new(policy: &LoadPolicy, root: &Url) -> Place {
        let mut dirs = Vec::new();
        let mut origins = policy.ref_origins.clone();
        let mut root_origin = None;
        match root.scheme() {
            "file" => {
                if let Some(dir) = root.to_file_path().ok().as_deref().and_then(Path::parent)
                    && let Ok(dir) = dir.canonicalize()
                {
                    dirs.push(dir);
                }
            }
            _ => {
                let origin = root.origin().ascii_serialization();
                origins.push(origin.clone());
                root_origin = Some(origin);
            }
        }
        dirs.extend(policy.ref_dirs.iter().filter_map(|d| d.canonicalize().ok()));
        Place {
            policy: policy.clone(),
            root_origin,
            dirs,
            origins,
            client: None,
            read_total: 0,
        }
    }

    /// Whether `target`, referenced from the document at `from`, may be read; `Err` says
    /// why not. Nothing is read or fetched here beyond resolving a path's symlinks.
    pub(super) fn admit(&self, from: &Url, target: &Url) -> Result<(), String> {
        match target.scheme() {
            "file" => {
                if from.scheme() != "file" {
                    return Err(
                        "a spec fetched over HTTP may not reference local files".to_string()
                    );
                }
                let path = target
                    .to_file_path()
                    .map_err(|_| "not a local file path".to_string())?;
                let canonical = path.canonicalize().map_err(|e| e.to_string())?;
                if ["/proc", "/sys", "/dev"]
                    .iter()
                    .any(|system| canonical.starts_with(system))
                {
                    return Err(format!("{} is not a regular file", canonical.display()));
                }
                if !self.dirs.iter().any(|dir| canonical.starts_with(dir)) {
                    let dir = self
                        .dirs
                        .first()
                        .map_or_else(|| "?".to_string(), |d| d.display().to_string());
                    return Err(format!(
                        "refused: {} is outside the spec's directory {dir} \
                         (loading.ref_dirs can allow another directory)",
                        canonical.display()
                    ));
                }
                Ok(())
            }
            "http" | "https" => {
                let origin = target.origin().ascii_serialization();
                if !self.origins.contains(&origin) {
                    return Err(format!(
                        "refused: {origin} is not the spec's own origin \
                         (loading.ref_origins can allow it)"
                    ));
                }
                self.check_literal(target)
            }
            other => Err(format!("refused: unsupported URL scheme {other:?}")),
        }
    }

    /// A URL whose host is an IP address is refused if that address is private (DNS names
    /// are checked when they are resolved).
    fn check_literal(&self, url: &Url) -> Result<(), String> {
        check_literal(
            url,
            self.policy.allow_private_addresses,
            self.root_origin.as_deref(),
        )
    }

    /// Reads one document, the root or an admitted one, within the size caps.
    pub(super) async fn read(&mut self, url: &Url) -> Result<Vec<u8>, String> {
        let remaining = self.policy.max_api_bytes.saturating_sub(self.read_total);
        let (cap, too_large) = if remaining < self.policy.max_document_bytes {
            let problem = format!(
                "refused: this API's documents together are larger than {} bytes \
                 (raise loading.max_api_bytes)",
                self.policy.max_api_bytes
            );
            (remaining, problem)
        } else {
            let cap = self.policy.max_document_bytes;
            let problem =
                format!("refused: larger than {cap} bytes (raise loading.max_document_bytes)");
            (cap, problem)
        };
        let bytes = match url.scheme() {
            "file" => {
                let path = url
                    .to_file_path()
                    .map_err(|_| "not a local file path".to_string())?;
                tokio::task::spawn_blocking(move || read_regular_file(&path, cap))
                    .await
                    .map_err(|e| e.to_string())??
            }
            "http" | "https" => {
                self.check_literal(url)?;
                let client = self.client()?;
                fetch(&client, url, cap).await?
            }
            other => return Err(format!("unsupported URL scheme {other:?}")),
        };
        if bytes.len() as u64 > cap {
            return Err(too_large);
        }
        self.read_total += bytes.len() as u64;
        Ok(bytes)
    }

    fn client(&mut self) -> Result<reqwest::Client, String> {
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        let client = fetch_client(
            self.origins.clone(),
            self.root_origin.clone(),
            self.policy.allow_private_addresses,
        )?;
        self.client = Some(client.clone());
        Ok(client)
    }
}

fn check_literal(url: &Url, allow_private: bool, root_origin: Option<&str>) -> Result<(), String> {
    if allow_private || root_origin == Some(url.origin().ascii_serialization().as_str()) {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(()),
    };
    if is_private(ip) {
        return Err(private_refused(&ip.to_string()));
    }
    Ok(())
}

fn private_refused(what: &str) -> String {
    format!(
        "refused: {what} is a loopback, link-local, private or unspecified address \
         (loading.allow_private_addresses can allow it)"
    )
}

/// Loopback, unspecified, private (RFC 1918, unique local), link-local, shared (CGNAT),
/// broadcast and multicast addresses: what a spec must not make restmcp call.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_unspecified()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Opens `path` without blocking (a FIFO opens at once), checks that what was opened is a
/// regular file, and reads at most `cap + 1` bytes of it. The buffer is sized from the
/// file's length first: grown by doubling instead, a 13 MB file took a 16 MB buffer and,
/// while it was copied, 24 MB (GitHub's spec: 34 MB resident after the read, 25 MB so).
pub(crate) fn read_regular_file(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let mut file = open_regular(path).map_err(|e| e.to_string())?;
    let length = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(usize::try_from(length.min(cap)).unwrap_or(0));
    (&mut file)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Opens a file for reading only if it is a regular file, without ever blocking on a FIFO
/// or device: the file is opened non-blocking and the opened file's own metadata decides.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO, device, socket or directory)",
        ));
    }
    Ok(file)
}

async fn fetch(client: &reqwest::Client, url: &Url, cap: u64) -> Result<Vec<u8>, String> {
    let mut response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| crate::http_client::describe_error(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| crate::http_client::describe_error(&e))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > cap {
            break;
        }
    }
    Ok(bytes)
}

/// A client for one load: redirects only to the allowed origins, and names resolved only
/// to addresses the policy allows (the root's own host may be anything: the operator
/// named it).
fn fetch_client(
    origins: Vec<String>,
    root_origin: Option<String>,
    allow_private: bool,
) -> Result<reqwest::Client, String> {
    crate::http_client::install_crypto_provider();
    let root_host = root_origin
        .as_deref()
        .and_then(|o| Url::parse(o).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    let redirect_root = root_origin.clone();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > 10 {
            return attempt.error("more than 10 redirects");
        }
        let origin = attempt.url().origin().ascii_serialization();
        if !origins.contains(&origin) {
            let problem = format!(
                "refused: a redirect to {origin}, which is not the spec's own origin \
                 (loading.ref_origins can allow it)"
            );
            return attempt.error(problem);
        }
        if let Err(problem) = check_literal(attempt.url(), allow_private, redirect_root.as_deref())
        {
            return attempt.error(problem);
        }
        attempt.follow()
    });
    reqwest::Client::builder()
        .user_agent(crate::http_client::USER_AGENT)
        // A proxy would resolve names itself, past the address check below.
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .redirect(policy)
        .dns_resolver(Arc::new(CheckedResolver {
            allow_private,
            root_host,
        }))
        .build()
        .map_err(|e| format!("cannot start the HTTP client: {e}"))
}

/// Resolves names with the system resolver, refusing private addresses.
struct CheckedResolver {
    allow_private: bool,
    root_host: Option<String>,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let exempt = self.allow_private || self.root_host.as_deref() == Some(host.as_str());
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !exempt && let Some(private) = addrs.iter().find(|a| is_private(a.ip())) {
                let problem = private_refused(&format!("{host} ({})", private.ip()));
                return Err(problem.into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_recognized() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(private.parse().expect("ip")), "{private}");
        }
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_private(public.parse().expect("ip")), "{public}");
        }
    }

    #[test]
    fn refs_stay_under_the_root_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec_dir = dir.path().join("spec");
        std::fs::create_dir(&spec_dir).expect("mkdir");
        std::fs::write(spec_dir.join("a.yaml"), "a: 1").expect("write");
        std::fs::write(dir.path().join("secret"), "s").expect("write");
        let root = Url::from_file_path(spec_dir.join("api.yaml")).expect("url");
        let place = Place::new(&LoadPolicy::default(), &root);
        assert!(
            place
                .admit(&root, &root.join("a.yaml").expect("url"))
                .is_ok()
        );
        let outside = root.join("../secret").expect("url");
        let problem = place.admit(&root, &outside).unwrap_err();
        assert!(
            problem.contains("outside the spec's directory"),
            "{problem}"
        );
        assert!(problem.contains("loading.ref_dirs"), "{problem}");
        let http = Url::parse("http://127.0.0.1:9/api.yaml").expect("url");
        let problem = place.admit(&root, &http).unwrap_err();
        assert!(problem.contains("loading.ref_origins"), "{problem}");
        let policy = LoadPolicy {
            ref_dirs: vec![dir.path().to_path_buf()],
            ..LoadPolicy::default()
        };
        assert!(Place::new(&policy, &root).admit(&root, &outside).is_ok());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let error = open_regular(&fifo).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
}
