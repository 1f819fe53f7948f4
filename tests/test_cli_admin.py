"""`hopgraph stats`, `drop` and `demo`, and what the command line does with errors."""

from __future__ import annotations

import json

import pytest
from conftest import BERNOULLI, Ran, need, run_cli, run_process


def test_stats_in_a_new_process(smoke: tuple[dict[str, str], Ran]) -> None:
    done = run_process("stats", "--json", env=smoke[0])
    assert done.code == 0, done.stderr
    stats = json.loads(done.stdout)
    assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
    assert stats["embedder"] == "local:all-MiniLM-L6-v2" and stats["dim"] == 384


def test_stats_and_drop(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("cli-admin")
    env = {"HOPGRAPH_URI": str(tmp / "a.db"), "HOPGRAPH_GRAPH": "a"}
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    stats = json.loads(run_cli("stats", "--json", env=env).stdout)
    assert (stats["passages"], stats["entities"], stats["relations"]) == (4, 24, 22)
    assert "relations  22" in run_cli("stats", env=env).stdout
    refused = run_cli("drop", env=env)  # no terminal to ask on
    assert refused.code == 2 and "--yes" in refused.stderr
    assert "dropped" in run_cli("drop", "--yes", env=env).stdout
    missing = run_cli("stats", env=env)
    assert missing.code == 1 and "does not exist" in missing.stderr


def test_demo() -> None:
    done = run_cli("demo", env={"HOPGRAPH_DEMO_DATA": str(need(BERNOULLI))})
    assert done.code == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if " | " in line]
    graph_column = [line.split(" | ")[0] for line in rows]
    naive_column = [line.split(" | ")[1] for line in rows]
    assert any("Daniel Bernoulli" in cell for cell in graph_column)
    assert not any("Daniel Bernoulli (1700" in cell for cell in naive_column)
    assert "relations used:" in done.stdout


def test_demo_with_a_bad_file_names_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    bad = tmp_path_factory.mktemp("demo") / "not-demo.json"
    bad.write_text('{"passages": []}', encoding="utf-8")
    done = run_cli("demo", "--data", str(bad))
    assert done.code == 1 and "not-demo.json: not a demo file" in done.stderr


