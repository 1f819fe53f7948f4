"""API keys with roles and graphs, kept in the database (`hopgraph keys`), as a server
enforces them: 401 without a known key, 404 for a graph the key may not use, 403 for a role
too low; `HOPGRAPH_API_KEY` is an admin key; a revoked key stops working."""

from __future__ import annotations

import json
import logging
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BERNOULLI, QUESTION, need, own_environment, run_cli, run_process, serving
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.errors import StoreError
from hopgraph.serve import auth, runtime
from hopgraph.serve.app import create_app
from hopgraph.serve.service import GraphService
from hopgraph.store.keys import COLLECTION

ROW = {"passage": "Basel lies on the Rhine.", "triplets": [["Basel", "lies on", "Rhine"]]}
EULER = [{"passage": "Leonhard Euler studied under Johann Bernoulli in Basel.",
          "triplets": [["Leonhard Euler", "studied under", "Johann Bernoulli"]]},
         {"passage": "Daniel Bernoulli, son of Johann, stated Bernoulli's principle.",
          "triplets": [["Daniel Bernoulli", "was the son of", "Johann Bernoulli"]]}]


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
    rag.add(EULER, doc_id="euler")  # a small graph of its own: no shared data needed
    app = create_app(GraphService(rag), ServeSettings(api_key="env-secret"))
    with TestClient(app) as client:
        yield client, keys, db, rag
    rag.close()


def call(client: TestClient, key: str | None, method: str, path: str, **kw) -> int:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return client.request(method, path, headers=headers, **kw).status_code


@pytest.mark.slow
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


def test_keys_are_stored_as_hashes_listed_and_revoked(served, store_of, monkeypatch, caplog
                                                       ) -> None:
    client, keys, db, rag = served
    listed = run_cli("keys", "list", "--uri", db, "--json")
    assert listed.code == 0
    records = json.loads(listed.stdout)
    assert {r["id"] for r in records} == {k["id"] for k in keys.values()}
    assert not any(k["key"] in listed.stdout for k in keys.values())
    rows = store_of(rag).where(COLLECTION, 'id != ""', ["id", "value"])
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


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def new_key(client: TestClient, role: str, *graphs: str) -> str:
    """A key made through the server (with the env key, an admin's)."""
    body = {"role": role, **({"graphs": list(graphs)} if graphs else {})}
    made = client.post("/keys", headers=bearer("env-secret"), json=body)
    assert made.status_code == 201, made.text
    return made.json()["key"]


def test_keys_are_made_listed_and_revoked_through_the_server(served, caplog) -> None:
    client, keys, _, _ = served
    admin, write, read = keys["admin"]["key"], keys["write"]["key"], new_key(client, "read", "kb")
    listed = client.get("/keys", headers=bearer(admin))
    assert listed.status_code == 200
    assert {keys[k]["id"] for k in ("admin", "write", "foreign")} <= {
        k["id"] for k in listed.json()["keys"]}
    assert not any(k["key"] in listed.text for k in keys.values())  # never the keys
    with caplog.at_level(logging.INFO, logger="hopgraph.access"):
        made = client.post("/keys", headers=bearer(admin),
                           json={"role": "read", "graphs": ["kb", "kb"], "label": "fresh"})
    assert made.status_code == 201, made.text
    fresh = made.json()
    assert fresh["key"].startswith("hg_") and fresh["graphs"] == ["kb"]
    assert any("route=/keys" in r.getMessage() and "key=ops" in r.getMessage()
               for r in caplog.records)
    assert call(client, fresh["key"], "GET", "/stats") == 200  # at once: no re-read wait
    for key in (read, write, fresh["key"]):  # only admins manage keys
        assert call(client, key, "GET", "/keys") == 403
        assert call(client, key, "POST", "/keys", json={"role": "admin"}) == 403
        assert call(client, key, "DELETE", "/keys/fresh") == 403
    assert call(client, None, "GET", "/keys") == 401
    revoked = client.delete("/keys/fresh", headers=bearer("env-secret"))
    assert revoked.status_code == 200
    assert [k["id"] for k in revoked.json()["revoked"]] == [fresh["id"]]
    assert call(client, fresh["key"], "GET", "/stats") == 401  # at once
    gone = client.delete("/keys/fresh", headers=bearer(admin))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(("body", "named"), [
    ({"role": "admin", "graphs": ["kb"]}, "graphs"),  # an admin key has every graph
    ({"role": "read"}, "graphs"),
    ({"role": "write", "graphs": []}, "graphs"),
    ({"role": "owner"}, "owner"),
    ({"role": "read", "graphs": ["2kb"]}, "graphs"),
    ({"role": "read", "graphs": ["kb"], "label": "a\nkey=forged"}, "label"),
    ({"role": "read", "graphs": ["kb"], "label": "x" * 101}, "label"),
    ({"role": "read", "graphs": ["kb"], "scope": "all"}, "scope"),
    ({"graphs": ["kb"]}, "role"),
])
def test_a_key_request_the_schema_refuses_is_a_422(served, body: dict, named: str) -> None:
    client, keys, _, _ = served
    answer = client.post("/keys", headers=bearer(keys["admin"]["key"]), json=body)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_request" and named in error["message"], error


