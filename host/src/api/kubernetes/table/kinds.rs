//! The columns of each built-in kind, as data: names, types and priorities
//! exactly as the API server's printers send them (descriptions are ours),
//! each with the rule of its cell.
//!
//! Kinds are looked up by group and kind, any version: the API server
//! prints every version of a kind with one printer.

use super::cells::{Cell, Path, Rule};
use super::columns::{AGE, Builtin, NAME};
use super::event::{self, CORE, EVENTS};

/// The printer of one kind.
pub(crate) struct Kind {
    pub(crate) group: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) columns: &'static [Builtin],
    /// Rows of finished pods carry a `Completed` condition.
    pub(crate) pod_conditions: bool,
}

/// The printer of a group and kind, if the API server has one.
pub(crate) fn find(group: &str, kind: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.group == group && k.kind == kind)
}

const fn kind(group: &'static str, kind: &'static str, columns: &'static [Builtin]) -> Kind {
    Kind {
        group,
        kind,
        columns,
        pod_conditions: false,
    }
}

const fn col(
    name: &'static str,
    kind: &'static str,
    description: &'static str,
    cell: Cell,
) -> Builtin {
    Builtin::new(name, kind, description, cell)
}

const fn wide(
    name: &'static str,
    kind: &'static str,
    description: &'static str,
    cell: Cell,
) -> Builtin {
    Builtin::wide(name, kind, description, cell)
}

const fn rule(rule: Rule) -> Cell {
    Cell::Rule(rule)
}

const POD_CONTAINERS: Path = &["spec", "template", "spec", "containers"];

const fn containers(path: Path) -> Builtin {
    wide(
        "Containers",
        "string",
        "The names of the template's containers.",
        Cell::Containers(path),
    )
}

const fn images(path: Path) -> Builtin {
    wide(
        "Images",
        "string",
        "The images of the template's containers.",
        Cell::Images(path),
    )
}

const fn selector(path: Path) -> Builtin {
    wide(
        "Selector",
        "string",
        "The label selector of the pods it manages.",
        Cell::Selector(path),
    )
}

const fn event_column(
    name: &'static str,
    description: &'static str,
    fields: event::Fields,
    cell: event::Cell,
) -> Builtin {
    col(
        name,
        "string",
        description,
        Cell::Rule(Rule::Event(fields, cell)),
    )
}

const fn event_columns(fields: event::Fields) -> [Builtin; 10] {
    [
        event_column(
            "Last Seen",
            "When the event last happened.",
            fields,
            event::Cell::LastSeen,
        ),
        col(
            "Type",
            "string",
            "Normal or Warning.",
            Cell::Text(&["type"]),
        ),
        col(
            "Reason",
            "string",
            "A short word for why it happened.",
            Cell::Text(&["reason"]),
        ),
        event_column(
            "Object",
            "The kind and name of the object it is about.",
            fields,
            event::Cell::Object,
        ),
        Builtin {
            priority: 1,
            ..event_column(
                "Subobject",
                "The part of the object it is about.",
                fields,
                event::Cell::Subobject,
            )
        },
        Builtin {
            priority: 1,
            ..event_column(
                "Source",
                "The component (and host) that reported it.",
                fields,
                event::Cell::Source,
            )
        },
        event_column(
            "Message",
            "What happened, for people.",
            fields,
            event::Cell::Message,
        ),
        Builtin {
            priority: 1,
            ..event_column(
                "First Seen",
                "When the event first happened.",
                fields,
                event::Cell::FirstSeen,
            )
        },
        Builtin {
            priority: 1,
            ..event_column(
                "Count",
                "How many times it happened.",
                fields,
                event::Cell::Count,
            )
        },
        wide(
            "Name",
            "string",
            super::columns::NAME_DESCRIPTION,
            Cell::Name,
        )
        .formatted("name"),
    ]
}

const CORE_EVENT_COLUMNS: [Builtin; 10] = event_columns(CORE);
const EVENTS_EVENT_COLUMNS: [Builtin; 10] = event_columns(EVENTS);

