"""roadeval: evaluate multimodal models on transportation benchmarks.

The public names below are re-exported lazily, so that `import roadeval` (and `roadeval --help`)
does not pay for LiteLLM or Prefect until a run needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from roadeval.environment import apply_process_defaults
from roadeval.version import __version__

apply_process_defaults()


_EXPORTS: dict[str, str] = {
    "Item": "roadeval.benchmarks.item",
    "Media": "roadeval.benchmarks.item",
    "MediaKind": "roadeval.benchmarks.item",
    "AnswerKind": "roadeval.benchmarks.item",
    "Suite": "roadeval.benchmarks.suite",
    "ParsedAnswer": "roadeval.benchmarks.suite",
    "ParseStatus": "roadeval.benchmarks.suite",
    "ScoredItem": "roadeval.benchmarks.suite",
    "ItemScore": "roadeval.benchmarks.suite",
    "GroupValue": "roadeval.benchmarks.suite",
    "PredictionsRequest": "roadeval.benchmarks.suite",
    "GenerationSettings": "roadeval.benchmarks.generation",
    "ModelOutput": "roadeval.benchmarks.output",
    "TokenLogprob": "roadeval.benchmarks.output",
    "ImageRef": "roadeval.benchmarks.messages",
    "Judge": "roadeval.benchmarks.judging",
    "JudgeRequest": "roadeval.benchmarks.judging",
    "JudgeReply": "roadeval.benchmarks.judging",
    "BadItemPolicy": "roadeval.benchmarks.errors",
    "ItemError": "roadeval.benchmarks.errors",
    "register_suite": "roadeval.benchmarks.registry",
    "register_baseline": "roadeval.benchmarks.registry",
    "BaselineCall": "roadeval.benchmarks.registry",
    "BaselineReply": "roadeval.benchmarks.registry",
    "get_suite": "roadeval.benchmarks.registry",
    "suite_names": "roadeval.benchmarks.registry",
    "Store": "roadeval.storage.store",
    "open_store": "roadeval.storage.store",
    "ModelSpec": "roadeval.tasks.requests.model_spec",
    "JudgeSpec": "roadeval.tasks.requests.model_spec",
    "Panel": "roadeval.flows.panel.file",
    "load_panel": "roadeval.flows.panel.file",
    "evaluate_panel": "roadeval.flows.evaluate",
    "RunStopped": "roadeval.flows.run.summary",
    "RunSummary": "roadeval.flows.run.summary",
}

__all__ = [  # noqa: RUF022 - grouped as in _EXPORTS
    "__version__",
    "AnswerKind",
    "BadItemPolicy",
    "BaselineCall",
    "BaselineReply",
    "GenerationSettings",
    "GroupValue",
    "ImageRef",
    "Item",
    "ItemError",
    "ItemScore",
    "Judge",
    "JudgeReply",
    "JudgeRequest",
    "JudgeSpec",
    "Media",
    "MediaKind",
    "ModelOutput",
    "ModelSpec",
    "Panel",
    "ParseStatus",
    "ParsedAnswer",
    "PredictionsRequest",
    "RunStopped",
    "RunSummary",
    "ScoredItem",
    "Store",
    "Suite",
    "TokenLogprob",
    "evaluate_panel",
    "get_suite",
    "load_panel",
    "open_store",
    "register_baseline",
    "register_suite",
    "suite_names",
]

if TYPE_CHECKING:
    from roadeval.benchmarks.errors import BadItemPolicy, ItemError
    from roadeval.benchmarks.generation import GenerationSettings
    from roadeval.benchmarks.item import AnswerKind, Item, Media, MediaKind
    from roadeval.benchmarks.judging import Judge, JudgeReply, JudgeRequest
    from roadeval.benchmarks.messages import ImageRef
    from roadeval.benchmarks.output import ModelOutput, TokenLogprob
    from roadeval.benchmarks.registry import (
        BaselineCall,
        BaselineReply,
        get_suite,
        register_baseline,
        register_suite,
        suite_names,
    )
    from roadeval.benchmarks.suite import (
        GroupValue,
        ItemScore,
        ParsedAnswer,
        ParseStatus,
        PredictionsRequest,
        ScoredItem,
        Suite,
    )
    from roadeval.flows.evaluate import evaluate_panel
    from roadeval.flows.panel.file import Panel, load_panel
    from roadeval.flows.run.summary import RunStopped, RunSummary
    from roadeval.storage.store import Store, open_store
    from roadeval.tasks.requests.model_spec import JudgeSpec, ModelSpec


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'roadeval' has no attribute {name!r}")
