//! Cells of PersistentVolumes, their claims and StorageClasses.
//!
//! Quantities (`1Gi`) are printed as stored: the API server writes them in
//! their canonical form, which is what its printer shows.

use serde_json::Value;

use super::cells::{at, str_at};

/// The annotation that named a storage class before `storageClassName`,
/// and still wins over it.
const CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// `status.phase`, or `Terminating` while being deleted.
pub(crate) fn phase(object: &Value) -> String {
    if at(object, &["metadata", "deletionTimestamp"]).is_some_and(|v| !v.is_null()) {
        return "Terminating".to_string();
    }
    str_at(object, &["status", "phase"])
        .unwrap_or("")
        .to_string()
}

/// `namespace/name` of a volume's claim, `""` when unclaimed.
pub(crate) fn claim(volume: &Value) -> String {
    match at(volume, &["spec", "claimRef"]) {
        Some(claim) if claim.is_object() => format!(
            "{}/{}",
            str_at(claim, &["namespace"]).unwrap_or(""),
            str_at(claim, &["name"]).unwrap_or("")
        ),
        _ => String::new(),
    }
}

/// A volume's storage capacity; a missing one is the zero quantity, `0`.
pub(crate) fn capacity(volume: &Value) -> String {
    quantity(at(volume, &["spec", "capacity", "storage"]))
}

fn quantity(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or("0").to_string()
}

/// The storage class of a volume or claim: the beta annotation when set,
/// else `spec.storageClassName`.
pub(crate) fn class_of(object: &Value) -> String {
    str_at(object, &["metadata", "annotations", CLASS_ANNOTATION])
        .or_else(|| str_at(object, &["spec", "storageClassName"]))
        .unwrap_or("")
        .to_string()
}

/// Whether a claim is bound to a volume (`spec.volumeName` set): only then
/// do its capacity and access modes show.
fn bound(claim: &Value) -> bool {
    str_at(claim, &["spec", "volumeName"]).is_some_and(|v| !v.is_empty())
}

/// The capacity a bound claim got, `""` while unbound.
pub(crate) fn claim_capacity(claim: &Value) -> String {
    if bound(claim) {
        quantity(at(claim, &["status", "capacity", "storage"]))
    } else {
        String::new()
    }
}

/// The access modes a bound claim got, `""` while unbound.
pub(crate) fn claim_access_modes(claim: &Value) -> String {
    if bound(claim) {
        access_modes(at(claim, &["status", "accessModes"]))
    } else {
        String::new()
    }
}

/// Access modes in the fixed order `RWO,ROX,RWX,RWOP`, once each.
pub(crate) fn access_modes(modes: Option<&Value>) -> String {
    let modes: Vec<&str> = modes
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| short)
    .collect::<Vec<_>>()
    .join(",")
}

/// A StorageClass's name, with ` (default)` when an annotation makes it the
/// cluster's default.
pub(crate) fn class_name(class: &Value) -> String {
    let name = str_at(class, &["metadata", "name"]).unwrap_or("");
    let is_default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|key| str_at(class, &["metadata", "annotations", key]) == Some("true"));
    if is_default {
        format!("{name} (default)")
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volumes_and_claims() {
        let volume = json!({
            "metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
                "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "manual"},
            "status": {"phase": "Bound"},
        });
        assert_eq!(phase(&volume), "Bound");
        assert_eq!(claim(&volume), "default/data");
        assert_eq!(capacity(&volume), "1Gi");
        assert_eq!(
            access_modes(at(&volume, &["spec", "accessModes"])),
            "RWO,RWX"
        );
        assert_eq!(class_of(&volume), "manual");

        let mut deleting = volume.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-11-26T06:29:00Z");
        deleting["metadata"]["annotations"] = json!({CLASS_ANNOTATION: "old"});
        assert_eq!(phase(&deleting), "Terminating");
        assert_eq!(class_of(&deleting), "old");
        assert_eq!(claim(&json!({"spec": {}})), "");
        assert_eq!(capacity(&json!({"spec": {}})), "0");

        let pending = json!({"spec": {"storageClassName": "manual", "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}});
        assert_eq!(claim_capacity(&pending), "");
        assert_eq!(claim_access_modes(&pending), "");
        let bound_claim = json!({"spec": {"volumeName": "pv1"},
            "status": {"phase": "Bound", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]}});
        assert_eq!(claim_capacity(&bound_claim), "5Gi");
        assert_eq!(claim_access_modes(&bound_claim), "ROX,RWOP");
        assert_eq!(class_of(&bound_claim), "");
    }

    #[test]
    fn storage_class_names() {
        let class =
            |annotations: Value| json!({"metadata": {"name": "fast", "annotations": annotations}});
        assert_eq!(class_name(&class(json!({}))), "fast");
        assert_eq!(
            class_name(&class(
                json!({"storageclass.kubernetes.io/is-default-class": "true"})
            )),
            "fast (default)"
        );
        assert_eq!(
            class_name(&class(
                json!({"storageclass.beta.kubernetes.io/is-default-class": "true"})
            )),
            "fast (default)"
        );
        assert_eq!(
            class_name(&class(
                json!({"storageclass.kubernetes.io/is-default-class": "false"})
            )),
            "fast"
        );
    }
}
