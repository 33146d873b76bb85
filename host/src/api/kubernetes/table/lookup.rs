//! The printer of a request's resource, and what its rows carry.
//!
//! A built-in kind has its printer in [`super::kinds`]. A custom resource's
//! columns are in its `CustomResourceDefinition` (named
//! `{plural}.{group}`), which GRW reads from its own cache of
//! `apiextensions.k8s.io/v1` CRDs, started on demand like the cache of any
//! kind a request names first. When that cache cannot be had (on-demand
//! watches are off and CRDs are not watched, GRW's credentials may not list
//! CRDs, the API server serves no CRDs, a replay without them) or has no
//! such CRD, the Table shows Name and Age, and the request is answered all
//! the same: a Table without the CRD's columns is better than no Table.
//!
//! A kind of the API server's own groups without a printer of GRW's is
//! either one of the API server's kinds without one (its Tables show Name
//! and `Created At`) or a custom resource of such a group (a CRD may use
//! one, with approval): its CRD says which.
//!
//! A CRD's printer (its columns and their parsed JSONPaths) is made once
//! per CRD version served and CRD resourceVersion, not per request.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::{BadIncludeObject, IncludeObject, Printer, kinds};
use crate::api::AppState;
use crate::api::kinds::synced_watch;
use crate::api::kubernetes::KubeRequest;
use crate::api::kubernetes::options::ListOptions;
use crate::api::kubernetes::status::Status;
use crate::gvk::{GRW_GROUP, ResourceInfo};
use crate::store::{ObjectKey, StoredObject};

/// Groups the API server itself serves.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Kinds of [`BUILT_IN_GROUPS`] the API server serves without a printer:
/// never custom resources, so their Tables need no CRD.
const WITHOUT_PRINTER: &[(&str, &str)] = &[
    ("", "LimitRange"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "Role"),
];

/// Whether `group` is one of the API server's own.
pub(super) fn api_server_group(group: &str) -> bool {
    BUILT_IN_GROUPS.contains(&group)
}

/// Most CRD printers kept; past it, all are made again as asked.
const PRINTERS_KEPT: usize = 1024;

/// CRD printers by CRD name and version served, with the resourceVersion
/// of the CRD each was made from.
type CrdPrinters = Mutex<HashMap<(String, String), (String, Arc<Printer>)>>;

static CRD_PRINTERS: LazyLock<CrdPrinters> = LazyLock::new(CrdPrinters::default);

/// The printer of CRD `name` at `resource_version` for `version`: the one
/// made before for the same, or `make`'s.
fn crd_printer(
    printers: &CrdPrinters,
    name: &str,
    version: &str,
    resource_version: &str,
    make: impl FnOnce() -> Printer,
) -> Arc<Printer> {
    let key = (name.to_string(), version.to_string());
    if let Some((made_at, printer)) = printers.lock().get(&key)
        && made_at == resource_version
    {
        return printer.clone();
    }
    let printer = Arc::new(make());
    let mut printers = printers.lock();
    if printers.len() >= PRINTERS_KEPT {
        printers.clear();
    }
    printers.insert(key, (resource_version.to_string(), printer.clone()));
    printer
}

/// The printer of the request's resource, writing `meta.k8s.io/{version}`
/// Tables, and what the rows carry (`includeObject`; a value the API
/// server would refuse is a `400 BadRequest` with its message).
pub(crate) async fn requested(
    state: &AppState,
    request: &KubeRequest<'_>,
    version: &'static str,
    options: &ListOptions,
) -> Result<(Printer, IncludeObject), Status> {
    let include = IncludeObject::parse(options.include_object.as_deref().unwrap_or(""))?;
    Ok((
        printer(state, &request.resource).await.in_version(version),
        include,
    ))
}

impl From<BadIncludeObject> for Status {
    fn from(error: BadIncludeObject) -> Status {
        Status::bad_request(error.to_string())
    }
}

/// The printer of `resource`: see the module's documentation.
pub(crate) async fn printer(state: &AppState, resource: &ResourceInfo) -> Printer {
    let gvk = &resource.gvk;
    if kinds::find(&gvk.group, &gvk.kind).is_some()
        || gvk.group == GRW_GROUP
        || WITHOUT_PRINTER.contains(&(gvk.group.as_str(), gvk.kind.as_str()))
    {
        return Printer::for_kind(gvk, None).unwrap_or_else(|bad| (*bad).printer());
    }
    let Some(crd) = definition(state, resource).await else {
        // One of the API server's own kinds, or a CRD GRW cannot read.
        return Printer::for_kind(gvk, None).unwrap_or_else(|bad| (*bad).printer());
    };
    let printer = crd_printer(
        &CRD_PRINTERS,
        crd.name(),
        &gvk.version,
        crd.resource_version(),
        || {
            Printer::for_kind(gvk, Some(&crd.to_value())).unwrap_or_else(|bad| {
                tracing::warn!(error = %bad, "a CustomResourceDefinition's printer column is unusable");
                (*bad).printer()
            })
        },
    );
    Printer::clone(&printer)
}

/// The CustomResourceDefinition of `resource`, from GRW's cache of CRDs.
async fn definition(state: &AppState, resource: &ResourceInfo) -> Option<Arc<StoredObject>> {
    let crds = state
        .discovery
        .catalog()
        .resources
        .iter()
        .map(|entry| &entry.info)
        .find(|info| {
            info.gvk.group == "apiextensions.k8s.io"
                && info.gvk.version == "v1"
                && info.gvk.kind == "CustomResourceDefinition"
        })
        .cloned()?;
    let watch = match synced_watch(state, &crds, None).await {
        Ok(watch) => watch,
        Err(error) => {
            let problem = crate::api::Problem::from(error);
            tracing::debug!(
                resource = %resource.gvk,
                reason = %problem.message,
                "Tables show Name and Age: the CustomResourceDefinitions cannot be read"
            );
            return None;
        }
    };
    let name = format!("{}.{}", resource.plural, resource.gvk.group);
    watch.cache.read().get(&ObjectKey::new("", &name)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crds_printer_is_made_once_per_version_served_and_resource_version() {
        let printers = CrdPrinters::default();
        let made = std::cell::Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Printer::created_at()
        };
        let first = crd_printer(&printers, "gizmos.example.com", "v1", "7", make);
        let again = crd_printer(&printers, "gizmos.example.com", "v1", "7", make);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(made.get(), 1);
        // Another version served, or the CRD changed: made again.
        crd_printer(&printers, "gizmos.example.com", "v2", "7", make);
        let changed = crd_printer(&printers, "gizmos.example.com", "v1", "8", make);
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(made.get(), 3);
    }
}
