//! The upstream API key: a type that never prints itself, and a source that follows
//! Secret rotation.

use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::SystemTime;

/// What replaces the key wherever it would otherwise be shown.
pub const REDACTED: &str = "[redacted]";

/// An API key. Its `Debug` and `Display` print `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Option<ApiKey> {
        let key = key.into().trim().to_string();
        (!key.is_empty()).then_some(ApiKey(key))
    }

    /// `text` with every occurrence of the key (so also any `Bearer <key>`) replaced by
    /// [`REDACTED`]; `None` when the key does not occur in it.
    pub fn redact(&self, text: &str) -> Option<String> {
        text.contains(self.0.as_str())
            .then(|| text.replace(self.0.as_str(), REDACTED))
    }

    /// The `Authorization` header value, marked sensitive so that HTTP stacks never log it.
    pub fn bearer_header(&self) -> Option<reqwest::header::HeaderValue> {
        let mut value =
            reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.0)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Where the key comes from.
pub enum KeySource {
    None,
    Env(ApiKey),
    /// A file re-read whenever its modification time or length changes (a Secret volume
    /// swaps its `..data` symlink on rotation); the last good key is kept if a read fails.
    File {
        path: PathBuf,
        state: Mutex<FileState>,
    },
}

#[derive(Default)]
pub struct FileState {
    stamp: Option<(SystemTime, u64)>,
    key: Option<ApiKey>,
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::None => f.write_str("KeySource::None"),
            KeySource::Env(_) => f.write_str("KeySource::Env([redacted])"),
            KeySource::File { path, .. } => write!(f, "KeySource::File({})", path.display()),
        }
    }
}

impl KeySource {
    pub fn file(path: PathBuf) -> KeySource {
        KeySource::File {
            path,
            state: Mutex::new(FileState::default()),
        }
    }

    /// The current key, re-reading the file if it changed. Returns whether it was reloaded.
    pub fn current(&self) -> (Option<ApiKey>, bool) {
        match self {
            KeySource::None => (None, false),
            KeySource::Env(key) => (Some(key.clone()), false),
            KeySource::File { path, state } => {
                let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
                let stamp = std::fs::metadata(path)
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())));
                let mut reloaded = false;
                if stamp.is_some() && stamp != state.stamp {
                    match std::fs::read_to_string(path) {
                        Ok(text) => {
                            let key = ApiKey::new(text);
                            reloaded = state.key.is_some() && key != state.key;
                            if key.is_none() {
                                tracing::warn!(path = %path.display(), "API key file is empty");
                            }
                            state.key = key;
                            state.stamp = stamp;
                        }
                        Err(error) => {
                            tracing::warn!(path = %path.display(), %error, "cannot read API key file; keeping the last key");
                        }
                    }
                }
                (state.key.clone(), reloaded)
            }
        }
    }

    pub fn is_configured(&self) -> bool {
        self.current().0.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_key() {
        let key = ApiKey::new("sk-very-secret").unwrap();
        assert_eq!(format!("{key} {key:?}"), "[redacted] [redacted]");
        assert!(!format!("{:?}", KeySource::Env(key.clone())).contains("secret"));
        assert!(key.bearer_header().unwrap().is_sensitive());
        assert!(ApiKey::new("  \n").is_none());
    }

    #[test]
    fn redacts_every_occurrence() {
        let key = ApiKey::new("sk-abc").unwrap();
        assert_eq!(
            key.redact("Authorization: Bearer sk-abc, again sk-abcsk-abc")
                .as_deref(),
            Some("Authorization: Bearer [redacted], again [redacted][redacted]")
        );
        assert_eq!(key.redact("sk-ab c"), None);
    }

    #[test]
    fn file_source_follows_rotation() {
        let dir = std::env::temp_dir().join(format!("crfix-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key");
        std::fs::write(&path, "one\n").unwrap();
        let source = KeySource::file(path.clone());
        assert_eq!(source.current(), (ApiKey::new("one"), false));
        std::fs::write(&path, "second-key").unwrap();
        assert_eq!(source.current(), (ApiKey::new("second-key"), true));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(source.current().0, ApiKey::new("second-key"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
