//! Test-controlled misbehaviour: the bearer token, injected failures and slow lists.

use std::time::Duration;

/// Fails requests whose target contains a substring.
#[derive(Debug, Clone)]
struct FailureRule {
    path_contains: String,
    status: u16,
    /// Requests still to fail; `usize::MAX` means until cleared.
    remaining: usize,
}

/// Run-time controls a test can change.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    /// Required bearer token; `None` accepts any request.
    pub token: Option<String>,
    rules: Vec<FailureRule>,
    /// Sleep before answering each list request.
    pub list_delay: Duration,
    /// Sleep before answering each TokenReview and SubjectAccessReview.
    pub review_delay: Duration,
    /// Objects per second a list hands out at most, if set: see
    /// [`Pace`].
    pub list_pace: Option<Pace>,
    /// Authorization as a namespaced Role grants it, if set.
    pub namespace_only: Option<NamespaceOnly>,
    /// How watches asking for `sendInitialEvents` are answered.
    pub streaming_lists: StreamingLists,
}

/// How the server answers a streaming list (a watch with
/// `sendInitialEvents=true`), as servers of different versions do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StreamingLists {
    /// Served: the objects as ADDED events, then the bookmark annotated
    /// `k8s.io/initial-events-end` (Kubernetes 1.27 and later with the
    /// `WatchList` feature on).
    #[default]
    Served,
    /// Refused with 422 Invalid (the `WatchList` feature off).
    Refused,
    /// The parameters ignored, as servers before 1.27 do: a watch without
    /// resourceVersion sends the objects as ADDED events and goes on with
    /// changes and plain bookmarks.
    Ignored,
}

/// A user whose only grant is a Role in one namespace: every resource
/// there, nothing at the cluster scope or in another namespace. Discovery
/// stays open, as `system:discovery` keeps it for every user.
#[derive(Debug, Clone)]
pub(crate) struct NamespaceOnly {
    pub namespace: String,
    pub user: String,
}

impl NamespaceOnly {
    /// The API server's message refusing `verb` on `plural` of `group` in
    /// `namespace` (`None`: the cluster scope), or `None` if allowed.
    pub(crate) fn refusal(
        &self,
        verb: &str,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Option<String> {
        if namespace == Some(self.namespace.as_str()) {
            return None;
        }
        let resource = if group.is_empty() {
            plural.to_string()
        } else {
            format!("{plural}.{group}")
        };
        let place = match namespace {
            None => "at the cluster scope".to_string(),
            Some(ns) => format!("in the namespace \"{ns}\""),
        };
        Some(format!(
            "{resource} is forbidden: User \"{}\" cannot {verb} resource \"{plural}\" in API group \"{group}\" {place}",
            self.user
        ))
    }
}

impl Faults {
    /// No failures, no delay, the given token.
    pub(crate) fn with_token(token: Option<String>) -> Self {
        Faults {
            token,
            ..Faults::default()
        }
    }

    /// Adds a failure rule.
    pub(crate) fn add(&mut self, path_contains: &str, status: u16, count: usize) {
        if count > 0 {
            self.rules.push(FailureRule {
                path_contains: path_contains.to_string(),
                status,
                remaining: count,
            });
        }
    }

    /// Removes every failure rule.
    pub(crate) fn clear(&mut self) {
        self.rules.clear();
    }

    /// The status to fail a request with, if a rule matches `target`
    /// (`path` or `path?query`). Consumes one use of the first matching rule.
    pub(crate) fn take(&mut self, target: &str) -> Option<u16> {
        let index = self
            .rules
            .iter()
            .position(|r| target.contains(&r.path_contains))?;
        let rule = &mut self.rules[index];
        let status = rule.status;
        if rule.remaining != usize::MAX {
            rule.remaining -= 1;
            if rule.remaining == 0 {
                self.rules.remove(index);
            }
        }
        Some(status)
    }

    /// Whether the `Authorization` header value is acceptable.
    pub(crate) fn authorized(&self, authorization: Option<&str>) -> bool {
        match &self.token {
            None => true,
            Some(token) => authorization
                .and_then(|h| h.strip_prefix("Bearer "))
                .is_some_and(|t| t.trim() == token),
        }
    }
}

/// The message of an injected failure, modelled on what real servers say.
pub(crate) fn failure_message(status: u16, method: &str, path: &str) -> String {
    match status {
        401 => "Unauthorized".to_string(),
        403 => format!(
            "forbidden: User \"system:serviceaccount:default:grw\" cannot {} path \"{path}\"",
            method.to_ascii_lowercase()
        ),
        404 => "the server could not find the requested resource".to_string(),
        429 => "Too many requests, please try again later.".to_string(),
        500 => "Internal error occurred: injected failure".to_string(),
        503 => "the server is currently unable to handle the request".to_string(),
        504 => "Timeout: request did not complete within the allowed duration".to_string(),
        _ => format!("injected failure with status {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_count_down() {
        let mut f = Faults::default();
        f.add("/pods", 403, 2);
        f.add("/api", 500, usize::MAX);
        assert_eq!(f.take("/api/v1/pods"), Some(403));
        assert_eq!(f.take("/api/v1/nodes"), Some(500));
        assert_eq!(f.take("/api/v1/pods?watch=true"), Some(403));
        assert_eq!(f.take("/api/v1/pods"), Some(500));
        assert_eq!(f.take("/apis"), Some(500));
        f.clear();
        assert_eq!(f.take("/api/v1/pods"), None);
    }

    #[test]
    fn bearer_tokens() {
        let mut f = Faults::default();
        assert!(f.authorized(None));
        f.token = Some("secret".into());
        assert!(f.authorized(Some("Bearer secret")));
        assert!(!f.authorized(Some("Bearer other")));
        assert!(!f.authorized(Some("Basic secret")));
        assert!(!f.authorized(None));
    }
}

/// The pace of a real API server handing out a list. It encodes each
/// object for each request, where the fake copies bytes it keeps made:
/// a kube-apiserver v1.32 on 2 cores took 1.37 s to hand 10,000 Pods to
/// curl (about 7,300 a second), the fake takes 0.03 s. A benchmark that
/// compares a client's sync with the list's transfer sets this to measure
/// against a server of that speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Objects a second, at least 1.
    per_second: u32,
}

impl Pace {
    /// `per_second` objects a second; `None` for 0.
    pub fn new(per_second: u32) -> Option<Pace> {
        (per_second > 0).then_some(Pace { per_second })
    }

    /// When the answer begun at `start` may have handed out `sent` objects.
    pub(crate) fn due(self, start: tokio::time::Instant, sent: usize) -> tokio::time::Instant {
        start + Duration::from_secs_f64(sent as f64 / f64::from(self.per_second))
    }
}
