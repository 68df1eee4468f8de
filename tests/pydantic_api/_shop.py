"""The shop example (``example/``): three Order versions, correct converters and seeded
bugs, loaded through its ``compatfuzz.toml`` as a user's config loads them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parent / "example"
CONFIG = EXAMPLE / "compatfuzz.toml"


def shop_api(**replace: Any) -> Any:
    """The orders API of the example config, with converters replaced by pair
    (``{("v2", "v1"): f}``)."""
    from compatfuzz.pydantic import PydanticAPI
    from compatfuzz.roundtrip import load_config

    (api,) = load_config(CONFIG)  # puts the example's folder first on sys.path
    from shop import conversion  # type: ignore[import-not-found]

    pairs = {("v1", "v2"): conversion.v1_to_v2, ("v2", "v1"): conversion.v2_to_v1,
             ("v2", "v3"): conversion.v2_to_v3, ("v3", "v2"): conversion.v3_to_v2}
    pairs.update(replace.pop("converters", {}))
    return PydanticAPI("orders", api.models, converters=pairs, **replace)


def bugs() -> dict[str, Any]:
    shop_api()
    from shop.bugs import BUGS  # type: ignore[import-not-found]

    return dict(BUGS)


def copy_example(dest: Path) -> None:
    """The example's files (config, shop package) under ``dest``."""
    for item in EXAMPLE.iterdir():
        if item.name == "__pycache__":
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, ignore=shutil.ignore_patterns(
                "__pycache__"))
        else:
            shutil.copy(item, dest / item.name)
