"""A request's input tokens as the provider will count them, before it is sent: its text by the
model's tokenizer where LiteLLM has one, its images by the provider's rule from their pixel size.
The plan, the limits (tokens per minute) and the budget all count through here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from roadeval.benchmarks.messages import Message, image_refs, message_text
from roadeval.tasks.requests.image_tokens import image_size, image_tokens

# The chat format's own tokens, which a text count misses: OpenAI counts 3 per message and 3
# to prime the reply; 4 and 3 here, so that no provider's framing is undercounted.
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3


def text_tokens(model: str, messages: Sequence[Message]) -> int:
    """The prompt's text tokens by LiteLLM's tokenizer for `model` (images counted apart)."""
    return int(_counter(model)(message_text(messages)))


@lru_cache(maxsize=256)
def _counter(model: str) -> Callable[[str], int]:
    """What `litellm.token_counter(model=model, text=...)` counts a text with, chosen once per
    model: that call chooses the tokenizer again each time, about two thirds of its cost (a
    dry run counts every prompt of its panel once per model)."""
    import litellm  # noqa: F401  (set up, as `token_counter` is, before its helper is used)
    from litellm.litellm_core_utils.token_counter import _get_count_function

    count: Callable[[str], int] = _get_count_function(model, None)
    return count


def image_sizes(messages: Sequence[Message]) -> list[tuple[int, int]]:
    return [image_size(image) for image in image_refs(messages)]


def framing_tokens(messages: Sequence[Message]) -> int:
    return TOKENS_PER_MESSAGE * len(messages) + TOKENS_PER_REPLY


def input_tokens(model: str, messages: Sequence[Message], text: int | None = None) -> int:
    """Text, framing and image tokens of `messages` for `model` (`text`: already counted)."""
    counted = text_tokens(model, messages) if text is None else text
    images = sum(image_tokens(model, w, h).tokens for w, h in image_sizes(messages))
    return counted + framing_tokens(messages) + images
