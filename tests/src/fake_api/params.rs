//! Query parameters of list and watch requests.

use super::util::{parse_bool, parse_query};

/// The list/watch options a request carries. Unknown parameters are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Params {
    /// `watch=true|1`.
    pub watch: bool,
    /// `resourceVersion`; empty is treated as absent.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (`Exact`, `NotOlderThan`).
    pub resource_version_match: Option<String>,
    /// `limit`; `0` is treated as absent.
    pub limit: Option<usize>,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
    /// `sendInitialEvents`.
    pub send_initial_events: bool,
}

impl Params {
    /// Parses a raw query string; the error text is meant for a 400 Status.
    pub(crate) fn parse(query: &str) -> Result<Params, String> {
        let mut p = Params::default();
        for (key, value) in parse_query(query) {
            let non_empty = (!value.is_empty()).then(|| value.clone());
            let flag =
                || parse_bool(&value).ok_or_else(|| format!("invalid value for {key}: {value:?}"));
            match key.as_str() {
                "watch" => p.watch = flag()?,
                "allowWatchBookmarks" => p.allow_bookmarks = flag()?,
                "sendInitialEvents" => p.send_initial_events = flag()?,
                "resourceVersion" => p.resource_version = non_empty,
                "resourceVersionMatch" => p.resource_version_match = non_empty,
                "continue" => p.continue_token = non_empty,
                "labelSelector" => p.label_selector = non_empty,
                "fieldSelector" => p.field_selector = non_empty,
                "limit" => {
                    let n: i64 = value
                        .parse()
                        .map_err(|_| format!("invalid value for limit: {value:?}"))?;
                    p.limit = usize::try_from(n).ok().filter(|n| *n > 0);
                }
                "timeoutSeconds" => {
                    let n: i64 = value
                        .parse()
                        .map_err(|_| format!("invalid value for timeoutSeconds: {value:?}"))?;
                    p.timeout_seconds = u64::try_from(n).ok().filter(|n| *n > 0);
                }
                _ => {}
            }
        }
        Ok(p)
    }

    /// `resourceVersion` as a number: `Ok(None)` when absent or `"0"`.
    pub(crate) fn numeric_rv(&self) -> Result<Option<u64>, String> {
        match self.resource_version.as_deref() {
            None | Some("0") => Ok(None),
            Some(s) => s
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("invalid resource version: {s:?}")),
        }
    }
}

/// Whether a raw query asks for a watch.
pub(crate) fn is_watch(query: &str) -> bool {
    parse_query(query)
        .iter()
        .any(|(k, v)| k == "watch" && parse_bool(v) == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kube_watch_query() {
        let p = Params::parse(
            "&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=42&labelSelector=app%3Dweb",
        )
        .unwrap();
        assert!(p.watch && p.allow_bookmarks);
        assert_eq!(p.timeout_seconds, Some(290));
        assert_eq!(p.numeric_rv(), Ok(Some(42)));
        assert_eq!(p.label_selector.as_deref(), Some("app=web"));
        assert!(Params::parse("limit=x").is_err());
        assert_eq!(Params::parse("limit=0").unwrap().limit, None);
        assert_eq!(
            Params::parse("resourceVersion=0").unwrap().numeric_rv(),
            Ok(None)
        );
        assert!(is_watch("watch=1") && !is_watch("watch=false"));
    }
}
