"""Progress events (`hopgraph.progress`): one shape for the Python API, the CLI bars and the
server's jobs; the rate and time left worked out once; the older three-argument callbacks
still called as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopgraph.cli.common import Bars
from hopgraph.progress import ProgressEvent, Tracker, tracked


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_tracker_times_each_stage_from_its_first_call() -> None:
    clock, seen = Clock(), []
    tracker = Tracker(seen.append, file="a.txt", clock=clock)
    tracker("ingest", 0, 100)
    clock.now += 10
    tracker("ingest", 50, 100)
    tracker("extract", 0, 4)  # another stage has a clock of its own
    clock.now += 2
    tracker("extract", 1, 4)
    first, half, _, chunk = seen
    assert (first.rate, first.eta_s, first.finished) == (None, None, False)
    assert (half.rate, half.eta_s, half.file, half.unit) == (5.0, 10.0, "a.txt", "rows")
    assert (chunk.rate, chunk.eta_s, chunk.unit) == (0.5, 6.0, "chunks")
    assert ProgressEvent("ingest", 3, 3).finished and not ProgressEvent("ingest", 3, 0).finished
    assert json.loads(json.dumps(half.as_dict()))["rate"] == 5.0


def test_tracked_wraps_listeners_and_keeps_three_argument_callbacks() -> None:
    calls: list[tuple[str, int, int]] = []

    def old(stage: str, done: int, total: int) -> None:
        calls.append((stage, done, total))

    events: list[ProgressEvent] = []
    assert tracked(None) is None
    assert tracked(old) is old
    varargs = lambda *args: None  # noqa: E731
    assert tracked(varargs) is varargs  # any call taking three arguments is an old callback
    wrapped = tracked(events.append)
    assert isinstance(wrapped, Tracker) and tracked(wrapped) is wrapped
    wrapped("ingest", 1, 2)
    assert events[0].stage == "ingest" and (events[0].done, events[0].total) == (1, 2)
    bars = Bars(interactive=False)
    assert isinstance(tracked(bars), Tracker)  # the bars take events


@pytest.mark.slow
def test_the_python_api_tells_events_and_still_calls_old_callbacks(
        open_graph, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"passage": f"Town {i} lies on river {i % 3}.",
                                        "triplets": [[f"Town {i}", "lies on",
                                                      f"River {i % 3}"]]}) + "\n"
                            for i in range(7)), encoding="utf-8")
    notes = tmp_path / "notes.txt"
    notes.write_text("Ada Lovelace worked with Charles Babbage in London.\n", encoding="utf-8")
    rag = open_graph("progress")
    events: list[ProgressEvent] = []
    rag.add_files([rows, notes], progress=events.append)
    stored = [e for e in events if e.stage == "ingest"]
    assert stored[0].done == 0 and stored[-1].finished and stored[-1].total == 8
    old: list[tuple[str, int, int]] = []
    rag.add([{"passage": "Basel lies on the Rhine."}],
            progress=lambda stage, done, total: old.append((stage, done, total)))
    assert old[-1] == ("ingest", 1, 1)


def test_the_bars_read_events_and_the_older_values(capsys: pytest.CaptureFixture[str]) -> None:
    bars = Bars(interactive=False, units={"extract": "chunks"})
    bars(ProgressEvent("extract", 0, 2, "chunks"))
    bars(ProgressEvent("extract", 2, 2, "chunks"))
    bars("ingest", 3, 3)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("extract: 2 chunks in ") and lines[1].startswith(
        "ingest: 3 rows in ")