def test_one_shot_commands_never_scan_milvus_for_the_mirror(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.cli import build_parser
    from hopgraph.cli.common import one_shot

    parse = build_parser().parse_args
    monkeypatch.delenv("HOPGRAPH_MEMORY_LIMIT", raising=False)
    assert one_shot(parse(["query", "q"])) and one_shot(parse(["ask", "q"]))
    assert not one_shot(parse(["query", "q", "--memory-limit", "1000"]))  # the user chose
    assert not one_shot(parse(["eval", "--corpus", "c", "--openie", "o", "--questions", "q"]))
    monkeypatch.setenv("HOPGRAPH_MEMORY_LIMIT", "5")
    assert not one_shot(parse(["query", "q"]))  # the environment decides

def test_reads_never_create_a_database(tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("no-db")
    for command in (["stats"], ["query", "Who?"], ["drop", "--yes"]):
        done = run_cli(*command, env={"HOPGRAPH_URI": str(tmp / "none.db")})
        assert done.code == 1 and "none.db: no Milvus Lite database here" in done.stderr
    assert list(tmp.iterdir()) == []


def test_a_database_held_by_another_process_is_one_clear_error(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """A second process on a Lite file gets one line naming the file and what to do."""
    import subprocess
    import sys

    db = tmp_path_factory.mktemp("held") / "held.db"
    env = {"HOPGRAPH_URI": str(db), "HOPGRAPH_GRAPH": "held"}
    from milvus_lite.server_manager import server_manager_instance

    from hopgraph.store import MilvusStore

    MilvusStore(str(db), "held").close()  # the database exists...
    server_manager_instance.release_server(str(db))  # ...and this process lets go of it
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from hopgraph.store import MilvusStore; "
         f"s = MilvusStore({str(db)!r}, 'held'); print('ready', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        done = run_cli("stats", env=env)
        assert done.code == 1
        assert done.stderr.strip().splitlines() == [
            f"hopgraph stats: error: {db}: this Milvus Lite database is open in another "
            "process (a Lite file serves one process at a time); stop the other process "
            "(e.g. a running `hopgraph serve`) or use a Milvus server"]
    finally:
        holder.communicate("", timeout=120)


def test_a_write_that_did_not_finish_is_reported_until_rerun(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    from hopgraph.ingest.loaders import source_doc_id
    from hopgraph.store import MilvusStore
    from hopgraph.store.writes import WriteSession

    tmp = tmp_path_factory.mktemp("incomplete")
    env = {"HOPGRAPH_URI": str(tmp / "a.db"), "HOPGRAPH_GRAPH": "a"}
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    assert json.loads(run_cli("stats", "--json", env=env).stdout)["state"] == "complete"
    doc = source_doc_id(need(BERNOULLI))
    store = MilvusStore(env["HOPGRAPH_URI"], "a")
    session = WriteSession(store, "ingest")  # what an ingest killed half way leaves behind
    session.start()
    session.touch("passages", [], [doc])
    store.close()
    stats = json.loads(run_cli("stats", "--json", env=env).stdout)
    assert stats["state"].startswith("graph 'a' is incomplete: 1 unfinished document(s): "
                                     f"{doc!r}: write #2 is under way (or its process died)")
    assert list(stats["unfinished"]) == [doc]
    query = run_cli("query", "Who taught Euler?", "--json", env=env)
    assert query.code == 0 and "warning: graph 'a' is incomplete" in query.stderr
    assert any("is incomplete" in note for note in json.loads(query.stdout)["notes"])
    # Another document's write does not make the stopped one look complete.
    other = tmp / "other.jsonl"
    other.write_text(json.dumps({"passage": "Euler was born in Basel.", "triplets": [
        ["Leonhard Euler", "born in", "Basel"]]}) + "\n", encoding="utf-8")
    assert run_cli("ingest", str(other), "--quiet", env=env).code == 0
    stats = json.loads(run_cli("stats", "--json", env=env).stdout)
    assert list(stats["unfinished"]) == [doc]
    assert "write #2 stopped before it finished" in stats["state"]
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    assert json.loads(run_cli("stats", "--json", env=env).stdout)["state"] == "complete"
    assert "incomplete" not in run_cli("query", "Who taught Euler?", env=env).stderr


def test_check_finds_and_repairs_broken_invariants(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    import numpy as np

    from hopgraph.identity import entity_id
    from hopgraph.store import MilvusStore

    tmp = tmp_path_factory.mktemp("check")
    env = {"HOPGRAPH_URI": str(tmp / "a.db"), "HOPGRAPH_GRAPH": "a"}
    assert run_cli("ingest", str(need(BERNOULLI)), "--quiet", env=env).code == 0
    clean = run_cli("check", env=env)
    assert clean.code == 0 and clean.stdout.strip().endswith("0 problems")
    store = MilvusStore(env["HOPGRAPH_URI"], "a")
    rows = list(store.scan(store.relations, ["id", "subject_id", "object_id", "passage_ids"]))
    gone_passage = rows[0]["passage_ids"][0]
    gone_entity = rows[-1]["subject_id"]
    store.delete(store.passages, [gone_passage])
    store.delete(store.entities, [gone_entity])
    store.insert(store.entities, [{"id": entity_id("Nobody"), "name": "Nobody",
                                   "vector": np.ones(384, dtype=np.float32) / np.sqrt(384)}])
    store.flush()
    store.close()
    dangling = sum(gone_passage in r["passage_ids"] for r in rows)
    missing = sum(gone_entity in (r["subject_id"], r["object_id"]) for r in rows)
    found = run_cli("check", "--json", env=env)
    report = json.loads(found.stdout)
    assert found.code == 1
    assert report["by_kind"]["dangling passage"] == dangling > 0
    assert report["by_kind"]["missing entity"] == missing > 0
    assert report["by_kind"]["orphan entity"] == 1  # Nobody
    fixed = json.loads(run_cli("check", "--repair", "--json", env=env).stdout)
    assert fixed["repaired"] > 0
    # What needs the passages again stays reported; everything else is gone.
    assert {f["kind"] for f in fixed["findings"]} <= {"missing entity"}
    again = json.loads(run_cli("check", "--json", env=env).stdout)
    assert again["problems"] == fixed["problems"] == missing
    store = MilvusStore(env["HOPGRAPH_URI"], "a")
    try:
        left = list(store.scan(store.relations, ["passage_ids"]))
        assert left and all(r["passage_ids"] for r in left)
        assert not any(gone_passage in r["passage_ids"] for r in left)
        assert not store.existing_ids(store.entities, [entity_id("Nobody")])
    finally:
        store.close()
