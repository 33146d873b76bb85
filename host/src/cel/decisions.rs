//! What a query's expression answered for each object it read, kept with
//! its compiled program, so that the same `match=` asked again reads only
//! the objects that changed since: a console or a script that asks every
//! few seconds costs a lookup per unchanged object, not its decompression
//! and evaluation.
//!
//! **Why an answer kept is the right one.** A cache never changes an
//! object in place: a change replaces its `Arc`. An answer is kept by the
//! address of the object's allocation, beside a `Weak` to it; while the
//! `Weak` lives, that allocation is not freed, so no other object can be
//! given the same address. An answer found is therefore the answer for
//! that very version. And an expression's answer depends on the object
//! alone (GRW's CEL has no clock, and no caller's identity), so it holds
//! for every caller.
//!
//! **Bounded.** At most [`MAX_DECISIONS`] answers in all programs
//! together; past it, answers are no longer kept (and a query reads as it
//! would without them). A program's table drops the answers of objects no
//! cache holds any more whenever it has doubled since it last did, and
//! everything when the program has not been asked for [`IDLE`] or leaves
//! the cache of compiled programs.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::RwLock;

/// Most answers kept, all programs together. An entry is some 40 bytes;
/// once its object is replaced, its `Weak` also holds the object's 128-byte
/// allocation (not its JSON) until the next sweep: 40 MiB for the entries
/// at most, and up to 130 MiB more while replaced objects wait for it.
pub const MAX_DECISIONS: usize = 1 << 20;

/// Answers kept now, all programs together.
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// Fewest entries a table holds before its first sweep.
const FIRST_SWEEP: usize = 1024;

/// How long a program keeps its answers without being asked: a page or a
/// script that polls keeps them; an expression asked once does not hold
/// them (and the objects' structs its entries hold) for long.
pub const IDLE: Duration = Duration::from_secs(600);

/// What `asked` counts from.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn now_millis() -> u64 {
    EPOCH.elapsed().as_millis() as u64
}

/// One program's answers, by object.
pub struct Decisions {
    table: RwLock<Table>,
    /// Where answers are counted against [`MAX_DECISIONS`].
    kept: &'static AtomicUsize,
    /// When the program was last asked for, in milliseconds from `EPOCH`.
    asked: AtomicU64,
}

struct Table {
    answers: HashMap<usize, (Weak<dyn Any + Send + Sync>, bool)>,
    /// Entries at which the next sweep is due.
    sweep_at: usize,
}

impl Default for Decisions {
    fn default() -> Decisions {
        Decisions::counted_in(&KEPT)
    }
}

fn address<T>(object: &Arc<T>) -> usize {
    Arc::as_ptr(object) as *const () as usize
}

impl Decisions {
    fn counted_in(kept: &'static AtomicUsize) -> Decisions {
        Decisions {
            table: RwLock::new(Table {
                answers: HashMap::new(),
                sweep_at: FIRST_SWEEP,
            }),
            kept,
            asked: AtomicU64::new(now_millis()),
        }
    }

    /// Notes that a query asked for the program now.
    pub fn asked(&self) {
        self.asked.store(now_millis(), Ordering::Relaxed);
    }

    /// Drops every answer if the program was not asked for within `idle`.
    pub fn forget_if_idle(&self, idle: Duration) {
        let since = now_millis().saturating_sub(self.asked.load(Ordering::Relaxed));
        if since < idle.as_millis() as u64 {
            return;
        }
        let mut table = self.table.write();
        self.kept.fetch_sub(table.answers.len(), Ordering::Relaxed);
        table.answers = HashMap::new();
        table.sweep_at = FIRST_SWEEP;
        // Forgotten: the next check is due in another `idle`, not at every
        // query.
        self.asked();
    }

    /// The answer kept for this version of `object`, if any.
    pub fn get<T>(&self, object: &Arc<T>) -> Option<bool> {
        let table = self.table.read();
        table
            .answers
            .get(&address(object))
            .map(|(_, answer)| *answer)
    }

