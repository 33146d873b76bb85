//! The query parameters of a get, list or watch, read and checked as the
//! API server reads and checks them (its `ListOptions`): unknown parameters
//! are ignored (clients send `timeout`, `pretty`...), a combination it
//! refuses is refused with its `422 Invalid` and the same field messages.
//! GRW's search parameters (`nameContains`, `ownerUid`, `ownerKind`,
//! `ownerName`, `ownerDepth`; no Kubernetes parameter has these names) are
//! read too, with the native API's rules, and refused with `400 BadRequest`.

use std::time::Duration;

use super::status::Status;
use crate::api::Problem;
use crate::api::search::{Search, SearchError};
use crate::query::{ContinueToken, FieldSelector, LabelSelector};

/// Most objects a page may hold, whatever `limit` asks.
const MAX_LIMIT: usize = 100_000;

/// A resourceVersion of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Version {
    /// Not given: the most recent state (a consistent read on the API
    /// server; here, the cache as it is).
    #[default]
    Unset,
    /// `0`: any state.
    Any,
    /// A resourceVersion the client saw.
    At(u64),
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// `NotOlderThan`: at least as new as the resourceVersion.
    NotOlderThan,
    /// `Exact`: exactly at the resourceVersion.
    Exact,
}

/// The options of one request.
#[derive(Debug, Default)]
pub(crate) struct ListOptions {
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
    /// `limit`; `None` for all.
    pub limit: Option<usize>,
    /// `continue`.
    pub continue_from: Option<ContinueToken>,
    /// `resourceVersion`.
    pub version: Version,
    /// `resourceVersionMatch`.
    pub matching: Option<Match>,
    /// `watch=true`, or the legacy `/watch/` path segment.
    pub watch: bool,
    /// `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// `timeoutSeconds` of a watch.
    pub timeout: Option<Duration>,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<bool>,
    /// `includeObject`, for tables.
    pub include_object: Option<String>,
    /// GRW's name and owner search.
    pub search: Search,
}

