"""Reading a whole collection page by page, in primary-key order (`Collections.scan`).

A Milvus query iterator pages in primary-key order, so a scan that stopped after some row
can go on with the rows whose id is greater, none given twice or skipped. A server sends no
reply over its gRPC limit (`proxy.grpc.serverMaxSendSize`, 64 MB on Milvus 2.3): such a
page fails with RESOURCE_EXHAUSTED (`too_large`), and the scan reads on in smaller pages.
pymilvus logs that failure at ERROR before it raises; while a page is read here, that
record is dropped (`_Handled`), as the scan recovers from it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

from pymilvus import MilvusClient

_reading = threading.local()  # whether this thread is reading a page here


class _Handled(logging.Filter):
    """Drops pymilvus's ERROR record of a page over the reply limit read by `pages`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(_reading, "on", False) and "larger than max" in record.getMessage())


logging.getLogger("pymilvus.decorators").addFilter(_Handled())


def pages(client: MilvusClient, collection: str, fields: list[str], page: int,
          after: str | None, consistency: str) -> Iterator[dict[str, Any]]:
    """The rows of a collection whose id is after `after` (all if None), `page` at a time,
    in primary-key order; vectors as float32 arrays."""
    iterator = client.query_iterator(
        collection, batch_size=page, output_fields=fields, consistency_level=consistency,
        filter="" if after is None else f"id > {json.dumps(after, ensure_ascii=False)}",
        strict_float32=True)
    try:
        while True:
            _reading.on = True
            try:
                rows = iterator.next()
            finally:
                _reading.on = False
            if not rows:
                return
            yield from (dict(row) for row in rows)
    finally:
        iterator.close()


def too_large(exc: BaseException) -> bool:
    """Whether a read failed because its reply was over the server's gRPC message limit
    (pymilvus passes the gRPC error on as it is: status RESOURCE_EXHAUSTED)."""
    code = getattr(exc, "code", None)
    status = code() if callable(code) else code
    return getattr(status, "name", None) == "RESOURCE_EXHAUSTED" or \
        "larger than max" in str(exc)
