//! Spending limits on the upstream: a rate limit and a daily request/token budget.

use std::collections::HashMap;
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
    /// This user's daily request budget is spent; it resets at 00:00 UTC.
    UserRequests(Duration),
    /// This user's daily token budget is spent; it resets at 00:00 UTC.
    UserTokens(Duration),
}

/// A daily budget; 0 means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    pub requests: u64,
    pub tokens: u64,
}

/// What was spent today, in total or by one user.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    pub requests: u64,
    pub tokens: u64,
}

/// At most this many users are accounted one by one per day; later new users share the
/// [`OVERFLOW_USER`] account (bounded memory whatever the callers assert).
pub const MAX_TRACKED_USERS: usize = 10_000;
pub const OVERFLOW_USER: &str = "(other users)";

#[derive(Debug, Default)]
struct Day {
    index: u64,
    total: Spent,
    users: HashMap<String, Spent>,
}

impl Day {
    fn user_mut(&mut self, user: &str) -> &mut Spent {
        if !self.users.contains_key(user) {
            let key = if self.users.len() < MAX_TRACKED_USERS {
                user
            } else {
                OVERFLOW_USER
            };
            return self.users.entry(key.to_string()).or_default();
        }
        self.users.get_mut(user).expect("checked above")
    }

    fn user(&self, user: &str) -> Spent {
        match self.users.get(user) {
            Some(spent) => *spent,
            None if self.users.len() >= MAX_TRACKED_USERS => {
                self.users.get(OVERFLOW_USER).copied().unwrap_or_default()
            }
            None => Spent::default(),
        }
    }
}

pub struct Limits {
    rate: Option<RateLimiter<NotKeyed, InMemoryState, DefaultClock>>,
    clock: DefaultClock,
    global: Budget,
    per_user: Budget,
    day: Mutex<Day>,
}

const DAY: u64 = 86_400;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn over(budget: u64, spent: u64) -> bool {
    budget > 0 && spent >= budget
}

impl Limits {
    /// `rate_per_second` 0 (or less) disables the rate limit; a budget of 0 is unlimited.
    pub fn new(rate_per_second: f64, burst: u32, global: Budget, per_user: Budget) -> Limits {
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
            global,
            per_user,
            day: Mutex::new(Day::default()),
        }
    }

    pub fn per_user(&self) -> Budget {
        self.per_user
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

    /// Reserves one upstream call for `user`, or says why not. The user's own budget is
    /// checked first, so a user who spent theirs is told so even when the total is spent too.
    pub fn admit(&self, user: &str) -> Result<(), Refusal> {
        let mut day = self.today();
        let mine = day.user(user);
        if over(self.per_user.tokens, mine.tokens) {
            return Err(Refusal::UserTokens(Self::until_midnight()));
        }
        if over(self.per_user.requests, mine.requests) {
            return Err(Refusal::UserRequests(Self::until_midnight()));
        }
        if over(self.global.tokens, day.total.tokens) {
            return Err(Refusal::Tokens(Self::until_midnight()));
        }
        if over(self.global.requests, day.total.requests) {
            return Err(Refusal::Requests(Self::until_midnight()));
        }
        if let Some(rate) = &self.rate {
            if let Err(not_until) = rate.check() {
                return Err(Refusal::Rate(not_until.wait_time_from(self.clock.now())));
            }
        }
        day.total.requests += 1;
        day.user_mut(user).requests += 1;
        Ok(())
    }

    /// Adds the tokens an answer used, to the total and to `user`.
    pub fn spend_tokens(&self, user: &str, tokens: u64) {
        let mut day = self.today();
        day.total.tokens = day.total.tokens.saturating_add(tokens);
        let mine = day.user_mut(user);
        mine.tokens = mine.tokens.saturating_add(tokens);
    }

    /// (requests, tokens) used today, all users together.
    pub fn used_today(&self) -> (u64, u64) {
        let day = self.today();
        (day.total.requests, day.total.tokens)
    }

    /// What `user` spent today.
    pub fn used_today_by(&self, user: &str) -> Spent {
        self.today().user(user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Budget = Budget {
        requests: 0,
        tokens: 0,
    };

    fn budget(requests: u64, tokens: u64) -> Budget {
        Budget { requests, tokens }
    }

    #[test]
    fn request_and_token_budgets() {
        let limits = Limits::new(0.0, 1, budget(2, 100), NONE);
        assert!(limits.admit("a").is_ok());
        assert!(limits.admit("b").is_ok());
        assert!(matches!(limits.admit("c"), Err(Refusal::Requests(_))));
        let limits = Limits::new(0.0, 1, budget(0, 100), NONE);
        assert!(limits.admit("a").is_ok());
        limits.spend_tokens("a", 100);
        assert!(matches!(limits.admit("b"), Err(Refusal::Tokens(_))));
        assert_eq!(limits.used_today(), (1, 100));
    }

    #[test]
    fn per_user_budgets_leave_other_users_alone() {
        let limits = Limits::new(0.0, 1, budget(10, 1000), budget(2, 50));
        assert!(limits.admit("alice").is_ok());
        assert!(limits.admit("alice").is_ok());
        assert!(matches!(
            limits.admit("alice"),
            Err(Refusal::UserRequests(_))
        ));
        assert!(limits.admit("bob").is_ok());
        limits.spend_tokens("bob", 50);
        assert!(matches!(limits.admit("bob"), Err(Refusal::UserTokens(_))));
        assert!(limits.admit("carol").is_ok());
        assert_eq!(
            limits.used_today_by("alice"),
            Spent {
                requests: 2,
                tokens: 0
            }
        );
        assert_eq!(
            limits.used_today_by("bob"),
            Spent {
                requests: 1,
                tokens: 50
            }
        );
        assert_eq!(limits.used_today(), (4, 50));
        // Refused calls cost nothing.
        assert_eq!(limits.used_today_by("alice").requests, 2);
    }

    #[test]
    fn users_beyond_the_cap_share_one_account() {
        let limits = Limits::new(0.0, 1, NONE, budget(1, 0));
        for i in 0..MAX_TRACKED_USERS {
            assert!(limits.admit(&format!("user-{i}")).is_ok());
        }
        assert!(limits.admit("late-1").is_ok());
        assert!(
            matches!(limits.admit("late-2"), Err(Refusal::UserRequests(_))),
            "new users share the overflow account"
        );
        assert!(matches!(
            limits.admit("user-0"),
            Err(Refusal::UserRequests(_))
        ));
        assert_eq!(limits.today().users.len(), MAX_TRACKED_USERS + 1);
    }

    #[test]
    fn rate_limit_with_burst() {
        let limits = Limits::new(1.0, 2, NONE, NONE);
        assert!(limits.admit("a").is_ok());
        assert!(limits.admit("a").is_ok());
        match limits.admit("a") {
            Err(Refusal::Rate(wait)) => assert!(wait <= Duration::from_secs(1)),
            other => panic!("{other:?}"),
        }
    }
}
