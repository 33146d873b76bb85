//! What a plugin wants to see.

use crate::{Event, EventType, Gvk};

/// A set of kinds: each part that is `None` matches anything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KindPattern {
    /// API group; `Some("")` is the core group.
    pub group: Option<String>,
    /// API version.
    pub version: Option<String>,
    /// Kind.
    pub kind: Option<String>,
}

impl KindPattern {
    /// Matches every kind.
    pub fn any() -> Self {
        Self::default()
    }

    /// A kind in any group and version, e.g. `KindPattern::kind("Pod")`.
    pub fn kind(kind: impl Into<String>) -> Self {
        Self {
            kind: Some(kind.into()),
            ..Self::default()
        }
    }

    /// A kind in one group, any version, e.g. `group_kind("apps", "Deployment")`.
    pub fn group_kind(group: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            group: Some(group.into()),
            kind: Some(kind.into()),
            ..Self::default()
        }
    }

    /// Exactly one group/version/kind, e.g. `gvk("apps", "v1", "Deployment")`;
    /// use `""` as the group for core kinds.
    pub fn gvk(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Self {
            group: Some(group.into()),
            version: Some(version.into()),
            kind: Some(kind.into()),
        }
    }

    /// Every kind of one API group.
    pub fn group(group: impl Into<String>) -> Self {
        Self {
            group: Some(group.into()),
            ..Self::default()
        }
    }

    /// Whether `gvk` is in this set.
    pub fn matches(&self, gvk: &Gvk) -> bool {
        fn part(pattern: &Option<String>, value: &str) -> bool {
            pattern.as_deref().is_none_or(|p| p == value)
        }
        part(&self.group, &gvk.group)
            && part(&self.version, &gvk.version)
            && part(&self.kind, &gvk.kind)
    }
}

impl From<&Gvk> for KindPattern {
    fn from(gvk: &Gvk) -> Self {
        Self::gvk(&gvk.group, &gvk.version, &gvk.kind)
    }
}

/// What a plugin wants to see, returned from `init`. GRW never calls the
/// plugin for other events, which saves the cost of crossing into the
/// sandbox.
///
/// Empty lists mean "everything":
///
/// ```
/// use grw_sdk::{EventType, Interest, KindPattern};
///
/// let everything = Interest::all();
/// let some = Interest::all()
///     .kinds([KindPattern::kind("Pod"), KindPattern::gvk("apps", "v1", "Deployment")])
///     .event_types([EventType::Modified]);
/// assert_eq!(some.kinds.len(), 2);
/// # let _ = everything;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interest {
    /// Kinds of interest; empty means every kind.
    pub kinds: Vec<KindPattern>,
    /// Event types of interest; empty means every type.
    pub event_types: Vec<EventType>,
}

impl Interest {
    /// Every event of every kind.
    pub fn all() -> Self {
        Self::default()
    }

    /// Adds kinds of interest.
    pub fn kinds(mut self, kinds: impl IntoIterator<Item = KindPattern>) -> Self {
        self.kinds.extend(kinds);
        self
    }

    /// Adds event types of interest.
    pub fn event_types(mut self, event_types: impl IntoIterator<Item = EventType>) -> Self {
        for event_type in event_types {
            if !self.event_types.contains(&event_type) {
                self.event_types.push(event_type);
            }
        }
        self
    }

    /// Whether an event of this kind and type would be delivered.
    pub fn matches(&self, gvk: &Gvk, event_type: EventType) -> bool {
        (self.kinds.is_empty() || self.kinds.iter().any(|k| k.matches(gvk)))
            && (self.event_types.is_empty() || self.event_types.contains(&event_type))
    }

    /// Whether `event` would be delivered; handy in unit tests.
    pub fn matches_event(&self, event: &Event) -> bool {
        self.matches(event.gvk(), event.event_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_matches_everything() {
        let all = Interest::all();
        assert!(all.kinds.is_empty() && all.event_types.is_empty());
        assert!(all.matches(&Gvk::new("x", "v9", "Thing"), EventType::Deleted));
    }

    #[test]
    fn builder_collects_kinds_and_event_types() {
        let interest = Interest::all()
            .kinds([
                KindPattern::kind("Pod"),
                KindPattern::gvk("apps", "v1", "Deployment"),
            ])
            .event_types([EventType::Modified, EventType::Modified])
            .event_types([EventType::Added]);
        assert_eq!(interest.kinds.len(), 2);
        assert_eq!(
            interest.event_types,
            vec![EventType::Modified, EventType::Added]
        );

        let pod = Gvk::new("", "v1", "Pod");
        assert!(interest.matches(&pod, EventType::Modified));
        assert!(!interest.matches(&pod, EventType::Deleted));
        assert!(interest.matches(&Gvk::new("apps", "v1", "Deployment"), EventType::Added));
        assert!(!interest.matches(&Gvk::new("apps", "v1beta1", "Deployment"), EventType::Added));
        assert!(!interest.matches(&Gvk::new("apps", "v1", "StatefulSet"), EventType::Added));
    }

    #[test]
    fn kind_patterns() {
        let deployment = Gvk::new("apps", "v1", "Deployment");
        assert!(KindPattern::any().matches(&deployment));
        assert!(KindPattern::group("apps").matches(&deployment));
        assert!(!KindPattern::group("").matches(&deployment));
        assert!(KindPattern::group_kind("apps", "Deployment").matches(&deployment));
        assert!(KindPattern::from(&deployment).matches(&deployment));
        assert!(!KindPattern::gvk("", "v1", "Deployment").matches(&deployment));
    }

    #[test]
    fn matches_event() {
        let event = Event::new(
            EventType::Added,
            serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
        );
        assert!(
            Interest::all()
                .kinds([KindPattern::kind("Pod")])
                .matches_event(&event)
        );
        assert!(
            !Interest::all()
                .event_types([EventType::Deleted])
                .matches_event(&event)
        );
    }
}
