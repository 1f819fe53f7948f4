"""A collection Milvus released behind the store's back (another client released it, or
Milvus Lite opened it twice from two threads and kept the copy never loaded) is loaded
again on the first read it refuses: every kind of read, and deletes, go on (real Milvus
Lite)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from pymilvus import MilvusClient

from hopgraph.errors import StoreError
from hopgraph.store.collections import Collections
from hopgraph.store.lite import connect, disconnect

NAME = "released_rows"


@pytest.fixture
def rows(shared_db: str) -> Iterator[tuple[Collections, MilvusClient]]:
    """Collections reading ten rows, and another client of the same file."""
    ours, other = connect(shared_db, None), connect(shared_db, None)
    if ours.has_collection(NAME):
        ours.drop_collection(NAME)
    ours.create_collection(NAME, dimension=2, primary_field_name="id", id_type="string",
                           max_length=16, auto_id=False)
    ours.insert(NAME, [{"id": f"r{n}", "vector": [1.0, float(n)]} for n in range(10)])
    store = Collections(shared_db, "released", ours)
    yield store, other
    ours.drop_collection(NAME)
    disconnect(shared_db, other)
    disconnect(shared_db, ours)


READS: dict[str, Callable[[Collections], Any]] = {
    "get": lambda s: sorted(r["id"] for r in s.get(NAME, ["r1", "r2"], ["id"])),
    "where": lambda s: sorted(r["id"] for r in s.where(NAME, 'id in ["r3"]', ["id"])),
    "ids_where": lambda s: s.ids_where(NAME, 'id < "r2"'),
    "scan": lambda s: len(list(s.scan(NAME, ["id"]))),
    "count": lambda s: s.count(NAME),
    "search": lambda s: s.search(NAME, np.array([[1.0, 9.0]], dtype=np.float32), 1)[0][0].id,
}
EXPECTED = {"get": ["r1", "r2"], "where": ["r3"], "ids_where": ["r0", "r1"], "scan": 10,
            "count": 10, "search": "r9"}


@pytest.mark.parametrize("read", sorted(READS))
def test_a_read_loads_a_released_collection_again(rows, read: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    store, other = rows
    assert READS[read](store) == EXPECTED[read]  # loaded, and the store knows it
    other.release_collection(NAME)
    assert other.get_load_state(NAME)["state"].name == "NotLoad"
    with caplog.at_level(logging.INFO):
        assert READS[read](store) == EXPECTED[read]
    # pymilvus's ERROR record of the refusal is dropped: the read went on
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_deletes_go_on_after_a_release(rows) -> None:
    store, other = rows
    assert store.count(NAME) == 10
    other.release_collection(NAME)
    store.delete(NAME, ["r0"])
    other.release_collection(NAME)
    store.delete_where(NAME, 'id in ["r1", "r2"]')
    assert sorted(store.ids_where(NAME, 'id != ""')) == [f"r{n}" for n in range(3, 10)]


def test_other_failures_are_not_retried(rows) -> None:
    store, _ = rows
    with pytest.raises(StoreError, match="reading released_rows"):
        store.where(NAME, "no such field == 1", ["id"])
