// {{name}}: a GRW analyzer. Each Pod `uses` the ConfigMaps its volumes name
// (an edge to a missing ConfigMap is kept, shown as missing). Change
// `analyze` to find other relationships; `cache` looks up other objects.

import { exportAnalyzer, Gvk, Interest, KindPattern, ObjectRef, Relationship } from "./grw-sdk/grw-sdk.js";

const CONFIG_MAP = new Gvk("", "v1", "ConfigMap");

export const plugin = {
  init(config) {
    return new Interest({ kinds: [KindPattern.groupKind("", "Pod")] });
  },

  analyze(pod, cache) {
    const volumes = pod.field("spec.volumes") ?? [];
    return volumes
      .filter((volume) => typeof volume?.configMap?.name === "string")
      .map((volume) => Relationship.outgoing("uses", new ObjectRef(CONFIG_MAP, pod.namespace, volume.configMap.name)));
  },
};

export const analyzer = exportAnalyzer(plugin);
