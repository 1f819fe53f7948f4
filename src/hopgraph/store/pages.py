"""Reading a whole collection, or every row a filter selects, page by page in primary-key
order: the one paged scan (`scan`), used by `Collections.scan` and `Collections.ids_where`.

A Milvus query iterator pages in primary-key order, so a scan that stopped after some row
can go on with the rows whose id is greater, none given twice or skipped. A server sends no
reply over its gRPC limit (`proxy.grpc.serverMaxSendSize`, 64 MB on Milvus 2.3; 16,384 rows
of vectors from a large graph pass it): such a page fails with RESOURCE_EXHAUSTED
(`too_large`), and the scan goes on from the last row it gave in pages a quarter the size.
pymilvus logs that failure at ERROR before it raises; while a page is read here, that
record is dropped (`_Handled`), as the scan recovers from it. A page refused because the
collection is not loaded (`not_loaded`: released behind the caller's back) is read again
once, after the caller's `reload`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

log = logging.getLogger(__name__)

PAGE = 16384  # rows per query-iterator page: pymilvus allows no more; Lite rescans per page
MIN_PAGE = 64  # the smallest page a scan shrinks to when a reply is over the gRPC limit
_NOT_LOADED = 101  # Milvus's (and Milvus Lite's) code for a read of a collection not loaded
_reading = threading.local()  # whether this thread is reading a page here
_reloading = threading.local()  # whether a refusal as not loaded is handled (`reloadable`)


class _Handled(logging.Filter):
    """Drops pymilvus's ERROR record of a failure the caller recovers from: a page over the
    reply limit read by `pages`, or a read refused as not loaded within `reloadable`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(_reading, "on", False) and "larger than max" in record.getMessage():
            return False
        return not (getattr(_reloading, "on", False) and _refusal(record.getMessage()))


logging.getLogger("pymilvus.decorators").addFilter(_Handled())


@contextmanager
def reloadable() -> Iterator[None]:
    """Within: this thread loads a collection again and reads once more when a read is
    refused as not loaded (`not_loaded`), so pymilvus's ERROR record of the refusal is
    dropped. The read made again is not inside: its failure is logged."""
    before = getattr(_reloading, "on", False)
    _reloading.on = True
    try:
        yield
    finally:
        _reloading.on = before


def scan(client: MilvusClient, collection: str, fields: list[str], consistency: str,
         condition: str = "", page: int = PAGE,
         shrunk: Callable[[int], None] | None = None,
         reload: Callable[[], None] | None = None) -> Iterator[dict[str, Any]]:
    """Every row of a collection that `condition` (a filter expression; "" for all)
    selects, in primary-key order, `page` rows a read; vectors as float32 arrays. A page
    over the server's reply limit is read again from the last row given, in pages a
    quarter the size (down to MIN_PAGE), and `shrunk` is told the new size. A page refused
    as not loaded is read again from there once, after `reload` (if given)."""
    after: str | None = None
    while True:
        try:
            with reloadable() if reload is not None else nullcontext():
                rows = pages(client, collection, fields, page, after, consistency, condition)
                first = next(rows, None)  # the page a refusal as not loaded comes with
            if first is None:
                return
            after = first["id"]
            yield first
            for row in rows:
                after = row["id"]
                yield row
            return
        except Exception as exc:
            if reload is not None and not_loaded(exc):
                reload()
                reload = None
                continue
            if page <= MIN_PAGE or not too_large(exc):
                raise
            page = max(MIN_PAGE, page // 4)
            if shrunk is not None:
                shrunk(page)
            log.info("a page of %s was too large for the server to send; reading on in "
                     "pages of %d rows", collection, page)


def pages(client: MilvusClient, collection: str, fields: list[str], page: int,
          after: str | None, consistency: str, condition: str = ""
          ) -> Iterator[dict[str, Any]]:
    """The rows `condition` selects ("": all) whose id is after `after` (all if None),
    `page` at a time, in primary-key order; vectors as float32 arrays."""
    filters = [f"({condition})"] if condition else []
    if after is not None:
        filters.append(f"id > {json.dumps(after, ensure_ascii=False)}")
    iterator = client.query_iterator(
        collection, batch_size=page, output_fields=fields, consistency_level=consistency,
        filter=" and ".join(filters), strict_float32=True)
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


def not_loaded(exc: BaseException | None) -> bool:
    """Whether Milvus refused a read because the collection is not loaded: released by
    another client, or (Milvus Lite) opened by two threads at once, when the second copy
    of the collection, never loaded, replaces the first."""
    return isinstance(exc, MilvusException) and (exc.code == _NOT_LOADED
                                                 or _refusal(str(exc)))


def _refusal(message: str) -> bool:
    message = message.lower()
    return "not loaded" in message or "call load()" in message or "code=101," in message
