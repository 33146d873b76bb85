//! Pods made from real ones, the same in every process: pod number `i` of
//! any run is byte for byte the same JSON.
//!
//! The Pods of the recorded cluster (`examples/cluster-recording.jsonl`, or
//! the file named by `GRW_BENCH_RECORDING`) are templates whose names, uids,
//! labels, owners, node, IPs, container ids and resourceVersions are varied.
//! Field layout, managedFields and sizes are therefore those an API server
//! really sends: about 6.8 KB of compact JSON per Pod with managedFields.
//!
//! Shared by the benchmarks that load many Pods: the host's cache benchmark
//! includes this file (`#[path]`; it cannot depend on this crate, which
//! depends on the host), and the daemon benchmark and the `fake-apiserver`
//! binary use it as `grw_e2e::pods`. It uses only `serde_json` and `std`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Value, json};

/// Pods are spread over this many apps, so `app=<one app>` selects ~1%.
pub const APPS: usize = 100;
/// One tier per tenth of the apps, so `tier=<one tier>` selects ~10%.
pub const TIERS: [&str; 10] = [
    "web", "api", "worker", "cache", "db", "batch", "gateway", "search", "stream", "ops",
];
/// Teams own apps in turn: `team=<one team>` selects 4%.
pub const TEAMS: usize = 25;
/// Each namespace holds the pods of five apps: ~5% of all pods.
pub const NAMESPACES: usize = 20;
/// Nodes the Pods are spread over at random.
pub const NODES: usize = 500;
/// Templates outside this size range (compact JSON, managedFields included)
/// are skipped: the target is 5–10 KB per Pod, and varying a template adds
/// about a hundred bytes of labels.
const TEMPLATE_SIZE: std::ops::RangeInclusive<usize> = 5_000..=9_700;

/// A real pod to vary, and the name of what runs it.
pub struct Template {
    /// The recorded Pod.
    pub pod: Value,
    /// The owner's name without its pod-template-hash: `checkout`, `coredns`.
    pub base: String,
}

/// Makes pod number `i` of any run, the same in every process.
pub struct PodFactory {
    /// One per recorded workload whose running Pod fits `TEMPLATE_SIZE`.
    pub templates: Vec<Template>,
}

/// The identity of pod number `i`.
pub struct Shape {
    /// Its app, below [`APPS`]: pod `i` belongs to app `i % APPS`.
    pub app: usize,
    /// `ns-NN`: each namespace holds the Pods of [`APPS`] / [`NAMESPACES`] apps.
    pub namespace: String,
    /// `metadata.name`: `<app name>-<hash>-<5 characters>`.
    pub name: String,
    /// Its `app` label.
    pub app_name: String,
    /// pod-template-hash of its ReplicaSet.
    pub hash: String,
    /// Which of the app's two ReplicaSets (a rollout in progress) it belongs to.
    pub revision: usize,
}