static KINDS: &[Kind] = &[
    Kind {
        pod_conditions: true,
        ..kind(
            "",
            "Pod",
            &[
                NAME,
                col(
                    "Ready",
                    "string",
                    "Ready containers out of all containers.",
                    rule(Rule::PodReady),
                ),
                col(
                    "Status",
                    "string",
                    "The state of the pod in one word.",
                    rule(Rule::PodStatus),
                ),
                col(
                    "Restarts",
                    "string",
                    "Container restarts, and how long ago the last one was.",
                    rule(Rule::PodRestarts),
                ),
                AGE,
                wide("IP", "string", "The pod's IP address.", rule(Rule::PodIp)),
                wide(
                    "Node",
                    "string",
                    "The node the pod is scheduled on.",
                    Cell::TextOr(&["spec", "nodeName"], "<none>"),
                ),
                wide(
                    "Nominated Node",
                    "string",
                    "The node the pod may move to after preempting others.",
                    Cell::TextOr(&["status", "nominatedNodeName"], "<none>"),
                ),
                wide(
                    "Readiness Gates",
                    "string",
                    "Readiness gates met out of all readiness gates.",
                    rule(Rule::PodReadinessGates),
                ),
            ],
        )
    },
    kind(
        "",
        "PodTemplate",
        &[
            NAME,
            col(
                "Containers",
                "string",
                "The names of the template's containers.",
                Cell::Containers(&["template", "spec", "containers"]),
            ),
            col(
                "Images",
                "string",
                "The images of the template's containers.",
                Cell::Images(&["template", "spec", "containers"]),
            ),
            col(
                "Pod Labels",
                "string",
                "The labels of the template's pods.",
                Cell::Labels(&["template", "metadata", "labels"]),
            ),
        ],
    ),
    kind(
        "",
        "ReplicationController",
        &[
            NAME,
            col(
                "Desired",
                "integer",
                "The replicas asked for.",
                Cell::Int(&["spec", "replicas"]),
            ),
            col(
                "Current",
                "integer",
                "The replicas that exist.",
                Cell::Int(&["status", "replicas"]),
            ),
            col(
                "Ready",
                "integer",
                "The replicas that are ready.",
                Cell::Int(&["status", "readyReplicas"]),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
            wide(
                "Selector",
                "string",
                "The labels of the pods it manages.",
                Cell::Labels(&["spec", "selector"]),
            ),
        ],
    ),
    kind(
        "apps",
        "ReplicaSet",
        &[
            NAME,
            col(
                "Desired",
                "integer",
                "The replicas asked for.",
                Cell::Int(&["spec", "replicas"]),
            ),
            col(
                "Current",
                "integer",
                "The replicas that exist.",
                Cell::Int(&["status", "replicas"]),
            ),
            col(
                "Ready",
                "integer",
                "The replicas that are ready.",
                Cell::Int(&["status", "readyReplicas"]),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
            selector(&["spec", "selector"]),
        ],
    ),
    kind(
        "apps",
        "Deployment",
        &[
            NAME,
            col(
                "Ready",
                "string",
                "Ready replicas out of the replicas asked for.",
                Cell::Ratio(&["status", "readyReplicas"], &["spec", "replicas"]),
            ),
            col(
                "Up-to-date",
                "string",
                "Replicas running the latest template.",
                Cell::Int(&["status", "updatedReplicas"]),
            ),
            col(
                "Available",
                "string",
                "Replicas available to users.",
                Cell::Int(&["status", "availableReplicas"]),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
            wide(
                "Selector",
                "string",
                "The label selector of the pods it manages.",
                Cell::SelectorText(&["spec", "selector"]),
            ),
        ],
    ),
    kind(
        "apps",
        "StatefulSet",
        &[
            NAME,
            col(
                "Ready",
                "string",
                "Ready replicas out of the replicas asked for.",
                Cell::Ratio(&["status", "readyReplicas"], &["spec", "replicas"]),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
        ],
    ),
    kind(
        "apps",
        "DaemonSet",
        &[
            NAME,
            col(
                "Desired",
                "integer",
                "Nodes that should run the pod.",
                Cell::Int(&["status", "desiredNumberScheduled"]),
            ),
            col(
                "Current",
                "integer",
                "Nodes that run the pod.",
                Cell::Int(&["status", "currentNumberScheduled"]),
            ),
            col(
                "Ready",
                "integer",
                "Nodes whose pod is ready.",
                Cell::Int(&["status", "numberReady"]),
            ),
            col(
                "Up-to-date",
                "integer",
                "Nodes that run the latest template.",
                Cell::Int(&["status", "updatedNumberScheduled"]),
            ),
            col(
                "Available",
                "integer",
                "Nodes whose pod is available.",
                Cell::Int(&["status", "numberAvailable"]),
            ),
            col(
                "Node Selector",
                "string",
                "The labels a node needs to run the pod.",
                Cell::Labels(&["spec", "template", "spec", "nodeSelector"]),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
            selector(&["spec", "selector"]),
        ],
    ),
    kind(
        "apps",
        "ControllerRevision",
        &[
            NAME,
            col(
                "Controller",
                "string",
                "The object this revision belongs to.",
                rule(Rule::ControllerOf),
            ),
            col(
                "Revision",
                "string",
                "The revision's number.",
                Cell::Int(&["revision"]),
            ),
            AGE,
        ],
    ),
    kind(
        "batch",
        "Job",
        &[
            NAME,
            col(
                "Status",
                "string",
                "The state of the job.",
                rule(Rule::JobStatus),
            ),
            col(
                "Completions",
                "string",
                "Pods that succeeded out of the successes asked for.",
                rule(Rule::JobCompletions),
            ),
            col(
                "Duration",
                "string",
                "How long the job ran.",
                rule(Rule::JobDuration),
            ),
            AGE,
            containers(POD_CONTAINERS),
            images(POD_CONTAINERS),
            selector(&["spec", "selector"]),
        ],
    ),
    kind(
        "batch",
        "CronJob",
        &[
            NAME,
            col(
                "Schedule",
                "string",
                "When jobs are started, in cron format.",
                Cell::Text(&["spec", "schedule"]),
            ),
            col(
                "Timezone",
                "string",
                "The time zone of the schedule.",
                Cell::Optional(&["spec", "timeZone"], "<none>"),
            ),
            col(
                "Suspend",
                "boolean",
                "Whether new jobs are held back.",
                Cell::BoolText(&["spec", "suspend"]),
            ),
            col(
                "Active",
                "integer",
                "Jobs running now.",
                Cell::Len(&[&["status", "active"]]),
            ),
            col(
                "Last Schedule",
                "string",
                "How long ago a job was last started.",
                Cell::Since(&["status", "lastScheduleTime"], "<none>"),
            ),
            AGE,
            containers(&[
                "spec",
                "jobTemplate",
                "spec",
                "template",
                "spec",
                "containers",
            ]),
            images(&[
                "spec",
                "jobTemplate",
                "spec",
                "template",
                "spec",
                "containers",
            ]),
            selector(&["spec", "jobTemplate", "spec", "selector"]),
        ],
    ),
    kind(
        "",
        "Service",
        &[
            NAME,
            col(
                "Type",
                "string",
                "How the service is exposed.",
                Cell::Text(&["spec", "type"]),
            ),
            col(
                "Cluster-IP",
                "string",
                "The service's address inside the cluster.",
                rule(Rule::ServiceClusterIp),
            ),
            col(
                "External-IP",
                "string",
                "Addresses outside the cluster that reach the service.",
                rule(Rule::ServiceExternalIp),
            ),
            col(
                "Port(s)",
                "string",
                "The ports the service exposes.",
                rule(Rule::ServicePorts),
            ),
            AGE,
            wide(
                "Selector",
                "string",
                "The labels of the pods that serve it.",
                Cell::Labels(&["spec", "selector"]),
            ),
        ],
    ),
    kind(
        "",
        "Endpoints",
        &[
            NAME,
            col(
                "Endpoints",
                "string",
                "The addresses and ports that serve it.",
                rule(Rule::Endpoints),
            ),
            AGE,
        ],
    ),
    kind(
        "discovery.k8s.io",
        "EndpointSlice",
        &[
            NAME,
            col(
                "AddressType",
                "string",
                "The kind of addresses in the slice.",
                Cell::Text(&["addressType"]),
            ),
            col(
                "Ports",
                "string",
                "The ports of the slice.",
                rule(Rule::SlicePorts),
            ),
            col(
                "Endpoints",
                "string",
                "The addresses of the slice.",
                rule(Rule::SliceEndpoints),
            ),
            AGE,
        ],
    ),
    kind(
        "networking.k8s.io",
        "Ingress",
        &[
            NAME,
            col(
                "Class",
                "string",
                "The IngressClass that implements it.",
                Cell::Optional(&["spec", "ingressClassName"], "<none>"),
            ),
            col(
                "Hosts",
                "string",
                "The hosts its rules match.",
                rule(Rule::IngressHosts),
            ),
            col(
                "Address",
                "string",
                "Where its load balancer listens.",
                rule(Rule::IngressAddress),
            ),
            col(
                "Ports",
                "string",
                "The ports it serves.",
                rule(Rule::IngressPorts),
            ),
            AGE,
        ],
    ),
    kind(
        "networking.k8s.io",
        "IngressClass",
        &[
            NAME,
            col(
                "Controller",
                "string",
                "The controller that implements the class.",
                Cell::Text(&["spec", "controller"]),
            ),
            col(
                "Parameters",
                "string",
                "The object holding the class's settings.",
                rule(Rule::IngressClassParameters),
            ),
            AGE,
        ],
    ),
    kind(
        "networking.k8s.io",
        "NetworkPolicy",
        &[
            NAME,
            col(
                "Pod-Selector",
                "string",
                "The pods the policy applies to.",
                Cell::Selector(&["spec", "podSelector"]),
            ),
            AGE,
        ],
    ),
    kind(
        "",
        "Node",
        &[
            NAME,
            col(
                "Status",
                "string",
                "Whether the node is ready, and schedulable.",
                rule(Rule::NodeStatus),
            ),
            col(
                "Roles",
                "string",
                "The node's roles, from its labels.",
                rule(Rule::NodeRoles),
            ),
            AGE,
            col(
                "Version",
                "string",
                "The kubelet's version.",
                Cell::Text(&["status", "nodeInfo", "kubeletVersion"]),
            ),
            wide(
                "Internal-IP",
                "string",
                "The node's address inside the cluster.",
                rule(Rule::NodeAddress("InternalIP")),
            ),
            wide(
                "External-IP",
                "string",
                "The node's address outside the cluster.",
                rule(Rule::NodeAddress("ExternalIP")),
            ),
            wide(
                "OS-Image",
                "string",
                "The operating system.",
                Cell::TextOr(&["status", "nodeInfo", "osImage"], "<unknown>"),
            ),
            wide(
                "Kernel-Version",
                "string",
                "The kernel's version.",
                Cell::TextOr(&["status", "nodeInfo", "kernelVersion"], "<unknown>"),
            ),
            wide(
                "Container-Runtime",
                "string",
                "The container runtime and its version.",
                Cell::TextOr(
                    &["status", "nodeInfo", "containerRuntimeVersion"],
                    "<unknown>",
                ),
            ),
        ],
    ),
    kind("", "Event", &CORE_EVENT_COLUMNS),
    kind("events.k8s.io", "Event", &EVENTS_EVENT_COLUMNS),
    kind(
        "",
        "Namespace",
        &[
            NAME,
            col(
                "Status",
                "string",
                "Active, or Terminating.",
                Cell::Text(&["status", "phase"]),
            ),
            AGE,
        ],
    ),
    kind(
        "",
        "ConfigMap",
        &[
            NAME,
            col(
                "Data",
                "string",
                "How many keys it holds.",
                Cell::Len(&[&["data"], &["binaryData"]]),
            ),
            AGE,
        ],
    ),
    kind(
        "",
        "Secret",
        &[
            NAME,
            col(
                "Type",
                "string",
                "What the secret is for.",
                Cell::Text(&["type"]),
            ),
            col(
                "Data",
                "string",
                "How many keys it holds.",
                Cell::Len(&[&["data"]]),
            ),
            AGE,
        ],
    ),
    kind(
        "",
        "ServiceAccount",
        &[
            NAME,
            col(
                "Secrets",
                "string",
                "How many secrets it lists.",
                Cell::Len(&[&["secrets"]]),
            ),
            AGE,
        ],
    ),
    kind(
        "",
        "PersistentVolume",
        &[
            NAME,
            col(
                "Capacity",
                "string",
                "The volume's size.",
                rule(Rule::VolumeCapacity),
            ),
            col(
                "Access Modes",
                "string",
                "How the volume can be mounted.",
                rule(Rule::AccessModes),
            ),
            col(
                "Reclaim Policy",
                "string",
                "What happens to the volume when its claim goes.",
                Cell::Text(&["spec", "persistentVolumeReclaimPolicy"]),
            ),
            col(
                "Status",
                "string",
                "Available, Bound, Released or Failed.",
                rule(Rule::VolumePhase),
            ),
            col(
                "Claim",
                "string",
                "The claim bound to the volume.",
                rule(Rule::VolumeClaim),
            ),
            col(
                "StorageClass",
                "string",
                "The volume's storage class.",
                rule(Rule::StorageClassOf),
            ),
            col(
                "VolumeAttributesClass",
                "string",
                "The volume's attributes class.",
                Cell::Optional(&["spec", "volumeAttributesClassName"], "<unset>"),
            ),
            col(
                "Reason",
                "string",
                "Why the volume is in its state.",
                Cell::Text(&["status", "reason"]),
            ),
            AGE,
            wide(
                "VolumeMode",
                "string",
                "Filesystem or Block.",
                Cell::Optional(&["spec", "volumeMode"], "<unset>"),
            ),
        ],
    ),
    kind(
        "",
        "PersistentVolumeClaim",
        &[
            NAME,
            col(
                "Status",
                "string",
                "Pending, Bound or Lost.",
                rule(Rule::VolumePhase),
            ),
            col(
                "Volume",
                "string",
                "The volume bound to the claim.",
                Cell::Text(&["spec", "volumeName"]),
            ),
            col(
                "Capacity",
                "string",
                "The size of the bound volume.",
                rule(Rule::ClaimCapacity),
            ),
            col(
                "Access Modes",
                "string",
                "How the bound volume can be mounted.",
                rule(Rule::ClaimAccessModes),
            ),
            col(
                "StorageClass",
                "string",
                "The claim's storage class.",
                rule(Rule::StorageClassOf),
            ),
            col(
                "VolumeAttributesClass",
                "string",
                "The claim's attributes class.",
                Cell::Optional(&["spec", "volumeAttributesClassName"], "<unset>"),
            ),
            AGE,
            wide(
                "VolumeMode",
                "string",
                "Filesystem or Block.",
                Cell::Optional(&["spec", "volumeMode"], "<unset>"),
            ),
        ],
    ),
    kind(
        "storage.k8s.io",
        "StorageClass",
        &[
            col(
                "Name",
                "string",
                super::columns::NAME_DESCRIPTION,
                rule(Rule::StorageClassName),
            )
            .formatted("name"),
            col(
                "Provisioner",
                "string",
                "What creates its volumes.",
                Cell::Text(&["provisioner"]),
            ),
            col(
                "ReclaimPolicy",
                "string",
                "What happens to its volumes when their claims go.",
                Cell::TextOr(&["reclaimPolicy"], "Delete"),
            ),
            col(
                "VolumeBindingMode",
                "string",
                "When its volumes are bound to claims.",
                Cell::TextOr(&["volumeBindingMode"], "Immediate"),
            ),
            col(
                "AllowVolumeExpansion",
                "string",
                "Whether its volumes can grow.",
                Cell::Bool(&["allowVolumeExpansion"], false),
            ),
            AGE,
        ],
    ),
    kind(
        "storage.k8s.io",
        "CSINode",
        &[
            NAME,
            col(
                "Drivers",
                "integer",
                "How many CSI drivers the node has.",
                Cell::Len(&[&["spec", "drivers"]]),
            ),
            AGE,
        ],
    ),
    kind(
        "storage.k8s.io",
        "VolumeAttachment",
        &[
            NAME,
            col(
                "Attacher",
                "string",
                "The driver that attaches the volume.",
                Cell::Text(&["spec", "attacher"]),
            )
            .formatted("name"),
            col(
                "PV",
                "string",
                "The volume attached.",
                Cell::Text(&["spec", "source", "persistentVolumeName"]),
            ),
            col(
                "Node",
                "string",
                "The node it is attached to.",
                Cell::Text(&["spec", "nodeName"]),
            ),
            col(
                "Attached",
                "boolean",
                "Whether it is attached.",
                Cell::Bool(&["status", "attached"], false),
            ),
            AGE,
        ],
    ),
    kind(
        "coordination.k8s.io",
        "Lease",
        &[
            NAME,
            col(
                "Holder",
                "string",
                "Who holds the lease.",
                Cell::Text(&["spec", "holderIdentity"]),
            ),
            AGE,
        ],
    ),
    kind(
        "policy",
        "PodDisruptionBudget",
        &[
            NAME,
            col(
                "Min Available",
                "string",
                "Pods that must stay available.",
                Cell::Rule(Rule::IntOrString("minAvailable")),
            ),
            col(
                "Max Unavailable",
                "string",
                "Pods that may be unavailable.",
                Cell::Rule(Rule::IntOrString("maxUnavailable")),
            ),
            col(
                "Allowed Disruptions",
                "integer",
                "Pods that may be disrupted now.",
                Cell::Int(&["status", "disruptionsAllowed"]),
            ),
            AGE,
        ],
    ),
    kind(
        "scheduling.k8s.io",
        "PriorityClass",
        &[
            NAME,
            col(
                "Value",
                "integer",
                "The priority of its pods.",
                Cell::Int(&["value"]),
            ),
            col(
                "Global-Default",
                "boolean",
                "Whether pods without a class get this one.",
                Cell::Bool(&["globalDefault"], false),
            ),
            AGE,
            col(
                "PreemptionPolicy",
                "string",
                "Whether its pods may preempt others.",
                Cell::Text(&["preemptionPolicy"]),
            ),
        ],
    ),
    kind(
        "node.k8s.io",
        "RuntimeClass",
        &[
            NAME,
            col(
                "Handler",
                "string",
                "The runtime configuration it selects.",
                Cell::Text(&["handler"]),
            ),
            AGE,
        ],
    ),
    kind(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        &[
            NAME,
            col(
                "Webhooks",
                "integer",
                "How many webhooks it registers.",
                Cell::Len(&[&["webhooks"]]),
            ),
            AGE,
        ],
    ),
    kind(
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        &[
            NAME,
            col(
                "Webhooks",
                "integer",
                "How many webhooks it registers.",
                Cell::Len(&[&["webhooks"]]),
            ),
            AGE,
        ],
    ),
    kind("rbac.authorization.k8s.io", "RoleBinding", &BINDING_COLUMNS),
    kind(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        &BINDING_COLUMNS,
    ),
];

const BINDING_COLUMNS: [Builtin; 6] = [
    NAME,
    col("Role", "string", "The role it grants.", rule(Rule::RoleRef)),
    AGE,
    wide(
        "Users",
        "string",
        "The users it grants the role to.",
        rule(Rule::Subjects("User")),
    ),
    wide(
        "Groups",
        "string",
        "The groups it grants the role to.",
        rule(Rule::Subjects("Group")),
    ),
    wide(
        "ServiceAccounts",
        "string",
        "The service accounts it grants the role to.",
        rule(Rule::Subjects("ServiceAccount")),
    ),
];
