"""Input tokens of one image by its provider's rule, from the image's pixel size alone, so that a
request's worst case is known before it is sent (the dry run and the budget read only the PNG or
JPEG header of each image, never decode it).

Every rule assumes the most expensive setting the request can get by default (OpenAI's `detail`
unset means "auto", which may choose high; Gemini 3's unset `media_resolution` is high). A model
string that matches no rule gets the LARGEST of the rules that count tokens as they are (not the
billing multipliers of the mini models) for that size: a worst case must not undercount, and the
estimate names the rule that was used.

Rules and their sources:
- `openai-tile` (GPT-4o, GPT-4.1, GPT-4.5, o1/o3, GPT-5/5.1): fit within 2048x2048, then scale the
  short side down to 768, then `tile` tokens per 512-px tile plus `base` (OpenAI, "Images and
  vision: calculating costs"; 85/170 for GPT-4o and 4.1; 75/150 for o1/o3; 70/140 for GPT-5, as in
  LiteLLM's `_TILE_IMAGE_TOKEN_COSTS`); 1024x1024 = 765, 2048x4096 = 1105.
- `openai-4o-mini`: the same tiles at 2833 base + 5667 per tile (OpenAI's pricing for gpt-4o-mini,
  whose per-token price is lower: the image costs what it does on GPT-4o).
- `openai-patch` (gpt-4.1-mini 1.62, gpt-4.1-nano 2.46, o4-mini 1.72, gpt-5-mini 1.62, gpt-5-nano
  2.46 tokens per patch): 32-px patches covering the image, at most 1536 (the image is scaled down
  to fit), times the model's multiplier (OpenAI, same page).
- `anthropic`: w*h/750 after scaling the long edge to at most 1568 px and the image to at most
  ~1600 tokens (Anthropic, "Vision: evaluate image size"; 1092x1092 = 1590).
  `anthropic-high` (Claude Opus 4.7 and later): the same count within 2576 px and 3.75 MP
  (Anthropic's Opus 4.7 release; LiteLLM's `claude-high` limits).
- `gemini`: 258 tokens for an image at most 384 px on both sides, else 258 per 768x768 tile
  (Google, "Understand and count tokens", Gemini 2.x). `gemini-3`: 1120 per image, the default
  (high) `media_resolution` of Gemini 3 (Google, "Media resolution").
- `qwen2-vl` (Qwen2-VL, Qwen2.5-VL, QVQ served by vLLM/SGLang with the model's own processor):
  `smart_resize` to multiples of 28 within [3136, 12845056] pixels (the released
  preprocessor_config.json), then (h/28)*(w/28) tokens (14-px patches merged 2x2) plus 2 for
  <|vision_start|> and <|vision_end|>. `qwen3-vl`: the same with 16-px patches merged 2x2
  (factor 32) within [65536, 16777216] pixels (Qwen3-VL's preprocessor_config.json).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image

from roadeval.benchmarks.messages import ImageRef

LARGEST = "largest"


@dataclass(frozen=True)
class ImageTokens:
    """An image's input tokens and the rule that counted them ("largest:<rule>" when the model
    has no known rule and the most expensive one was taken)."""

    tokens: int
    rule: str


def _openai_tiles(width: int, height: int, base: int, tile: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = max(1, math.floor(w * scale)), max(1, math.floor(h * scale))
    return base + tile * math.ceil(w / 512) * math.ceil(h / 512)


def _openai_patches(width: int, height: int, multiplier: float, budget: int = 1536) -> int:
    patches = math.ceil(width / 32) * math.ceil(height / 32)
    if patches > budget:
        # OpenAI's rule: scale to about the budget, then shrink until whole patches fit.
        shrink = math.sqrt(32 * 32 * budget / (width * height))
        across, down = width * shrink / 32, height * shrink / 32
        shrink *= min(math.floor(across) / across, math.floor(down) / down)
        w, h = max(1, math.floor(width * shrink)), max(1, math.floor(height * shrink))
        patches = min(budget, math.ceil(w / 32) * math.ceil(h / 32))
    return math.ceil(patches * multiplier)


def _anthropic(width: int, height: int, max_edge: int, max_pixels: float) -> int:
    scale = min(1.0, max_edge / max(width, height), math.sqrt(max_pixels / (width * height)))
    w, h = math.floor(width * scale), math.floor(height * scale)
    return math.ceil(w * h / 750)


def _gemini(width: int, height: int) -> int:
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def smart_resize(
    height: int, width: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """Qwen-VL's resize (qwen_vl_utils / transformers' Qwen2VLImageProcessor): both sides to
    multiples of `factor`, the area within [min_pixels, max_pixels], the aspect kept."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _qwen(width: int, height: int, factor: int, min_pixels: int, max_pixels: int) -> int:
    h, w = smart_resize(height, width, factor, min_pixels, max_pixels)
    return (h // factor) * (w // factor) + 2


Rule = Callable[[int, int], int]

RULES: dict[str, Rule] = {
    "openai-tile": lambda w, h: _openai_tiles(w, h, 85, 170),
    "openai-tile-o": lambda w, h: _openai_tiles(w, h, 75, 150),
    "openai-tile-5": lambda w, h: _openai_tiles(w, h, 70, 140),
    "openai-4o-mini": lambda w, h: _openai_tiles(w, h, 2833, 5667),
    "openai-patch-1.62": lambda w, h: _openai_patches(w, h, 1.62),
    "openai-patch-1.72": lambda w, h: _openai_patches(w, h, 1.72),
    "openai-patch-2.46": lambda w, h: _openai_patches(w, h, 2.46),
    "anthropic": lambda w, h: _anthropic(w, h, 1568, 1600 * 750),
    "anthropic-high": lambda w, h: _anthropic(w, h, 2576, 3.75e6),
    "gemini": _gemini,
    "gemini-3": lambda w, h: 1120,
    "qwen2-vl": lambda w, h: _qwen(w, h, 28, 3136, 12845056),
    "qwen3-vl": lambda w, h: _qwen(w, h, 32, 65536, 16777216),
}

# Rules that multiply an image's tokens to bill it at a cheaper model's per-token price: counts
# of those models alone, so never a "largest" for a model they do not describe (gpt-4o-mini's
# would put 25,501 tokens on a 1024x1024 image).
BILLING_MULTIPLIED = frozenset(name for name in RULES if "mini" in name or "patch" in name)

# (pattern over the model name without its provider prefix, lower case; rule), first match wins:
# the specific names before the families that contain them.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), rule)
    for pattern, rule in (
        (r"qwen3(\.\d+)?-vl", "qwen3-vl"),
        (r"qwen2(\.5)?-vl|qvq", "qwen2-vl"),
        (r"gpt-4o-mini", "openai-4o-mini"),
        (r"gpt-4\.1-mini|gpt-5-mini", "openai-patch-1.62"),
        (r"gpt-4\.1-nano|gpt-5-nano", "openai-patch-2.46"),
        (r"(^|/)o4-mini", "openai-patch-1.72"),
        (r"gpt-4o|gpt-4\.1|gpt-4\.5|chatgpt-4o", "openai-tile"),
        (r"gpt-5(\.1)?($|-)", "openai-tile-5"),
        (r"(^|/)o[13]($|-)", "openai-tile-o"),
        (r"claude-(opus|sonnet|haiku)-(4-[7-9]|[5-9])|claude-[5-9]", "anthropic-high"),
        (r"claude", "anthropic"),
        (r"gemini-[3-9]", "gemini-3"),
        (r"gemini", "gemini"),
    )
)


