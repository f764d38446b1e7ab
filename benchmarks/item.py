"""The Item record: one benchmark question with its gold answer, media and slice labels."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class AnswerKind(StrEnum):
    """How an answer is expressed; decides which parser family a suite uses."""

    CHOICE = "choice"
    NUMBER = "number"
    LABEL = "label"
    YAML = "yaml"
    WAYPOINTS = "waypoints"
    OPEN_TEXT = "open_text"


class MediaKind(StrEnum):
    IMAGE = "image"
    POINT_CLOUD = "point_cloud"
    FRAME = "frame"


class Media(BaseModel):
    """A typed reference to one media file, with its view or role and its content hash."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: MediaKind
    path: str
    sha256: str
    role: str | None = None
    index: int | None = None
    # The MIME type read from the bytes, for images (None where it was not read).
    mime: str | None = None

    @classmethod
    def from_file(
        cls, kind: MediaKind, path: Path, role: str | None = None, index: int | None = None
    ) -> Media:
        return cls.from_bytes(kind, path, path.read_bytes(), role=role, index=index)

    @classmethod
    def from_bytes(
        cls,
        kind: MediaKind,
        path: Path,
        data: bytes,
        role: str | None = None,
        index: int | None = None,
        mime: str | None = None,
    ) -> Media:
        """Media for the file at `path` whose bytes the caller has already read (and checked)."""
        return cls(
            kind=kind,
            path=str(path),
            sha256=hashlib.sha256(data).hexdigest(),
            role=role,
            index=index,
            mime=mime,
        )

    def read_bytes(self) -> bytes:
        return Path(self.path).read_bytes()


class Item(BaseModel):
    """One question of a suite; `content_hash` covers every field and the bytes of its media."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    suite_version: str
    item_id: str = Field(min_length=1)
    task: str
    question: str
    options: dict[str, str] = Field(default_factory=dict)
    answer_kind: AnswerKind
    reference: Any
    media: tuple[Media, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)
    # Suite-specific fields the prompt or the metric needs (e.g. RoadBench's reference line).
    extra: dict[str, Any] = Field(default_factory=dict)
    content_hash: str = ""

    @model_validator(mode="after")
    def _fill_hash(self) -> Item:
        if not self.content_hash:
            object.__setattr__(self, "content_hash", compute_content_hash(self))
        return self


def compute_content_hash(item: Item) -> str:
    """Hash of everything that defines the item; media enter through their byte hashes."""
    body = item.model_dump(mode="json", exclude={"content_hash", "suite_version"})
    # The file path is where the bytes live, not what they are: moving a suite keeps its hashes.
    # The MIME type is read from those bytes, which the hash covers already.
    for media in body["media"]:
        media.pop("path")
        media.pop("mime", None)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def suite_hash(items: list[Item]) -> str:
    """Order-independent hash of a suite's items, recorded in the run manifest."""
    digest = hashlib.sha256()
    for content_hash in sorted(item.content_hash for item in items):
        digest.update(content_hash.encode())
    return digest.hexdigest()
