"""What every transform is: a small class registered by code in ``exports.transforms.REGISTRY``.

A transform turns a batch of elements (real time: exactly one) into bytes plus a content type and a file
extension, or decides to skip an element. Staff write the configurations, so ``validate`` must refuse one
that cannot work (naming the field), and rendering must never run code and is bounded in time and size.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, ClassVar

from exports.transforms.described import Described, ElementSchema

# Rendering limits: a transform whose output grows past this is stopped with a TransformError.
MAX_OUTPUT_BYTES = 50 * 1024 * 1024
RENDER_TIMEOUT_SECONDS = 30.0
# A streamed render (a cron batch written to a temporary file) has wider limits: it is never held in memory.
MAX_STREAM_BYTES = 4 * 1024 * 1024 * 1024
STREAM_TIMEOUT_SECONDS = 1800.0


class ConfigError(Exception):
    """A configuration that cannot work. ``field`` is the path inside the transform/delivery object."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class TransformError(Exception):
    """Rendering failed (a permanent failure of the export item, logged with this message)."""


@dataclass(frozen=True)
class Element:
    """One exported entity: its element key and its JSON form (the spec's model, as a dict)."""

    element_key: str
    entity: dict[str, Any]


@dataclass(frozen=True)
class RenderContext:
    """What a template sees besides the elements."""

    queue: dict[str, Any]  # {"id", "name", "entity_type", "trigger"}
    account: dict[str, Any]  # {"identifier", "name"}
    now: datetime
    delivery_id: str


@dataclass(frozen=True)
class Rendered:
    """A transform's output: in ``content``, or (a streamed render) in ``file``, a temporary file."""

    content: bytes
    content_type: str
    extension: str  # without the dot: "json", "csv", "html", "xml", "txt"
    skipped: list[str] = field(default_factory=list)  # element keys the transform skipped
    file: IO[bytes] | None = None

    def open(self) -> IO[bytes]:
        """The output from its first byte, to be read in chunks (FTP and SFTP upload from it)."""
        if self.file is None:
            return io.BytesIO(self.content)
        self.file.seek(0)
        return self.file

    def size(self) -> int:
        """The output's length in bytes, without reading it."""
        if self.file is None:
            return len(self.content)
        return self.file.seek(0, io.SEEK_END)

    def body(self) -> bytes:
        """The whole output in memory (web hooks sign it, e-mail attaches it), at most ``MAX_OUTPUT_BYTES``."""
        if self.file is None:
            return self.content
        self.file.seek(0, io.SEEK_END)
        if self.file.tell() > MAX_OUTPUT_BYTES:
            raise TransformError(f"output is larger than {MAX_OUTPUT_BYTES} bytes, too large to send in one piece")
        self.file.seek(0)
        return self.file.read()


class Transform:
    code: ClassVar[str]

    def validate(self, config: dict[str, Any]) -> None:
        """Raise ConfigError for a configuration that cannot work. ``config`` includes ``"type"``."""

    def skip_reason(self, element: Element, config: dict[str, Any]) -> str | None:
        """A reason to skip this element (logged as skipped, not failed), or None to export it."""
        return None

    def reads(self, config: dict[str, Any]) -> list[tuple[str | int, ...]] | None:
        """The paths (``("summary", "total")``) of every value of an entity that rendering with ``config`` reads,
        ``skip_reason`` included, or None: it may read anything. A cron batch loads only these values where its
        entity type can (``EntityDefinition.load_paths``), so the list must be complete."""
        return None

    def describe(self, config: dict[str, Any], element: ElementSchema) -> Described:
        """What rendering ``config`` on elements of ``element``'s type writes, as far as the configuration fixes it
        (``exports.transforms.described``); ConfigError for a configuration that cannot work."""
        raise NotImplementedError

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        raise NotImplementedError

    def render_to(
        self, elements: Iterable[Element], context: RenderContext, config: dict[str, Any], out: IO[bytes]
    ) -> Rendered:
        """Render into ``out`` (a cron batch of any size), returning a ``Rendered`` whose ``file`` is ``out``.

        Transforms that can write as they go (identity, CSV) override this so that a batch is never held in
        memory; a template transform renders the whole batch at once, within ``MAX_OUTPUT_BYTES``."""
        rendered = self.render(list(elements), context, config)
        out.write(rendered.content)
        return Rendered(b"", rendered.content_type, rendered.extension, rendered.skipped, file=out)
