# The relationships of the recorded cluster's final state, worked out from
# tests/data/cluster-snapshot.json alone, independently of GRW's analyzers:
#
#   jq -r -f tests/data/expected-edges.jq tests/data/cluster-snapshot.json | sort > tests/data/expected-edges.txt
#
# One edge per line: `FROM RELATION TO [key=value ...]`, where an object is
# `group/Kind namespace/name` (group `core` for the core group, namespace `-`
# for cluster-scoped objects).

def group_of(api_version): api_version | if test("/") then split("/")[0] else "core" end;
def node(group; kind; ns; name): "\(group)/\(kind) \(if ns == null or ns == "" then "-" else ns end)/\(name)";
def self_node(group; kind): node(group; kind; .metadata.namespace; .metadata.name);
def edge(from; relation; to): "\(from) \(relation) \(to)";

# Istio host matching: a leading `*.` matches one or more labels in front of
# the rest, anchored at the end; `*` alone matches everything.
def host_matches(pattern; host):
  if pattern == "*" then true
  elif (pattern | startswith("*.")) then (host | endswith(pattern[1:])) and ((host | length) > (pattern | length) - 1)
  else pattern == host end;
def strip_port: sub(":[0-9]+$"; "");

# What a pod spec (the input) names, from the object `from` in its
# namespace: its ServiceAccount, and each ConfigMap, Secret and PVC it uses,
# once per target and `via`.
def pod_spec_edges($from):
  ($from | split(" ")[1] | split("/")[0]) as $ns
  | ( (.serviceAccountName // empty) | edge($from; "runs-as"; node("core"; "ServiceAccount"; $ns; .)) ),
    ( [ ( (.imagePullSecrets // [])[] | (.name // empty) | select(length > 0) | ["Secret", ., "imagePullSecret"] ),
        ( (.volumes // [])[]
          | ( (.configMap.name // empty) | ["ConfigMap", ., "volume"] ),
            ( (.secret.secretName // empty) | ["Secret", ., "volume"] ),
            ( (.persistentVolumeClaim.claimName // empty) | ["PersistentVolumeClaim", ., "volume"] ),
            ( (.projected.sources // [])[]
              | ( (.configMap.name // empty) | ["ConfigMap", ., "projected"] ),
                ( (.secret.name // empty) | ["Secret", ., "projected"] ) ) ),
        ( ((.containers // []) + (.initContainers // []) + (.ephemeralContainers // []))[]
          | ( (.env // [])[] | .valueFrom // empty
              | ( (.configMapKeyRef.name // empty) | ["ConfigMap", ., "env"] ),
                ( (.secretKeyRef.name // empty) | ["Secret", ., "env"] ) ),
            ( (.envFrom // [])[]
              | ( (.configMapRef.name // empty) | ["ConfigMap", ., "envFrom"] ),
                ( (.secretRef.name // empty) | ["Secret", ., "envFrom"] ) ) ) ]
      | unique[]
      | edge($from; "uses"; node("core"; .[0]; $ns; .[1])) + " via=\(.[2])" );

. as $snapshot
| (
  # Ownership: every ownerReferences entry, owner -> owned.
  ( $snapshot | to_entries[] | .value.items[]
    | . as $o
    | (.metadata.ownerReferences // [])[]
    | edge(node(group_of(.apiVersion); .kind; $o.metadata.namespace; .name); "owns";
           ($o | self_node(group_of(.apiVersion); .kind)))
      + " controller=\(.controller // false)" ),

  # Service -> Pod: every pod of the namespace whose labels hold the selector.
  ( $snapshot.services.items[]
    | select((.spec.selector // {}) | length > 0)
    | . as $svc
    | $snapshot.pods.items[]
    | select(.metadata.namespace == $svc.metadata.namespace)
    | select(.metadata.labels as $l | $svc.spec.selector | to_entries | all(. as $p | $l[$p.key] == $p.value))
    | edge($svc | self_node("core"; "Service"); "selects"; self_node("core"; "Pod")) ),

  # EndpointSlice -> Service (its service-name label) and -> Pod (targetRef).
  ( $snapshot["endpointslices.discovery.k8s.io"].items[]
    | . as $es
    | ( (.metadata.labels["kubernetes.io/service-name"] // empty)
        | edge($es | self_node("discovery.k8s.io"; "EndpointSlice"); "endpoint-of";
               node("core"; "Service"; $es.metadata.namespace; .)) ),
      ( (.endpoints // [])[] | .targetRef // empty | select(.kind == "Pod")
        | edge($es | self_node("discovery.k8s.io"; "EndpointSlice"); "targets";
               node("core"; "Pod"; (.namespace // $es.metadata.namespace); .name)) ) ),

  # Pod -> Node, ServiceAccount, and what it reads: ConfigMaps, Secrets, PVCs.
  ( $snapshot.pods.items[]
    | (self_node("core"; "Pod")) as $from
    | ( (.spec.nodeName // empty) | edge($from; "runs-on"; node("core"; "Node"; null; .)) ),
      ( .spec | pod_spec_edges($from) ) ),

  # Workloads: the same from their pod templates, but no node.
  ( ( ($snapshot["deployments.apps"].items // [])[] | [self_node("apps"; "Deployment"), .spec.template.spec] ),
    ( ($snapshot["replicasets.apps"].items // [])[] | [self_node("apps"; "ReplicaSet"), .spec.template.spec] ),
    ( ($snapshot["statefulsets.apps"].items // [])[] | [self_node("apps"; "StatefulSet"), .spec.template.spec] ),
    ( ($snapshot["daemonsets.apps"].items // [])[] | [self_node("apps"; "DaemonSet"), .spec.template.spec] ),
    ( ($snapshot["jobs.batch"].items // [])[] | [self_node("batch"; "Job"), .spec.template.spec] ),
    ( ($snapshot["cronjobs.batch"].items // [])[] | [self_node("batch"; "CronJob"), .spec.jobTemplate.spec.template.spec] )
    | . as [$from, $spec]
    | $spec // empty | pod_spec_edges($from) ),

  # StatefulSet -> the StorageClass of each claim template that names one.
  ( ($snapshot["statefulsets.apps"].items // [])[]
    | self_node("apps"; "StatefulSet") as $from
    | [ (.spec.volumeClaimTemplates // [])[] | .spec.storageClassName // empty | select(length > 0) ]
    | unique[]
    | edge($from; "uses"; node("storage.k8s.io"; "StorageClass"; null; .)) + " via=volumeClaimTemplate" ),

  # PersistentVolumeClaim -> PersistentVolume -> StorageClass.
  ( $snapshot.persistentvolumeclaims.items[]
    | select(.spec.volumeName // "" | length > 0)
    | edge(self_node("core"; "PersistentVolumeClaim"); "bound-to"; node("core"; "PersistentVolume"; null; .spec.volumeName)) ),
  ( $snapshot.persistentvolumes.items[]
    | select(.spec.storageClassName // "" | length > 0)
    | edge(self_node("core"; "PersistentVolume"); "of-class"; node("storage.k8s.io"; "StorageClass"; null; .spec.storageClassName)) ),

  # Istio: VirtualService -> Gateway for each gateway it names (`name` or
  # `namespace/name`, its own namespace by default; `mesh` is no gateway),
  # and Gateway -> VirtualService for each of the virtual service's hosts
  # (port left out) that a server of the gateway exposes.
  ( $snapshot["virtualservices.networking.istio.io"].items[]
    | . as $vs
    | (.spec.gateways // [])[]
    | select(. != "mesh")
    | (if test("/") then split("/") else [$vs.metadata.namespace, .] end) as [$gns, $gname]
    | edge($vs | self_node("networking.istio.io"; "VirtualService"); "attached-to";
           node("networking.istio.io"; "Gateway"; $gns; $gname)),
      ( $snapshot["gateways.networking.istio.io"].items[]
        | select(.metadata.namespace == $gns and .metadata.name == $gname)
        | . as $gw
        | [ .spec.servers[]?.hosts[]?
            | (if test("/") then split("/") else ["*", .] end) as [$allowed, $pattern]
            | select($allowed == "*" or ($allowed == "." and $vs.metadata.namespace == $gw.metadata.namespace) or $allowed == $vs.metadata.namespace)
            | $pattern ] as $patterns
        | [ ($vs.spec.hosts // [])[] | strip_port | select(. as $h | $patterns | any(host_matches(.; $h))) ]
        | unique[]
        | edge($gw | self_node("networking.istio.io"; "Gateway"); "exposes";
               ($vs | self_node("networking.istio.io"; "VirtualService"))) + " host=\(.)" ) )
)
