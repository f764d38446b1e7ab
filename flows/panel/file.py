"""The panel file (YAML): the models, the suites and their sources, the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from roadeval.benchmarks.errors import BadItemPolicy, UnknownFieldPolicy
from roadeval.benchmarks.loading import limit_option_problem
from roadeval.bounds import Bound
from roadeval.flows.panel.alerts import Alerts
from roadeval.flows.panel.reading import PanelError, panel_data
from roadeval.names import Name, quoted, refused_character
from roadeval.storage.store import store_uri_problem
from roadeval.tasks.render.blind import ABLATIONS
from roadeval.tasks.render.cluster import RenderConfig, RenderEngine, dask_address_problem
from roadeval.tasks.requests.freshness import (
    FOREVER,
    ReuseFor,
    effective_reuse_for,
    reuse_for_problem,
)
from roadeval.tasks.requests.model_spec import JudgeSpec, ModelSpec, endpoint_problem
from roadeval.tasks.results.intervals import IntervalSettings
from roadeval.tasks.shard.answering_config import AnsweringConfig, AnsweringEngine
from roadeval.tasks.shard.remote_scoring import (
    ScoringConfig,
    ScoringEngine,
    ray_address_problem,
)


class SuiteEntry(BaseModel):
    """One suite of the panel: its registered name and where its release files are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    source: str | None = Field(default=None, description="folder or file of the release layout")
    demo: bool = Field(default=False, description="generate the suite's synthetic demo data")
    tasks: list[Name] | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    on_bad_item: BadItemPolicy = BadItemPolicy.ERROR
    # Rows with fields the release does not define: reported (warn) or refused (error).
    unknown_fields: UnknownFieldPolicy = UnknownFieldPolicy.WARN

    @field_validator("source")
    @classmethod
    def _source_is_a_path(cls, value: str | None) -> str | None:
        # An empty path would read as '.', the panel file's own folder.
        if value is not None and not value.strip():
            raise ValueError("is empty: give the release's folder or file (or 'demo: true')")
        return value

    @field_validator("options")
    @classmethod
    def _load_limits_in_range(cls, value: dict[str, Any]) -> dict[str, Any]:
        # The limits every suite's loader takes (`benchmarks.loading`), checked here so that a
        # bad one names the panel file: the suite's other options are its own to check.
        for name, given in value.items():
            if (problem := limit_option_problem(name, given)) is not None:
                raise ValueError(f"{name}: {problem}")
        return value

    @model_validator(mode="after")
    def _one_source(self) -> SuiteEntry:
        if (self.source is None) == (not self.demo):
            raise ValueError("give exactly one of 'source' (a path) or 'demo: true'")
        return self


# The ranges of the panel's own numbers (`roadeval.bounds`); a flag that overrides one
# (`--budget-usd`, `--processes`) is held to the same range.
CHUNK_SIZE = Bound(
    1,
    1_000_000,
    "items per shard: a chunk larger than its suite is the whole suite, and no suite has a "
    "million items",
)
BUDGET_USD = Bound(
    0,
    1_000_000,
    "a cap in USD on what a run may spend: past a million dollars it caps nothing a campaign "
    "spends",
    low_open=True,
)
PROCESSES = Bound(
    0, 256, "answer worker processes on this machine: past 256 they outnumber its cores"
)


