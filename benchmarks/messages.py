"""Chat messages in the OpenAI format, which LiteLLM accepts for every provider."""

from __future__ import annotations

import base64
from collections.abc import Sequence

from roadeval.benchmarks.suite import Message


def image_part(data: bytes, mime: str = "image/png") -> dict:
    """An image content part carrying the exact bytes as a data URL."""
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


def user_message(
    text: str, images: Sequence[tuple[bytes, str]] = (), text_first: bool = False
) -> Message:
    """A user turn with images (bytes, mime) and text; plain string content without images."""
    if not images:
        return {"role": "user", "content": text}
    parts = [image_part(data, mime) for data, mime in images]
    return {
        "role": "user",
        "content": [text_part(text), *parts] if text_first else [*parts, text_part(text)],
    }


def system_message(text: str) -> Message:
    return {"role": "system", "content": text}


def message_text(messages: Sequence[Message]) -> str:
    """All text of a conversation joined, for baselines that read the prompt as a model would."""
    chunks: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, list):
            chunks.extend(part["text"] for part in content if part.get("type") == "text")
    return "\n".join(chunks)


def message_images(messages: Sequence[Message]) -> list[bytes]:
    """Decoded image bytes of a conversation, in order (tests and baselines inspect them)."""
    images: list[bytes] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    images.append(base64.b64decode(url.split(",", 1)[1]))
    return images
