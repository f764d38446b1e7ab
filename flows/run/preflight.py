"""What is checked before a run starts anything: the store can be written, every key is set,
every service given by address answers (`engine_checks`).

Both are cheap and fail in seconds, so the CLI checks them before it starts Prefect (whose
temporary server alone takes several seconds), and the flow checks them again for callers
that start it some other way.
"""

from __future__ import annotations

from roadeval.flows.panel.file import Panel
from roadeval.flows.run.engine_checks import check_engines, check_s3
from roadeval.storage.store import S3Store, Store, open_store
from roadeval.tasks.batch.checks import check_batch_models
from roadeval.tasks.requests.model_spec import MissingKeyError


def check_before_run(panel: Panel, store_uri: str | None) -> Store:
    """The run's store, writable; raises StoreError, MissingKeyError, BatchModeError (a batch
    model that cannot be sent or priced as a batch) or EngineUnreachable (a service given by
    address that does not answer) naming what is wrong."""
    check_batch_models(list(panel.all_models))
    if panel.budget_usd is not None:
        # The call path imports LiteLLM (seconds): only for a budget, not for every check.
        from roadeval.tasks.calls.admission import budget_problems

        if problems := budget_problems(panel.all_models):
            raise ValueError("; ".join(problems))
    # `--store ''` is refused by open_store, not taken for "no --store".
    store = open_store(store_uri if store_uri is not None else panel.store)
    if isinstance(store, S3Store):
        # Endpoint, credentials and bucket, each named, before the write probe's one line.
        check_s3(store)
    store.probe_writable()
    missing = [message for spec in panel.all_models if (message := spec.missing_key)]
    if panel.alerts is not None and (message := panel.alerts.missing_webhook):
        missing.append(message)
    if missing:
        raise MissingKeyError("; ".join(missing))
    check_engines(panel, store)
    return store
