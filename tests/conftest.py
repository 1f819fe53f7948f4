"""Shared fixtures: the real local embedder (loaded once) and Milvus Lite graphs in temp dirs."""

from __future__ import annotations

import contextlib
import inspect
import io
import itertools
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import FakeLLMServer

from hopgraph import GraphRAG
from hopgraph.embed import LocalEmbedder
from hopgraph.ingest import sync
from hopgraph.llm import LLMClient, LLMSettings
from hopgraph.records import IngestSummary, PassageRecord
from hopgraph.retrieve import Retriever
from hopgraph.state import GraphState
from hopgraph.store import MilvusStore

DATA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()

# Exported ONNX models go to a cache dir of this test run (inherited by the processes tests
# start), never to the user's own ~/.cache/hopgraph.
os.environ.setdefault("HOPGRAPH_CACHE_DIR", tempfile.mkdtemp(prefix="hopgraph-test-cache-"))
BERNOULLI = DATA / "bernoulli" / "nano.json"
MUSIQUE = DATA / "musique"
QUESTION = "What contribution did the son of Euler's teacher make?"


def need(path: Path) -> Path:
    """Skip the calling test, with a clear message, when shared data is absent."""
    if not path.exists():
        pytest.skip(f"shared data not found at {path}: put the project's data folder at "
                    "../shared/data beside the repository (its README says what is in it)")
    return path


@dataclass
class Ran:
    """What one `hopgraph` command did: exit code and printed text."""

    code: int
    stdout: str
    stderr: str


def run_cli(*args: str, env: dict[str, str] | None = None) -> Ran:
    """`hopgraph ARGS` in this process (fast: the model and imports are already loaded)."""
    from hopgraph.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return Ran(code, out.getvalue(), err.getvalue())


def run_process(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
                ) -> Ran:
    """`python -m hopgraph.cli ARGS` in a new process, as a user runs it (slow: imports,
    Milvus Lite and the model at every start)."""
    done = subprocess.run([sys.executable, "-m", "hopgraph.cli", *args],
                          env={**os.environ, **(env or {})}, cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)
    return Ran(done.returncode, done.stdout, done.stderr)


class CountingEmbedder:
    """The real local embedder, counting how many texts it was asked to embed."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0
        self.texts = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.fixture
def embedder(local_embedder: LocalEmbedder) -> CountingEmbedder:
    return CountingEmbedder(local_embedder)


_GRAPH_NUMBERS = itertools.count()


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Milvus 2.3 standalone server for this session (tests marked `server`); its URI."""
    from milvus_server import start_milvus_server

    yield from start_milvus_server(tmp_path_factory)