def test_a_key_of_other_graphs_learns_nothing_of_the_default_one(served) -> None:
    client, keys, _, _ = served
    foreign = bearer(keys["foreign"]["key"])  # may use "other"; the default graph is "kb"
    listed = client.get("/graphs", headers=foreign)
    assert listed.json() == {"graphs": ["other"], "default": None}
    for method, path, extra in (("GET", "/stats", {}), ("GET", "/documents", {}),
                                ("POST", "/query", {"json": {"question": QUESTION}}),
                                ("POST", "/uploads", {"files": [("files", ("a.txt", b"A"))]})):
        answer = client.request(method, path, headers=foreign, **extra)
        assert answer.status_code == 404, (path, answer.text)
        assert "kb" not in answer.text, (path, answer.text)
    assert client.get("/graphs/other/stats", headers=foreign).status_code == 200
    mine = client.get("/graphs", headers=bearer(new_key(client, "read", "kb"))).json()
    assert mine == {"graphs": ["kb"], "default": "kb"}


def test_the_database_path_is_told_to_admins_only(served, monkeypatch) -> None:
    client, keys, db, _ = served
    folder = str(Path(db).resolve().parent)
    write, admin, read = keys["write"]["key"], keys["admin"]["key"], new_key(client, "read", "kb")
    told = client.get("/stats", headers=bearer(read))
    assert told.status_code == 200 and "uri" not in told.json() and folder not in told.text
    assert client.get("/stats", headers=bearer(admin)).json()["uri"] == db

    def failing(self, *args, **kwargs):
        raise StoreError("Milvus could not write the rows", where=db)

    monkeypatch.setattr(GraphRAG, "add_extracted", failing)
    monkeypatch.setattr(GraphRAG, "stats", failing)
    for key, shown in ((read, False), (admin, True)):  # an error reply
        answer = client.get("/stats", headers=bearer(key))
        assert answer.status_code == 503
        assert (folder in answer.text) is shown, answer.text
    job = client.post("/uploads", headers=bearer(write),
                      files=[("files", ("notes.txt", b"Basel lies on the Rhine."))]).json()
    ended = client.get(f"/jobs/{job['id']}/events", headers=bearer(write))
    view = client.get(f"/jobs/{job['id']}", headers=bearer(write)).json()
    assert "event: end" in ended.text and view["state"] == "failed", view
    assert "the database" in view["error"] and folder not in view["error"], view["error"]


def test_an_open_server_takes_its_first_key_through_the_api(tmp_path: Path,
                                                            local_embedder) -> None:
    with GraphRAG(uri=str(tmp_path / "open.db"), embedder=local_embedder) as rag, \
            TestClient(create_app(GraphService(rag))) as client:
        assert client.get("/stats").status_code == 200  # open: no key at all
        assert client.get("/keys").json() == {"keys": []}
        made = client.post("/keys", json={"role": "admin", "label": "first"})
        assert made.status_code == 201, made.text
        key = made.json()["key"]
        assert client.get("/stats").status_code == 401  # keyed from now on, at once
        assert client.get("/stats", headers=bearer(key)).status_code == 200
        assert [k["label"] for k in client.get("/keys", headers=bearer(key)).json()["keys"]] \
            == ["first"]


