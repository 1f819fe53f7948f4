"""Progress of a long write as one kind of event, whoever watches it: the Python API's
`progress=` callback, the CLI's bars and the server's upload jobs all receive a
`ProgressEvent`.

The ingest stages themselves call a plain `(stage, done, total)` function
(`ingest.writer.Progress`): it is all they know. A `Tracker` sits between them and the
watcher, timing each stage from its first call, so the rate and the time left are worked out
once, here, and read the same everywhere. A callable of three arguments (what `progress=`
took before events) is still called as it was (`tracked`).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from hopgraph.ingest.writer import Progress

UNITS = {"extract": "chunks"}  # what a stage counts, when not rows (records) of the input


@dataclass(frozen=True)
class ProgressEvent:
    """Stage `stage` has done `done` of `total` (0: not known, a stream) `unit`s; `rate` is
    units per second since the stage began, `eta_s` the seconds left at that rate (None
    until there is a rate, or with no total); `file` the input it is about, when one."""

    stage: str  # "extract": LLM chunks; "ingest": rows stored
    done: int
    total: int
    unit: str = "rows"
    file: str | None = None
    rate: float | None = None
    eta_s: float | None = None

    @property
    def finished(self) -> bool:
        """Whether the stage is done (a stream's stage never says so)."""
        return self.total > 0 and self.done >= self.total

    def as_dict(self) -> dict[str, Any]:
        """The event as JSON."""
        return asdict(self)


Listener = Callable[[ProgressEvent], None]
OnProgress = Listener | Progress  # what `progress=` takes: events, or (stage, done, total)


class Tracker:
    """A `Progress` (what the ingest stages call) that tells `listener` a `ProgressEvent`,
    with the rate and time left of its stage (timed from the stage's first call on `clock`).
    """

    def __init__(self, listener: Listener, file: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.listener = listener
        self.file = file
        self.clock = clock
        self.started: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self.clock()
        elapsed = now - self.started.setdefault(stage, now)
        rate = done / elapsed if done > 0 and elapsed > 0 else None
        eta = (total - done) / rate if rate and total >= done else None
        self.listener(ProgressEvent(stage, done, total, UNITS.get(stage, "rows"), self.file,
                                    rate, eta))


def tracked(callback: OnProgress | None, file: str | None = None) -> Progress | None:
    """What the ingest stages should call for `callback`: a `Tracker` telling it events, or
    `callback` itself when it takes (stage, done, total) (or is a Tracker already)."""
    if callback is None or isinstance(callback, Tracker) or _takes_three(callback):
        return callback  # type: ignore[return-value]
    return Tracker(callback, file)  # type: ignore[arg-type]


def _takes_three(callback: Callable[..., Any]) -> bool:
    """Whether `callback` wants three positional arguments (the form before events)."""
    try:
        parameters = list(inspect.signature(callback).parameters.values())
    except (TypeError, ValueError):  # some built-ins have no signature: take them as new
        return False
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional and p.default is p.empty for p in parameters) >= 3
