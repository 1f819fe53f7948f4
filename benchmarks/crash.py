"""kill -9 during a MuSiQue ingest, then the same ingest again: the graph must equal a clean
run's (1,890 passages, 16,246 entities, 17,038 relations) with `hopgraph check` clean.

Usage (from the repository root):
  .venv/bin/python benchmarks/crash.py                  # one kill at a random moment
  .venv/bin/python benchmarks/crash.py --at 40 --at 95  # kills at these seconds, one run each
Each run ingests into a fresh Milvus Lite file in a temporary folder with the real model,
kills the process (SIGKILL) after the given number of seconds, checks that the graph says
it is incomplete, reruns the ingest to the end, and prints one table row.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "musique"
EXPECTED = {"passages": 1890, "entities": 16246, "relations": 17038}


def hopgraph(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`hopgraph ARGS` in a new process."""
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args],
                          env={**os.environ, **env}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)


def one_run(kill_after: float) -> dict[str, object]:
    """Kill an ingest after `kill_after` seconds, rerun it; what the graph holds after."""
    openie = DATA / "openie_gpt-3.5-turbo-1106.json"
    with tempfile.TemporaryDirectory(prefix="hopgraph-crash-") as tmp:
        env = {"HOPGRAPH_URI": str(Path(tmp) / "crash.db"), "HOPGRAPH_GRAPH": "musique"}
        process = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "ingest", "--quiet",
                                    str(openie)], env={**os.environ, **env},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL)
        try:
            process.wait(timeout=kill_after)
            killed = False
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed = True
        between = json.loads(hopgraph("stats", "--json", env=env).stdout or "{}")
        started = time.perf_counter()
        rerun = hopgraph("ingest", "--quiet", str(openie), env=env)
        rerun_s = time.perf_counter() - started
        stats = json.loads(hopgraph("stats", "--json", env=env).stdout)
        checked = json.loads(hopgraph("check", "--json", env=env).stdout)
    state = between.get("state", "?")
    return {"kill_after_s": kill_after, "killed": killed,
            "state_between": state[:40], "rerun_ok": rerun.returncode == 0,
            "rerun_s": rerun_s, **{k: stats[k] for k in EXPECTED},
            "check_problems": checked["problems"],
            # A pass needs a real crash that was reported, then a clean run's graph.
            "equal_to_clean": killed and "incomplete" in state and rerun.returncode == 0
            and all(stats[k] == v for k, v in EXPECTED.items()) and checked["problems"] == 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--at", type=float, action="append",
                        help="seconds after the start to kill (repeatable; default: random "
                             "between 5 and 150)")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"MuSiQue data not found at {DATA.resolve()} (expected ../shared/data)")
    moments = args.at or [round(random.uniform(5, 150), 1)]
    keys = ["kill_after_s", "killed", "state_between", "rerun_ok", "rerun_s", "passages",
            "entities", "relations", "check_problems", "equal_to_clean"]
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    failed = False
    for moment in moments:
        row = one_run(moment)
        failed |= not row["equal_to_clean"]
        print("| " + " | ".join(f"{row[k]:.1f}" if isinstance(row[k], float) else str(row[k])
                                for k in keys) + " |", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
