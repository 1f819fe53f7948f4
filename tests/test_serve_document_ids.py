"""An uploaded file is the same document as the file ingested by the CLI or the API
(`ingest.inputs`): one id, its name; a name too long for the disk keeps a digest of the
whole name (`serve.job_routes.upload_names`), so two long names stay two documents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the 'serve' extra is not installed")
from fastapi.testclient import TestClient

from hopgraph import GraphRAG
from hopgraph.config import ServeSettings
from hopgraph.serve.app import create_app
from hopgraph.serve.job_routes import NAME_BYTES, upload_names
from hopgraph.serve.service import GraphService

pytestmark = pytest.mark.slow  # Milvus Lite graphs built per test: seconds each

TEAM = b"Alice Smith leads the Platform team at Acme Corp. Bob Jones reports to Alice Smith.\n"


@pytest.fixture
def rag(open_graph) -> GraphRAG:
    return open_graph("upload_ids")


@pytest.fixture
def client(rag: GraphRAG) -> Iterator[TestClient]:
    with TestClient(create_app(GraphService(rag), ServeSettings())) as test_client:
        yield test_client


def uploaded(client: TestClient, files: dict[str, bytes]) -> dict:
    reply = client.post("/uploads", files=[("files", (name, data))
                                           for name, data in files.items()])
    assert reply.status_code == 202, reply.text
    job = reply.json()["id"]
    assert "event: end" in client.get(f"/jobs/{job}/events").text
    return client.get(f"/jobs/{job}").json()


def test_an_upload_of_a_file_the_cli_stored_is_the_same_document(
        client: TestClient, rag: GraphRAG, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "team.md").write_bytes(TEAM)
    rag.add_files([folder / "team.md"])
    job = uploaded(client, {"team.md": TEAM})
    assert job["state"] == "done" and job["documents"] == ["team.md"]
    assert rag.documents() == {"team.md": 1}


def test_long_names_cut_to_fit_stay_apart() -> None:
    first, second = "報告書" * 70 + "-A.md", "報告書" * 70 + "-B.md"
    cut = upload_names([first, second])
    assert cut[0] != cut[1] and all(len(n.encode()) <= NAME_BYTES for n in cut)
    assert all(n.endswith(".md") for n in cut)
    assert upload_names([second]) == [cut[1]]  # the same name again: the same document
    assert upload_names(["notes.txt", "a/notes.txt", "x\\report.pdf"]) == [
        "notes.txt", "notes (2).txt", "report.pdf"]


def test_two_long_uploads_are_two_documents(client: TestClient, rag: GraphRAG) -> None:
    stem = "Quarterly operations review for the northern region " * 4
    job = uploaded(client, {f"{stem}2024.txt": b"Dana Lee runs the Oslo depot.\n",
                            f"{stem}2025.txt": b"Erik Holm runs the Bergen depot.\n"})
    assert job["state"] == "done" and len(job["documents"]) == 2
    assert len(rag.documents()) == 2
