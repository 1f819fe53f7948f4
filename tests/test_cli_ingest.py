"""`hopgraph ingest` end to end: files, raw documents with --extract, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BERNOULLI, Ran, need, run_cli
from llm_server import FakeLLMServer, Reply


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("cli-ingest")
    return {"HOPGRAPH_URI": str(tmp / "cli.db"), "HOPGRAPH_GRAPH": "cli"}


def test_ingest_in_a_new_process(smoke: tuple[dict[str, str], Ran]) -> None:
    done = smoke[1]
    assert done.code == 0, done.stderr
    assert "passages:  4 added, 0 already present" in done.stdout
    assert "embedded:  50 texts" in done.stdout


def test_ingest_reports_and_is_idempotent(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "extra.jsonl"
    bad.write_text(
        json.dumps({"passage": "Basel is a city on the Rhine.",
                    "triplets": [["Basel", "is a city on", "the Rhine"], ["Basel"]]}) + "\n"
        + "{broken\n", encoding="utf-8")
    first = run_cli("ingest", str(need(BERNOULLI)), str(bad), "--quiet", env=env)
    assert first.code == 0, first.stderr
    assert "passages:  5 added, 0 already present" in first.stdout
    assert "skipped:   0 files, 1 malformed rows, 1 malformed triplets" in first.stdout
    assert "extra.jsonl:line 2: invalid JSON" in first.stderr
    assert "extra.jsonl:line 1 triplet 1: expected 3 parts" in first.stderr
    again = json.loads(run_cli("ingest", str(BERNOULLI), "--json", env=env).stdout)
    assert again["passages_added"] == again["entities_added"] == again["relations_added"] == 0
    assert again["texts_embedded"] == 0


def test_errors_name_the_file(env: dict[str, str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    done = run_cli("ingest", str(empty), env=env)
    assert done.code == 1 and "empty.json: file is empty" in done.stderr
    missing = run_cli("ingest", str(tmp_path / "nope.json"), env=env)
    assert missing.code == 1 and "nope.json: no such file or folder" in missing.stderr


def test_extract_with_the_llm_forced_but_none_says_how_to_configure_one(
        env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Marie Curie was born in Warsaw.", encoding="utf-8")
    done = run_cli("ingest", "--extract", "--extractor", "llm", str(tmp_path),
                   env={**env, "HOPGRAPH_LLM_MODEL": ""})
    assert done.code == 1
    assert "needs an LLM" in done.stderr and "HOPGRAPH_LLM_MODEL" in done.stderr
    dry = run_cli("ingest", "--extract", "--extractor", "llm", "--dry-run", str(tmp_path),
                  env={**env, "HOPGRAPH_LLM_MODEL": ""})  # planning needs no LLM
    assert dry.code == 0, dry.stderr
    assert "1 documents, 1 chunks" in dry.stdout and "no LLM call made" in dry.stdout


def test_a_failed_extraction_leaves_no_graph_behind(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Marie Curie was born in Warsaw.", encoding="utf-8")
    with FakeLLMServer(lambda body: Reply(status=401)) as server:
        env = {"HOPGRAPH_URI": str(tmp_path / "new.db"), "HOPGRAPH_GRAPH": "docs",
               "HOPGRAPH_LLM_MODEL": "scripted", "HOPGRAPH_LLM_BASE_URL": server.url,
               "OPENAI_API_KEY": "test", "HOPGRAPH_LLM_CACHE": "off"}
        done = run_cli("ingest", "--extract", "--quiet", str(tmp_path / "a.txt"), env=env)
    assert done.code == 1 and server.chat_requests, done.stderr
    assert "every one of 1 chunks failed" in done.stderr and "HTTP 401" in done.stderr
    assert not (tmp_path / "new.db").exists()  # extraction ran before any graph was opened


def test_extract_without_an_llm_uses_the_offline_extractor(env: dict[str, str],
                                                           tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "curie.md").write_text(
        "# Marie Curie\n\nMarie Curie was born in Warsaw in 1867. She won the Nobel Prize "
        "in Physics with Pierre Curie.\n", encoding="utf-8")
    (folder / "notes.txt").write_text("只有中文的文本。没有大写字母。\n", encoding="utf-8")
    no_llm = {**env, "HOPGRAPH_LLM_MODEL": ""}
    dry = run_cli("ingest", "--extract", "--dry-run", str(folder), env=no_llm)
    assert dry.code == 0, dry.stderr
    assert "(title 'Marie Curie')" in dry.stdout and "Warsaw" in dry.stdout
    assert "no storage" not in dry.stderr and "offline extractor" in dry.stderr
    done = run_cli("ingest", "--extract", "--json", "--quiet", str(folder), env=no_llm)
    assert done.code == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["extractor"] == "offline" and summary["passages_added"] == 2
    assert summary["relations_added"] >= 3
    query = run_cli("query", "Where was the Nobel Prize winner born?", "--json", env=env)
    assert any("Warsaw" in p["text"] for p in json.loads(query.stdout)["graph"])


def test_extract_dry_run_then_ingest(tmp_path: Path) -> None:
    """Dry run, extraction over HTTP, and a rerun served from the LLM cache."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "curie.txt").write_text("Marie Curie was born in Warsaw.\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Ada\n\nAda Lovelace worked with Charles Babbage.\n",
                                     encoding="utf-8")

    def responder(body: dict) -> Reply:
        text = body["messages"][-1]["content"].rsplit("Passage:", 1)[-1]
        triplets = []
        if "Warsaw" in text:
            triplets.append(["Marie Curie", "was born in", "Warsaw"])
        if "Babbage" in text:
            triplets.append(["Ada Lovelace", "worked with", "Charles Babbage"])
        return Reply(json.dumps({"triplets": triplets}))

    with FakeLLMServer(responder) as server:
        env = {"HOPGRAPH_URI": str(tmp_path / "x.db"), "HOPGRAPH_GRAPH": "docs",
               "HOPGRAPH_LLM_MODEL": "scripted", "HOPGRAPH_LLM_BASE_URL": server.url,
               "OPENAI_API_KEY": "test", "HOPGRAPH_LLM_CACHE": str(tmp_path / "c.sqlite")}

        def run(*args: str) -> Ran:
            done = run_cli("ingest", "--extract", str(folder), "--quiet", *args, env=env)
            assert done.code == 0, done.stderr
            return done

        dry = run("--dry-run")
        assert "2 documents, 2 chunks" in dry.stdout and "estimated prompt tokens" in dry.stdout
        assert server.chat_requests == []
        first = run("--json")
        summary = json.loads(first.stdout)
        assert summary["passages_added"] == 2 and summary["relations_added"] == 2
        assert "extracted 2 triplets from 2 chunks" in first.stderr
        assert len(server.chat_requests) == 2
        again = run("--json")
        assert "2 chunks from cache" in again.stderr
        assert json.loads(again.stdout)["passages_added"] == 0
        assert len(server.chat_requests) == 2  # resumed from the cache: nothing re-sent


