"""Prices (panel, LiteLLM's local map, batch, baselines) and image tokens by provider rule."""

from __future__ import annotations

import base64
import io
import logging
import math
from pathlib import Path

import litellm
import pytest
from PIL import Image

from roadeval.benchmarks.messages import ImageRef
from roadeval.tasks.requests.image_tokens import image_size, image_tokens, rule_for, smart_resize
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.pricing import (
    Prices,
    cost_of_usage,
    max_output_tokens,
    prices_for,
    worst_case,
)

UNMAPPED = "openai/Qwen/Qwen2.5-VL-7B-Instruct"  # on a local server: in no price map


def test_panel_prices_win_over_the_map() -> None:
    spec = ModelSpec(
        model="openai/gpt-4o-mini", input_cost_per_token=1e-6, output_cost_per_token=3e-6
    )
    assert prices_for(spec) == Prices(1e-6, 3e-6, "panel")
    assert cost_of_usage(spec, 1000, 10) == pytest.approx(1000 * 1e-6 + 10 * 3e-6)


def test_map_prices_for_a_known_model_match_litellm() -> None:
    prices = prices_for(ModelSpec(model="openai/gpt-4o-mini"))
    entry = litellm.model_cost["gpt-4o-mini"]
    assert prices == Prices(
        entry["input_cost_per_token"], entry["output_cost_per_token"], "litellm"
    )
    info = litellm.get_model_info("openai/gpt-4o-mini")
    assert (prices.input, prices.output) == (
        info["input_cost_per_token"],
        info["output_cost_per_token"],
    )


def test_a_whole_model_string_key_is_found() -> None:
    prices = prices_for(ModelSpec(model="gemini/gemini-2.5-flash"))
    assert prices is not None
    assert prices.input == litellm.model_cost["gemini/gemini-2.5-flash"]["input_cost_per_token"]


def test_another_providers_entry_does_not_price_a_local_model() -> None:
    # deepinfra's hosted Qwen is in the map; the same name on an openai-compatible server is not.
    assert "deepinfra/Qwen/Qwen2.5-VL-32B-Instruct" in litellm.model_cost
    assert prices_for(ModelSpec(model="openai/deepinfra/Qwen/Qwen2.5-VL-32B-Instruct")) is None


def test_unpriced_is_none_without_an_exception_or_a_log(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    with caplog.at_level(logging.DEBUG):
        spec = ModelSpec(model=UNMAPPED)
        assert prices_for(spec) is None
        assert prices_for(spec, batch=True) is None
        assert cost_of_usage(spec, 100, 10) is None
        assert worst_case(spec, 100, [], 10).usd is None
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert capsys.readouterr() == ("", "")


def test_batch_prices_from_the_panel_and_from_the_map() -> None:
    panel = ModelSpec(
        model="openai/gpt-4o-mini",
        batch_input_cost_per_token=1e-7,
        batch_output_cost_per_token=2e-7,
    )
    assert prices_for(panel, batch=True) == Prices(1e-7, 2e-7, "panel batch")
    mapped = prices_for(ModelSpec(model="openai/gpt-4o-mini"), batch=True)
    entry = litellm.model_cost["gpt-4o-mini"]
    assert mapped == Prices(
        entry["input_cost_per_token_batches"],
        entry["output_cost_per_token_batches"],
        "litellm batch",
    )
    assert mapped.input < entry["input_cost_per_token"]
    # Online prices are never taken for batch ones: a model with no batch price is unpriced.
    no_batches = "deepinfra/Qwen/Qwen2.5-VL-32B-Instruct"
    assert "input_cost_per_token_batches" not in litellm.model_cost[no_batches]
    assert prices_for(ModelSpec(model=no_batches)) is not None
    assert prices_for(ModelSpec(model=no_batches), batch=True) is None


def test_baselines_cost_nothing() -> None:
    spec = ModelSpec(model="roadeval/random")
    assert prices_for(spec) == Prices(0.0, 0.0, "baseline")
    assert prices_for(spec, batch=True) == Prices(0.0, 0.0, "baseline")
    assert cost_of_usage(spec, None, None) == 0.0


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"input_cost_per_token": 1e-6}, "output_cost_per_token is not"),
        ({"output_cost_per_token": 1e-6}, "input_cost_per_token is not"),
        ({"batch_input_cost_per_token": 1e-6}, "batch_output_cost_per_token is not"),
    ],
)
def test_a_half_given_pair_is_an_error_naming_the_model(
    fields: dict[str, float], named: str
) -> None:
    # Refused where the spec is made (the panel's load), for every model kind...
    with pytest.raises(ValueError, match=f"{named}: prices come in pairs"):
        ModelSpec(model="openai/gpt-4o-mini", name="mini", **fields)
    with pytest.raises(ValueError, match=f"{named}: prices come in pairs"):
        ModelSpec(model="roadeval/random", **fields)
    # ...and by pricing too, for a spec made without validation.
    spec = ModelSpec(model="openai/gpt-4o-mini", name="mini").model_copy(update=fields)
    with pytest.raises(ValueError, match=f"model mini: .*{named}"):
        prices_for(spec, batch="batch_input_cost_per_token" in fields)


def test_prices_are_cached() -> None:
    from roadeval.tasks.requests import pricing

    spec = ModelSpec(model="openai/gpt-4o", params={"max_tokens": 5})
    prices_for(spec)
    hits = pricing._prices.cache_info().hits
    prices_for(spec)
    assert pricing._prices.cache_info().hits == hits + 1


