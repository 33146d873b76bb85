//! Ancestry: the objects an owner owns through any number of steps
//! (Deployment → ReplicaSet → Pod), found through the owner index of each
//! cache.
//!
//! The walk follows `metadata.ownerReferences` by uid, as the API server's
//! garbage collector does, one generation at a time: the objects of every
//! cache that name a uid of the current generation make the next one. It
//! needs no analyzer, and is exact at the moment each cache is read; a
//! kind in between must be watched for the walk to pass through it
//! (without a watch of ReplicaSets, a Deployment's Pods are out of reach).

use std::collections::BTreeSet;

use crate::store::Cache;

/// Most objects a walk collects before it stops. A cycle cannot make it
/// loop (a uid is visited once), but a crafted web of ownerReferences
/// could make the answer, and its memory, grow with the whole cluster;
/// 1,000,000 uids take about 100 MB.
pub const MAX_DESCENDANTS: usize = 1_000_000;

/// The uids `roots` own through any number of steps, `roots` included,
/// found in `caches` (each read-locked once per generation, briefly).
/// `None` past [`MAX_DESCENDANTS`].
pub fn descendants<'c>(
    caches: impl IntoIterator<Item = &'c Cache> + Clone,
    roots: impl IntoIterator<Item = String>,
) -> Option<BTreeSet<String>> {
    let mut found: BTreeSet<String> = roots.into_iter().collect();
    let mut generation: Vec<String> = found.iter().cloned().collect();
    while !generation.is_empty() {
        let mut next = Vec::new();
        for cache in caches.clone() {
            let view = cache.read();
            for uid in &generation {
                let owned = view.keys_owned_by(uid).into_iter().flatten();
                for object in owned.filter_map(|key| view.get(key)) {
                    if !object.uid().is_empty() && !found.contains(object.uid()) {
                        found.insert(object.uid().to_string());
                        next.push(object.uid().to_string());
                    }
                }
            }
            if found.len() > MAX_DESCENDANTS {
                return None;
            }
        }
        generation = next;
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gvk::Gvk;
    use crate::store::{ChangeType, Origin, StoredObject};

    fn cache(kind: &str, objects: &[(&str, &str, &[&str])]) -> Cache {
        let gvk = Gvk::new("", "v1", kind);
        let cache = Cache::new(gvk.clone(), 0);
        for (name, uid, owners) in objects {
            let owners: Vec<_> = owners.iter().map(|o| json!({"uid": o})).collect();
            let v = json!({"metadata": {"namespace": "shop", "name": name, "uid": uid,
                "resourceVersion": "1", "ownerReferences": owners}});
            let object = StoredObject::from_value(v, &gvk, false).unwrap();
            cache.apply(ChangeType::Added, object, Origin::Watch);
        }
        cache
    }

    #[test]
    fn walks_every_generation_across_kinds() {
        let deployments = cache("Deployment", &[("web", "d1", &[]), ("db", "d2", &[])]);
        let replica_sets = cache(
            "ReplicaSet",
            &[
                ("web-a", "rs1", &["d1"]),
                ("web-b", "rs2", &["d1"]),
                ("db-a", "rs3", &["d2"]),
            ],
        );
        let pods = cache(
            "Pod",
            &[
                ("web-a-1", "p1", &["rs1"]),
                ("web-b-1", "p2", &["rs2"]),
                ("db-a-1", "p3", &["rs3"]),
                // Two owners, one of them in the tree: a descendant.
                ("shared", "p4", &["other", "rs2"]),
                ("orphan", "p5", &[]),
            ],
        );
        let caches = [&pods, &replica_sets, &deployments];
        let found = descendants(caches, ["d1".to_string()]).unwrap();
        let want = ["d1", "p1", "p2", "p4", "rs1", "rs2"];
        assert_eq!(found.iter().map(String::as_str).collect::<Vec<_>>(), want);
        let none = descendants(caches, ["nobody".to_string()]).unwrap();
        assert_eq!(none.len(), 1);
    }

    #[test]
    fn cycles_end() {
        let odd = cache("Thing", &[("a", "u1", &["u2"]), ("b", "u2", &["u1"])]);
        let found = descendants([&odd], ["u1".to_string()]).unwrap();
        assert_eq!(found.len(), 2);
    }
}
