"""A *lossy* v2 -> v3 converter, for the README walk-through: an explicit 0 loses its presence.

In v2 ``per_connection_buffer_limit_bytes`` is a ``UInt32Value``: unset means "the default
limit" and 0 means "no buffering". This converter copies it only when it is non-zero
(``if value:``, the test that reads naturally), so 0 comes back from v3 as unset. Tests
written by hand rarely set a wrapper to 0; compatfuzz finds it.
"""

from __future__ import annotations

from conversion import v2_to_v3 as _correct
from google.protobuf.message import Message


def v2_to_v3(src: Message, dst: Message) -> None:
    _correct(src, dst)
    if not src.per_connection_buffer_limit_bytes.value:  # BUG: 0 is not "unset"
        dst.ClearField("per_connection_buffer_limit_bytes")