impl ListOptions {
    /// Reads the query string `raw`; `watch_segment` is the legacy
    /// `/watch/` path.
    pub(crate) fn parse(raw: Option<&str>, watch_segment: bool) -> Result<ListOptions, Status> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or(""))
            .map_err(|e| Status::bad_request(format!("the query string is not valid: {e}")))?;
        // Go's url.Values.Get: the first of repeated parameters counts.
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let flag = |name: &str| -> Result<Option<bool>, Status> {
            match get(name) {
                None => Ok(None),
                Some("true" | "1" | "True" | "TRUE" | "t" | "T") => Ok(Some(true)),
                Some("false" | "0" | "False" | "FALSE" | "f" | "F" | "") => Ok(Some(false)),
                Some(other) => Err(Status::bad_request(format!(
                    "query parameter {name}: invalid boolean {other:?}"
                ))),
            }
        };
        let selector_error = |e: &dyn std::fmt::Display| Status::bad_request(e.to_string());
        let mut options = ListOptions {
            labels: get("labelSelector")
                .filter(|s| !s.is_empty())
                .map(str::parse)
                .transpose()
                .map_err(|e| selector_error(&e))?
                .unwrap_or_default(),
            fields: get("fieldSelector")
                .filter(|s| !s.is_empty())
                .map(str::parse)
                .transpose()
                .map_err(|e| selector_error(&e))?
                .unwrap_or_default(),
            watch: watch_segment || flag("watch")?.unwrap_or(false),
            bookmarks: flag("allowWatchBookmarks")?.unwrap_or(false),
            send_initial_events: flag("sendInitialEvents")?,
            include_object: get("includeObject").map(String::from),
            search: Search::parse(get).map_err(search_status)?,
            ..ListOptions::default()
        };
        if let Some(limit) = get("limit").filter(|s| !s.is_empty()) {
            let limit: i64 = limit.parse().map_err(|_| {
                Status::bad_request(format!("query parameter limit: invalid number {limit:?}"))
            })?;
            // The API server reads 0 and below as no limit.
            options.limit = (limit > 0).then(|| (limit as u64).min(MAX_LIMIT as u64) as usize);
        }
        if let Some(seconds) = get("timeoutSeconds").filter(|s| !s.is_empty()) {
            let seconds: u64 = seconds.parse().map_err(|_| {
                Status::bad_request(format!(
                    "query parameter timeoutSeconds: invalid number {seconds:?}"
                ))
            })?;
            options.timeout = (seconds > 0).then(|| Duration::from_secs(seconds));
        }
        if let Some(token) = get("continue").filter(|s| !s.is_empty()) {
            let token = ContinueToken::parse(token).map_err(|_| {
                Status::bad_request(
                    "continue key is not valid: pass the continue value of the previous page unchanged",
                )
            })?;
            options.continue_from = Some(token);
        }
        options.version = match get("resourceVersion").unwrap_or("") {
            "" => Version::Unset,
            "0" => Version::Any,
            text => Version::At(text.parse().map_err(|_| {
                Status::bad_request(format!(
                    "invalid resource version {text:?}: resourceVersions GRW serves are numbers"
                ))
            })?),
        };
        let matching = get("resourceVersionMatch").unwrap_or("");
        options.matching = match matching {
            "" => None,
            "NotOlderThan" => Some(Match::NotOlderThan),
            "Exact" => Some(Match::Exact),
            _ => None,
        };
        options.check(matching)?;
        if options.watch {
            options.search.check_streamable().map_err(search_status)?;
        }
        if options.continue_from.is_some() && options.version != Version::Unset && !options.watch {
            return Err(Status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        Ok(options)
    }

    /// The API server's checks of the options' combinations.
    fn check(&self, matching: &str) -> Result<(), Status> {
        let field = "resourceVersionMatch";
        let mut problems: Vec<(&str, String)> = Vec::new();
        let forbidden = |what: &str| format!("Forbidden: {what}");
        if self.watch {
            if self.send_initial_events.is_some() && matching != "NotOlderThan" {
                problems.push((
                    field,
                    forbidden(
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    ),
                ));
            }
            if !matching.is_empty() {
                if self.send_initial_events.is_none() {
                    problems.push((
                        field,
                        forbidden(
                            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                        ),
                    ));
                }
                if matching != "NotOlderThan" {
                    problems.push((
                        field,
                        format!(
                            "Unsupported value: {matching:?}: supported values: \"NotOlderThan\""
                        ),
                    ));
                }
            }
        } else {
            if !matching.is_empty() {
                if self.version == Version::Unset {
                    problems.push((
                        field,
                        forbidden(
                            "resourceVersionMatch is forbidden unless resourceVersion is provided",
                        ),
                    ));
                }
                if self.continue_from.is_some() {
                    problems.push((
                        field,
                        forbidden("resourceVersionMatch is forbidden when continue is provided"),
                    ));
                }
                if self.matching.is_none() {
                    problems.push((
                        field,
                        format!(
                            "Unsupported value: {matching:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                        ),
                    ));
                }
                if self.matching == Some(Match::Exact) && self.version == Version::Any {
                    problems.push((
                        field,
                        forbidden(
                            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                        ),
                    ));
                }
            }
            if self.send_initial_events.is_some() {
                problems.push((
                    "sendInitialEvents",
                    forbidden("sendInitialEvents is forbidden for list"),
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Status::invalid_options(&problems))
        }
    }
}

/// A search the request cannot run, as a `Status`: the owner's kind not
/// synced in time or not served right now keeps its meaning (a client
/// retries those); anything else is the request's fault.
pub(super) fn search_status(error: SearchError) -> Status {
    let message = error.to_string();
    match error {
        SearchError::OwnerKind(problem) if problem.status.as_u16() == 504 => {
            Status::timeout(message, 1)
        }
        SearchError::OwnerKind(problem) if problem.status.as_u16() == 503 => {
            Status::unavailable(message)
        }
        SearchError::OwnerKind(Problem {
            retry_after: Some(seconds),
            ..
        }) => Status::too_many_requests(message, seconds),
        // The owner's kind, which the caller or GRW may not list.
        SearchError::OwnerKind(problem) if problem.status.as_u16() == 403 => Status::forbidden(
            super::status::Subject {
                group: "",
                resource: "",
            },
            None,
            &message,
        ),
        _ => Status::bad_request(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<ListOptions, String> {
        ListOptions::parse(Some(raw), false).map_err(|s| s.message)
    }

    #[test]
    fn options_read_as_the_api_server_reads_them() {
        let o = parse("labelSelector=app%3Dweb&limit=500&timeout=32s&pretty=true").unwrap();
        assert_eq!(o.labels.to_string(), "app=web");
        assert_eq!(o.limit, Some(500));
        assert!(!o.watch);
        assert_eq!(o.version, Version::Unset);

        let o = parse("watch=1&resourceVersion=328&allowWatchBookmarks=true&timeoutSeconds=290")
            .unwrap();
        assert!(o.watch && o.bookmarks);
        assert_eq!(o.version, Version::At(328));
        assert_eq!(o.timeout, Some(Duration::from_secs(290)));

        let o = parse("watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true").unwrap();
        assert_eq!(o.send_initial_events, Some(true));
        assert_eq!(o.matching, Some(Match::NotOlderThan));

        assert_eq!(parse("resourceVersion=0").unwrap().version, Version::Any);
        assert_eq!(parse("limit=0").unwrap().limit, None);
        assert_eq!(parse("limit=-5").unwrap().limit, None);
        assert_eq!(parse("limit=999999999").unwrap().limit, Some(MAX_LIMIT));
        assert!(ListOptions::parse(Some(""), true).unwrap().watch);
    }

    #[test]
    fn refused_combinations_get_the_api_servers_messages() {
        let cases = [
            (
                "resourceVersionMatch=NotOlderThan",
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ),
            (
                "resourceVersion=5&resourceVersionMatch=Newest",
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
            ),
            (
                "resourceVersion=0&resourceVersionMatch=Exact",
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ),
            (
                "sendInitialEvents=true",
                "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
            ),
            (
                "watch=true&sendInitialEvents=true",
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ),
            (
                "watch=true&resourceVersionMatch=NotOlderThan",
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ),
            (
                "watch=true&sendInitialEvents=true&resourceVersionMatch=Exact",
                "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]",
            ),
            (
                "labelSelector=app+in+(web",
                "label selector `app in (web`: missing `)` to close the `(` at position 7",
            ),
            ("limit=ten", "query parameter limit: invalid number \"ten\""),
            (
                "watch=maybe",
                "query parameter watch: invalid boolean \"maybe\"",
            ),
            (
                "resourceVersion=abc",
                "invalid resource version \"abc\": resourceVersions GRW serves are numbers",
            ),
            (
                "continue=nope",
                "continue key is not valid: pass the continue value of the previous page unchanged",
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(parse(raw).err().as_deref(), Some(want), "{raw}");
        }
        let token = ContinueToken::after_at(&crate::store::ObjectKey::new("a", "b"), 5).to_string();
        assert_eq!(
            parse(&format!("continue={token}&resourceVersion=5"))
                .err()
                .as_deref(),
            Some("specifying resource version is not allowed when using continue")
        );
    }
}
