//! Filter plugin decisions for queued changes: each (plugin version, change)
//! is decided once, off the async threads, however many subscriptions use
//! that filter, and whichever of their workers asks first.
//!
//! Decisions are made when a subscription's worker reaches the change, not
//! when the change is queued: a slow or looping filter then holds up only the
//! subscriptions that use it, never the feed or other subscriptions.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::OnceCell;

use crate::gvk::Gvk;
use crate::plugin::Plugins;
use crate::store::Change;

/// Decisions kept at most. Each is about 100 bytes; one is kept from the
/// first worker that asks until the change leaves the outbox. Past this,
/// the oldest are forgotten, and decided again if still asked for.
const MAX_KEPT: usize = 100_000;

/// A change number and a plugin version (`name@hash`).
type Key = (u64, Arc<str>);

/// One decision, made by whoever asks first; the others wait for it.
type Slot = Arc<OnceCell<bool>>;

/// Decisions by change and plugin version.
#[derive(Default)]
pub(super) struct Decisions {
    kept: Mutex<BTreeMap<Key, Slot>>,
}

impl Decisions {
    /// Whether change `number` passes every filter in `filters`, in order. A
    /// filter plugin still loading is waited for; one that is not loaded
    /// lets nothing pass (and says so in the
    /// log); one that cannot answer decides by its fail mode.
    pub(super) async fn passes(
        &self,
        plugins: &Plugins,
        filters: &[String],
        subscription: &str,
        number: u64,
        gvk: &Gvk,
        change: &Arc<Change>,
    ) -> bool {
        for name in filters {
            // A plugin compiling for the first time is waited for, so that
            // no change slips past it meanwhile.
            plugins.loaded(name).await;
            let plugin = match plugins.filter(name) {
                Ok(plugin) => plugin,
                Err(e) => {
                    tracing::warn!(subscription, error = %e, object = %change.object.key(), "filter plugin unavailable; the change does not pass");
                    return false;
                }
            };
            let cell = self.slot(
                number,
                format!("{}@{}", plugin.name, plugin.version()).into(),
            );
            let (gvk, change) = (gvk.clone(), change.clone());
            let pass = *cell
                .get_or_init(|| async move {
                    let name = plugin.name.clone();
                    tokio::task::spawn_blocking(move || plugin.decide(&gvk, &change))
                        .await
                        .unwrap_or_else(|e| {
                            tracing::error!(plugin = %name, error = %e, "filter call failed; the change does not pass");
                            false
                        })
                })
                .await;
            if !pass {
                return false;
            }
        }
        true
    }

    fn slot(&self, number: u64, plugin: Arc<str>) -> Slot {
        let mut kept = self.kept.lock();
        let slot = kept.entry((number, plugin)).or_default().clone();
        while kept.len() > MAX_KEPT {
            kept.pop_first();
        }
        slot
    }

    /// Forgets the decisions about changes that left the outbox.
    pub(super) fn forget(&self, numbers: &[u64]) {
        if numbers.is_empty() {
            return;
        }
        let mut kept = self.kept.lock();
        for number in numbers {
            let keys: Vec<Key> = kept
                .range((*number, Arc::<str>::from(""))..)
                .take_while(|((n, _), _)| n == number)
                .map(|(k, _)| k.clone())
                .collect();
            for key in keys {
                kept.remove(&key);
            }
        }
    }

    /// Decisions kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.kept.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgetting_a_change_forgets_every_plugin_s_decision() {
        let decisions = Decisions::default();
        decisions.slot(1, "a@1".into());
        decisions.slot(1, "b@1".into());
        decisions.slot(2, "a@1".into());
        assert_eq!(decisions.len(), 3);
        decisions.forget(&[1]);
        assert_eq!(decisions.len(), 1);
        decisions.forget(&[7, 2]);
        assert_eq!(decisions.len(), 0);
    }

    #[test]
    fn the_same_change_and_plugin_share_one_slot() {
        let decisions = Decisions::default();
        let first = decisions.slot(5, "a@1".into());
        assert!(Arc::ptr_eq(&first, &decisions.slot(5, "a@1".into())));
        assert!(!Arc::ptr_eq(&first, &decisions.slot(5, "a@2".into())));
    }
}
