"""The stages of a run, each the work of one coarse unit (a suite to load or render, a shard to
plan or answer, a report and the store's site pages to build), never one per item: `load`,
`render`, `plan`, `answer`, `report`, each a plain function and its `Stage`; and who runs them
(`orchestration`: this process's threads, or Prefect's tasks through the same protocol)."""
