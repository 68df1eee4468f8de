"""``proto = ...`` in compatfuzz.toml: what loads, and what each mistake says (file, key,
fix), including a missing ``compatfuzz[protobuf]`` extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compatfuzz.errors import SchemaLoadError
from compatfuzz.protobuf import ProtoAPI
from compatfuzz.roundtrip import load_config, units
from tests.protobuf._cluster import MESSAGES, copy_example

TABLE = textwrap.dedent("""\
    [[api]]
    name = "cluster"
    proto = "protos"
    messages = { v2 = "example.cluster.v2.Cluster", v3 = "example.cluster.v3.Cluster" }
    converters = { "v2->v3" = "conversion:v2_to_v3", "v3->v2" = "conversion:v3_to_v2" }
""")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy_example(tmp_path)
    return tmp_path


def _load(project: Path, text: str) -> list[object]:
    config = project / "compatfuzz.toml"
    config.write_text(text)
    return load_config(config)


def _error(project: Path, text: str) -> SchemaLoadError:
    with pytest.raises(SchemaLoadError) as info:
        _load(project, text)
    return info.value


def test_the_example_config_loads_beside_itself(project: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.parent)  # paths and modules resolve beside the config
    (api,) = load_config(project / "compatfuzz.toml")
    assert isinstance(api, ProtoAPI)
    assert api.source == str((project / "compatfuzz.toml").resolve())
    assert {v: d.full_name for v, d in api.descriptors.items()} == MESSAGES
    assert len(units(api)) == 8


def test_pyproject_lists_of_protos_and_import_folders(project: Path) -> None:
    (project / "vendor").mkdir()
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [[tool.compatfuzz.api]]
        name = "cluster"
        proto = ["protos/example/cluster/v2/cluster.proto",
                 "protos/example/cluster/v3/cluster.proto"]
        proto_path = ["protos", "vendor"]
        messages = { v2 = ".example.cluster.v2.Cluster", v3 = "example.cluster.v3.Cluster" }
        encodings = ["binary", "json"]
    """))
    (api,) = load_config(project / "pyproject.toml")
    assert isinstance(api, ProtoAPI) and api.encodings == ("binary", "json")
    assert [u.id for u in units(api)] == ["cluster::encodings[v2]", "cluster::encodings[v3]"]


def test_descriptor_sets_and_pb2_modules_load_too(project: Path) -> None:
    from compatfuzz.protobuf import load_protos

    fds = load_protos(project / "protos").to_descriptor_set()
    (project / "api.binpb").write_bytes(fds.SerializeToString())
    (api,) = _load(project, TABLE.replace('proto = "protos"', 'proto = "api.binpb"'))
    assert isinstance(api, ProtoAPI)
    # validate.validate_pb2 (xds-protos) is a _pb2 module: one message of it as a version
    (api,) = _load(project, textwrap.dedent("""\
        [[api]]
        name = "rules"
        proto = "module:validate.validate_pb2"
        messages = { v1 = "validate.StringRules" }
    """))
    assert isinstance(api, ProtoAPI) and [u.id for u in units(api)] == [
        "rules::encodings[v1]"]


def test_missing_proto_file(project: Path) -> None:
    err = _error(project, TABLE.replace('"protos"', '"protoz"'))
    assert "$.api[0].proto" in str(err) and "'protoz' not found" in str(err)
    assert "relative to the config file's folder" in err.hint


def test_unknown_message_suggests_the_close_name(project: Path) -> None:
    err = _error(project, TABLE.replace("v3.Cluster", "v3.Clustr"))
    assert err.pointer == "/api/0/messages/v3"
    assert "defines no message 'example.cluster.v3.Clustr'" in err.reason
    assert "did you mean 'example.cluster.v3.Cluster'" in err.hint
    far = _error(project, TABLE.replace("example.cluster.v3.Cluster", "Zzz"))
    assert "it defines: example.cluster.v2.Cluster" in far.hint


def test_unknown_keys_and_bad_values(project: Path) -> None:
    err = _error(project, TABLE.replace("messages =", "mesages ="))
    assert "unknown key(s) mesages" in err.reason and "'mesages' -> 'messages'" in err.hint
    err = _error(project, TABLE.replace("proto =", "protos ="))
    # the typo alone: not also "messages", which is a key of the family it hides
    assert err.reason == "unknown key 'protos'" and err.pointer == "/api/0/protos"
    assert "did you mean 'proto'?" in err.hint and "messages" not in str(err)
    err = _error(project, TABLE.replace('messages =', 'crd = "x.yaml"\nmessages ='))
    assert "proto and crd both give the API's versions" in err.reason
    err = _error(project, TABLE + 'encodings = ["binary", "jsno"]\n')
    assert err.pointer == "/api/0/encodings/1" and "did you mean 'json'" in err.hint
    err = _error(project, TABLE.replace("v2_to_v3", "v2_to_v4"))
    assert "has no function 'v2_to_v4'" in err.reason
    assert "did you mean 'conversion:v2_to_v3'" in err.hint
    err = _error(project, TABLE.replace('"v2->v3"', '"v2->v4"'))
    assert "converters key 'v2->v4' is not a pair of known versions ('v4' is not one)" \
        in str(err) and '"v2->v3" in a config file' in str(err)
    err = _error(project, TABLE.replace('"v2->v3" = "conversion:v2_to_v3", ', "")
                 .replace("converters", 'convert = "conversion:one"\nconverters'))
    assert "has no function 'one'" in err.reason
    err = _error(project, TABLE.replace('messages = {', 'messages = 3 #'))
    assert "expected a table, got 3" in str(err) and "messages = {" in err.hint


def test_a_proto_that_does_not_compile_names_its_line_and_the_config_key(
        project: Path) -> None:
    v3 = project / "protos" / "example" / "cluster" / "v3" / "cluster.proto"
    v3.write_text(v3.read_text().replace("int64 max_requests_per_connection = 1;",
                                         "int64 max_requests_per_connection = 1"))
    err = _error(project, TABLE)
    assert err.source == f"{v3}:16:1"  # file:line:col of the token after the missing ;
    assert "named by: " in str(err) and "at $.api[0].proto" in str(err)
    assert "fix the protobuf syntax at this line" in err.hint


def test_without_the_protobuf_extra_the_error_names_it(project: Path) -> None:
    (project / "compatfuzz.toml").write_text(TABLE)
    code = textwrap.dedent(f"""\
        import sys
        sys.modules["google.protobuf"] = None   # as if protobuf were not installed
        from compatfuzz.cli import main
        sys.exit(main(["fuzz", "--config", {str(project / "compatfuzz.toml")!r}]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "at $.api[0].proto: proto = ... needs 'google.protobuf', which is not installed" \
        in proc.stderr
    assert "fix: pip install 'compatfuzz[protobuf]'" in proc.stderr
    assert "Traceback" not in proc.stderr
