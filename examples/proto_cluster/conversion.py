"""Converters between example.cluster.v2 and example.cluster.v3: correct, every property holds.

What moved between the versions (protos/example/cluster/*/cluster.proto): ``hosts``
strings became ``endpoints`` messages, the ``UInt32Value`` wrapper became an ``optional``
field, and the ``Int64Value`` ``max_requests_per_connection`` moved into
``common_http_protocol_options``. Each converter fills ``dst``, an empty message of the
target version that compatfuzz hands it (as Envoy's ``VersionConverter::upgrade(prev,
next)`` does), so this file needs no generated ``_pb2`` code; a converter may instead
return a message it builds itself.
"""

from __future__ import annotations

from google.protobuf.message import Message


def v2_to_v3(src: Message, dst: Message) -> None:
    dst.name = src.name
    if src.HasField("connect_timeout"):
        dst.connect_timeout.CopyFrom(src.connect_timeout)
    dst.lb_policy = src.lb_policy  # by number: a value v3 does not name survives too
    for host in src.hosts:
        dst.endpoints.add(address=host)
    if src.HasField("per_connection_buffer_limit_bytes"):  # set to 0 is not unset
        dst.per_connection_buffer_limit_bytes = src.per_connection_buffer_limit_bytes.value
    if src.HasField("max_requests_per_connection"):
        options = dst.common_http_protocol_options
        options.SetInParent()  # present even when the value is 0
        options.max_requests_per_connection = src.max_requests_per_connection.value
    dst.metadata.update(src.metadata)


def v3_to_v2(src: Message, dst: Message) -> None:
    dst.name = src.name
    if src.HasField("connect_timeout"):
        dst.connect_timeout.CopyFrom(src.connect_timeout)
    dst.lb_policy = src.lb_policy
    dst.hosts.extend(endpoint.address for endpoint in src.endpoints)
    if src.HasField("per_connection_buffer_limit_bytes"):
        dst.per_connection_buffer_limit_bytes.value = src.per_connection_buffer_limit_bytes
    if src.HasField("common_http_protocol_options"):
        max_requests = src.common_http_protocol_options.max_requests_per_connection
        dst.max_requests_per_connection.value = max_requests
    dst.metadata.update(src.metadata)
