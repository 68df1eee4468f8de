"""A realistic apps/v1 Deployment used by the diff tests and the benchmark."""

from __future__ import annotations

import copy
from typing import Any

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web", "namespace": "default", "generation": 3, "uid": "0b1c",
        "resourceVersion": "12345", "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"app": "web", "tier": "frontend"},
        "annotations": {"deployment.kubernetes.io/revision": "3"},
    },
    "spec": {
        "replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
        "template": {
            "metadata": {"labels": {"app": "web", "tier": "frontend"}},
            "spec": {
                "containers": [
                    {
                        "name": "app", "image": "nginx:1.25", "imagePullPolicy": "IfNotPresent",
                        "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"},
                                  {"containerPort": 443, "protocol": "TCP", "name": "https"}],
                        "env": [{"name": "A", "value": "1"},
                                {"name": "B", "valueFrom": {
                                    "fieldRef": {"fieldPath": "metadata.name"}}}],
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"},
                                      "requests": {"cpu": "250m", "memory": "512Mi"}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80,
                                                      "scheme": "HTTP"},
                                          "initialDelaySeconds": 5, "periodSeconds": 10},
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    },
                    {
                        "name": "sidecar", "image": "busybox",
                        "command": ["sh", "-c", "sleep 3600"],
                        "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                    },
                ],
                "volumes": [{"name": "data", "emptyDir": {"sizeLimit": "1Gi"}}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
            },
        },
    },
    "status": {
        "replicas": 3, "readyReplicas": 3,
        "conditions": [{"type": "Available", "status": "True",
                        "lastTransitionTime": "2024-05-01T10:01:00Z",
                        "lastUpdateTime": "2024-05-01T10:01:00Z",
                        "reason": "MinimumReplicasAvailable", "message": "ok"}],
    },
}


def deployment() -> dict[str, Any]:
    return copy.deepcopy(DEPLOYMENT)


def respelled(obj: dict[str, Any]) -> dict[str, Any]:
    """An equal but differently written copy: keys reordered, list-maps and env reversed,
    quantities and times in other spellings."""
    out = copy.deepcopy(obj)
    pod = out["spec"]["template"]["spec"]
    pod["containers"].reverse()
    for container in pod["containers"]:
        limits = container.get("resources", {}).get("limits", {})
        if limits.get("memory") == "1Gi":
            limits["memory"] = "1024Mi"
        if limits.get("cpu") == "500m":
            limits["cpu"] = "0.5"
        if "env" in container:
            container["env"].reverse()
    condition = out["status"]["conditions"][0]
    if condition["lastTransitionTime"] == "2024-05-01T10:01:00Z":
        condition["lastTransitionTime"] = "2024-05-01T12:01:00+02:00"
    if out["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z":
        out["metadata"]["creationTimestamp"] = "2024-05-01T10:00:00.000Z"
    return {k: out[k] for k in reversed(list(out))}
