//! Leader election: of several replicas, the one holding a
//! `coordination.k8s.io/v1` Lease delivers notifications.
//!
//! Every replica watches, caches, serves queries and queues every change in
//! its own outbox, so each can take over. Only the holder of the Lease sends.
//! It renews the Lease every `retryPeriod` (and soon after it settled
//! deliveries), writing into it, as the annotation [`PROGRESS_ANNOTATION`],
//! the last delivery each subscription settled. The others read the Lease
//! as often, drop from their queues what the leader settled, and take the
//! Lease over once it was not renewed for `leaseDuration`, as measured by
//! their own clocks from when they saw it change (clocks of different
//! machines are never compared). A leader that could not renew for
//! `renewDeadline`, which is shorter, has stopped sending by then.
//!
//! On a takeover the new leader sends what its queues hold past the old
//! leader's last recorded delivery: the deliveries the old one made since
//! its last write of the Lease come again, with the same delivery ids
//! (`uid/resourceVersion/TYPE`, derived alike by every replica); none is
//! lost as long as one replica that saw a change lives on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;

use serde::{Deserialize, Serialize};

use crate::config::LeaderElection;
use crate::kube::{ApiError, KubeClient};

/// The Lease annotation holding the leader's last settled delivery per
/// subscription (JSON: name → `{id, resourceVersion}`).
pub const PROGRESS_ANNOTATION: &str = "grw.io/delivered";

/// Where the service account's namespace is mounted in a Pod.
const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The last delivery a subscription settled (delivered, filtered out or
/// dead-lettered): what the leader publishes in its Lease and followers trim
/// their queues by. Its id is the delivery id every replica derives alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivered {
    /// The delivery id, `uid/resourceVersion/TYPE`.
    pub id: String,
    /// The object's resourceVersion in it.
    pub resource_version: String,
}

/// What the replica holding the Lease drives: the notification engine,
/// whose progress the Lease carries. The elector knows it only by this, so
/// that leader election sits below what it elects.
pub trait Deliveries: Send + Sync + 'static {
    /// Starts or stops delivering. A replica that does not deliver still
    /// queues every change, so that it can take over.
    fn set_leading(&self, leading: bool);
    /// Told each time deliveries were settled.
    fn settled(&self) -> Arc<tokio::sync::Notify>;
    /// The last delivery each subscription settled.
    fn delivered(&self) -> BTreeMap<String, Delivered>;
    /// Drops from the queues what the leader settled, `leader` being its
    /// progress as its Lease records it.
    fn follow(
        &self,
        leader: &BTreeMap<String, Delivered>,
    ) -> impl std::future::Future<Output = ()> + Send;
}

/// Who this replica is and which Lease it competes for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Written into `spec.holderIdentity` while leading.
    pub identity: String,
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
}

impl Candidate {
    /// Fills what the config leaves out from the Pod's environment (see
    /// [`LeaderElection`]).
    pub fn new(config: &LeaderElection, env: &dyn Fn(&str) -> Option<String>) -> Candidate {
        let identity = config.identity.clone().unwrap_or_else(|| {
            let set = |name: &str| env(name).filter(|v| !v.is_empty());
            set("POD_NAME").unwrap_or_else(|| {
                let host = set("HOSTNAME")
                    .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
                    .map(|h| h.trim().to_string())
                    .filter(|h| !h.is_empty())
                    .unwrap_or_else(|| "grw".into());
                format!("{host}_{}", std::process::id())
            })
        });
        let namespace = config.lease_namespace.clone().unwrap_or_else(|| {
            env("POD_NAMESPACE")
                .or_else(|| std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE).ok())
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "default".into())
        });
        Candidate {
            identity,
            namespace,
            name: config.lease_name.clone(),
        }
    }
}

/// Competes for the Lease for as long as the process runs, starting and
/// stopping the deliveries of `N`.
pub struct Elector<N> {
    client: KubeClient,
    config: LeaderElection,
    candidate: Candidate,
    notifications: Arc<N>,
    /// The other holder's Lease as last seen (its resourceVersion), and
    /// when it was first seen so.
    observed: Option<(Option<String>, Instant)>,
    leading: bool,
    /// When the leader last renewed.
    renewed: Option<Instant>,
    /// The API server's last error, logged once until the next success.
    failing: bool,
    /// Released: no more rounds.
    stopped: bool,
}

