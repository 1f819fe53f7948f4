"""The one paged scan (`store.pages.scan`): a filter and the pages compose, every selected row
once, in primary-key order, whatever the page size (real Milvus Lite rows)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hopgraph.store.collections import Collections
from hopgraph.store.lite import connect, disconnect
from hopgraph.store.pages import scan

ROWS = 1000


@pytest.fixture
def numbered(shared_db: str) -> Iterator[tuple[object, str]]:
    client = connect(shared_db, None)
    name = "pages_numbered"
    if client.has_collection(name):
        client.drop_collection(name)
    client.create_collection(name, dimension=2, primary_field_name="id", id_type="string",
                             max_length=16, auto_id=False)
    client.insert(name, [{"id": f"r{n:04d}", "vector": [1.0, float(n)], "n": n}
                         for n in range(ROWS)])
    yield client, name
    client.drop_collection(name)
    disconnect(shared_db, client)


@pytest.mark.parametrize("page", [64, 100, 16384])
def test_a_filtered_scan_gives_each_selected_row_once_in_order(numbered, page: int) -> None:
    client, name = numbered
    got = [row["id"] for row in scan(client, name, ["id"], "Strong", 'id >= "r0500"',
                                     page=page)]
    assert got == [f"r{n:04d}" for n in range(500, ROWS)]
    everything = [row["id"] for row in scan(client, name, ["id"], "Strong", page=page)]
    assert everything == [f"r{n:04d}" for n in range(ROWS)]


def test_ids_where_is_the_same_scan(numbered, shared_db: str) -> None:
    client, name = numbered
    ids = Collections(shared_db, "pages", client).ids_where(name, 'id < "r0010"')
    assert ids == [f"r{n:04d}" for n in range(10)]
