"""The one rule by which a protocol's settings and the panel's params make what is sent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from roadeval.benchmarks.generation import GenerationSettings, departures, effective_params

PROTOCOL = GenerationSettings(max_tokens=5, temperature=0, logprobs=True, top_logprobs=4)


def test_the_panel_goes_over_the_protocol_key_by_key() -> None:
    sent = effective_params(PROTOCOL, {"temperature": 0.7, "seed": 3})
    assert sent == {
        "max_tokens": 5,
        "temperature": 0.7,
        "logprobs": True,
        "top_logprobs": 4,
        "seed": 3,
    }
    assert departures(PROTOCOL, {"temperature": 0.7, "seed": 3}) == {
        "temperature": {"protocol": 0, "sent": 0.7}
    }


def test_a_null_in_the_panel_drops_the_protocols_value() -> None:
    sent = effective_params(PROTOCOL, {"logprobs": None, "top_logprobs": None})
    assert sent == {"max_tokens": 5, "temperature": 0}


def test_no_protocol_settings_sends_the_panels_alone() -> None:
    assert effective_params(GenerationSettings(), {"temperature": 0}) == {"temperature": 0}
    assert effective_params(GenerationSettings(), {}) == {}


def test_a_protocol_states_only_known_settings() -> None:
    with pytest.raises(ValidationError):
        GenerationSettings(max_new_tokens=5)  # type: ignore[call-arg]
