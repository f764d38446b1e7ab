"""The ranges of a model spec's numbers (`roadeval.bounds`): what a run can really use, each
end with its reason. Past them a panel is refused at load, naming the file and the field."""

from __future__ import annotations

from roadeval.bounds import DAY_S, Bound

SAMPLES = Bound(
    1,
    100,
    "independent answers per item, each one every item's request again: 100 already put an "
    "item's accuracy within +-0.1",
)
MAX_CONCURRENCY = Bound(
    1,
    10_000,
    "requests in flight at once, each holding a socket: past 10,000 the machine's open-file "
    "limit fails the calls before the provider's limits do",
)
# The limiter keeps the ends of at most 100,000 requests (`tasks.calls.limits._KEPT`).
RPM = Bound(
    0.001,
    100_000,
    "requests per minute: the limiter keeps at most 100,000 requests' ends, and below 0.001 "
    "requests would be more than 16 hours apart",
)
TPM = Bound(1, 10**9, "tokens per minute: a billion is beyond any provider's tier")
TIMEOUT_S = Bound(
    0, DAY_S, "seconds one request may take: a reply later than a day is a hang", low_open=True
)
UNREACHABLE_AFTER_S = Bound(
    0,
    DAY_S,
    "seconds of failed connections before the model is unreachable: a day at most",
    low_open=True,
)
RETRIES = Bound(
    0,
    100,
    "retries of one request, each of which may be billed: one that failed 100 times in a row "
    "does not succeed on the next",
)
AUTH_FAILED_AFTER = Bound(
    1, 100, "refused keys in a row before the model's calls stop: a key refused 100 times is bad"
)
# Every retry waits at most 60 s (`tasks.calls.gateway.MAX_RETRY_WAIT_S`), whatever its base.
RETRY_BACKOFF_S = Bound(
    0, 60, "seconds before the first retry: any retry's wait is cut to 60 s, so more means 60"
)
PRICE = Bound(
    0,
    0.01,
    "USD per token: 0.01 is $10,000 per million tokens, beyond any tariff (a price per million "
    "tokens given per token?)",
)
# OpenAI's batch API takes at most 50,000 requests per batch file.
BATCH_SIZE = Bound(1, 50_000, "requests per batch: 50,000 is the most a provider's batch takes")
BATCH_POLL_S = Bound(
    0.01, DAY_S, "seconds between polls of a batch: from 0.01 (faster only loads the API) to a day"
)
# `params.max_tokens` (and `max_completion_tokens`): what a budget reserves per request.
MAX_TOKENS = Bound(
    1, 1_000_000, "output tokens a request may ask for: no model writes a million in one reply"
)
OUTPUT_BOUND_PARAMS = ("max_tokens", "max_completion_tokens")