impl PodFactory {
    /// Reads the templates from the recording.
    ///
    /// # Panics
    /// If the recording cannot be read or holds no usable Pod: the
    /// generator's callers are benchmarks, which cannot go on without it.
    pub fn load() -> PodFactory {
        let path = recording_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        // The latest running state of each controller's pods: one template per
        // Deployment/StatefulSet/DaemonSet, so that no workload dominates.
        let mut latest: BTreeMap<(String, String), Value> = BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut event: Value = serde_json::from_str(line).expect("recording lines are JSON");
            if event["type"] == "DELETED" || event["object"]["kind"] != "Pod" {
                continue;
            }
            let pod = event["object"].take();
            if !is_good_template(&pod) {
                continue;
            }
            let meta = &pod["metadata"];
            let owner = meta["ownerReferences"][0]["name"].as_str().unwrap_or("");
            let namespace = meta["namespace"].as_str().unwrap_or("");
            latest.insert((namespace.to_string(), owner.to_string()), pod);
        }
        let templates: Vec<Template> = latest
            .into_values()
            .filter(|pod| TEMPLATE_SIZE.contains(&compact_len(pod)))
            .map(|pod| {
                let meta = &pod["metadata"];
                let owner = meta["ownerReferences"][0]["name"].as_str().unwrap_or("pod");
                let base = match meta["labels"]["pod-template-hash"].as_str() {
                    Some(hash) => owner.strip_suffix(&format!("-{hash}")).unwrap_or(owner),
                    None => owner,
                }
                .to_string();
                Template { pod, base }
            })
            .collect();
        assert!(!templates.is_empty(), "no usable Pod in {}", path.display());
        PodFactory { templates }
    }

    /// The template app number `app` is made from.
    pub fn template(&self, app: usize) -> &Template {
        &self.templates[app % self.templates.len()]
    }

    /// The `app` label of one app: its template's workload name and a number.
    pub fn app_name(&self, app: usize) -> String {
        format!("{}-{app:02}", self.template(app).base)
    }

    /// The identity of pod number `i`, without making the Pod.
    pub fn shape(&self, i: usize) -> Shape {
        let app = i % APPS;
        let revision = (i / APPS) % 2;
        let app_name = self.app_name(app);
        let hash = pod_template_hash(app, revision);
        let name = format!("{app_name}-{hash}-{}", name_suffix(i));
        Shape {
            app,
            namespace: namespace_name(app % NAMESPACES),
            name,
            app_name,
            hash,
            revision,
        }
    }

    /// Pod number `i`: a copy of its app's template with its own identity.
    pub fn pod(&self, i: usize) -> Value {
        let shape = self.shape(i);
        let mut rng = Rng::new(i as u64);
        let mut pod = self.template(shape.app).pod.clone();

        let meta = &mut pod["metadata"];
        meta["name"] = json!(shape.name);
        meta["generateName"] = json!(format!("{}-{}-", shape.app_name, shape.hash));
        meta["namespace"] = json!(shape.namespace);
        meta["uid"] = json!(uuid(&mut rng));
        meta["resourceVersion"] = json!((1_000_000 + i).to_string());
        if let Some(labels) = meta["labels"].as_object_mut() {
            labels.insert("app".into(), json!(shape.app_name));
            labels.insert("pod-template-hash".into(), json!(shape.hash));
            labels.insert("tier".into(), json!(TIERS[shape.app % TIERS.len()]));
            labels.insert(
                "version".into(),
                json!(format!("1.{}.{}", shape.app % 13, shape.revision)),
            );
            labels.insert(
                "team".into(),
                json!(format!("team-{:02}", shape.app % TEAMS)),
            );
        }
        let owner = &mut meta["ownerReferences"][0];
        let owner_name = if owner["kind"] == "ReplicaSet" {
            format!("{}-{}", shape.app_name, shape.hash)
        } else {
            shape.app_name.clone()
        };
        owner["name"] = json!(owner_name);
        let mut owner_rng = Rng::new(app_seed(shape.app, shape.revision) ^ 0x5eed);
        owner["uid"] = json!(uuid(&mut owner_rng));

        let node = rng.below(NODES);
        pod["spec"]["nodeName"] = json!(format!("node-{node:03}"));
        let host_ip = format!("10.0.{}.{}", node / 200, node % 200 + 10);
        let pod_ip = format!("10.{}.{}.{}", 64 + (i >> 16), (i >> 8) & 255, i & 255);
        let status = &mut pod["status"];
        status["hostIP"] = json!(host_ip);
        status["hostIPs"] = json!([{ "ip": host_ip }]);
        status["podIP"] = json!(pod_ip);
        status["podIPs"] = json!([{ "ip": pod_ip }]);
        if let Some(statuses) = status["containerStatuses"].as_array_mut() {
            for container in statuses {
                let id = format!(
                    "containerd://{:016x}{:016x}{:016x}{:016x}",
                    rng.next(),
                    rng.next(),
                    rng.next(),
                    rng.next()
                );
                set_container_ids(container, &id);
            }
        }
        pod
    }
}

