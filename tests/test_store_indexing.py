"""Index builds in the background (store/indexing.py): asks made during a round merge into
the next, a cancel ends the round under way, and waiting returns once nothing is asked."""

from __future__ import annotations

import threading
from collections.abc import Callable

from hopgraph.store.indexing import Indexing


class HeldBuilds:
    """A `build` whose first round waits until `release` is set; rounds are recorded with
    whether `stop()` was true when the round ended."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.rounds: list[tuple[dict[str, int], bool]] = []

    def __call__(self, rows: dict[str, int], stop: Callable[[], bool]) -> bool:
        if not self.rounds and not self.started.is_set():
            self.started.set()
            assert self.release.wait(60), "the test never released the round"
        self.rounds.append((rows, stop()))
        return not stop()


def test_asks_during_a_round_merge_into_the_next() -> None:
    builds, landed = HeldBuilds(), threading.Event()
    indexing = Indexing(builds, landed.set)
    indexing.request({"relations": 10})
    assert builds.started.wait(60) and indexing.busy
    indexing.request({"entities": 5})
    indexing.request({"passages": 3, "entities": 6})  # the latest rows of a kind win
    builds.release.set()
    assert indexing.wait(60) and not indexing.busy
    assert builds.rounds == [({"relations": 10}, False),
                             ({"entities": 6, "passages": 3}, False)]
    assert landed.is_set()


def test_a_cancel_ends_the_round_and_forgets_what_was_asked() -> None:
    builds, landed = HeldBuilds(), threading.Event()
    indexing = Indexing(builds, landed.set)
    indexing.request({"relations": 10})
    assert builds.started.wait(60)
    indexing.request({"entities": 5})
    indexing.cancel()
    builds.release.set()
    assert indexing.wait(60)
    assert builds.rounds == [({"relations": 10}, True)]  # told to stop; no second round
    assert not landed.is_set()  # nothing saved
    indexing.request({"entities": 7})  # a later ask builds again
    assert indexing.wait(60) and builds.rounds[-1] == ({"entities": 7}, False)


def test_a_failing_round_leaves_the_thread_able_to_go_on() -> None:
    calls: list[dict[str, int]] = []

    def build(rows: dict[str, int], stop: Callable[[], bool]) -> bool:
        calls.append(rows)
        raise RuntimeError("disk full")

    indexing = Indexing(build)
    indexing.request({"relations": 1})
    assert indexing.wait(60)
    indexing.request({"relations": 2})
    assert indexing.wait(60) and calls == [{"relations": 1}, {"relations": 2}]
