//! [`CacheValidators`]: what an answer says of caching it (`ETag`, `Last-Modified`,
//! `Cache-Control: max-age`), read by the HTTP exchange, sent back as conditions by a
//! resource subscription's polls, and turned into a 2026-07-28 read's `ttlMs`.

/// An answer's cache validators and freshness (`ETag`, `Last-Modified`,
/// `Cache-Control: max-age`), each at most 256 bytes; sent back as `If-None-Match` and
/// `If-Modified-Since` to ask whether it changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// `max-age`, in seconds (0 for `no-store` and `no-cache`).
    pub max_age: Option<u64>,
}

impl CacheValidators {
    /// The validators of a response with these header values.
    pub fn of(
        etag: Option<&str>,
        last_modified: Option<&str>,
        cache_control: Option<&str>,
    ) -> CacheValidators {
        fn short(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty() && v.len() <= 256)
        }
        let max_age = cache_control.and_then(|value| {
            let directives = value.split(',').map(|d| d.trim().to_ascii_lowercase());
            let mut max_age = None;
            for directive in directives {
                if directive == "no-store" || directive == "no-cache" {
                    return Some(0);
                }
                if let Some(seconds) = directive.strip_prefix("max-age=") {
                    max_age = seconds.trim_matches('"').parse::<u64>().ok();
                }
            }
            max_age
        });
        CacheValidators {
            etag: short(etag).map(str::to_string),
            last_modified: short(last_modified).map(str::to_string),
            max_age,
        }
    }

    /// The request headers that ask whether the answer changed since.
    pub fn conditions(&self) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        if let Some(etag) = &self.etag {
            headers.push(("If-None-Match".to_string(), etag.clone()));
        }
        if let Some(date) = &self.last_modified {
            headers.push(("If-Modified-Since".to_string(), date.clone()));
        }
        headers
    }
}
