//! What a `delegated` caller may read beyond the request the check let in,
//! for a handler whose answer reaches further than its path says: the
//! edges of an object in namespace `a` reach objects in `b`, whose names
//! (a Gateway's VirtualServices, and their hosts) a caller allowed in `a`
//! only must not read.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::delegated::{Decision, Delegated};
use super::routes::list_relations;
use super::{FurtherRefusal, log_denial, refusal};
use crate::error::Report;
use crate::gvk::ResourceInfo;
use crate::kube::{AccessAttributes, ResourceAttributes, UserInfo};

/// For the handler of a request a `delegated` listener let in
/// ([`Permissions::current`]): asks the API server, through the same
/// caches and as a request for it would be asked, whether the caller may
/// read more. Absent in modes `none` and `token`, where whoever is let in
/// reads everything.
#[derive(Clone)]
pub struct Permissions {
    delegated: Arc<Delegated>,
    user: Arc<UserInfo>,
}

/// A further check the API server could not answer: the request is
/// answered 503, as a check of the request itself would be, never with a
/// guess.
#[derive(Debug, thiserror::Error)]
#[error("GRW cannot check with the API server what the caller may read: {0}; try again later")]
pub struct Unanswered(String);

impl Permissions {
    pub(super) fn new(delegated: Arc<Delegated>, user: Arc<UserInfo>) -> Permissions {
        Permissions { delegated, user }
    }

    /// The caller's, in the handler of a request a `delegated` listener
    /// let in; `None` elsewhere.
    pub fn current() -> Option<Permissions> {
        super::FURTHER.try_with(Clone::clone).ok()
    }

    /// Whether the caller may `list` `resource` in `namespace` (`None`:
    /// every namespace, or a cluster-scoped kind), asked as a request for
    /// it would be; a refusal is logged and counted as the check's own.
    pub(crate) async fn may_list(
        &self,
        resource: &ResourceInfo,
        namespace: Option<&str>,
    ) -> Result<(), FurtherRefusal> {
        let attributes = AccessAttributes::Resource(ResourceAttributes {
            verb: "list".to_string(),
            group: resource.gvk.group.clone(),
            version: resource.gvk.version.clone(),
            resource: resource.plural.clone(),
            namespace: namespace.unwrap_or_default().to_string(),
            ..Default::default()
        });
        match self
            .delegated
            .authorize_widely(self.user.clone(), attributes)
            .await
        {
            (Decision::Allowed, _) => Ok(()),
            (Decision::Denied(verdict), (user, attributes)) => {
                self.delegated.metrics().refused(403);
                log_denial(
                    &user,
                    &attributes,
                    &verdict.reason,
                    &verdict.evaluation_error,
                );
                Err(FurtherRefusal::Forbidden(refusal::why(
                    &user,
                    &attributes,
                    &verdict.reason,
                )))
            }
            (Decision::Unknown(why), _) => Err(FurtherRefusal::Unknown(Report(&why).to_string())),
            (Decision::Busy(why), _) => Err(FurtherRefusal::Unknown(why.to_string())),
        }
    }

    /// Of `namespaces` (`""` the cluster scope), those where the caller may
    /// `list` relations (`relations.relations.grw.io`), which is what a
    /// request about that namespace's relations would need. One question
    /// per namespace, asked one after the other so that a large answer
    /// never sends the API server more than one review at a time; with
    /// `widen` the first is the cluster-wide one, and a caller allowed
    /// there costs one review per period in all.
    pub async fn may_list_relations_in(
        &self,
        namespaces: BTreeSet<Arc<str>>,
    ) -> Result<BTreeSet<Arc<str>>, Unanswered> {
        let mut allowed = BTreeSet::new();
        for namespace in namespaces {
            let attributes = list_relations(&namespace);
            let (decision, _) = self
                .delegated
                .authorize_widely(self.user.clone(), attributes)
                .await;
            match decision {
                Decision::Allowed => {
                    allowed.insert(namespace);
                }
                Decision::Denied(_) => {}
                Decision::Unknown(why) => return Err(Unanswered(Report(&why).to_string())),
                Decision::Busy(why) => return Err(Unanswered(why.to_string())),
            }
        }
        Ok(allowed)
    }
}
