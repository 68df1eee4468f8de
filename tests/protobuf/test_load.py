"""Loading .proto trees, descriptor sets and _pb2 modules; bad input names file, line, fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from compatfuzz.cli import main
from compatfuzz.errors import InvalidArgument, SchemaLoadError
from compatfuzz.protobuf import ProtoSchema, load_protos
from tests.protobuf._trees import KITCHEN_SINK, write_tree


def test_proto_file_with_validate_import_from_installed_pb2(tmp_path: Path) -> None:
    write_tree(tmp_path, {"api.proto": KITCHEN_SINK})
    schema = load_protos(tmp_path / "api.proto")
    assert schema.roots == {"api.proto"}
    assert "demo.v1.Sink" in schema.message_names(roots_only=True)
    # imports come along: validate.proto (from xds-protos' _pb2) and the well-known types
    names = {f.name for f in schema.files}
    assert {"validate/validate.proto", "google/protobuf/duration.proto"} <= names
    # source info is kept: a field's line is reported
    assert schema.where("api.proto", [4, 1, 2, 0]).endswith("api.proto:19")


def test_folder_and_imports_between_own_files(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "a/v1/a.proto": 'syntax = "proto3"; package a.v1; message A { int32 x = 1; }',
        "b/v1/b.proto": 'syntax = "proto3"; package b.v1; import "a/v1/a.proto";\n'
                        "message B { a.v1.A a = 1; }",
    })
    schema = load_protos(tmp_path)
    assert schema.roots == {"a/v1/a.proto", "b/v1/b.proto"}
    assert schema.message("b.v1.B").fields_by_name["a"].message_type.full_name == "a.v1.A"


def test_descriptor_set_round_trip(tmp_path: Path) -> None:
    write_tree(tmp_path, {"api.proto": KITCHEN_SINK})
    schema = load_protos(tmp_path / "api.proto")
    out = tmp_path / "api.binpb"
    out.write_bytes(schema.to_descriptor_set().SerializeToString())
    again = load_protos(out)
    assert set(again.message_names()) == set(schema.message_names())
    # a descriptor set without a known suffix is recognised by content
    other = tmp_path / "api.image"
    other.write_bytes(out.read_bytes())
    assert isinstance(load_protos(other), ProtoSchema)


def test_pb2_module() -> None:
    schema = load_protos("module:google.protobuf.duration_pb2")
    assert schema.message("google.protobuf.Duration").fields_by_name["seconds"].number == 1
    import validate.validate_pb2 as pgv

    assert "validate.FieldRules" in load_protos(pgv).message_names()


def test_syntax_error_names_file_line_and_fix(tmp_path: Path) -> None:
    write_tree(tmp_path,
               {"bad.proto": 'syntax = "proto3";\npackage x;\nmessage M { int32 = 1; }\n'})
    with pytest.raises(SchemaLoadError) as info:
        load_protos(tmp_path / "bad.proto")
    text = str(info.value)
    assert f"{tmp_path / 'bad.proto'}:3:" in text
    assert "fix:" in text


def test_missing_import_suggests_proto_path(tmp_path: Path) -> None:
    write_tree(tmp_path, {"m.proto": 'syntax = "proto3";\nimport "vendor/dep.proto";\n'
                                     "message M { int32 x = 1; }\n"})
    with pytest.raises(SchemaLoadError) as info:
        load_protos(tmp_path / "m.proto")
    text = str(info.value)
    assert "m.proto:2:" in text and "vendor/dep.proto" in text
    assert "--proto-path" in text
    # with the folder on the include path it loads
    write_tree(tmp_path / "inc", {"vendor/dep.proto": 'syntax = "proto3"; package v;'})
    assert load_protos(tmp_path / "m.proto", include=[tmp_path / "inc"]).message("M")


def test_not_a_descriptor_set(tmp_path: Path) -> None:
    (tmp_path / "junk.binpb").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SchemaLoadError, match="FileDescriptorSet") as info:
        load_protos(tmp_path / "junk.binpb")
    assert "buf build" in str(info.value)


def test_missing_path_and_unknown_message(tmp_path: Path) -> None:
    with pytest.raises(SchemaLoadError, match="no such file"):
        load_protos(tmp_path / "nope.proto")
    write_tree(tmp_path, {"api.proto": KITCHEN_SINK})
    schema = load_protos(tmp_path / "api.proto")
    with pytest.raises(InvalidArgument, match=r"did you mean demo\.v1\.Sink"):
        schema.message("demo.v1.Snik")


def test_cli_bad_proto_exits_2_without_traceback(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"bad.proto": 'syntax = "proto3";\nmessage M { int32 = 1; }\n',
                          "ok.proto": 'syntax = "proto3";\nmessage M { int32 x = 1; }\n'})
    assert main(["diff", str(tmp_path / "ok.proto"), str(tmp_path / "bad.proto")]) == 2
    err = capsys.readouterr().err
    assert "bad.proto:2:" in err and "fix:" in err and "Traceback" not in err
    assert main(["diff", str(tmp_path / "ok.proto"), str(tmp_path / "x.json")]) == 2