@pytest.fixture(scope="session")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Milvus Lite database for the whole session; each test uses graphs of its own.
    A client is held open all session, as a long-running program would: closing a test's
    last graph would otherwise stop the file's Lite server (`store.lite`), and the next test
    would wait for its collections to load again."""
    from hopgraph.store.lite import connect, disconnect

    path = str(tmp_path_factory.mktemp("shared") / "hop.db")
    held = connect(path, None)
    yield path
    disconnect(path, held)


@pytest.fixture
def open_graph(shared_db: str, embedder: CountingEmbedder) -> Iterator[Callable[..., GraphRAG]]:
    """Open (or reopen) a graph of this test's own in the session's Milvus Lite database.

    Graph names get a per-test prefix ("one" -> "t12_one"), so tests never see each other's
    rows; a name that is invalid stays invalid.
    """
    opened: list[GraphRAG] = []
    prefix = f"t{next(_GRAPH_NUMBERS)}_"

    def _open(graph: str = "test", uri: str | None = None, **kwargs: object) -> GraphRAG:
        kwargs.setdefault("embedder", embedder)
        rag = GraphRAG(uri=uri or shared_db, graph=prefix + graph, **kwargs)
        opened.append(rag)
        return rag

    yield _open
    for rag in opened:
        rag.close()


class Parts:
    """A graph opened from its modules, as `GraphRAG` opens one (a `MilvusStore`, a
    `GraphState` over it, retrievers built by `Retriever.over`, writes by `ingest.sync`),
    with the settings of an open GraphRAG (`changes`: some of them changed). Tests of those
    modules use these; a GraphRAG's own stay its own (tests/test_package_boundaries.py)."""

    def __init__(self, rag: GraphRAG, **changes: Any) -> None:
        self.settings = replace(rag.settings, **changes)
        self.embedder, self.llm, self.scan = rag.embedder, rag.llm, rag.mirror_scan
        self.store = MilvusStore.from_settings(self.settings, create=False)
        try:
            self.store.open(self.embedder.name, self.embedder.dim, create=False)
            self.state: GraphState[Retriever] = GraphState(self.store, self.embedder.dim)
        except BaseException:
            self.store.close()
            raise

    @property
    def retriever(self) -> Retriever:
        """The retriever over the state's current graph, built as `GraphRAG` builds its."""
        return self.state.retriever(lambda start: Retriever.over(
            start, self.embedder, self.llm, self.settings.memory_limit, scan=self.scan,
            fanout=self.settings.fanout))

    def add(self, records: list[PassageRecord]) -> IngestSummary:
        """Store `PassageRecord`s, as `GraphRAG.add` does."""
        return sync.store_records(self.state, self.embedder, records, [])

    def close(self) -> None:
        self.state.vectors.wait_indexed()  # as `GraphRAG.close`
        self.store.close()


@pytest.fixture
def parts_of() -> Iterator[Callable[..., Parts]]:
    """`Parts` of a GraphRAG's graph (`parts_of(rag, memory_limit=0)`), closed after the
    test."""
    opened: list[Parts] = []

    def _open(rag: GraphRAG, **changes: Any) -> Parts:
        opened.append(Parts(rag, **changes))
        return opened[-1]

    yield _open
    for parts in opened:
        parts.close()


@pytest.fixture
def store_of() -> Iterator[Callable[[GraphRAG], MilvusStore]]:
    """The `MilvusStore` of a GraphRAG's graph, opened afresh beside it (its meta row read
    anew) with its settings: what a test of the store itself (rows, the write counter,
    `check`, snapshot and lexicon files) reads. Closed after the test."""
    opened: list[MilvusStore] = []

    def _open(rag: GraphRAG) -> MilvusStore:
        opened.append(MilvusStore.from_settings(rag.settings, create=False))
        return opened[-1]

    yield _open
    for store in opened:
        store.close()


@pytest.fixture(scope="module")
def bernoulli(tmp_path_factory: pytest.TempPathFactory, local_embedder: LocalEmbedder
              ) -> Iterator[GraphRAG]:
    """The Bernoulli set ingested once per test module."""
    need(BERNOULLI)
    uri = str(tmp_path_factory.mktemp("bernoulli") / "b.db")
    rag = GraphRAG(uri=uri, graph="bernoulli", embedder=local_embedder)
    rag.add_files([BERNOULLI])
    yield rag
    rag.close()


@pytest.fixture(scope="session")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Ran]:
    """The Bernoulli set ingested by a real `hopgraph ingest` process (the ingest smoke test).

    Returns the environment naming its database and what the process printed. Only other
    processes open this database: a Milvus Lite file stays locked by the process that opened it.
    """
    need(BERNOULLI)
    tmp = tmp_path_factory.mktemp("smoke")
    env = {"HOPGRAPH_URI": str(tmp / "smoke.db"), "HOPGRAPH_GRAPH": "smoke"}
    return env, run_process("ingest", str(BERNOULLI), "--quiet", env=env, cwd=tmp)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 for this test."""
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def llm_client_factory(server: FakeLLMServer, tmp_path: Path
                       ) -> Iterator[Callable[..., LLMClient]]:
    """Build clients against `server`, caching in this test's tmp dir; closed at teardown."""
    made: list[LLMClient] = []

    def _make(**overrides: Any) -> LLMClient:
        values: dict[str, Any] = {
            "model": "fake-model", "base_url": server.url, "api_key": "test-key",
            "cache_path": str(tmp_path / "llm.sqlite"), "retry_base_delay": 0.01,
            "max_retries": 2, "timeout": 5.0,
        }
        values.update(overrides)
        client = LLMClient(LLMSettings(**values))
        made.append(client)
        return client

    yield _make
    for client in made:
        client.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def own_environment(**extra: str) -> dict[str, str]:
    """This environment without LLM or key settings of the user's, plus `extra`."""
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith("HOPGRAPH_LLM") and k not in ("HOPGRAPH_API_KEY",
                                                                "OPENAI_API_KEY")}
    return {**kept, **extra}


