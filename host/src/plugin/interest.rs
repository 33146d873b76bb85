//! What a plugin declared at `init`: the events it wants to see.

use crate::gvk::Gvk;
use crate::store::ChangeType;

/// What a plugin declared at `init`. For a filter, events outside it do not
/// pass; for a notifier, they are not its business and count as delivered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interest {
    /// `(group, version, kind)` patterns, `None` parts match anything; empty = all kinds.
    pub kinds: Vec<(Option<String>, Option<String>, Option<String>)>,
    /// `ADDED`/`MODIFIED`/`DELETED`; empty = all types.
    pub event_types: Vec<&'static str>,
}

impl Interest {
    /// Whether an event of this kind and type is of interest.
    pub fn wants(&self, gvk: &Gvk, kind: ChangeType) -> bool {
        let part = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        (self.kinds.is_empty()
            || self.kinds.iter().any(|(g, v, k)| {
                part(
                    &g.as_ref()
                        .map(|g| crate::gvk::normalize_group(g).to_string()),
                    &gvk.group,
                ) && part(v, &gvk.version)
                    && part(k, &gvk.kind)
            }))
            && (self.event_types.is_empty() || self.event_types.contains(&kind.as_str()))
    }
}
