"""Nearest-neighbour indexes built in the background, off the write path.

A write that grows a kind of vectors past the index threshold (`store.ann`) used to build
or extend its index before returning: at a million relations that was most of the ingest.
Now the write asks for the indexes (`Indexing.request`, with each kind's rows as the write
left them) and returns once its rows are stored; one thread per opened graph builds them.
Requests made while a build runs are merged: the next round takes the latest rows, so a
stream of writes costs one build per round, not one per write. Searches meanwhile use the
index that matches (its tail searched exactly) or search exactly; when a round saved an
index, `landed` is called so that the current retriever takes it up.

`GraphRAG.close` waits for the builds (so a one-shot ingest leaves its graph indexed), and
so does `wait_indexed`; `cancel` (a graph dropped, or closed by a server that evicts it)
ends a build at its next slice of rows. The thread is a daemon: a process that ends without
closing leaves the old index or none, never half of one (`store.atomic`), and the next
process that opens the graph asks for the build again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Indexing:
    """One background thread that runs `build(rows by kind, stop)` for what was asked;
    `build` checks `stop()` between slices of rows and says whether an index was saved,
    and then `landed()` is called."""

    def __init__(self, build: Callable[[dict[str, int], Callable[[], bool]], bool],
                 landed: Callable[[], None] | None = None) -> None:
        self._build = build  # (rows by kind, whether to stop) -> whether an index was saved
        self.landed = landed
        self._changed = threading.Condition()
        self._wanted: dict[str, int] | None = None  # the next round's rows, by kind
        self._thread: threading.Thread | None = None  # set while a round runs or waits
        self._stop = False  # `cancel`: the round under way ends at its next slice

    def request(self, rows: dict[str, int]) -> None:
        """Bring the indexes up to these rows, in the background (after the round under
        way, if any: requests made meanwhile merge, the latest rows win)."""
        with self._changed:
            self._wanted = {**(self._wanted or {}), **rows}  # a kind not named stays asked
            self._stop = False
            if self._thread is not None:
                return
            thread = threading.Thread(target=self._rounds, name="hopgraph-index",
                                      daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # no thread to be had: searches stay exact
                self._wanted = None
                log.warning("could not start building the nearest-neighbour indexes (%s)",
                            exc)
                return
            self._thread = thread

    def cancel(self) -> None:
        """Forget what was asked, and end the round under way at its next slice of rows
        (nothing half built is saved)."""
        with self._changed:
            self._wanted = None
            self._stop = True

    @property
    def busy(self) -> bool:
        """Whether a round runs or is asked for."""
        with self._changed:
            return self._thread is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no round runs or is asked for (at most `timeout` s); whether so."""
        if threading.current_thread() is self._thread:
            return False  # `landed` asking: the round is its own
        with self._changed:
            return self._changed.wait_for(lambda: self._thread is None, timeout)

    def _rounds(self) -> None:
        while True:  # (`request` set `_thread` before this could take the condition)
            with self._changed:
                rows, self._wanted = self._wanted, None
                if rows is None:
                    self._thread = None
                    self._changed.notify_all()
                    return
            try:
                saved = self._build(rows, lambda: self._stop)
                if saved and self.landed is not None:
                    self.landed()
            except Exception:  # an index costs only speed: searches stay exact
                log.exception("building the nearest-neighbour indexes failed; searching "
                              "those vectors exactly")
