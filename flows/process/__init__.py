"""The command process's own speed-ups: heavy imports started in the background while a run
checks and loads (`warmup`), and leaving without freeing a run's objects one by one
(`quick_exit`). They import nothing else of flows."""