def test_max_output_tokens_from_params_then_the_map() -> None:
    spec = ModelSpec(model="openai/gpt-4o-mini")
    assert max_output_tokens(spec, {"max_tokens": 64}) == 64
    assert max_output_tokens(spec, {"max_completion_tokens": 32, "max_tokens": 64}) == 32
    assert max_output_tokens(spec, {}) == litellm.model_cost["gpt-4o-mini"]["max_output_tokens"]
    assert max_output_tokens(ModelSpec(model=UNMAPPED), {}) is None


def test_worst_case_bills_text_images_and_every_output_token() -> None:
    spec = ModelSpec(model="openai/gpt-4o", input_cost_per_token=1e-6, output_cost_per_token=4e-6)
    case = worst_case(spec, 100, [(1024, 1024), (512, 512)], 50)
    assert (case.tokens_in, case.tokens_out) == (100 + 765 + 255, 50)
    assert case.usd == pytest.approx(1120 * 1e-6 + 50 * 4e-6)


@pytest.mark.parametrize(
    ("model", "size", "tokens", "rule"),
    [
        ("openai/gpt-4o", (1024, 1024), 765, "openai-tile"),
        ("openai/gpt-4o", (2048, 4096), 1105, "openai-tile"),
        ("openai/gpt-4.1", (512, 512), 255, "openai-tile"),
        ("openai/gpt-4o-mini", (1024, 1024), 2833 + 4 * 5667, "openai-4o-mini"),
        # 32 x 32 patches = 1024, x 1.62
        ("openai/gpt-4.1-mini", (1024, 1024), math.ceil(1024 * 1.62), "openai-patch-1.62"),
        # over the 1536-patch cap: scaled down, never above 1536 patches
        ("openai/gpt-4.1-mini", (4096, 4096), math.ceil(1521 * 1.62), "openai-patch-1.62"),
        ("anthropic/claude-sonnet-4-5", (1092, 1092), 1590, "anthropic"),
        ("anthropic/claude-sonnet-4-5", (200, 200), 54, "anthropic"),
        ("gemini/gemini-2.5-flash", (384, 384), 258, "gemini"),
        ("gemini/gemini-2.5-flash", (1000, 500), 516, "gemini"),
        ("gemini/gemini-3-pro-preview", (1000, 500), 1120, "gemini-3"),
        # round(1024 / 28) = 37 -> 37 x 37 merged patches + 2
        ("openai/Qwen/Qwen2.5-VL-7B-Instruct", (1024, 1024), 37 * 37 + 2, "qwen2-vl"),
        ("hosted_vllm/Qwen/Qwen2-VL-7B-Instruct", (1024, 1024), 37 * 37 + 2, "qwen2-vl"),
        ("openai/Qwen/Qwen3-VL-32B-Instruct", (1024, 1024), 32 * 32 + 2, "qwen3-vl"),
    ],
)
def test_image_rules_match_hand_computed_values(
    model: str, size: tuple[int, int], tokens: int, rule: str
) -> None:
    assert image_tokens(model, *size) == image_tokens(model, *size).__class__(tokens, rule)


def test_large_claude_images_stay_within_the_cap() -> None:
    assert image_tokens("anthropic/claude-sonnet-4-5", 4000, 3000).tokens <= 1600
    assert image_tokens("anthropic/claude-opus-4-7", 4000, 3000).rule == "anthropic-high"


def test_qwen_smart_resize_keeps_within_its_pixel_range() -> None:
    assert smart_resize(10, 10, 28, 3136, 12845056) == (56, 56)  # small images grow to min
    h, w = smart_resize(8000, 8000, 28, 3136, 12845056)
    assert h * w <= 12845056 and h % 28 == 0 and w % 28 == 0


def test_an_unknown_model_gets_the_largest_rule() -> None:
    assert rule_for("openai/some-finetune") is None
    counted = image_tokens("openai/some-finetune", 1024, 1024)
    assert counted.rule.startswith("largest:")
    every = [
        image_tokens(m, 1024, 1024).tokens
        for m in ("openai/gpt-4o", "anthropic/claude-3", UNMAPPED)
    ]
    assert counted.tokens >= max(every)


def _png(path: Path, size: tuple[int, int]) -> ImageRef:
    Image.new("RGB", size, (10, 20, 30)).save(path)
    return ImageRef(str(path), sha256=path.name)


def test_image_size_reads_the_header(tmp_path: Path) -> None:
    assert image_size(_png(tmp_path / "a.png", (640, 360))) == (640, 360)
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(ValueError, match=r"bad\.png"):
        image_size(ImageRef(str(tmp_path / "bad.png"), sha256="bad"))


@pytest.mark.parametrize("size", [(1024, 1024), (2048, 4096), (640, 360), (300, 200)])
def test_openai_tiles_agree_with_litellms_own_count(size: tuple[int, int]) -> None:
    """LiteLLM's token counter (what its cost tracking uses) counts GPT-4o images as we do."""
    buffer = io.BytesIO()
    Image.new("RGB", size).save(buffer, format="PNG")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    message = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    theirs = litellm.token_counter(model="gpt-4o", messages=[message])
    bare = litellm.token_counter(model="gpt-4o", messages=[{"role": "user", "content": ""}])
    assert theirs - bare == image_tokens("openai/gpt-4o", *size).tokens
