"""What is checked before a run starts anything: the store can be written, every key is set.

Both are cheap and fail in seconds, so the CLI checks them before it starts Prefect (whose
temporary server alone takes several seconds), and the flow checks them again for callers
that start it some other way.
"""

from __future__ import annotations

from roadeval.flows.panel_file import Panel
from roadeval.storage.store import Store, open_store
from roadeval.tasks.batch.checks import check_batch_models
from roadeval.tasks.calls.admission import budget_problems
from roadeval.tasks.requests.model_spec import MissingKeyError


def check_before_run(panel: Panel, store_uri: str | None) -> Store:
    """The run's store, writable; raises StoreError, MissingKeyError or BatchModeError (a batch
    model that cannot be sent or priced as a batch) naming what is wrong."""
    check_batch_models(list(panel.all_models))
    if panel.budget_usd is not None and (problems := budget_problems(panel.all_models)):
        raise ValueError("; ".join(problems))
    # `--store ''` is refused by open_store, not taken for "no --store".
    store = open_store(store_uri if store_uri is not None else panel.store)
    store.probe_writable()
    missing = [message for spec in panel.all_models if (message := spec.missing_key)]
    if missing:
        raise MissingKeyError("; ".join(missing))
    return store
