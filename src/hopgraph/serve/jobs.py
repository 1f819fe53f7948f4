"""An upload job: the files of one upload, read and stored in a graph one after the other
(`serve.uploads`) by a server's job worker (`serve.job_board`), and its record.

The record is what `GET /jobs/{id}` answers and what the database keeps (`store.jobs`), so
every server of the database sees the job and a restarted one finds it: its state, its
files, its progress, the documents it wrote and the problems it met, plus its owner (host,
process id, and a nonce of the owning board) and a heartbeat. A job whose owner is gone (its
process is dead on this host, or its heartbeat is older than STALE_S) can never end by
itself: whoever reads it records it `interrupted` (`orphaned`, `interrupted`).
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopgraph.progress import ProgressEvent

STATES = ("queued", "running", "done", "failed", "cancelled", "interrupted")
ENDED = frozenset(STATES[2:])
HOST = socket.gethostname()
STALE_S = 60.0  # a live job's owner writes its record at least every HEARTBEAT_S
HEARTBEAT_S = 5.0
PRIVATE = ("owner", "heartbeat")  # in the stored record, not in the API's view
_CUT_SHORT = ("cut short when its server stopped: upload it again to complete it "
              "(`hopgraph check --repair` rolls it back instead)")


class Stopped(Exception):
    """The job was asked to stop: cancelled, or its server is stopping."""


@dataclass
class JobFile:
    """One uploaded file of a job: its name (the document id it is stored under), where it
    waits on disk, and how far it got."""

    name: str
    size: int
    path: Path
    state: str = "queued"  # running, done, failed (a bad file), skipped (never stored)
    passages_done: int = 0
    passages_total: int = 0
    problem: str | None = None

    def view(self) -> dict[str, Any]:
        """The file in a job's record."""
        return {"name": self.name, "size": self.size, "state": self.state,
                "passages_done": self.passages_done, "passages_total": self.passages_total,
                "problem": self.problem}


