//! Changes as a cluster makes them, to the Pods of [`crate::pods`] loaded
//! in a fake API server: the kubelet's status updates, a person's label
//! changes, the Events controllers write, and the Deployment and
//! ReplicaSet that own one app's Pods. For benchmarks of what a daemon
//! keeps of changes (the journal).
//!
//! Each change is made as the API server would store it: the stored
//! object, changed, with its writer's `managedFields` entry moved to now.

use serde_json::{Value, json};

use crate::fake_api::FakeApiServer;
use crate::pods::{APPS, PodFactory};

/// Makes changes to Pods `0..pods` in turn.
pub struct Churn<'a> {
    fake: &'a FakeApiServer,
    factory: &'a PodFactory,
    pods: usize,
    /// Changes made so far, of every sort: which Pod is next.
    made: usize,
}

/// `2026-11-29T10:00:00Z`, now.
fn now() -> String {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    grw::time::rfc3339(std::time::Duration::from_secs(since_epoch.as_secs()))
}

impl<'a> Churn<'a> {
    /// Changes to the first `pods` Pods of `factory`, stored in `fake`.
    pub fn new(fake: &'a FakeApiServer, factory: &'a PodFactory, pods: usize) -> Churn<'a> {
        Churn {
            fake,
            factory,
            pods: pods.max(1),
            made: 0,
        }
    }

    /// The next Pod, as stored.
    fn next_pod(&mut self) -> anyhow::Result<Value> {
        let shape = self.factory.shape(self.made % self.pods);
        self.made += 1;
        self.fake
            .get("v1", "Pod", Some(&shape.namespace), &shape.name)
            .ok_or_else(|| anyhow::anyhow!("Pod {}/{} is not stored", shape.namespace, shape.name))
    }

    /// A kubelet's status update: a container restarted, and the Pod's
    /// Ready condition moved.
    pub fn pod_status(&mut self) -> anyhow::Result<()> {
        let mut pod = self.next_pod()?;
        let time = now();
        let status = &mut pod["status"];
        if let Some(container) = status["containerStatuses"]
            .as_array_mut()
            .and_then(|c| c.first_mut())
        {
            let restarts = container["restartCount"].as_u64().unwrap_or(0) + 1;
            container["restartCount"] = json!(restarts);
            container["lastState"] =
                json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": time}});
            container["state"] = json!({"running": {"startedAt": time}});
        }
        for condition in status["conditions"].as_array_mut().into_iter().flatten() {
            if condition["type"] == "Ready" || condition["type"] == "ContainersReady" {
                condition["lastTransitionTime"] = json!(time);
            }
        }
        touch(&mut pod, "kubelet", "status", &time);
        self.fake.update(pod).map(|_| ())
    }

    /// A person's change of a label: `kubectl label --overwrite`.
    pub fn pod_label(&mut self) -> anyhow::Result<()> {
        let mut pod = self.next_pod()?;
        let time = now();
        pod["metadata"]["labels"]["rollout"] = json!(format!("r{}", self.made));
        if !touch(&mut pod, "kubectl-label", "", &time) {
            let entry = json!({"manager": "kubectl-label", "operation": "Update",
                "apiVersion": "v1", "time": time, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:rollout": {}}}}});
            if let Some(entries) = pod["metadata"]["managedFields"].as_array_mut() {
                entries.push(entry);
            }
        }
        self.fake.update(pod).map(|_| ())
    }

    /// An `events.k8s.io/v1` Event about the next Pod, as the kubelet
    /// reports a restart.
    pub fn event(&mut self) -> anyhow::Result<()> {
        let pod = self.next_pod()?;
        let meta = &pod["metadata"];
        let (namespace, name) = (
            meta["namespace"].as_str().unwrap_or(""),
            meta["name"].as_str().unwrap_or(""),
        );
        let time = now();
        let container = pod["spec"]["containers"][0]["name"]
            .as_str()
            .unwrap_or("main");
        let event = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"namespace": namespace, "name": format!("{name}.{:x}", self.made),
                "managedFields": [{"manager": "kubelet", "operation": "Update",
                    "apiVersion": "events.k8s.io/v1", "time": time, "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:action": {}, "f:eventTime": {}, "f:note": {}, "f:reason": {},
                        "f:regarding": {}, "f:reportingController": {}, "f:reportingInstance": {},
                        "f:type": {}}}]},
            "eventTime": format!("{}.000000Z", time.trim_end_matches('Z')),
            "reportingController": "kubelet",
            "reportingInstance": pod["spec"]["nodeName"],
            "action": "Killing", "reason": "BackOff", "type": "Warning",
            "note": format!("Back-off restarting failed container {container} in pod {name}_{namespace}({})",
                meta["uid"].as_str().unwrap_or("")),
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace,
                "name": name, "uid": meta["uid"],
                "fieldPath": format!("spec.containers{{{container}}}")},
        });
        self.fake.create(event).map(|_| ())
    }
}

