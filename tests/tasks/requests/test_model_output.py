"""What a call returned, read from a LiteLLM response and kept whole in the cache."""

from __future__ import annotations

import litellm

from roadeval.benchmarks.output import ModelOutput, TokenLogprob
from roadeval.tasks.requests.provider_output import read_output
from roadeval.tasks.requests.request import ModelCall


def _response(**choice_extra: object) -> litellm.ModelResponse:
    return litellm.ModelResponse(
        id="resp-1",
        model="served-model",
        choices=[
            {
                "message": {"role": "assistant", "content": "B"},
                "finish_reason": "stop",
                **choice_extra,
            }
        ],
        usage={"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13},
    )


def test_logprobs_usage_and_extras_are_read() -> None:
    logprobs = {
        "content": [
            {
                "token": "B",
                "logprob": -0.1,
                "bytes": None,
                "top_logprobs": [{"token": "A", "logprob": -2.0, "bytes": None}],
            }
        ]
    }
    output = read_output(_response(logprobs=logprobs), 0.5, 0.01, lambda text: text)
    assert output is not None
    assert (output.text, output.tokens_in, output.tokens_out) == ("B", 12, 1)
    assert output.logprobs == (TokenLogprob("B", -0.1, (("A", -2.0),)),)
    assert output.top_logprobs(0) == {"A": -2.0, "B": -0.1}
    assert output.extras["response_id"] == "resp-1"
    assert output.extras["served_model"] == "served-model"


def test_no_logprobs_from_the_provider_means_none_not_invented() -> None:
    output = read_output(_response(), 0.5, None, lambda text: text)
    assert output is not None and output.logprobs is None and output.top_logprobs() is None


def test_a_cached_answer_keeps_its_logprobs() -> None:
    output = ModelOutput("B", "stop", 12, 1, 0.01, 0.5, (TokenLogprob("B", -0.1, (("A", -2.0),)),))
    back = ModelCall.from_cache(ModelCall("k", "m", 1, output).to_cache(), "k")
    assert back.cached and back.output == output
