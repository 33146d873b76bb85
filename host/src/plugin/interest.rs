//! What a plugin declared at `init`: the events it wants to see.

use crate::gvk::Gvk;
use crate::store::ChangeType;

/// What a plugin declared at `init`. For a filter, events outside it do not
/// pass; for a notifier, they are not its business and count as delivered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interest {
    /// `(group, version, kind)` patterns, `None` parts match anything; empty
    /// = all kinds. Groups are normalized (`core` is `""`).
    pub kinds: Vec<(Option<String>, Option<String>, Option<String>)>,
    /// `ADDED`/`MODIFIED`/`DELETED`; empty = all types.
    pub event_types: Vec<&'static str>,
}

impl Interest {
    /// An interest in `kinds` (group, version, kind; `None` matches
    /// anything) and `event_types` (empty lists: everything).
    pub fn new(
        kinds: Vec<(Option<String>, Option<String>, Option<String>)>,
        event_types: Vec<ChangeType>,
    ) -> Interest {
        Interest {
            kinds: kinds
                .into_iter()
                .map(|(g, v, k)| (g.map(|g| crate::gvk::normalize_group(&g).to_string()), v, k))
                .collect(),
            event_types: event_types.into_iter().map(ChangeType::as_str).collect(),
        }
    }

    /// Whether an event of this kind and type is of interest.
    pub fn wants(&self, gvk: &Gvk, kind: ChangeType) -> bool {
        self.wants_kind(gvk)
            && (self.event_types.is_empty() || self.event_types.contains(&kind.as_str()))
    }

    /// Whether objects of this kind are of interest.
    pub fn wants_kind(&self, gvk: &Gvk) -> bool {
        let part = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        self.kinds.is_empty()
            || self
                .kinds
                .iter()
                .any(|(g, v, k)| part(g, &gvk.group) && part(v, &gvk.version) && part(k, &gvk.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_types_narrow_what_is_wanted() {
        let pods = Interest::new(
            vec![(Some("core".into()), None, Some("Pod".into()))],
            vec![ChangeType::Modified],
        );
        let pod = Gvk::new("", "v1", "Pod");
        assert!(pods.wants(&pod, ChangeType::Modified));
        assert!(!pods.wants(&pod, ChangeType::Added));
        assert!(!pods.wants(&Gvk::new("apps", "v1", "Pod"), ChangeType::Modified));
        assert!(Interest::new(vec![], vec![]).wants(&pod, ChangeType::Deleted));
    }
}
