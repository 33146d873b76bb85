//! Kubernetes label selectors, parsed and matched by `grw-selector`, the
//! same code GRW itself uses.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

pub use grw_selector::{Operator, Requirement};

use crate::{Error, Event, Object};

/// A Kubernetes label selector, in the syntax `kubectl -l` takes and with the
/// API server's grammar and validation.
///
/// | requirement            | matches when the label ...                   |
/// |------------------------|----------------------------------------------|
/// | `app=web`, `app==web`  | is present with that value                   |
/// | `app!=web`             | is absent or has another value               |
/// | `app in (web,api)`     | is present with one of the values            |
/// | `app notin (web,api)`  | is absent or has none of the values          |
/// | `app`                  | is present                                   |
/// | `!app`                 | is absent                                    |
/// | `replicas>2`, `n<10`   | is present and an integer above/below it     |
///
/// Requirements are separated by commas and must all hold; the empty
/// selector matches everything. A value left out (`app=`, `app in (a,)`,
/// `app in ()`) is the empty value. Keys (`[prefix/]name`) and values are
/// checked against the rules Kubernetes applies, so a selector that GRW
/// accepts is one the API server accepts too, and the other way round. The
/// grammar in full is documented in the `grw-selector` crate.
///
/// ```
/// use grw_sdk::{LabelSelector, Requirement};
///
/// let selector = LabelSelector::parse("app in (web,api),tier!=cache,replicas>2")?;
/// assert!(selector.matches(&[("app", "web"), ("replicas", "3")]));
/// assert!(!selector.matches(&[("app", "web"), ("replicas", "3"), ("tier", "cache")]));
/// assert!(!selector.matches(&[("app", "web"), ("replicas", "two")]));
/// assert!(matches!(
///     &selector.requirements()[2],
///     Requirement::GreaterThan { key, value: 2 } if key == "replicas"
/// ));
///
/// let error = LabelSelector::parse("app in web").unwrap_err();
/// assert_eq!(
///     error.message(),
///     "invalid label selector `app in web`: expected `(` after `in` at position 7, found `web`"
/// );
/// # Ok::<(), grw_sdk::Error>(())
/// ```
///
/// It also deserializes from a string, so a plugin configuration can hold
/// one directly; a malformed selector is then a configuration error:
///
/// ```
/// use grw_sdk::LabelSelector;
///
/// #[derive(serde::Deserialize)]
/// struct Config {
///     selector: LabelSelector,
/// }
///
/// let config: Config = grw_sdk::parse_config(r#"{"selector": "tier notin (cache)"}"#)?;
/// assert!(config.selector.matches(&[("tier", "web")]));
/// assert!(grw_sdk::parse_config::<Config>(r#"{"selector": "tier notin cache"}"#).is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    inner: grw_selector::LabelSelector,
}

/// Anything labels can be looked up in: [`Event`], [`Object`], maps and
/// lists of pairs.
pub trait Labels {
    /// The value of the label `key`, if present: borrowed where the labels
    /// are at hand, owned where it had to be fetched ([`Event`] asks GRW for
    /// one label at a time).
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>>;
}

impl<T: Labels + ?Sized> Labels for &T {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        (**self).get_label(key)
    }
}

impl Labels for Event {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.label(key)
    }
}

impl Labels for crate::ObjectView {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.label(key)
    }
}

impl Labels for Object {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.label(key).map(Cow::Borrowed)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Labels for [(K, V)] {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| Cow::Borrowed(v.as_ref()))
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> Labels for [(K, V); N] {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.as_slice().get_label(key)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Labels for Vec<(K, V)> {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.as_slice().get_label(key)
    }
}

impl<V: AsRef<str>> Labels for BTreeMap<String, V> {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).map(|v| Cow::Borrowed(v.as_ref()))
    }
}

impl<V: AsRef<str>> Labels for BTreeMap<&str, V> {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).map(|v| Cow::Borrowed(v.as_ref()))
    }
}

impl<V: AsRef<str>, S: std::hash::BuildHasher> Labels for HashMap<String, V, S> {
    fn get_label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).map(|v| Cow::Borrowed(v.as_ref()))
    }
}

impl LabelSelector {
    /// Parses a selector; the error says what is wrong and where (as a
    /// 0-based character position).
    pub fn parse(text: &str) -> Result<Self, Error> {
        Ok(Self {
            inner: text.parse::<grw_selector::LabelSelector>()?,
        })
    }

    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// A selector from requirements that must all hold; they are not
    /// validated.
    pub fn new(requirements: Vec<Requirement>) -> Self {
        Self {
            inner: grw_selector::LabelSelector::new(requirements),
        }
    }

    /// Whether this selector has no requirements (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The requirements, all of which must hold, in the order written.
    pub fn requirements(&self) -> &[Requirement] {
        self.inner.requirements()
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        self.inner
            .requirements()
            .iter()
            .all(|r| r.matches(labels.get_label(r.key()).as_deref()))
    }
}

impl From<grw_selector::LabelSelector> for LabelSelector {
    fn from(inner: grw_selector::LabelSelector) -> Self {
        Self { inner }
    }
}

impl From<LabelSelector> for grw_selector::LabelSelector {
    fn from(selector: LabelSelector) -> Self {
        selector.inner
    }
}

/// The message names the selector and says what was wrong where.
impl From<grw_selector::SelectorError> for Error {
    fn from(error: grw_selector::SelectorError) -> Self {
        Error::new(format!("invalid {error}"))
    }
}

impl FromStr for LabelSelector {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse(text)
    }
}

