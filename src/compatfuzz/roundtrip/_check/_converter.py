"""The converter interface: one way in for every kind of converter an API can have.

A property never calls a user's code itself: it asks the API, which asks its
:class:`Converter` to move an object from version ``a`` to ``b``. The kinds:

* Python functions in any of their three shapes (``_converters.Converters``), which also
  carries pydantic converters and Cadwyn migrations (``compatfuzz.pydantic``,
  ``compatfuzz.cadwyn`` hand theirs over as hub-and-spoke functions);
* the user's conversion webhook at a URL (``_webhook.WebhookConverter``, config key
  ``webhook``): a real API server calls it too (:meth:`Converter.webhook`);
* on a real server, a converter without a URL of its own is served by compatfuzz's own
  conversion webhook (``apiserver._real._webhook``), which calls :meth:`Converter.convert`.

A new kind is one class with these methods, and its config key in
``_config.CONVERTER_KEYS``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Check", "Converter", "WebhookAddress"]

#: ``check(out, a, b)``: vets a converter's output for ``a -> b`` (and returns it)
Check = Callable[[Any, str, str], Any]


@dataclass(frozen=True)
class WebhookAddress:
    """Where a real API server sends a converter's ConversionReviews: the CRD's
    ``spec.conversion.webhook.clientConfig`` (``url``, ``caBundle`` from ``ca_file``)."""

    url: str
    ca_file: str | None = None
    #: the certificate is not checked: a real API server cannot call it so
    insecure: bool = False


@runtime_checkable
class Converter(Protocol):
    """One kind of converter (see the module docstring)."""

    #: the API it converts for, in messages
    owner: str
    # A kind may also set ``isolated = True``: it converts a serialized copy in another
    # process (the Go converter), so it cannot mutate its input and ``no_mutation`` is
    # not planned for it. A kind that knows its Hub version gives ``hub_of(group, kind)``:
    # annotations read back there are then not taken for a spoke's stash (``roundtrip``).

    def convert(self, obj: Any, a: str, b: str, *, label: str, hub: str | None,
                target: Callable[[str], Any], check: Check) -> Any:
        """``obj`` (of version ``a``) converted to ``b``.

        ``label`` names what is converted in messages (``Widget``), ``target(b)`` is what
        the family calls the target (a CRD's ``apiVersion``), ``check`` vets each output.

        Raises:
            ConverterError: the converter raised or returned something unusable.
        """

    def reachable(self, a: str, b: str) -> bool:
        """Whether this converter can take an object from ``a`` to ``b``."""

    def check_chains(self, versions: Collection[str]) -> None:
        """Raise ``InvalidArgument`` when some ordered pair of ``versions`` is unreachable."""

    def webhook(self) -> WebhookAddress | None:
        """The user's own webhook a real API server should call, or ``None`` when
        compatfuzz serves :meth:`convert` as the CRD's webhook."""
