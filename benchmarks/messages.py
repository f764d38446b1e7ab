"""Chat messages in the OpenAI format, which LiteLLM accepts for every provider.

A prompt holds its images by reference (`ImageRef`: a file, its sha256 and MIME type), so that a
run can plan every request (and key it by the images' digests) without reading or encoding a
single image; the bytes become a data URL only when the request is sent (`encode_messages`).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

Message = dict[str, Any]


@dataclass(frozen=True)
class ImageRef:
    """An image a prompt shows: sent as a data URL of its bytes, keyed by their digest.

    `data`, when set, is the file's bytes carried along (`inlined`): an image that travels to a
    scoring worker on another machine, where `path` names no file. Never part of equality."""

    path: str
    sha256: str
    mime: str = "image/png"
    data: bytes | None = field(default=None, compare=False, repr=False)

    def read_bytes(self) -> bytes:
        return self.data if self.data is not None else Path(self.path).read_bytes()

    def inlined(self) -> ImageRef:
        """The same image with its bytes carried along, read from `path` now."""
        return self if self.data is not None else replace(self, data=self.read_bytes())

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.read_bytes()).decode('ascii')}"

    def digest(self) -> str:
        """What stands for the image in a request key: its type and content, not its path."""
        return f"{self.mime};sha256:{self.sha256}"


def image_part(image: ImageRef) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def user_message(text: str, images: Sequence[ImageRef] = (), text_first: bool = False) -> Message:
    """A user turn with images and text; plain string content without images."""
    if not images:
        return {"role": "user", "content": text}
    parts = [image_part(image) for image in images]
    return {
        "role": "user",
        "content": [text_part(text), *parts] if text_first else [*parts, text_part(text)],
    }


def system_message(text: str) -> Message:
    return {"role": "system", "content": text}


def image_refs(messages: Sequence[Message]) -> list[ImageRef]:
    """The images a conversation shows by reference, in order."""
    found: list[ImageRef] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url" and isinstance(
                    part["image_url"]["url"], ImageRef
                ):
                    found.append(part["image_url"]["url"])
    return found


def has_images(messages: Sequence[Message]) -> bool:
    return bool(image_refs(messages))


def encode_messages(messages: Sequence[Message]) -> list[Message]:
    """The messages as sent: every ImageRef replaced by a data URL of its bytes."""

    def encode(part: dict[str, Any]) -> dict[str, Any]:
        url = part.get("image_url", {}).get("url") if part.get("type") == "image_url" else None
        if isinstance(url, ImageRef):
            return {**part, "image_url": {**part["image_url"], "url": url.data_url()}}
        return part

    return [
        {**m, "content": [encode(p) for p in m["content"]]}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]


def key_default(value: object) -> str:
    """JSON for what a request key hashes: an image by its digest."""
    if isinstance(value, ImageRef):
        return value.digest()
    raise TypeError(f"{type(value).__name__} does not belong in a request")


def message_text(messages: Sequence[Message]) -> str:
    """All text of a conversation joined (tests read prompts as a model would)."""
    chunks: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, list):
            chunks.extend(part["text"] for part in content if part.get("type") == "text")
    return "\n".join(chunks)


def message_images(messages: Sequence[Message]) -> list[bytes]:
    """Image bytes of a conversation, in order, whether by reference or as data URLs."""
    images: list[bytes] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    if isinstance(url, ImageRef):
                        images.append(url.read_bytes())
                    else:
                        images.append(base64.b64decode(url.split(",", 1)[1]))
    return images