impl fmt::Display for LabelSelector {
    /// The canonical form, which parses back to the same selector.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<'de> serde::Deserialize<'de> for LabelSelector {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(text: &str) -> LabelSelector {
        LabelSelector::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        LabelSelector::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn empty_selector_matches_everything() {
        for text in ["", "   "] {
            let s = sel(text);
            assert!(s.is_empty());
            assert!(s.matches(&[("a", "b")]));
            assert!(s.matches::<[(&str, &str)]>(&[]));
        }
    }

    #[test]
    fn equality() {
        let s = sel("app=web");
        assert!(s.matches(&[("app", "web")]));
        assert!(!s.matches(&[("app", "api")]));
        assert!(!s.matches::<[(&str, &str)]>(&[]));
        assert_eq!(sel("app==web"), s);
        assert_eq!(sel(" app = web "), s);

        let s = sel("app!=web");
        assert!(!s.matches(&[("app", "web")]));
        assert!(s.matches(&[("app", "api")]));
        assert!(s.matches::<[(&str, &str)]>(&[]));
    }

    #[test]
    fn sets() {
        let s = sel("app in (web, api),tier notin (cache)");
        assert!(s.matches(&[("app", "web")]));
        assert!(s.matches(&[("app", "api"), ("tier", "front")]));
        assert!(!s.matches(&[("app", "api"), ("tier", "cache")]));
        assert!(!s.matches(&[("app", "db")]));
        assert!(!s.matches(&[("tier", "front")]));
        assert_eq!(s.requirements().len(), 2);
        // An empty slot is the empty value, as in Kubernetes.
        assert!(sel("a in (x,)").matches(&[("a", "")]));
        assert!(sel("a in ()").matches(&[("a", "")]));
    }

    #[test]
    fn existence() {
        let s = sel("app,!legacy");
        assert!(s.matches(&[("app", "")]));
        assert!(!s.matches(&[("app", "x"), ("legacy", "true")]));
        assert!(!s.matches(&[("other", "x")]));
    }

    #[test]
    fn integers() {
        let s = sel("replicas>2,replicas<10");
        assert!(s.matches(&[("replicas", "5")]));
        assert!(!s.matches(&[("replicas", "2")]));
        assert!(!s.matches(&[("replicas", "x")]));
        assert!(!s.matches::<[(&str, &str)]>(&[]));
        assert!(err("n>x").contains("integer"));
    }

    #[test]
    fn keys_with_prefix_and_empty_values() {
        let s = sel("app.kubernetes.io/name=shop,empty=");
        assert!(s.matches(&[("app.kubernetes.io/name", "shop"), ("empty", "")]));
        assert!(!s.matches(&[("app.kubernetes.io/name", "shop"), ("empty", "x")]));
    }

    #[test]
    fn matches_events_objects_and_maps() {
        let object = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}});
        let event = Event::new(crate::EventType::Added, object.clone());
        let s = sel("app=web");
        assert!(s.matches(&event));
        assert!(s.matches(&Object::new(object)));
        assert!(s.matches(&BTreeMap::from([("app".to_owned(), "web".to_owned())])));
        assert!(s.matches(&HashMap::from([("app".to_owned(), "web")])));
        assert!(s.matches(&vec![("app".to_owned(), "web".to_owned())]));
    }

    #[test]
    fn malformed_selectors_are_rejected_with_a_reason() {
        assert!(
            err("app in web").contains("expected `(`"),
            "{}",
            err("app in web")
        );
        assert!(err("app in (web").contains("`)`"));
        assert!(err("app=web,").contains("trailing `,` at position 7"));
        assert!(err(",app").contains("expected a label key"));
        assert!(err("app web").contains("expected an operator"));
        assert!(err("app=(web)").contains("expected a value after `=`"));
        assert!(err("-app=web").contains("key `-app` is not a valid label key"));
        assert!(err("Bad_Prefix/app=x").contains("prefix"));
        assert!(err("a=b c").contains("expected `,`"));
        assert!(err("app=-web").contains("value `-web` of `app` is not a valid label value"));
        assert!(err(&format!("a={}", "x".repeat(64))).contains("63"));
        assert!(LabelSelector::parse("app==").is_ok());
        assert!(err("n>-1").contains("not a valid label value"));
        assert!(err("n gt 1").contains("`gt` at position 2 is not an operator"));
        let e = err("app in web");
        assert!(
            e.starts_with("invalid label selector `app in web`: ") && e.contains("position 7"),
            "{e}"
        );
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "app in (api,web),tier!=cache",
            "a=b,!c,d,e notin (x,y),n>1,m<2",
        ] {
            let s = sel(text);
            assert_eq!(sel(&s.to_string()), s);
        }
        assert_eq!(sel("app in (web)").to_string(), "app in (web)");
        assert_eq!(sel("app==web").to_string(), "app=web");
    }

    #[test]
    fn requirements_are_the_shared_selector_types() {
        let s = sel("app=web,n<3");
        let [first, second] = s.requirements() else {
            panic!("two requirements");
        };
        assert_eq!(first.operator(), Operator::Equals);
        assert_eq!(
            second,
            &Requirement::LessThan {
                key: "n".into(),
                value: 3
            }
        );
        assert_eq!(LabelSelector::new(s.requirements().to_vec()), s);
        let shared: grw_selector::LabelSelector = s.clone().into();
        assert_eq!(LabelSelector::from(shared), s);
        assert!(LabelSelector::everything().is_empty());
    }

    #[test]
    fn deserializes_from_a_string() {
        let s: LabelSelector = serde_json::from_str(r#""app=web""#).unwrap();
        assert_eq!(s, sel("app=web"));
        let e = serde_json::from_str::<LabelSelector>(r#""app in web""#).unwrap_err();
        assert!(e.to_string().contains("invalid label selector"));
    }
}