@lru_cache(maxsize=1024)
def rule_for(model: str) -> str | None:
    """The rule for a LiteLLM model string by its name (provider prefix dropped), or None."""
    _, _, name = model.partition("/")
    name = name.lower()
    for pattern, rule in _PATTERNS:
        if pattern.search(name):
            return rule
    return None


def image_tokens(model: str, width: int, height: int) -> ImageTokens:
    """The image's input tokens for `model`; the largest rule's count when none is known."""
    if width <= 0 or height <= 0:
        raise ValueError(f"image size {width}x{height}: both sides must be positive")
    rule = rule_for(model)
    if rule is not None:
        return ImageTokens(RULES[rule](width, height), rule)
    counts = {
        name: count(width, height)
        for name, count in RULES.items()
        if name not in BILLING_MULTIPLIED
    }
    top = max(counts, key=lambda name: counts[name])
    return ImageTokens(counts[top], f"{LARGEST}:{top}")


def image_rule_label(model: str) -> str:
    """How the model's images are counted, for tables: its rule, or "largest of all"."""
    return rule_for(model) or f"{LARGEST} of all"


@lru_cache(maxsize=65536)
def _size_of(path: str, sha256: str) -> tuple[int, int]:
    # Keyed by digest as well as path, so that a file rewritten in place is read again.
    try:
        with Image.open(path) as image:  # reads the header only: no pixels are decoded
            return image.size
    except (OSError, SyntaxError) as exc:
        raise ValueError(f"image {path}: cannot read its size ({exc})") from exc


def image_size(image: ImageRef) -> tuple[int, int]:
    """(width, height) of an image a prompt shows, from its file's header (or from the bytes
    it carries, on a scoring worker where its path names no file)."""
    if image.data is not None:
        try:
            with Image.open(io.BytesIO(image.data)) as opened:
                return opened.size
        except (OSError, SyntaxError) as exc:
            raise ValueError(f"image {image.path}: cannot read its size ({exc})") from exc
    return _size_of(image.path, image.sha256)
