"""The registry of transforms, keyed by the code stored in a queue's ``transform["type"]``."""

from __future__ import annotations

from exports.transforms.base import Transform
from exports.transforms.csv import CsvTransform
from exports.transforms.handlebars import HandlebarsTransform
from exports.transforms.identity import IdentityTransform
from exports.transforms.mustache import MustacheTransform
from exports.transforms.simple_json import SimpleJsonTransform

REGISTRY: dict[str, Transform] = {
    t.code: t
    for t in (IdentityTransform(), MustacheTransform(), HandlebarsTransform(), CsvTransform(), SimpleJsonTransform())
}
