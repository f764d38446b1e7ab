"""A prompt's text tokens: exactly what `litellm.token_counter` counts for the model, with the
model's tokenizer chosen once, not once per prompt."""

from __future__ import annotations

import litellm
import litellm.utils
import pytest

from roadeval.benchmarks.messages import Message
from roadeval.tasks.requests.tokens import text_tokens

MODELS = ("gpt-4o", "openai/bench-0", "anthropic/claude-3-5-sonnet-20240620", "gpt-3.5-turbo")


def _prompt(k: int) -> list[Message]:
    return [{"role": "user", "content": f"Which lane does vehicle {k} take? A) left B) right"}]


@pytest.mark.parametrize("model", MODELS)
def test_text_tokens_are_litellms_count_with_the_tokenizer_chosen_once(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen: list[str] = []
    choose = litellm.utils.select_tokenizer

    def counting(model: str) -> object:
        chosen.append(model)
        return choose(model)

    monkeypatch.setattr(litellm.utils, "select_tokenizer", counting)
    prompts = [_prompt(k) for k in range(5)]
    counts = [text_tokens(model, prompt) for prompt in prompts]
    assert len(chosen) <= 1
    monkeypatch.undo()
    assert counts == [
        litellm.token_counter(model=model, text=prompt[0]["content"]) for prompt in prompts
    ]
    assert all(count > 10 for count in counts)
