"""What a run is made of and what it leaves behind: its parts (`parts`: the frozen records the
run's modules hand down), its events and heartbeat in the store (`record`), its manifest, its
own log lines (`log`) and live display (`progress`), and what it hands back (`summary`).
Nothing here imports Prefect or the CLI."""
