"""{{name}}: a GRW analyzer. Each Pod ``uses`` the ConfigMaps its volumes
name (an edge to a missing ConfigMap is kept, shown as missing). Change
``analyze`` to find other relationships; ``cache`` looks up other objects.
"""

import grw_sdk
from grw_sdk import Cache, Config, Gvk, Interest, ObjectRef, ObjectView, Relationship

CONFIG_MAP = Gvk("", "v1", "ConfigMap")


class Plugin:
    """Pods → the ConfigMaps their volumes name."""

    interest = Interest(kinds=["Pod"])

    def __init__(self, config: Config):
        pass

    def analyze(self, pod: ObjectView, cache: Cache) -> list[Relationship]:
        volumes = pod.field("spec.volumes") or []
        return [
            Relationship.outgoing("uses", ObjectRef(CONFIG_MAP, pod.namespace, volume["configMap"]["name"]))
            for volume in volumes
            if isinstance(volume, dict) and "name" in (volume.get("configMap") or {})
        ]


Analyzer = grw_sdk.export_analyzer(Plugin)
