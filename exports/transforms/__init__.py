"""The registry of transforms, keyed by the code stored in a queue's ``transform["type"]``."""

from __future__ import annotations

from exports.transforms.base import Transform
from exports.transforms.identity import IdentityTransform

REGISTRY: dict[str, Transform] = {t.code: t for t in (IdentityTransform(),)}