def fetch(url: str, key: str | None = None) -> int:
    """The status of GET `url` (with `key`, if any)."""
    request = urllib.request.Request(url, headers=bearer(key) if key else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_keys_go_through_the_running_server_of_a_lite_file(tmp_path: Path) -> None:
    """`hopgraph keys --uri DB` finds the `hopgraph serve` holding DB by its runtime file;
    `--server URL` takes an admin key; either way a change counts there at once."""
    db = str(tmp_path / "live.db")
    place = runtime.place(db)
    with serving(db, "--graph", "kb", env=own_environment()) as url:
        assert stat.S_IMODE(place.stat().st_mode) == 0o600
        assert json.loads(place.read_text())["url"] == url
        assert fetch(f"{url}/stats") == 200  # open: no key yet
        first = run_cli("keys", "create", "--uri", db, "--role", "admin", "--label", "ops",
                        "--json")
        assert first.code == 0, first.stderr
        assert f"through the server at {url}" in first.stderr
        admin = json.loads(first.stdout)["key"]
        assert fetch(f"{url}/stats") == 401  # keyed from now on
        assert fetch(f"{url}/stats", admin) == 200
        made = run_cli("keys", "create", "--server", url, "--api-key", admin, "--role",
                       "read", "--graph", "kb", "--label", "reader", "--json")
        assert made.code == 0, made.stderr
        reader = json.loads(made.stdout)
        assert fetch(f"{url}/stats", reader["key"]) == 200
        assert fetch(f"{url}/keys", reader["key"]) == 403
        for listed in (run_cli("keys", "list", "--uri", db, "--json"),
                       run_cli("keys", "list", "--server", url, "--json",
                               env={"HOPGRAPH_API_KEY": admin})):
            assert listed.code == 0, listed.stderr
            assert sorted(k["label"] for k in json.loads(listed.stdout)) == ["ops", "reader"]
        refused = run_cli("keys", "list", "--server", url, "--api-key", reader["key"])
        assert refused.code == 2 and "admin key" in refused.stderr, refused.stderr
        revoked = run_cli("keys", "revoke", "reader", "--server", url, "--api-key", admin)
        assert revoked.code == 0 and reader["id"] in revoked.stdout, revoked.stderr
        assert fetch(f"{url}/stats", reader["key"]) == 401  # at once
        again = run_cli("keys", "revoke", "reader", "--uri", db)
        assert again.code == 2 and "no key" in again.stderr
        both = run_cli("keys", "list", "--server", url, "--uri", db)
        assert both.code == 2 and "--server" in both.stderr
        alone = run_cli("keys", "list", "--uri", db, "--api-key", admin)
        assert alone.code == 2 and "--api-key goes with --server" in alone.stderr
    assert not place.exists()  # removed when the server stopped
    log = Path(db).with_suffix(".log").read_text()
    assert "route=/keys" in log and "key=local-token" in log and "key=ops" in log
    assert admin not in log and "hgl_" not in log  # neither a key nor the token


def test_a_runtime_file_that_cannot_be_trusted_is_ignored(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    place = runtime.place(db)
    token = runtime.publish(db, "http://127.0.0.1:9", "hgl_t")  # this process: alive
    assert runtime.find(db) == token
    place.chmod(0o644)  # readable by others: not the owner's private file
    assert runtime.find(db) is None
    place.unlink()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    assert ended.wait(timeout=60) == 0  # its pid is now free
    place.write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": ended.pid,
                                 "database": str(Path(db).resolve()), "token": "x"}))
    place.chmod(0o600)
    assert runtime.find(db) is None  # its process is gone
    place.unlink()
    place.symlink_to(tmp_path / "elsewhere.json")
    assert runtime.find(db) is None
    listed = run_cli("keys", "list", "--uri", db)  # no server: the database itself
    assert listed.code == 0 and "through the server" not in listed.stderr, listed.stderr