def test_progress_is_one_line_per_stage_off_a_terminal(env: dict[str, str],
                                                       tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"passage": "Lyon lies on the Rhone.",
                                "triplets": [["Lyon", "lies on", "Rhone"]]}) + "\n",
                    encoding="utf-8")
    done = run_cli("ingest", str(rows), env=env)  # not --quiet; stderr is not a terminal
    assert done.code == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("ingest")]
    assert len(lines) == 1 and lines[0].startswith("ingest: 1 rows in ")
    assert "\r" not in done.stderr


def test_progress_bars_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from hopgraph.cli.common import Bars

    bars = Bars(interactive=True)
    for done in (0, 5, 10):
        bars("ingest", done, 10)
    err = capsys.readouterr().err
    assert "ingest" in err and "\r" in err  # a redrawn bar, not log lines


def test_raw_documents_need_no_switch_and_mix_with_rows(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "notes.txt").write_text("Ada Lovelace worked with Charles Babbage in London.\n",
                                      encoding="utf-8")
    (folder / "rows.jsonl").write_text(json.dumps(
        {"passage": "Lyon lies on the Rhone.", "triplets": [["Lyon", "lies on", "Rhone"]]})
        + "\n", encoding="utf-8")
    env = {"HOPGRAPH_URI": str(tmp_path / "m.db"), "HOPGRAPH_GRAPH": "m",
           "HOPGRAPH_LLM_MODEL": ""}
    done = run_cli("ingest", str(folder), "--json", "--quiet", env=env)
    assert done.code == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["passages_added"] == 2 and summary["extractor"] == "offline"
    docs = run_cli("docs", env=env)
    assert "notes.txt" in docs.stdout and "rows.jsonl" in docs.stdout


def test_an_ingest_that_reads_nothing_leaves_no_graph(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{broken\n", encoding="utf-8")
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    env = {"HOPGRAPH_URI": str(tmp_path / "none.db"), "HOPGRAPH_GRAPH": "g"}
    for path, message in ((bad, "bad.jsonl: neither JSON nor JSONL"),
                          (binary, "image.png: unsupported file type '.png'")):
        done = run_cli("ingest", str(path), "--quiet", env=env)
        assert done.code == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "none.db").exists()