@contextlib.contextmanager
def serving(uri: str, *options: str, env: dict[str, str]) -> Iterator[str]:
    """`hopgraph serve` on `uri` in its own process until the block ends; its base URL."""
    port = free_port()
    log = Path(uri).with_suffix(".log")  # a file, not a pipe: the access log would fill one
    with log.open("w") as errors:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "hopgraph"), "serve", "--uri", uri, "--port",
             str(port), *options], env=env, stdout=subprocess.DEVNULL, stderr=errors,
            stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=10):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)  # polling the server's start, not synchronization
        yield base
    finally:
        server.terminate()
        server.wait(timeout=60)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every test that uses the tests' Milvus server is marked `server`, whether or not its
    module says so: `make test` runs `-m server` and `-m "not server"` side by side
    (tests/run.sh), and only the first may start the one server."""
    if "milvus_server" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.server)


# What starts another process or a browser: a test (or a fixture it uses) whose code calls
# one of these is `slow`, outside `make test-fast`.
_SPAWNS = re.compile(r"\b(run_cli|run_process|serving|subprocess\.|Popen|webdriver|"
                     r"multiprocessing|worker\(|ProcessPoolExecutor)")


def _spawns(function: Callable[..., Any] | None) -> bool:
    try:
        return function is not None and bool(_SPAWNS.search(inspect.getsource(function)))
    except (OSError, TypeError):  # no source (a builtin): not ours
        return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the `server` tier, and tests that start a process or a browser themselves or
    through a fixture, are `slow` too: `make test-fast` (-m "not slow") runs the rest.
    Tests slow for their own work carry `@pytest.mark.slow` in their module."""
    for item in items:
        if item.get_closest_marker("slow") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        fixtures = [d.func for defs in (info.name2fixturedefs.values() if info else ())
                    for d in defs]
        if (item.get_closest_marker("server") is not None
                or _spawns(getattr(item, "function", None)) or any(map(_spawns, fixtures))):
            item.add_marker(pytest.mark.slow)


# A report of three pages, one section on each (issue 36: where each passage came from).
SAFETY = ("The battery pack of the Kestrel Probe must be charged at room temperature. "
          "Norrcell cells warm up when they are full, so a pack is never left on a charger "
          "overnight.")
THREE_PAGE_REPORT = {
    "header": "Brightwater Instruments - Field report", "footer": "Confidential",
    "blocks": [
        {"title": "Field report"},
        {"heading": "1. Sales"},
        {"text": "Aurora Fisheries ordered forty Kestrel Probes for the Norwegian coast."},
        {"page_break": True},
        {"heading": "2. Service"},
        {"text": "Halvard Optics repaired the Tern Logger sensors in Oban."},
        {"page_break": True},
        {"heading": "3. Safety"},
        {"text": SAFETY},
    ]}


def write_three_page_report(path: Path) -> Path:
    """THREE_PAGE_REPORT as a PDF at `path` (skips the test when fpdf2 is missing)."""
    pytest.importorskip("fpdf", reason="fpdf2 is missing: pip install -e '.[dev]'")
    from hopgraph.shape import write_report_pdf

    assert write_report_pdf(path, THREE_PAGE_REPORT) == 3
    return path
