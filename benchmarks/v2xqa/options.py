"""The suite's settings: where the two image roots are, whether images are shrunk first, and how
many log-probabilities to ask for per output position.

`vehicle_images` / `infrastructure_images` (default `images/vehicle`, `images/infrastructure`):
folders holding `<image id>.<ext>`; a relative path resolves against the source folder (the
one holding the annotation files). For a release checkout (files in `data/splits/test/`,
images under `data/raw_external/`) set them to
`../../raw_external/V2X-Seq-SPD-vehicle-side-image` and
`../../raw_external/V2X-Seq-SPD-infrastructure-side-image` (one `../` less for `data/test/`,
where the release's eval Config and docs look, though the repository keeps `data/splits/`).
`image_max_side` (default null: the released files are sent as they are): the release's eval
script shrinks every image to fit 560 x 560 (RGB, LANCZOS) before its model sees it; set 560 to
send that thumbnail (as PNG) instead.
`top_logprobs` (default 20, the most OpenAI-compatible APIs return): alternatives asked for at
each output position, from which the confidence is read (`confidence`); the release's top 4 can
be spent on spellings of one letter ("A", " A", "a"). A panel lowers it for a provider that
returns fewer; it is a decoding parameter, so part of every request key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roadeval.benchmarks.v2xqa.tasks import SUITE_NAME, ImageSide

DEFAULT_ROOTS: dict[ImageSide, str] = {
    ImageSide.VEHICLE: "images/vehicle",
    ImageSide.INFRASTRUCTURE: "images/infrastructure",
}
ROOT_OPTIONS: dict[ImageSide, str] = {
    ImageSide.VEHICLE: "vehicle_images",
    ImageSide.INFRASTRUCTURE: "infrastructure_images",
}
RELEASE_IMAGE_MAX_SIDE = 560
# OpenAI's maximum, and a vLLM server's unless started with another --max-logprobs.
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class SuiteOptions:
    roots: dict[ImageSide, str]
    image_max_side: int | None = None
    top_logprobs: int = MAX_TOP_LOGPROBS

    @classmethod
    def parse(cls, options: dict[str, Any]) -> SuiteOptions:
        """Validated settings; an unknown or ill-typed option is a ValueError naming it."""
        allowed = {*ROOT_OPTIONS.values(), "image_max_side", "top_logprobs"}
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise ValueError(
                f"suite {SUITE_NAME!r} has no option(s) {', '.join(unknown)} "
                f"(known: {', '.join(sorted(allowed))})"
            )
        roots: dict[ImageSide, str] = {}
        for side, name in ROOT_OPTIONS.items():
            value = options.get(name, DEFAULT_ROOTS[side])
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{SUITE_NAME} option {name} must be a folder path, got {value!r}")
            roots[side] = value
        max_side = options.get("image_max_side")
        if max_side is not None and (
            isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 1
        ):
            raise ValueError(
                f"v2xqa option image_max_side must be a positive integer or null, got {max_side!r}"
            )
        top = options.get("top_logprobs", MAX_TOP_LOGPROBS)
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP_LOGPROBS:
            raise ValueError(
                f"v2xqa option top_logprobs must be an integer from 1 to {MAX_TOP_LOGPROBS}, "
                f"got {top!r}"
            )
        return cls(roots, max_side, top)

    def root(self, side: ImageSide, source: Path) -> Path:
        """The folder for one side's images, absolute (media paths must not depend on the
        working directory at ask time)."""
        path = Path(self.roots[side]).expanduser()
        base = source if source.is_dir() else source.parent
        return (path if path.is_absolute() else base / path).absolute()

    def as_dict(self) -> dict[str, Any]:
        return {
            **{ROOT_OPTIONS[side]: root for side, root in self.roots.items()},
            "image_max_side": self.image_max_side,
            "top_logprobs": self.top_logprobs,
        }