class Panel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name = "panel"
    store: str | None = None
    # Where the store's `reports/` folder is served over http(s): a run's report is linked at
    # `<report_url>/<run_id>.html` from its Prefect flow run (`report_link_problem`).
    report_url: str | None = None
    chunk_size: Annotated[int, AfterValidator(CHUNK_SIZE)] = 100
    # A hard cap on what the run may spend, judge included (`--budget-usd` wins).
    budget_usd: Annotated[float, AfterValidator(BUDGET_USD)] | None = None
    # Processes answering shards (`--processes` wins): 0 or 1 answers in the run's own process;
    # unset spreads over one per core when the run has 5,000 or more requests to send (200 or
    # more once the workers' server started ahead, as the `roadeval` command starts it).
    processes: Annotated[int, AfterValidator(PROCESSES)] | None = None
    suites: list[SuiteEntry] = Field(min_length=1)
    models: list[ModelSpec] = Field(min_length=1)
    # The model that scores open answers for suites whose scorer asks a judge (any model spec,
    # by default Qwen3-VL-32B-Instruct at your `api_base`; `roadeval/midpoint-judge` offline).
    judge: JudgeSpec | None = None
    # Where heavy scoring (judge calls, CPU-bound metrics) runs: Ray by default.
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    # Where drawing (point-cloud views) runs: Dask by default.
    render: RenderConfig = Field(default_factory=RenderConfig)
    # Where answer shards run: this machine by default, or the nodes of a Ray cluster.
    answering: AnsweringConfig = Field(default_factory=AnsweringConfig)
    # How long a stored answer of a model called over the network may be reused (a model's
    # own `reuse_for` wins; unset: the run's default, forever but for the scheduled deployment).
    reuse_for: ReuseFor | None = None
    # Ablations run beside the released items: `blind` asks every image-bearing item again
    # with each image replaced by a black one of its size (rows under variant 'blind').
    ablations: list[str] = Field(default_factory=list)
    # The headline metrics' intervals and paired differences: resamples and seed.
    intervals: IntervalSettings = Field(default_factory=IntervalSettings)
    # Where a run's alarms (drift, failed, crashed, budget_stopped) are POSTed as JSON.
    alerts: Alerts | None = None
    # Where relative sources are resolved; set from the file's folder when loaded from a file.
    base_dir: str = "."

    @field_validator("store")
    @classmethod
    def _store_is_a_store(cls, value: str | None) -> str | None:
        if value is not None and (problem := store_uri_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @field_validator("report_url")
    @classmethod
    def _report_url_is_a_link(cls, value: str | None) -> str | None:
        if value is not None and (problem := report_url_problem(value)) is not None:
            raise ValueError(problem)
        return value

    @field_validator("ablations")
    @classmethod
    def _known_ablations(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in ABLATIONS]
        if unknown:
            raise ValueError(
                f"unknown ablation {unknown[0]!r}; known: {', '.join(ABLATIONS)} (every image "
                "of an image-bearing item replaced by a black image of its size)"
            )
        repeated = sorted({name for name in value if value.count(name) > 1})
        if repeated:
            raise ValueError(f"an ablation may appear once; repeated: {', '.join(repeated)}")
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> Panel:
        labels = [m.label for m in self.models]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(
                f"model names must be unique; repeated: {', '.join(dupes)} (set 'name')"
            )
        suites = [entry.name for entry in self.suites]
        repeated = sorted({x for x in suites if suites.count(x) > 1})
        if repeated:
            raise ValueError(f"a suite may appear once per panel; repeated: {', '.join(repeated)}")
        return self

    @model_validator(mode="after")
    def _one_ray_cluster(self) -> Panel:
        if (problem := two_ray_clusters(self)) is not None:
            raise ValueError(problem)
        return self

    @property
    def all_models(self) -> list[ModelSpec]:
        """Every model the run may call: those under test, and the judge."""
        return [*self.models, *([self.judge] if self.judge is not None else [])]

    def source_path(self, entry: SuiteEntry) -> Path:
        assert entry.source is not None
        path = Path(entry.source).expanduser()
        return path if path.is_absolute() else Path(self.base_dir) / path


def two_ray_clusters(panel: Panel) -> str | None:
    """Why the panel cannot run (answering and scoring on two Ray clusters: a process joins
    one), or None."""
    answering, scoring = panel.answering.address, panel.scoring.address
    if answering is None or scoring is None or answering == scoring:
        return None
    return (
        f"answering.address ({answering}) and scoring.address ({scoring}) name two Ray "
        "clusters: a run joins one (give the same address, or drop one)"
    )


def report_url_problem(value: str) -> str | None:
    """Why `value` cannot be the address the store's reports are served at, or None: an
    http(s) URL with a host (a link in the Prefect UI must open in a browser: no file:// or
    s3://), and without a user, a password, a query or a fragment (a secret would reach every
    manifest and flow run; a run's page is joined to its path)."""
    if not value.strip():
        return "is empty: give the http(s) address the store's reports/ folder is served at"
    if (problem := endpoint_problem(value)) is not None:
        return problem
    parts = urlsplit(value)
    if parts.username is not None or parts.password is not None:
        return "holds a user or password: the URL lands in every run's manifest and flow run"
    if parts.query or parts.fragment:
        return f"{value!r} has a query or fragment: give the folder's address, e.g. https://host/reports/"
    return None


# Problems listed in one message: the first few say what to fix; the rest are counted.
_LISTED = 5


def _shown(value: Any) -> str:
    """A key or a name from the file as a message shows it: as written when it is short and
    plain, else quoted with its escapes (a control character never reaches the terminal)."""
    text = str(value)
    if len(text) <= 60 and text.strip() and refused_character(text) is None:
        return text
    return quoted(text)


def _describe(exc: ValidationError, data: dict[str, Any]) -> str:
    lines = []
    errors = exc.errors()
    for error in errors[:_LISTED]:
        loc = error["loc"]
        parts: list[str] = []
        node: Any = data
        for step in loc:
            if isinstance(step, int):
                name = None
                if isinstance(node, list) and step < len(node) and isinstance(node[step], dict):
                    name = node[step].get("name") or node[step].get("model")
                parts.append(f"[{step}]" + (f" ({_shown(name)})" if name else ""))
                node = node[step] if isinstance(node, list) and step < len(node) else None
            else:
                parts.append(("." if parts else "") + _shown(step))
                node = node.get(step) if isinstance(node, dict) else None
        field = "".join(parts) or "(top level)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "value_error":
            # pydantic's "Value error, " says nothing the message after it does not.
            message = message.removeprefix("Value error, ")
        lines.append(f"{field}: {message}")
    if len(errors) > _LISTED:
        lines.append(f"and {len(errors) - _LISTED:,} more problems")
    return "; ".join(lines)


def load_panel(path: Path) -> Panel:
    """Read and validate a panel file; every problem is reported with the file and field."""
    data = panel_data(path)
    return panel_from_dict(data, source=str(path), base_dir=path.resolve().parent)


def panel_from_dict(data: dict[str, Any], *, source: str, base_dir: Path) -> Panel:
    if "base_dir" in data:
        raise PanelError(f"{source}: base_dir: unknown key")
    try:
        return Panel.model_validate({**data, "base_dir": str(base_dir)})
    except ValidationError as exc:
        raise PanelError(f"{source}: {_describe(exc, data)}") from None


def with_bad_item_policy(panel: Panel, policy: BadItemPolicy) -> Panel:
    """The same panel with every suite's bad-row policy set to `policy` (the CLI's override)."""
    suites = [entry.model_copy(update={"on_bad_item": policy}) for entry in panel.suites]
    return panel.model_copy(update={"suites": suites})


def with_budget_usd(panel: Panel, budget_usd: float, flag: str = "--budget-usd") -> Panel:
    """The same panel capped at `budget_usd` (the CLI's `flag`, which wins over the panel's),
    held to the panel's own range."""
    if (problem := BUDGET_USD.problem(budget_usd)) is not None:
        raise PanelError(f"{flag}: {problem}")
    return panel.model_copy(update={"budget_usd": budget_usd})


def with_processes(panel: Panel, processes: int) -> Panel:
    """The same panel answering in `processes` worker processes (the CLI's --processes)."""
    if (problem := PROCESSES.problem(processes)) is not None:
        raise PanelError(f"--processes: {problem}")
    return panel.model_copy(update={"processes": processes})


def with_reuse_for(panel: Panel, default: str | None = None, *, rescore: bool = False) -> Panel:
    """The same panel with every model's (and the judge's) `reuse_for` in force written on its
    entry (`effective_reuse_for`; `default`: the run's, for models neither the entry nor the
    panel sets it for), so that each client, in any process, reads it from its spec. A rescore
    asks no model: it reuses every stored answer, whatever its age."""
    if default is not None and (problem := reuse_for_problem(default)) is not None:
        raise PanelError(f"reuse_for (the run's default): {problem}")

    def resolved(spec: ModelSpec) -> ModelSpec:
        value = (
            FOREVER
            if rescore
            else effective_reuse_for(
                spec.reuse_for, panel.reuse_for, default, baseline=spec.is_baseline
            )
        )
        return spec.model_copy(update={"reuse_for": value})

    judge = resolved(panel.judge) if panel.judge is not None else None
    models = [resolved(spec) for spec in panel.models]
    return panel.model_copy(update={"models": models, "judge": judge})


def with_dask_address(panel: Panel, address: str) -> Panel:
    """The same panel drawing on the Dask scheduler at `address` (the CLI's --dask-address)."""
    if (problem := dask_address_problem(address)) is not None:
        raise PanelError(f"--dask-address: {problem}")
    render = panel.render.model_copy(update={"engine": RenderEngine.DASK, "address": address})
    return panel.model_copy(update={"render": render})


def with_answer_ray_address(panel: Panel, address: str) -> Panel:
    """The same panel answering on the Ray cluster at `address` (the CLI's
    --answer-ray-address)."""
    if (problem := ray_address_problem(address)) is not None:
        raise PanelError(f"--answer-ray-address: {problem}")
    answering = panel.answering.model_copy(
        update={"engine": AnsweringEngine.RAY, "address": address}
    )
    return _one_cluster(panel.model_copy(update={"answering": answering}), "--answer-ray-address")


def _one_cluster(panel: Panel, flag: str) -> Panel:
    if (problem := two_ray_clusters(panel)) is not None:
        raise PanelError(f"{flag}: {problem}")
    return panel


def with_ray_address(panel: Panel, address: str) -> Panel:
    """The same panel scoring on the Ray cluster at `address` (the CLI's --ray-address)."""
    if (problem := ray_address_problem(address)) is not None:
        raise PanelError(f"--ray-address: {problem}")
    scoring = panel.scoring.model_copy(update={"engine": ScoringEngine.RAY, "address": address})
    return _one_cluster(panel.model_copy(update={"scoring": scoring}), "--ray-address")
