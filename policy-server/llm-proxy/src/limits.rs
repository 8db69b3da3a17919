//! Spending limits on the upstream: a rate limit and a daily request/token budget.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use governor::clock::{Clock, DefaultClock};
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over the rate; retry after this long.
    Rate(Duration),
    /// The daily request budget is spent; it resets at 00:00 UTC.
    Requests(Duration),
    /// The daily token budget is spent; it resets at 00:00 UTC.
    Tokens(Duration),
}

#[derive(Debug, Default, Clone, Copy)]
struct Day {
    index: u64,
    requests: u64,
    tokens: u64,
}

pub struct Limits {
    rate: Option<RateLimiter<NotKeyed, InMemoryState, DefaultClock>>,
    clock: DefaultClock,
    request_budget: u64,
    token_budget: u64,
    day: Mutex<Day>,
}

const DAY: u64 = 86_400;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Limits {
    /// `rate_per_second` 0 (or less) disables the rate limit; a budget of 0 is unlimited.
    pub fn new(rate_per_second: f64, burst: u32, request_budget: u64, token_budget: u64) -> Limits {
        let rate = (rate_per_second > 0.0 && rate_per_second.is_finite()).then(|| {
            let period =
                Duration::from_secs_f64(1.0 / rate_per_second).max(Duration::from_nanos(1));
            let quota = Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
            RateLimiter::direct(quota)
        });
        Limits {
            rate,
            clock: DefaultClock::default(),
            request_budget,
            token_budget,
            day: Mutex::new(Day::default()),
        }
    }

    fn today(&self) -> std::sync::MutexGuard<'_, Day> {
        let mut day = self.day.lock().unwrap_or_else(|p| p.into_inner());
        let index = now_secs() / DAY;
        if day.index != index {
            *day = Day {
                index,
                ..Day::default()
            };
        }
        day
    }

    fn until_midnight() -> Duration {
        Duration::from_secs(DAY - now_secs() % DAY)
    }

    /// Reserves one upstream call, or says why not.
    pub fn admit(&self) -> Result<(), Refusal> {
        let mut day = self.today();
        if self.token_budget > 0 && day.tokens >= self.token_budget {
            return Err(Refusal::Tokens(Self::until_midnight()));
        }
        if self.request_budget > 0 && day.requests >= self.request_budget {
            return Err(Refusal::Requests(Self::until_midnight()));
        }
        if let Some(rate) = &self.rate {
            if let Err(not_until) = rate.check() {
                return Err(Refusal::Rate(not_until.wait_time_from(self.clock.now())));
            }
        }
        day.requests += 1;
        Ok(())
    }

    /// Adds the tokens an answer used.
    pub fn spend_tokens(&self, tokens: u64) {
        let mut day = self.today();
        day.tokens = day.tokens.saturating_add(tokens);
    }

    /// (requests, tokens) used today.
    pub fn used_today(&self) -> (u64, u64) {
        let day = self.today();
        (day.requests, day.tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_and_token_budgets() {
        let limits = Limits::new(0.0, 1, 2, 100);
        assert!(limits.admit().is_ok());
        assert!(limits.admit().is_ok());
        assert!(matches!(limits.admit(), Err(Refusal::Requests(_))));
        let limits = Limits::new(0.0, 1, 0, 100);
        assert!(limits.admit().is_ok());
        limits.spend_tokens(100);
        assert!(matches!(limits.admit(), Err(Refusal::Tokens(_))));
        assert_eq!(limits.used_today(), (1, 100));
    }

    #[test]
    fn rate_limit_with_burst() {
        let limits = Limits::new(1.0, 2, 0, 0);
        assert!(limits.admit().is_ok());
        assert!(limits.admit().is_ok());
        match limits.admit() {
            Err(Refusal::Rate(wait)) => assert!(wait <= Duration::from_secs(1)),
            other => panic!("{other:?}"),
        }
    }
}
