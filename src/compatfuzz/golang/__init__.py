"""Go conversion code under test: controller-runtime hub-and-spoke (``Hub``,
``Convertible``) and conversion-gen schemes, built from the user's Go module.

    from compatfuzz import API
    from compatfuzz.golang import go_converter

    api = API.from_crd("vessels", "config/crd/bases/fleet.example.com_vessels.yaml",
                       converter=go_converter(".", ["./api/v1alpha1", "./api/v1"]))

In ``compatfuzz.toml``: ``go = { module = ".", packages = ["./api/v1alpha1", ...] }``.
See docs/go.md.
"""

from compatfuzz.golang._build import GoBuildError, GoMissing
from compatfuzz.golang._converter import GoConverter, go_converter

__all__ = ["GoBuildError", "GoConverter", "GoMissing", "go_converter"]

for _name in __all__:
    globals()[_name].__module__ = "compatfuzz.golang"