impl<N: Deliveries> Elector<N> {
    /// An elector that does not lead yet.
    pub fn new(
        client: KubeClient,
        config: LeaderElection,
        candidate: Candidate,
        notifications: Arc<N>,
    ) -> Elector<N> {
        Elector {
            client,
            config,
            candidate,
            notifications,
            observed: None,
            leading: false,
            renewed: None,
            failing: false,
            stopped: false,
        }
    }

    /// Runs until the process ends: renews or watches the Lease every
    /// `retryPeriod`; a leader also writes its progress soon after it
    /// settled deliveries. The lock is held only for a round, so that
    /// [`Elector::release`] can come in between.
    pub async fn run(elector: Arc<tokio::sync::Mutex<Elector<N>>>) {
        let (settled, retry_period) = {
            let e = elector.lock().await;
            tracing::info!(identity = %e.candidate.identity, lease = %format!("{}/{}", e.candidate.namespace, e.candidate.name), "competing for the lease; this replica delivers notifications only while it holds it");
            (e.notifications.settled(), e.config.retry_period)
        };
        loop {
            let leading = {
                let mut e = elector.lock().await;
                if e.stopped {
                    return;
                }
                e.step().await;
                e.leading
            };
            if leading {
                tokio::select! {
                    () = tokio::time::sleep(retry_period) => {}
                    () = async {
                        settled.notified().await;
                        tokio::time::sleep(retry_period / 4).await;
                    } => {}
                }
            } else {
                tokio::time::sleep(retry_period).await;
            }
        }
    }

