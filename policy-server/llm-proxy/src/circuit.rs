//! A circuit breaker around the upstream: after `threshold` consecutive failures it opens and
//! answers at once; after `open_for` it lets one probe through (half-open) and closes again
//! if the probe succeeds.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    Closed,
    HalfOpen,
    Open,
}

impl CircuitState {
    /// The value of the `crfix_proxy_circuit_state` gauge.
    pub fn gauge(self) -> i64 {
        match self {
            CircuitState::Closed => 0,
            CircuitState::HalfOpen => 1,
            CircuitState::Open => 2,
        }
    }
}

#[derive(Debug)]
enum Inner {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

#[derive(Debug)]
pub struct Circuit {
    inner: Mutex<Inner>,
    threshold: u32,
    open_for: Duration,
}

/// Permission to call the upstream; report the outcome with [`Permit::record`].
/// Dropped unreported (e.g. the call was never made), it leaves the failure count alone.
#[must_use]
pub struct Permit {
    circuit: Arc<Circuit>,
    probe: bool,
    reported: bool,
}

/// What a reported outcome changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    None,
    Opened,
    Closed,
}

impl Circuit {
    pub fn new(threshold: u32, open_for: Duration) -> Arc<Circuit> {
        Arc::new(Circuit {
            inner: Mutex::new(Inner::Closed { failures: 0 }),
            threshold: threshold.max(1),
            open_for,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn state(&self) -> CircuitState {
        match *self.lock() {
            Inner::Closed { .. } => CircuitState::Closed,
            Inner::Open { until } if Instant::now() >= until => CircuitState::HalfOpen,
            Inner::Open { .. } => CircuitState::Open,
            Inner::HalfOpen { .. } => CircuitState::HalfOpen,
        }
    }

    /// A permit, or the time left before a probe is allowed.
    pub fn acquire(self: &Arc<Self>) -> Result<Permit, Duration> {
        let mut inner = self.lock();
        let probe = match *inner {
            Inner::Closed { .. } => false,
            Inner::Open { until } => {
                let now = Instant::now();
                if now < until {
                    return Err(until - now);
                }
                *inner = Inner::HalfOpen { probing: true };
                true
            }
            Inner::HalfOpen { probing: true } => return Err(Duration::from_secs(1)),
            Inner::HalfOpen { probing: false } => {
                *inner = Inner::HalfOpen { probing: true };
                true
            }
        };
        Ok(Permit {
            circuit: Arc::clone(self),
            probe,
            reported: false,
        })
    }
}

impl Permit {
    pub fn record(mut self, success: bool) -> Transition {
        self.reported = true;
        let circuit = &self.circuit;
        let mut inner = circuit.lock();
        match (&mut *inner, success) {
            (Inner::Closed { failures }, true) => {
                *failures = 0;
                Transition::None
            }
            (Inner::Closed { failures }, false) => {
                *failures += 1;
                if *failures >= circuit.threshold {
                    *inner = Inner::Open {
                        until: Instant::now() + circuit.open_for,
                    };
                    Transition::Opened
                } else {
                    Transition::None
                }
            }
            (Inner::HalfOpen { .. }, true) => {
                *inner = Inner::Closed { failures: 0 };
                Transition::Closed
            }
            (Inner::HalfOpen { .. }, false) => {
                *inner = Inner::Open {
                    until: Instant::now() + circuit.open_for,
                };
                Transition::Opened
            }
            // A call that started before the circuit opened: its outcome changes nothing.
            (Inner::Open { .. }, _) => Transition::None,
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if self.probe && !self.reported {
            let mut inner = self.circuit.lock();
            if let Inner::HalfOpen { probing } = &mut *inner {
                *probing = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_fails_fast_probes_and_closes() {
        let circuit = Circuit::new(2, Duration::from_millis(50));
        assert_eq!(
            circuit.acquire().ok().unwrap().record(false),
            Transition::None
        );
        assert_eq!(
            circuit.acquire().ok().unwrap().record(false),
            Transition::Opened
        );
        assert_eq!(circuit.state(), CircuitState::Open);
        assert!(circuit.acquire().is_err());
        std::thread::sleep(Duration::from_millis(60));
        let probe = circuit.acquire().ok().unwrap();
        assert!(circuit.acquire().is_err(), "only one probe at a time");
        assert_eq!(probe.record(false), Transition::Opened);
        std::thread::sleep(Duration::from_millis(60));
        let probe = circuit.acquire().ok().unwrap();
        drop(probe);
        let probe = circuit.acquire().ok().unwrap();
        assert_eq!(probe.record(true), Transition::Closed);
        assert_eq!(circuit.state(), CircuitState::Closed);
    }

    #[test]
    fn success_resets_the_count() {
        let circuit = Circuit::new(2, Duration::from_secs(60));
        let _ = circuit.acquire().ok().unwrap().record(false);
        let _ = circuit.acquire().ok().unwrap().record(true);
        let _ = circuit.acquire().ok().unwrap().record(false);
        assert_eq!(circuit.state(), CircuitState::Closed);
    }
}
