"""API keys with roles and graphs, kept in the database (`hopgraph keys`), as a server
enforces them: 401 without a known key, 404 for a graph the key may not use, 403 for a role
too low; `HOPGRAPH_API_KEY` is an admin key; a revoked key stops working."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need, run_cli, run_process
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.serve import auth
from hopgraph.serve.app import create_app
from hopgraph.serve.service import GraphService
from hopgraph.store.keys import COLLECTION

ROW = {"passage": "Basel lies on the Rhine.", "triplets": [["Basel", "lies on", "Rhine"]]}


def make_key(db: str, *options: str) -> dict:
    made = run_cli("keys", "create", "--uri", db, "--json", *options)
    assert made.code == 0, made.stderr
    return json.loads(made.stdout)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, local_embedder
           ) -> Iterator[tuple[TestClient, dict[str, dict], str, GraphRAG]]:
    db = str(tmp_path_factory.mktemp("keys") / "k.db")
    keys = {"read": make_key(db, "--role", "read", "--graph", "kb", "--label", "reader"),
            "write": make_key(db, "--role", "write", "--graph", "kb", "--graph", "other"),
            "foreign": make_key(db, "--role", "write", "--graph", "other"),
            "admin": make_key(db, "--role", "admin", "--label", "ops")}
    GraphRAG(uri=db, graph="other", embedder=local_embedder).close()
    rag = GraphRAG(uri=db, graph="kb", embedder=local_embedder)
    rag.add_files([need(BERNOULLI)])
    app = create_app(GraphService(rag), ServeSettings(api_key="env-secret"))
    with TestClient(app) as client:
        yield client, keys, db, rag
    rag.close()


def call(client: TestClient, key: str | None, method: str, path: str, **kw) -> int:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.request(method, path, headers=headers, **kw).status_code


def test_roles_and_graphs_are_enforced(served) -> None:
    client, keys, _, _ = served
    query = {"json": {"question": QUESTION}}
    post = {"json": {"rows": [ROW], "doc_id": "basel"}}
    read, write, foreign, admin = (keys[k]["key"] for k in ("read", "write", "foreign",
                                                            "admin"))
    for key in (None, "wrong", read[:-1]):
        assert call(client, key, "POST", "/query", **query) == 401
    assert call(client, read, "POST", "/query", **query) == 200
    assert call(client, read, "GET", "/stats") == 200
    assert call(client, read, "GET", "/documents") == 200
    assert call(client, read, "POST", "/documents", **post) == 403
    assert call(client, read, "DELETE", "/documents/basel") == 403
    assert call(client, read, "GET", "/metrics") == 403
    assert call(client, write, "POST", "/documents", **post) == 200
    assert call(client, write, "DELETE", "/documents/basel") == 200
    assert call(client, write, "GET", "/metrics") == 403
    for method, path, extra in (("GET", "/stats", {}), ("POST", "/query", query),
                                ("GET", "/documents", {}), ("POST", "/documents", post)):
        assert call(client, foreign, method, path, **extra) == 404  # as if there were no kb
    assert call(client, admin, "GET", "/metrics") == 200
    assert call(client, "env-secret", "GET", "/metrics") == 200  # HOPGRAPH_API_KEY: admin
    listed = client.get("/graphs", headers={"Authorization": f"Bearer {read}"}).json()
    assert listed["graphs"] == ["kb"]
    everything = client.get("/graphs", headers={"Authorization": f"Bearer {admin}"}).json()
    assert everything["graphs"] == ["kb", "other"]
    assert client.get("/health").status_code == 200  # liveness needs no key


def test_keys_are_stored_as_hashes_listed_and_revoked(served, monkeypatch, caplog) -> None:
    client, keys, db, rag = served
    listed = run_cli("keys", "list", "--uri", db, "--json")
    assert listed.code == 0
    records = json.loads(listed.stdout)
    assert {r["id"] for r in records} == {k["id"] for k in keys.values()}
    assert not any(k["key"] in listed.stdout for k in keys.values())
    rows = rag.store.where(COLLECTION, 'id != ""', ["id", "value"])
    assert len(rows) == 4 and all(len(row["id"]) == 64 for row in rows)  # SHA-256 only
    assert not any(k["key"] in json.dumps(rows) for k in keys.values())
    with caplog.at_level(logging.INFO, logger="hopgraph.access"):
        call(client, keys["read"]["key"], "GET", "/stats")
    assert any("key=reader" in r.getMessage() for r in caplog.records)
    assert not any(keys["read"]["key"] in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(auth, "REREAD_S", 0.0)  # see the revocation at once
    revoked = run_cli("keys", "revoke", "reader", "--uri", db)
    assert revoked.code == 0 and keys["read"]["id"] in revoked.stdout
    assert call(client, keys["read"]["key"], "GET", "/stats") == 401
    assert run_cli("keys", "revoke", "reader", "--uri", db).code != 0  # gone
    bad = run_cli("keys", "create", "--uri", db, "--role", "read")
    assert bad.code != 0 and "--graph" in bad.stderr


def test_serving_beyond_loopback_without_a_key_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "open.db")
    built = run_process("ingest", str(need(BERNOULLI)), "--uri", db, "--quiet")
    assert built.code == 0, built.stderr
    refused = run_process("serve", "--uri", db, "--host", "0.0.0.0", "--port", "1")
    assert refused.code != 0 and "--no-auth" in refused.stderr, refused.stderr