class Job:
    """A job of this server process. The worker thread changes it through the methods
    below; requests read `view`. Every change bumps `version` (what event streams watch)."""

    def __init__(self, job_id: str, graph: str, files: list[JobFile], extractor: str,
                 append: bool, folder: Path, owner: dict[str, Any], now: float) -> None:
        self.id = job_id
        self.graph = graph
        self.files = files
        self.extractor = extractor
        self.append = append
        self.folder = folder
        self.owner = owner
        self.state, self.stage = "queued", "queued"
        self.created = now
        self.started: float | None = None
        self.finished: float | None = None
        self.updated = now
        self.documents: list[str] = []
        self.problems: list[dict[str, str]] = []
        self.error: str | None = None
        self.stop_as: str | None = None  # "cancelled" or "interrupted", once asked to stop
        self.version = 0
        self._lock = threading.RLock()

    # --- the worker's side ------------------------------------------------------------------

    def _changed(self, now: float | None = None) -> None:
        self.version += 1
        if now is not None:
            self.updated = now

    def begin(self, now: float) -> None:
        """The worker took the job."""
        with self._lock:
            self.state, self.started = "running", now
            self._changed(now)

    def set_stage(self, stage: str) -> None:
        """reading, extracting or storing: what the job does now."""
        with self._lock:
            self.stage = stage
            self._changed()

    def check_stop(self) -> None:
        """Raise `Stopped` if the job was asked to stop."""
        if self.stop_as is not None:
            raise Stopped(self.stop_as)

    def file_read(self, entry: JobFile, passages: int) -> None:
        """A file was read: it holds `passages` passages."""
        with self._lock:
            entry.passages_total = passages
            self._changed()

    def file_failed(self, entry: JobFile, why: str) -> None:
        """A bad file: named in the problems; the others go on."""
        with self._lock:
            entry.state, entry.problem = "failed", why
            self.problems.append({"file": entry.name, "error": why})
            self._changed()

    def file_running(self, entry: JobFile, passages: int) -> None:
        """A file's passages are being stored."""
        with self._lock:
            entry.state = "running"
            entry.passages_total = passages
            entry.passages_done = 0
            self._changed()

    def progress(self, entry: JobFile | None, event: ProgressEvent) -> None:
        """A `ProgressEvent` of the file being read, extracted or stored (None: of every file,
        as the offline extractor reads them); while reading or extracting (not storing: a
        write is finished, `uploads`), stops the job if it was asked to."""
        with self._lock:
            if event.stage == "ingest" and entry is not None:
                entry.passages_done = min(event.done, entry.passages_total or event.done)
            self._changed()
        if event.stage != "ingest":
            self.check_stop()

    def file_done(self, entry: JobFile, documents: list[str], problems: list[str]) -> None:
        """A file is stored; `problems` are its rows or chunks that were skipped."""
        with self._lock:
            entry.state, entry.passages_done = "done", entry.passages_total
            self.documents.extend(d for d in documents if d not in self.documents)
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                entry.problem = f"{problems[0]}{more}"
                self.problems.append({"file": entry.name, "error": entry.problem})
            self._changed()

    def end(self, state: str, error: str | None, now: float) -> None:
        """The job is over; files it never reached are `skipped`."""
        with self._lock:
            for entry in self.files:
                if entry.state in ("queued", "running"):
                    entry.state = "skipped"
                    entry.problem = entry.problem or f"not stored: the job ended {state}"
            self.state = state
            self.error = error
            self.finished = now
            self.stage = "ended"
            self._changed(now)

    # --- the requests' side -----------------------------------------------------------------

    def ask_stop(self, state: str) -> None:
        """Ask the job to stop and end as `state` (the first request wins)."""
        with self._lock:
            if self.stop_as is None:
                self.stop_as = state
                self._changed()

    def view(self, now: float) -> dict[str, Any]:
        """The job as the API shows it (`serve.job_models.JobView`)."""
        with self._lock:
            done = sum(f.passages_done for f in self.files)
            total = sum(f.passages_total for f in self.files)
            until = self.finished or now
            rate = eta = None
            if self.started is not None and done and until > self.started:
                rate = round(done / (until - self.started), 2)
                if self.state == "running" and self.stage == "storing":
                    eta = round(max(total - done, 0) / rate, 1)
            return {"id": self.id, "job": self.id, "graph": self.graph, "state": self.state,
                    "created": self.created, "started": self.started,
                    "finished": self.finished, "files_total": len(self.files),
                    "files_done": sum(f.state in ("done", "failed") for f in self.files),
                    "passages_total": total, "passages_done": done, "rate": rate,
                    "eta_s": eta, "documents": list(self.documents),
                    "problems": [dict(p) for p in self.problems],
                    "files": [f.view() for f in self.files], "error": self.error,
                    "extractor": self.extractor, "append": self.append, "stage": self.stage,
                    "cancel_requested": self.stop_as is not None, "updated": self.updated}

    def record(self, now: float) -> dict[str, Any]:
        """The job as the database keeps it: the view, its owner and a heartbeat."""
        return {**self.view(now), "owner": dict(self.owner), "heartbeat": now}


def public(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record as the API shows it."""
    return {k: v for k, v in record.items() if k not in PRIVATE}


def owner_of(nonce: str) -> dict[str, Any]:
    """The owner a board of this process writes into its jobs' records."""
    return {"host": HOST, "pid": os.getpid(), "nonce": nonce}


def orphaned(record: dict[str, Any], now: float, live: set[str]) -> bool:
    """Whether a queued or running job's owner is gone, so it will never end by itself:
    its board is not among this process's `live` ones and its process is this one or dead
    (on this host), or its heartbeat is older than STALE_S."""
    if record.get("state") in ENDED:
        return False
    owner = record.get("owner") or {}
    if owner.get("nonce") in live:
        return False
    pid = owner.get("pid")
    if owner.get("host") == HOST and (pid == os.getpid() or not process_alive(pid)):
        return True
    return now - float(record.get("heartbeat") or 0) > STALE_S


def interrupted(record: dict[str, Any], now: float) -> dict[str, Any]:
    """The record of a job whose server stopped under it, as it is then kept."""
    owner = record.get("owner") or {}
    files = []
    for entry in record.get("files") or []:
        entry = dict(entry)
        if entry.get("state") == "running":
            entry["state"], entry["problem"] = "failed", _CUT_SHORT
        elif entry.get("state") == "queued":
            entry["state"], entry["problem"] = "skipped", "not stored: its server stopped"
        files.append(entry)
    error = (f"its server (host {owner.get('host')}, process {owner.get('pid')}) stopped "
             "before the job ended; upload the files again: what was stored stays, and a "
             "file cut short is completed")
    return {**record, "state": "interrupted", "stage": "ended", "files": files,
            "error": error, "finished": now, "updated": now, "rate": None, "eta_s": None}


def process_alive(pid: Any) -> bool:
    """Whether process `pid` runs on this host (signal 0 checks without sending)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: alive
        return True
    return True