    /// Gives the Lease up, so that another replica takes over at once
    /// instead of after `leaseDuration` (on a clean stop).
    pub async fn release(&mut self) {
        self.stopped = true;
        if !self.leading {
            return;
        }
        self.set_leading(false);
        let Ok(Some(mut lease)) = self.read().await else {
            return;
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(&self.candidate.identity) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.write_progress(&mut lease);
        match self
            .client
            .replace_lease(&self.candidate.namespace, &lease)
            .await
        {
            Ok(_) => tracing::info!("lease released"),
            Err(e) => {
                tracing::warn!(error = %crate::error::Report(&e), "cannot release the lease; another replica takes over when it expires")
            }
        }
    }

    async fn step(&mut self) {
        match self.try_lead().await {
            Ok(true) => {
                self.renewed = Some(Instant::now());
                self.failing = false;
                if !self.leading {
                    tracing::info!(identity = %self.candidate.identity, "holding the lease: this replica delivers notifications");
                    self.set_leading(true);
                }
            }
            Ok(false) => {
                self.failing = false;
                if self.leading {
                    tracing::warn!("another replica holds the lease; this one stopped delivering");
                    self.set_leading(false);
                }
            }
            Err(e) => {
                if !self.failing {
                    tracing::warn!(error = %crate::error::Report(&e), lease = %self.candidate.name, "cannot read or renew the lease; trying again");
                    self.failing = true;
                }
                let overdue = self
                    .renewed
                    .is_none_or(|t| t.elapsed() >= self.config.renew_deadline);
                if self.leading && overdue {
                    tracing::warn!(
                        "the lease was not renewed within renewDeadlineSeconds; this replica stopped delivering"
                    );
                    self.set_leading(false);
                }
            }
        }
    }

    fn set_leading(&mut self, leading: bool) {
        self.leading = leading;
        self.notifications.set_leading(leading);
    }

    async fn read(&self) -> Result<Option<Lease>, ApiError> {
        self.client
            .get_lease(&self.candidate.namespace, &self.candidate.name)
            .await
    }

    /// One round: `Ok(true)` when this replica holds the Lease after it.
    async fn try_lead(&mut self) -> Result<bool, ApiError> {
        let now = MicroTime(Timestamp::now());
        let Some(mut lease) = self.read().await? else {
            let mut lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.candidate.name.clone()),
                    namespace: Some(self.candidate.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    acquire_time: Some(now.clone()),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            self.hold(&mut lease, now);
            return won(self
                .client
                .create_lease(&self.candidate.namespace, &lease)
                .await);
        };
        if !self.leading {
            self.notifications.follow(&progress(&lease)).await;
        }
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        if holder.as_deref() != Some(&self.candidate.identity) {
            // Every write of the Lease gives it a new resourceVersion.
            let version = lease.metadata.resource_version.clone();
            if self.observed.as_ref().is_none_or(|(v, _)| *v != version) {
                self.observed = Some((version, Instant::now()));
            }
            let duration = Duration::from_secs(
                u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
            );
            let seen = self
                .observed
                .as_ref()
                .map_or(Duration::ZERO, |(_, at)| at.elapsed());
            if holder.is_some() && seen < duration {
                return Ok(false);
            }
            tracing::info!(
                previous = holder.as_deref().unwrap_or("none"),
                "the lease expired or was released; taking it over"
            );
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        self.hold(&mut lease, now);
        won(self
            .client
            .replace_lease(&self.candidate.namespace, &lease)
            .await)
    }

    /// Makes the Lease this replica's, renewed now, with its progress.
    fn hold(&self, lease: &mut Lease, now: MicroTime) {
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = Some(self.candidate.identity.clone());
        // Whole seconds, rounded up: others never wait less than configured.
        let seconds = self.config.lease_duration.as_secs_f64().ceil().max(1.0);
        spec.lease_duration_seconds = Some(seconds.min(f64::from(i32::MAX)) as i32);
        spec.renew_time = Some(now);
        self.write_progress(lease);
    }

    /// Writes this replica's progress over what the Lease holds.
    fn write_progress(&self, lease: &mut Lease) {
        let mut all = progress(lease);
        all.extend(self.notifications.delivered());
        let text = serde_json::to_string(&all).unwrap_or_default();
        lease
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(PROGRESS_ANNOTATION.into(), text);
    }
}

/// A create or replace that another replica beat (409) is a lost round.
fn won(result: Result<Lease, ApiError>) -> Result<bool, ApiError> {
    match result {
        Ok(_) => Ok(true),
        Err(e) if e.code() == Some(409) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The leader's progress as its Lease records it.
fn progress(lease: &Lease) -> BTreeMap<String, Delivered> {
    lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROGRESS_ANNOTATION))
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidate_comes_from_the_config_then_the_pod() {
        let config = LeaderElection::default();
        let pod = |name: &str| match name {
            "POD_NAME" => Some("grw-7d9f-x2".to_string()),
            "POD_NAMESPACE" => Some("ops".to_string()),
            _ => None,
        };
        assert_eq!(
            Candidate::new(&config, &pod),
            Candidate {
                identity: "grw-7d9f-x2".into(),
                namespace: "ops".into(),
                name: "grw".into()
            }
        );
        let named = LeaderElection {
            identity: Some("a".into()),
            lease_namespace: Some("b".into()),
            lease_name: "c".into(),
            ..LeaderElection::default()
        };
        let candidate = Candidate::new(&named, &pod);
        assert_eq!(
            (candidate.identity, candidate.namespace, candidate.name),
            ("a".into(), "b".into(), "c".into())
        );
        let host = |name: &str| (name == "HOSTNAME").then(|| "node-1".to_string());
        let candidate = Candidate::new(&config, &host);
        assert_eq!(candidate.identity, format!("node-1_{}", std::process::id()));
    }

    #[test]
    fn progress_that_cannot_be_read_is_none() {
        let mut lease = Lease::default();
        assert!(progress(&lease).is_empty());
        lease.metadata.annotations =
            Some([(PROGRESS_ANNOTATION.to_string(), "{not json".to_string())].into());
        assert!(progress(&lease).is_empty());
        lease.metadata.annotations = Some(
            [(
                PROGRESS_ANNOTATION.to_string(),
                r#"{"a":{"id":"u/5/ADDED","resourceVersion":"5"}}"#.to_string(),
            )]
            .into(),
        );
        assert_eq!(progress(&lease)["a"].id, "u/5/ADDED");
    }
}
