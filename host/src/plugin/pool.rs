//! The instances of one plugin. A call takes an idle instance, or makes a
//! new one while there are fewer than `limits.instances`, or waits for one
//! to come back; so concurrent callers (two event streams, a stream and a
//! list) run side by side instead of queueing behind one instance. An
//! instance whose call failed is dropped, not returned: after a trap its
//! state may be corrupt.

use parking_lot::{Condvar, Mutex};

use super::instance::Instance;

/// Idle instances, and how many exist.
pub(super) struct Pool {
    size: usize,
    state: Mutex<State>,
    returned: Condvar,
}

struct State {
    idle: Vec<Instance>,
    /// Instances that exist, idle or in a call, or being made.
    live: usize,
}

/// What a caller got from the pool.
pub(super) enum Taken {
    /// An idle instance.
    Idle(Instance),
    /// Room for one more: the caller makes it, then [`Pool::put`]s it back
    /// or [`Pool::discard`]s its place.
    Make,
}

impl Pool {
    /// A pool of at most `size` instances (at least one), holding `first`.
    pub(super) fn new(size: usize, first: Instance) -> Pool {
        Pool {
            size: size.max(1),
            state: Mutex::new(State {
                idle: vec![first],
                live: 1,
            }),
            returned: Condvar::new(),
        }
    }

    /// An idle instance, or the right to make one; waits while every
    /// instance is in a call (each call is bounded by its deadline).
    pub(super) fn take(&self) -> Taken {
        let mut state = self.state.lock();
        loop {
            if let Some(instance) = state.idle.pop() {
                return Taken::Idle(instance);
            }
            if state.live < self.size {
                state.live += 1;
                return Taken::Make;
            }
            self.returned.wait(&mut state);
        }
    }

    /// Returns an instance that answered.
    pub(super) fn put(&self, instance: Instance) {
        self.state.lock().idle.push(instance);
        self.returned.notify_one();
    }

    /// Gives up the place of an instance that failed (or could not be made).
    pub(super) fn discard(&self) {
        self.state.lock().live -= 1;
        self.returned.notify_one();
    }

    /// Instances that exist now, and how many at most.
    pub(super) fn counts(&self) -> (usize, usize) {
        (self.state.lock().live, self.size)
    }
}
