//! The answer cache (bounded by entries and bytes) and the single-flight map that makes
//! identical concurrent requests share one upstream call.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use quick_cache::sync::Cache;
use quick_cache::Weighter;
use tokio::sync::OnceCell;

use crate::upstream::Answer;

/// Fixed per-entry overhead counted on top of the strings (map slots, Arc, lengths).
const ENTRY_OVERHEAD: u64 = 96;

#[derive(Clone)]
struct AnswerWeighter {
    /// Every entry weighs at least this: with it, total weight ≤ max_bytes also bounds the
    /// number of entries to max_entries.
    min_weight: u64,
}

impl Weighter<Arc<str>, Arc<Answer>> for AnswerWeighter {
    fn weight(&self, key: &Arc<str>, answer: &Arc<Answer>) -> u64 {
        let bytes =
            key.len() + answer.content.len() + answer.model.len() + answer.finish_reason.len();
        (bytes as u64 + ENTRY_OVERHEAD).max(self.min_weight)
    }
}

type Flight<E> = Arc<OnceCell<Result<Arc<Answer>, E>>>;

pub struct AnswerCache<E> {
    cache: Cache<Arc<str>, Arc<Answer>, AnswerWeighter>,
    in_flight: Mutex<HashMap<Arc<str>, Flight<E>>>,
}

/// How an answer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// This request made the upstream call.
    Upstream,
    /// This request waited for an identical one's upstream call.
    Shared,
}

impl<E: Clone> AnswerCache<E> {
    pub fn new(max_entries: u64, max_bytes: u64) -> AnswerCache<E> {
        let max_entries = max_entries.max(1);
        let max_bytes = max_bytes.max(ENTRY_OVERHEAD);
        let min_weight = max_bytes.div_ceil(max_entries);
        AnswerCache {
            cache: Cache::with_weighter(
                max_entries.min(1 << 20) as usize,
                max_bytes,
                AnswerWeighter { min_weight },
            ),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, token: &str) -> Option<Arc<Answer>> {
        self.cache.get(token)
    }

    pub fn len(&self) -> usize {
        self.cache.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cache.len() == 0
    }

    pub fn weight(&self) -> u64 {
        self.cache.weight()
    }

    /// Runs `call` once for all concurrent callers with the same token; a successful answer
    /// goes into the cache before the in-flight entry is removed, so later callers find it.
    /// If the caller running `call` is cancelled, a waiting caller runs it instead.
    pub async fn get_or_call<F, Fut>(
        &self,
        token: &str,
        call: F,
    ) -> (Result<Arc<Answer>, E>, Source)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Answer, E>>,
    {
        let key: Arc<str> = Arc::from(token);
        let flight = {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(map.entry(Arc::clone(&key)).or_default())
        };
        let mut ran = false;
        let result = flight
            .get_or_init(|| {
                ran = true;
                async {
                    let result = call().await.map(Arc::new);
                    if let Ok(answer) = &result {
                        self.cache.insert(Arc::clone(&key), Arc::clone(answer));
                    }
                    result
                }
            })
            .await
            .clone();
        if ran {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            if map.get(&key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
                map.remove(&key);
            }
        }
        (
            result,
            if ran {
                Source::Upstream
            } else {
                Source::Shared
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn answer(content: &str) -> Answer {
        Answer {
            content: content.into(),
            model: "m".into(),
            finish_reason: "stop".into(),
            usage: Default::default(),
        }
    }

    #[tokio::test]
    async fn concurrent_identical_calls_share_one() {
        let cache: Arc<AnswerCache<String>> = Arc::new(AnswerCache::new(100, 1 << 20));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let cache = Arc::clone(&cache);
            let calls = Arc::clone(&calls);
            tasks.push(tokio::spawn(async move {
                cache
                    .get_or_call("t", || async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok(answer("a"))
                    })
                    .await
            }));
        }
        let mut shared = 0;
        for task in tasks {
            let (result, source) = task.await.unwrap();
            assert_eq!(result.unwrap().content, "a");
            shared += usize::from(source == Source::Shared);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(shared, 19);
        assert_eq!(cache.get("t").unwrap().content, "a");
        assert!(cache.in_flight.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn errors_are_not_cached() {
        let cache: AnswerCache<String> = AnswerCache::new(100, 1 << 20);
        let (r, _) = cache
            .get_or_call("t", || async { Err("boom".to_string()) })
            .await;
        assert!(r.is_err());
        assert!(cache.get("t").is_none());
        let (r, s) = cache.get_or_call("t", || async { Ok(answer("b")) }).await;
        assert_eq!((r.unwrap().content.as_str(), s), ("b", Source::Upstream));
    }

    #[test]
    fn bounded_by_entries_and_bytes() {
        let cache: AnswerCache<String> = AnswerCache::new(10, 1 << 20);
        for i in 0..100 {
            cache
                .cache
                .insert(Arc::from(format!("k{i}")), Arc::new(answer("x")));
        }
        assert!(cache.len() <= 10, "{}", cache.len());
        let cache: AnswerCache<String> = AnswerCache::new(1000, 64 * 1024);
        for i in 0..100 {
            cache.cache.insert(
                Arc::from(format!("k{i}")),
                Arc::new(answer(&"y".repeat(4000))),
            );
        }
        assert!(cache.weight() <= 64 * 1024, "{}", cache.weight());
        assert!(cache.len() <= 16, "{}", cache.len());
    }
}