/// A running pod, with an owner, 1–3 containers and their statuses.
fn is_good_template(pod: &Value) -> bool {
    let meta = &pod["metadata"];
    let containers = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
    meta.get("deletionTimestamp").is_none()
        && meta["ownerReferences"]
            .as_array()
            .is_some_and(|o| !o.is_empty())
        && meta["labels"].is_object()
        && (1..=3).contains(&containers)
        && pod["status"]["phase"] == "Running"
        && pod["status"]["containerStatuses"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
}

/// Replaces `containerID` in a container status and in its current and last states.
fn set_container_ids(container: &mut Value, id: &str) {
    if container.get("containerID").is_some() {
        container["containerID"] = json!(id);
    }
    for state in ["state", "lastState"] {
        if let Some(variants) = container[state].as_object_mut() {
            for variant in variants.values_mut() {
                if variant.get("containerID").is_some() {
                    variant["containerID"] = json!(id);
                }
            }
        }
    }
}

/// The recording the templates come from: `GRW_BENCH_RECORDING`, else the
/// bundled one.
pub fn recording_path() -> PathBuf {
    if let Ok(path) = std::env::var("GRW_BENCH_RECORDING") {
        return path.into();
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl")
}

/// The name of namespace number `index`.
pub fn namespace_name(index: usize) -> String {
    format!("ns-{index:02}")
}

/// The length of `value` as compact JSON.
pub fn compact_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

/// The characters Kubernetes uses in generated names (no vowels, no 0/1/3).
const NAME_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A 10-character pod-template-hash, fixed per app and revision.
fn pod_template_hash(app: usize, revision: usize) -> String {
    let mut rng = Rng::new(app_seed(app, revision) ^ 0x4a54);
    (0..10)
        .map(|_| NAME_CHARS[rng.below(NAME_CHARS.len())] as char)
        .collect()
}

/// A seed fixed per app and revision, for what all pods of one ReplicaSet share.
fn app_seed(app: usize, revision: usize) -> u64 {
    ((app as u64) << 8) | revision as u64
}

/// A 5-character generated-name suffix, distinct for every `i` below 27⁵:
/// multiplying by a number prime to 27⁵ permutes the residues, so suffixes
/// look random yet never collide.
fn name_suffix(i: usize) -> String {
    const SPACE: u64 = 27u64.pow(5);
    let mut x = (i as u64 * 7_368_787) % SPACE;
    (0..5)
        .map(|_| {
            let c = NAME_CHARS[(x % 27) as usize] as char;
            x /= 27;
            c
        })
        .collect()
}

fn uuid(rng: &mut Rng) -> String {
    let (a, b) = (rng.next(), rng.next());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// SplitMix64: small, seedable, and good enough to spread names and nodes.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    /// The next 64 random bits.
    #[allow(
        clippy::should_implement_trait,
        reason = "an endless generator, not an iterator"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// Imports live in the tests: the cache benchmark includes this file into
// a target without a test harness, where `#[test]` functions vanish and
// imports of the module would be unused.
#[cfg(test)]
mod tests {
    /// Figures measured on these Pods (BENCHMARKS.md) compare across
    /// versions only while pod `i` stays the same: pods 0..1000 as compact
    /// JSON hash to what they did when the cache benchmark was written.
    #[test]
    fn pods_are_the_same_as_ever() {
        use super::PodFactory;
        use sha2::{Digest, Sha256};

        let factory = PodFactory::load();
        let mut hash = Sha256::new();
        for i in 0..1000 {
            hash.update(serde_json::to_vec(&factory.pod(i)).unwrap());
        }
        assert_eq!(
            format!("{:x}", hash.finalize()),
            "5291c7156cab890c6536603fa13181fb954ea95d5edba5f5ede4ce2c128550a5",
            "the generator (or examples/cluster-recording.jsonl) changed: \
             benchmark figures before and after this change measure different Pods"
        );
    }

    #[test]
    fn identities_follow_the_layout() {
        use super::PodFactory;

        let factory = PodFactory::load();
        let pod = factory.pod(1234);
        let shape = factory.shape(1234);
        assert_eq!(shape.app, 34);
        assert_eq!(shape.namespace, "ns-14");
        assert_eq!(pod["metadata"]["name"], shape.name);
        assert_eq!(pod["metadata"]["labels"]["app"], factory.app_name(34));
        assert!(
            shape
                .name
                .starts_with(&format!("{}-{}-", shape.app_name, shape.hash))
        );
        // Names never repeat: 1% of the Pods share an app, none a name.
        let names: std::collections::HashSet<String> =
            (0..10_000).map(|i| factory.shape(i).name).collect();
        assert_eq!(names.len(), 10_000);
    }
}
