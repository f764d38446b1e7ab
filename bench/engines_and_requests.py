"""Engines that start when they pay, and S3 requests in proportion to the work (issue 42, items
5 and 7), through the real `roadeval` command, inline (no PREFECT_API_URL).

    ../shared/scripts/loopback-only .venv/bin/python bench/engines_and_requests.py \
        [--roadbench DIR] [--tree DIR] [--skip-panel] [--skip-demo]

Two workloads:
- the small panel: a RoadBench release extract (`--roadbench`, default samples/roadbench in
  $ROADEVAL_SHARED or ../shared; rows without an image skipped) against three baselines, with
  the default engines and with `scoring: {engine: local}`: each wall time (lower is better; the
  goal: the default no slower than local), the engine the manifest says scored and why, and
  whether Ray's "Failed to determine local IP" warning was printed (a local Ray started);
- the demo on S3 (moto on 127.0.0.1, one request at a time as bench/rerun.py serves it) twice
  on the same store: the first run and the all-reused second run, the S3 requests of each
  counted from moto's access log (lower is better; the goal: the second fewer than the first),
  by method and store folder.

`--tree DIR` runs the roadeval of another source tree (e.g. main: `git archive main | tar -x -C
DIR`), as bench/s3_speed.py does. Ray may start: run it in a loopback-only namespace.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml
from rerun import _s3_client, bench_env, s3_env, start_moto
from s3_speed import BUCKET, PREFIX, classify, roadeval

BENCH = Path(__file__).resolve().parent
LOCAL_IP_WARNING = "Failed to determine local IP"


def run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """Run `command` in `cwd`; its wall seconds and output. Exits on a non-zero exit."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        said = (done.stdout + done.stderr)[-3000:]
        raise SystemExit(f"{' '.join(command[3:])} exited {done.returncode}:\n{said}")
    return wall, done.stdout + done.stderr


def small_panel(roadbench: Path, workdir: Path, env: dict[str, str]) -> None:
    """The RoadBench extract x three baselines, default engines and `engine: local`."""
    print(f"\nsmall panel: {roadbench} x 3 baselines (wall seconds: lower is better)")
    for label, scoring in (("default engines", None), ("scoring engine: local", "local")):
        folder = workdir / label.replace(" ", "-").replace(":", "")
        folder.mkdir()
        panel = {
            "name": "small",
            "suites": [{"name": "roadbench", "source": str(roadbench), "on_bad_item": "skip"}],
            "models": [
                {"model": f"roadeval/{name}"} for name in ("lane-rule", "do-nothing", "always-2")
            ],
        }
        if scoring is not None:
            panel["scoring"] = {"engine": scoring}
        path = folder / "panel.yaml"
        path.write_text(yaml.safe_dump(panel))
        store = folder / "store"
        wall, output = run(
            roadeval("run", "--panel", str(path), "--store", str(store)), env, folder
        )
        [manifest] = list((store / "runs").glob("*/manifest.json"))
        scored = json.loads(manifest.read_text()).get("engines", {}).get("scoring", {})
        warned = "printed" if LOCAL_IP_WARNING in output else "not printed"
        print(f"  {label:24s} {wall:7.2f} s   (load {os.getloadavg()[0]:.1f})")
        print(f"    manifest engines.scoring: {json.dumps(scored, sort_keys=True)}")
        print(f"    Ray's '{LOCAL_IP_WARNING}': {warned}")


def demo_twice(workdir: Path, env: dict[str, str]) -> None:
    """The demo on one S3 store twice; the S3 requests of each run."""
    folder = workdir / "demo"
    folder.mkdir()
    moto = start_moto(folder / "moto.log", plain=False)
    try:
        _s3_client(moto.endpoint).create_bucket(Bucket=BUCKET)
        store = f"s3://{BUCKET}/{PREFIX}"
        s3 = {**env, **s3_env(moto.endpoint)}
        print("\ndemo on S3 (moto): S3 requests per run (lower is better)")
        counts: list[int] = []
        for label in ("first run", "second run (every answer reused)"):
            before = len(moto.lines())
            wall, _ = run(roadeval("demo", "--store", store), s3, folder)
            time.sleep(0.5)  # the access log's last lines
            methods, where = classify(moto.lines()[before:])
            counts.append(sum(methods.values()))
            split = ", ".join(f"{m} {n}" for m, n in methods.most_common())
            print(f"  {label:34s} {counts[-1]:6d} requests in {wall:.1f} s  ({split})")
            for place, n in Counter(where).most_common():
                print(f"      {n:6d}  {place}")
        verdict = "met" if counts[1] < counts[0] else "NOT met"
        print(f"  second / first: {counts[1]} / {counts[0]} (goal: fewer on the second: {verdict})")
    finally:
        moto.process.terminate()
        moto.process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(os.environ.get("ROADEVAL_SHARED") or BENCH.parent.parent / "shared")
    parser.add_argument("--roadbench", type=Path, default=shared / "samples" / "roadbench")
    parser.add_argument(
        "--tree", type=Path, default=None, help="the source tree whose roadeval to run"
    )
    parser.add_argument("--skip-panel", action="store_true")
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    env = bench_env(workdir)
    env.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    tree = "this checkout"
    if args.tree is not None:
        tree = str(args.tree.resolve())
        env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
    print(f"roadeval from {tree}; work folder {workdir}", flush=True)
    if not args.skip_panel:
        small_panel(args.roadbench.resolve(), workdir, env)
    if not args.skip_demo:
        demo_twice(workdir, env)


if __name__ == "__main__":
    main()
