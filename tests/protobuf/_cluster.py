"""The bundled proto_cluster example (examples/proto_cluster), loaded once per session."""

from __future__ import annotations

import functools
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

from compatfuzz.protobuf import ProtoSchema, load_protos

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "proto_cluster"
MESSAGES = {"v2": "example.cluster.v2.Cluster", "v3": "example.cluster.v3.Cluster"}


@functools.lru_cache(maxsize=1)
def schema() -> ProtoSchema:
    return load_protos(EXAMPLE / "protos")


@functools.lru_cache(maxsize=1)
def conversion() -> ModuleType:
    """The example's correct converters (under a name no other example's module has)."""
    spec = importlib.util.spec_from_file_location("proto_cluster_conversion",
                                                  EXAMPLE / "conversion.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_example(dest: Path) -> Path:
    """The example's protos, converters and configs under ``dest``; the config's path."""
    shutil.copytree(EXAMPLE / "protos", dest / "protos")
    for name in ("conversion.py", "lossy.py", "compatfuzz.toml", "lossy.toml"):
        shutil.copy(EXAMPLE / name, dest / name)
    return dest / "compatfuzz.toml"