/// Moves `manager`'s entry (of `subresource`) in `managedFields` to
/// `time`; whether there was one.
fn touch(object: &mut Value, manager: &str, subresource: &str, time: &str) -> bool {
    let entries = object["metadata"]["managedFields"]
        .as_array_mut()
        .into_iter()
        .flatten();
    for entry in entries {
        if entry["manager"] == manager && entry["subresource"].as_str().unwrap_or("") == subresource
        {
            entry["time"] = json!(time);
            return true;
        }
    }
    false
}

/// A Deployment and the ReplicaSet of its first revision, owning the Pods
/// of the first app whose Pods a ReplicaSet owns: with `pods` Pods loaded,
/// `pods / APPS / 2` of them. Returns the Deployment's namespace, name and
/// Pod count.
pub fn workload(
    fake: &FakeApiServer,
    factory: &PodFactory,
    pods: usize,
) -> anyhow::Result<(String, String, usize)> {
    let first = (0..APPS.min(pods))
        .find(|i| factory.pod(*i)["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet")
        .ok_or_else(|| anyhow::anyhow!("no app's Pods are owned by a ReplicaSet"))?;
    let shape = factory.shape(first);
    let owned = (first..pods)
        .step_by(APPS)
        .filter(|i| factory.shape(*i).revision == shape.revision)
        .count();
    let template = factory.template(shape.app).pod.clone();
    let labels = json!({"app": shape.app_name});
    let spec = json!({
        "replicas": owned,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": template["spec"]},
    });
    fake.create(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": shape.namespace, "name": shape.app_name, "labels": labels},
        "spec": spec,
        "status": {"replicas": owned, "readyReplicas": owned, "availableReplicas": owned},
    }))?;
    fake.create(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"namespace": shape.namespace, "name": format!("{}-{}", shape.app_name, shape.hash),
            "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": shape.app_name, "uid": "00000000-0000-4000-8000-000000000001",
                "controller": true, "blockOwnerDeletion": true}]},
        "spec": spec,
        "status": {"replicas": owned, "readyReplicas": owned, "availableReplicas": owned},
    }))?;
    Ok((shape.namespace, shape.app_name, owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_sort_of_change_moves_its_writer() {
        let fake = FakeApiServer::start(crate::fake_api::FakeApiOptions::default()).await;
        let factory = PodFactory::load();
        for i in 0..200 {
            fake.create(factory.pod(i)).unwrap();
        }
        let (namespace, name, owned) = workload(&fake, &factory, 200).unwrap();
        assert_eq!(owned, 1);
        assert!(
            fake.get("apps/v1", "Deployment", Some(&namespace), &name)
                .is_some()
        );
        let mut churn = Churn::new(&fake, &factory, 2);
        churn.pod_status().unwrap();
        churn.pod_label().unwrap();
        churn.event().unwrap();
        let first = factory.shape(0);
        let pod = fake
            .get("v1", "Pod", Some(&first.namespace), &first.name)
            .unwrap();
        assert_eq!(pod["status"]["containerStatuses"][0]["restartCount"], 1);
        let second = factory.shape(1);
        let pod = fake
            .get("v1", "Pod", Some(&second.namespace), &second.name)
            .unwrap();
        assert_eq!(pod["metadata"]["labels"]["rollout"], "r2");
        assert!(
            pod["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["manager"] == "kubectl-label")
        );
        let events = fake.objects("events.k8s.io/v1", "Event");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["regarding"]["name"], first.name.as_str());
    }
}
