//! Polling watched files and directories. Everything here blocks on the file system and
//! runs on tokio's blocking pool (see [`super::watch`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::WatchSet;
use super::hash::{BLOCK, ContentHasher};

/// A hash is reused only for a file whose metadata is unchanged *and* was already older
/// than this when the file was hashed. A file written again within the same timestamp
/// tick, with the same length, would otherwise keep its stale hash forever (the "racily
/// clean" problem Git's index has); coarse file system clocks tick every second or two.
const RACY: Duration = Duration::from_secs(2);

/// What was seen of one watched path: the baseline (as of the last trigger) and the
/// latest observation. Changes are reported as the difference between the two, so a
/// file edited and then restored while settling triggers nothing.
#[derive(Debug)]
struct Observed<T> {
    /// `None` until the first successful observation, which becomes the baseline.
    committed: Option<T>,
    latest: Option<T>,
    /// The last read error, so that a lasting problem is logged once, not every poll.
    error: Option<String>,
}

impl<T> Default for Observed<T> {
    fn default() -> Self {
        Observed {
            committed: None,
            latest: None,
            error: None,
        }
    }
}

impl<T: PartialEq + Clone> Observed<T> {
    /// Records a successful observation; true if it differs from the previous one.
    fn record(&mut self, value: T, path: &Path) -> bool {
        if self.error.take().is_some() {
            tracing::info!(path = %path.display(), "watched path can be read again");
        }
        match &self.latest {
            None => {
                self.committed = Some(value.clone());
                self.latest = Some(value);
                false
            }
            Some(latest) if *latest == value => false,
            Some(_) => {
                self.latest = Some(value);
                true
            }
        }
    }

    /// Records a failed observation: the previous one stands, nothing triggers.
    fn fail(&mut self, error: &io::Error, path: &Path) {
        let message = error.to_string();
        if self.error.as_deref() != Some(message.as_str()) {
            tracing::warn!(
                path = %path.display(),
                "cannot check watched path for changes: {message}"
            );
        }
        self.error = Some(message);
    }

    /// The baseline and the latest value when they differ; the latest becomes the baseline.
    fn commit(&mut self) -> Option<(T, T)> {
        match (&self.committed, &self.latest) {
            (Some(committed), Some(latest)) if committed != latest => {
                let old = committed.clone();
                self.committed = Some(latest.clone());
                Some((old, latest.clone()))
            }
            _ => None,
        }
    }
}

/// File metadata that changes when the content may have changed. Besides mtime and
/// length it holds, on Unix, the device, inode and ctime: a Kubernetes ConfigMap update
/// swaps in a new file (new inode) and has been seen to keep the old mtime
/// (kubernetes/kubernetes#24215), and ctime cannot be set back by `touch -d` or archive
/// extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    unix: (u64, u64, i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            unix: (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the file changed so recently (relative to `now`) that a further write could
    /// leave this stamp as it is.
    fn is_recent(&self, now: SystemTime) -> bool {
        let recent = |time: Option<SystemTime>| {
            time.is_none_or(|time| now.duration_since(time).map_or(true, |age| age < RACY))
        };
        #[cfg(unix)]
        let changed = {
            let (_, _, secs, nanos) = self.unix;
            u64::try_from(secs)
                .ok()
                .zip(u32::try_from(nanos).ok())
                .and_then(|(secs, nanos)| {
                    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos.min(999_999_999)))
                })
        };
        #[cfg(not(unix))]
        let changed = self.modified;
        recent(self.modified) || recent(changed)
    }
}

/// A path that is absent counts as missing, also when a parent is not a directory (or a
/// symlink on the way dangles, as it may for an instant during a ConfigMap swap).
fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

#[derive(Debug, Default)]
struct FileEntry {
    /// The content hash, `None` while the file does not exist.
    observed: Observed<Option<u64>>,
    /// The stamp and hash of the last read, kept only when the stamp was not recent.
    cache: Option<(Stamp, u64)>,
}

