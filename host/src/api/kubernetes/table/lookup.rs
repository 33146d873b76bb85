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

use serde_json::Value;

use super::{BadIncludeObject, IncludeObject, Printer, kinds};
use crate::api::AppState;
use crate::api::kinds::synced_watch;
use crate::api::kubernetes::KubeRequest;
use crate::api::kubernetes::options::ListOptions;
use crate::api::kubernetes::status::Status;
use crate::gvk::{GRW_GROUP, ResourceInfo};
use crate::store::ObjectKey;

/// Groups the API server itself serves: none of their kinds is a custom
/// resource, so their Tables never need a CRD (a kind of these groups
/// without a printer of its own gets Name and Age at once).
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
    GRW_GROUP,
];

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
    if kinds::find(&gvk.group, &gvk.kind).is_some() || BUILT_IN_GROUPS.contains(&gvk.group.as_str())
    {
        return Printer::for_kind(gvk, None).unwrap_or_else(|bad| (*bad).printer());
    }
    let Some(crd) = definition(state, resource).await else {
        return Printer::name_and_age();
    };
    Printer::for_kind(gvk, Some(&crd)).unwrap_or_else(|bad| {
        tracing::warn!(error = %bad, "a CustomResourceDefinition's printer column is unusable");
        (*bad).printer()
    })
}

/// The CustomResourceDefinition of `resource`, from GRW's cache of CRDs.
async fn definition(state: &AppState, resource: &ResourceInfo) -> Option<Value> {
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
    let crd = watch
        .cache
        .read()
        .get(&ObjectKey::new("", &name))
        .cloned()?;
    Some(crd.to_value())
}