    /// Keeps `answer` for this version of `object`, if there is room.
    pub fn keep<T: Any + Send + Sync>(&self, object: &Arc<T>, answer: bool) {
        let mut table = self.table.write();
        if table.answers.len() >= table.sweep_at {
            let gone = table.sweep();
            self.kept.fetch_sub(gone, Ordering::Relaxed);
        }
        let at = address(object);
        if let Some(kept) = table.answers.get_mut(&at) {
            kept.1 = answer;
            return;
        }
        if self.kept.fetch_add(1, Ordering::Relaxed) >= MAX_DECISIONS {
            self.kept.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let weak: Weak<dyn Any + Send + Sync> = Arc::downgrade(object) as Weak<_>;
        table.answers.insert(at, (weak, answer));
    }

    /// Answers kept by this program.
    pub fn len(&self) -> usize {
        self.table.read().answers.len()
    }

    /// Whether this program keeps no answer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Table {
    /// Drops the answers of objects no one holds any more; how many.
    fn sweep(&mut self) -> usize {
        let before = self.answers.len();
        self.answers.retain(|_, (weak, _)| weak.strong_count() > 0);
        self.sweep_at = (self.answers.len() * 2).max(FIRST_SWEEP);
        before - self.answers.len()
    }
}

impl Drop for Decisions {
    fn drop(&mut self) {
        let answers = self.table.get_mut().answers.len();
        self.kept.fetch_sub(answers, Ordering::Relaxed);
    }
}

/// Answers kept now, all programs together.
pub fn kept() -> usize {
    KEPT.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_kept_for_one_version_only() {
        let decisions = Decisions::default();
        let first = Arc::new(String::from("v1"));
        decisions.keep(&first, true);
        assert_eq!(decisions.get(&first), Some(true));
        // The same text in another allocation is another version.
        let again = Arc::new(String::from("v1"));
        assert_eq!(decisions.get(&again), None);
        decisions.keep(&first, false);
        assert_eq!((decisions.get(&first), decisions.len()), (Some(false), 1));
    }

    #[test]
    fn a_replaced_objects_address_is_not_reused_while_its_answer_is_kept() {
        let decisions = Decisions::default();
        let old = Arc::new([7u8; 64]);
        let at = address(&old);
        decisions.keep(&old, true);
        drop(old);
        // Had the allocation been freed, one of these could take its place.
        let news: Vec<_> = (0..1000).map(|_| Arc::new([8u8; 64])).collect();
        assert!(news.iter().all(|n| address(n) != at));
        assert!(news.iter().all(|n| decisions.get(n).is_none()));
    }

    #[test]
    fn sweeps_drop_the_answers_of_objects_gone_and_the_count_follows() {
        static COUNTED: AtomicUsize = AtomicUsize::new(0);
        let decisions = Decisions::counted_in(&COUNTED);
        let live: Vec<_> = (0..10).map(Arc::new).collect();
        for object in &live {
            decisions.keep(object, true);
        }
        for i in 0..FIRST_SWEEP - live.len() {
            decisions.keep(&Arc::new(i), false);
        }
        assert_eq!(decisions.len(), FIRST_SWEEP);
        // The table reached its first sweep, which left the live ten and
        // the one kept after it.
        decisions.keep(&Arc::new(0usize), false);
        assert_eq!(decisions.len(), 11);
        assert_eq!(COUNTED.load(Ordering::Relaxed), 11);
        assert!(live.iter().all(|o| decisions.get(o) == Some(true)));
        drop(decisions);
        assert_eq!(COUNTED.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_program_not_asked_for_forgets_its_answers() {
        static COUNTED: AtomicUsize = AtomicUsize::new(0);
        let decisions = Decisions::counted_in(&COUNTED);
        let objects: Vec<_> = (0..3).map(Arc::new).collect();
        for object in &objects {
            decisions.keep(object, true);
        }
        decisions.asked();
        decisions.forget_if_idle(Duration::from_secs(60));
        assert_eq!(decisions.len(), 3);
        std::thread::sleep(Duration::from_millis(20));
        decisions.forget_if_idle(Duration::from_millis(10));
        assert_eq!((decisions.len(), COUNTED.load(Ordering::Relaxed)), (0, 0));
        assert_eq!(decisions.get(&objects[0]), None);
    }

    #[test]
    fn past_the_bound_answers_are_not_kept() {
        static COUNTED: AtomicUsize = AtomicUsize::new(MAX_DECISIONS - 1);
        let decisions = Decisions::counted_in(&COUNTED);
        let (a, b) = (Arc::new(1), Arc::new(2));
        decisions.keep(&a, true);
        decisions.keep(&b, true);
        assert_eq!((decisions.get(&a), decisions.get(&b)), (Some(true), None));
        assert_eq!(COUNTED.load(Ordering::Relaxed), MAX_DECISIONS);
    }
}