impl FileEntry {
    /// The file's current content hash, or `None` if it does not exist. Symlinks are
    /// followed; the file is read only if its stamp changed since the last read.
    fn read(&mut self, path: &Path) -> io::Result<Option<u64>> {
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if is_missing(&e) => {
                self.cache = None;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        if !meta.is_file() {
            // Reading a FIFO or device could block forever; a directory cannot be read.
            self.cache = None;
            return Err(io::Error::other("not a regular file"));
        }
        let stamp = Stamp::of(&meta);
        if let Some((cached, hash)) = self.cache
            && cached == stamp
        {
            return Ok(Some(hash));
        }
        let now = SystemTime::now();
        let hash = match hash_file(path) {
            Ok(hash) => hash,
            Err(e) if is_missing(&e) => {
                self.cache = None;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        self.cache = (!stamp.is_recent(now)).then_some((stamp, hash));
        Ok(Some(hash))
    }
}

/// Opened without blocking and read only if what was opened is a regular file: the path
/// may have become a FIFO since its metadata was looked at.
fn hash_file(path: &Path) -> io::Result<u64> {
    let mut file = crate::spec::place::open_regular(path)?;
    let mut buffer = vec![0; BLOCK];
    let mut hasher = ContentHasher::new();
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Ok(hasher.finish()),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The names of the regular files in `dir` (symlinks followed, so a ConfigMap's
/// `key -> ..data/key` entries count and its `..data` and timestamped directories do not).
/// A missing directory lists as empty.
fn list_dir(dir: &Path) -> io::Result<BTreeSet<OsString>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_missing(&e) => return Ok(BTreeSet::new()),
        Err(e) => return Err(e),
    };
    let mut names = BTreeSet::new();
    // An entry that vanishes while listing is simply not there.
    for entry in entries.flatten() {
        if fs::metadata(entry.path()).is_ok_and(|meta| meta.is_file()) {
            names.insert(entry.file_name());
        }
    }
    Ok(names)
}

/// The watched files and directories with what was last seen of each.
#[derive(Debug, Default)]
pub(super) struct FileWatch {
    files: BTreeMap<PathBuf, FileEntry>,
    dirs: BTreeMap<PathBuf, Observed<BTreeSet<OsString>>>,
}

impl FileWatch {
    pub(super) fn new(set: &WatchSet) -> FileWatch {
        let mut watch = FileWatch::default();
        watch.retarget(set);
        watch
    }

    pub(super) fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty()
    }

    /// Watches exactly `set`'s files and directories. Paths watched before keep their
    /// state (a change not yet reported still is); new ones get their baseline on the next
    /// [`FileWatch::poll`].
    pub(super) fn retarget(&mut self, set: &WatchSet) {
        let files: BTreeSet<&PathBuf> = set.files.iter().collect();
        self.files.retain(|path, _| files.contains(path));
        for path in files {
            self.files.entry(path.clone()).or_default();
        }
        let dirs: BTreeSet<&PathBuf> = set.dirs.iter().collect();
        self.dirs.retain(|path, _| dirs.contains(path));
        for path in dirs {
            self.dirs.entry(path.clone()).or_default();
        }
    }

    /// Looks at every path once; true if anything differs from the previous look. Blocks.
    pub(super) fn poll(&mut self) -> bool {
        let mut changed = false;
        for (path, entry) in &mut self.files {
            match entry.read(path) {
                Ok(hash) => changed |= entry.observed.record(hash, path),
                Err(e) => entry.observed.fail(&e, path),
            }
        }
        for (dir, observed) in &mut self.dirs {
            match list_dir(dir) {
                Ok(names) => changed |= observed.record(names, dir),
                Err(e) => observed.fail(&e, dir),
            }
        }
        changed
    }

    /// Adds every path that differs from its baseline to `changed` (for a directory, the
    /// files added to or removed from it) and makes the latest observations the baseline.
    pub(super) fn commit(&mut self, changed: &mut BTreeSet<String>) {
        for (path, entry) in &mut self.files {
            if entry.observed.commit().is_some() {
                changed.insert(path.display().to_string());
            }
        }
        for (dir, observed) in &mut self.dirs {
            if let Some((old, new)) = observed.commit() {
                for name in old.symmetric_difference(&new) {
                    changed.insert(dir.join(name).display().to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_reused_only_for_files_that_settled_before_they_were_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("spec.yaml");
        fs::write(&path, "fresh").expect("write");
        let mut entry = FileEntry::default();
        assert!(entry.read(&path).expect("read").is_some());
        assert!(entry.cache.is_none(), "just written: read again next time");

        let mut stamp = Stamp::of(&fs::metadata(&path).expect("metadata"));
        assert!(stamp.is_recent(SystemTime::now()));
        stamp.modified = stamp.modified.map(|t| t - Duration::from_secs(3600));
        #[cfg(unix)]
        {
            stamp.unix.2 -= 3600;
        }
        assert!(!stamp.is_recent(SystemTime::now()));

        // Unchanged metadata: the cached hash is used without reading.
        let stamp = Stamp::of(&fs::metadata(&path).expect("metadata"));
        entry.cache = Some((stamp, 42));
        assert_eq!(entry.read(&path).expect("read"), Some(42));
        fs::write(&path, "fresh, edited").expect("write");
        assert_ne!(entry.read(&path).expect("read"), Some(42));
    }

    #[test]
    fn missing_paths_and_non_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut entry = FileEntry::default();
        assert_eq!(entry.read(&dir.path().join("absent")).ok(), Some(None));
        let file = dir.path().join("file");
        fs::write(&file, "x").expect("write");
        // A parent that is a file: missing, not an error.
        assert_eq!(entry.read(&file.join("child")).ok(), Some(None));
        assert!(entry.read(dir.path()).is_err(), "a directory is not a file");
        assert_eq!(
            list_dir(&dir.path().join("absent")).ok(),
            Some(BTreeSet::new())
        );
    }

    #[test]
    #[cfg(unix)]
    fn a_path_that_became_a_fifo_is_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("spec.yaml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(status.success());
        // What the metadata check before it would catch, hashing refuses on its own (the
        // path may be swapped in between); opening it never blocks.
        let error = hash_file(&fifo).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(FileEntry::default().read(&fifo).is_err());
    }
}
