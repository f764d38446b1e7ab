"""The `roadeval` command line, a module per command or group of commands, the app assembled in
`main`: `run` (run, rescore, campaign, demo; what they print at the end: `run_end`), `store`
(query, runs, suites; `landed`), `changes` (changes, compare and its former name diff),
`history`, `report` (report, show; `costs`), `suite_tools` (qc, render, score-predictions),
`deploy`; `app` and `output` are what every command shares."""
