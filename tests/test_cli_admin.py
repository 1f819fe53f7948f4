"""End to end through the `hopgraph` command, each call a new process (as a user runs it)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need


def hopgraph(*args: str, tmp: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOPGRAPH_URI": str(tmp / "cli.db"), "HOPGRAPH_GRAPH": "cli"}
    done = subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], env=env, cwd=tmp,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


def test_ingest_reports_and_is_idempotent(tmp: Path) -> None:
    bad = tmp / "extra.jsonl"
    bad.write_text(
        json.dumps({"passage": "Basel is a city on the Rhine.",
                    "triplets": [["Basel", "is a city on", "the Rhine"], ["Basel"]]}) + "\n"
        + "{broken\n", encoding="utf-8")
    first = hopgraph("ingest", str(need(BERNOULLI)), str(bad), "--quiet", tmp=tmp)
    assert "passages:  5 added, 0 already present" in first.stdout
    assert "skipped:   1 malformed rows, 1 malformed triplets" in first.stdout
    assert "extra.jsonl:line 2: invalid JSON" in first.stderr
    assert "extra.jsonl:line 1 triplet 1: expected 3 parts" in first.stderr
    again = json.loads(hopgraph("ingest", str(BERNOULLI), "--json", tmp=tmp).stdout)
    assert again["passages_added"] == again["entities_added"] == again["relations_added"] == 0
    assert again["texts_embedded"] == 0


def test_query_json_in_a_new_process(tmp: Path) -> None:
    out = json.loads(hopgraph("query", QUESTION, "--json", "--top-k", "2", tmp=tmp).stdout)
    assert {"graph", "naive", "entities", "relations", "timings_ms"} <= out.keys()
    assert all({"id", "text", "score"} <= p.keys() for p in out["graph"] + out["naive"])
    assert any(p["text"].startswith("Daniel Bernoulli") for p in out["graph"])
    assert not any(p["text"].startswith("Daniel Bernoulli") for p in out["naive"])
    text = hopgraph("query", QUESTION, "--method", "seed", "--entity", "Euler", tmp=tmp).stdout
    assert "GRAPH (seed)" in text and "NAIVE" in text and "timings (ms)" in text


def test_stats_and_drop(tmp: Path) -> None:
    stats = json.loads(hopgraph("stats", "--json", tmp=tmp).stdout)
    # Basel was there already: the new file adds only "the Rhine"
    assert (stats["passages"], stats["entities"], stats["relations"]) == (5, 25, 23)
    refused = hopgraph("drop", tmp=tmp, check=False)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert "dropped" in hopgraph("drop", "--yes", tmp=tmp).stdout
    missing = hopgraph("stats", tmp=tmp, check=False)
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_errors_name_the_file(tmp: Path) -> None:
    empty = tmp / "empty.json"
    empty.write_text("", encoding="utf-8")
    done = hopgraph("ingest", str(empty), tmp=tmp, check=False)
    assert done.returncode == 1 and "empty.json: file is empty" in done.stderr


def test_demo(tmp: Path) -> None:
    done = hopgraph("demo", tmp=tmp)
    graph_column = [line.split(" | ")[0] for line in done.stdout.splitlines() if " | " in line]
    naive_column = [line.split(" | ")[1] for line in done.stdout.splitlines() if " | " in line]
    assert any("Daniel Bernoulli" in cell for cell in graph_column)
    assert not any("Daniel Bernoulli (1700" in cell for cell in naive_column)


def test_one_shot_commands_search_in_milvus(monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.cli import build_parser
    from hopgraph.cli.common import memory_limit as _memory_limit

    parse = build_parser().parse_args
    monkeypatch.delenv("HOPGRAPH_MEMORY_LIMIT", raising=False)
    assert _memory_limit(parse(["query", "q"])) == 0
    assert _memory_limit(parse(["ask", "q"])) == 0
    assert _memory_limit(parse(["query", "q", "--memory-limit", "1000"])) == 1000
    assert _memory_limit(parse(["eval", "--corpus", "c", "--openie", "o",
                                "--questions", "q"])) is None
    monkeypatch.setenv("HOPGRAPH_MEMORY_LIMIT", "5")
    assert _memory_limit(parse(["query", "q"])) is None  # the environment decides
