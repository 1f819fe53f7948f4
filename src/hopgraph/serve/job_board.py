"""The upload jobs of one server process: it takes uploads (`submit`), runs them one at a
time on a worker thread (`serve.uploads`), keeps their records in the database
(`store.jobs`) and answers for every job of the database, this process's or not.

A beat thread writes the records of live jobs when they change (once a second at most) and
every HEARTBEAT_S, and takes the cancel requests other servers left for them. Closing it
stops the running job after its file; it and the queued ones end `interrupted`.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hopgraph.config import ServeSettings, cache_dir
from hopgraph.serve.errors import HTTPError, clip
from hopgraph.serve.jobs import (
    ENDED,
    HEARTBEAT_S,
    HOST,
    Job,
    interrupted,
    orphaned,
    owner_of,
    public,
)
from hopgraph.serve.pool import GraphPool
from hopgraph.serve.uploads import Incoming, Stopped, ingest_upload, keep_files, remove_dead_folders
from hopgraph.store.jobs import JobStore

log = logging.getLogger(__name__)

RECENT = 100  # jobs `GET /jobs` lists
KEPT_HERE = 50  # ended jobs of this process kept in memory (the database keeps more)
RETRY_AFTER_S = 30
_LIVE: set[str] = set()  # the nonces of this process's open boards
_STOPPED = {"cancelled": "cancelled on request",
            "interrupted": "its server stopped; upload the files again to finish"}


class JobBoard:
    """This process's upload jobs and the database's record of every job."""

    def __init__(self, pool: GraphPool, store: JobStore, settings: ServeSettings,
                 folder: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.pool = pool
        self.store = store
        self.settings = settings
        self.clock = clock
        self.folder = folder or cache_dir() / "uploads"
        self.nonce = secrets.token_hex(8)
        self.owner = owner_of(self.nonce)
        self.server_exiting: Callable[[], bool] = lambda: False  # set by `app.run`
        self._jobs: dict[str, Job] = {}  # this process's, oldest first
        self._queue: deque[Job] = deque()
        self._lock = threading.Condition()
        self._save_lock = threading.Lock()
        self._saved: dict[str, tuple[int, float]] = {}  # id -> (version, time) last written
        self._reserved = 0  # submissions copying their files
        self._closing = False
        self._threads: list[threading.Thread] = []
        _LIVE.add(self.nonce)

    def submit(self, graph: str, files: list[Incoming], extractor: str, append: bool
               ) -> dict[str, Any]:
        """Queue a job for these files (copied to its folder first); its view. A 429 when
        `max_jobs` are queued or running already."""
        with self._lock:
            if self._closing:
                raise HTTPError(503, "the server is stopping", "upload again once it is back")
            live = sum(job.state not in ENDED for job in self._jobs.values())
            if live + self._reserved >= self.settings.max_jobs:
                raise HTTPError(429, f"{self.settings.max_jobs} upload jobs are queued or "
                                "running on this server already", "wait for one to end (GET "
                                "/jobs), or raise --max-jobs (HOPGRAPH_MAX_JOBS)",
                                headers={"Retry-After": str(RETRY_AFTER_S)})
            self._reserved += 1
        job_id = secrets.token_hex(8)
        folder = self.folder / f"{HOST}-{os.getpid()}-{self.nonce}-{job_id}"
        try:
            entries = keep_files(folder, files)
            job = Job(job_id, graph, entries, extractor, append, folder, self.owner,
                      self.clock())
            self._save(job, strict=True)
            with self._lock:
                if self._closing:  # closed while the files were copied: never run
                    raise HTTPError(503, "the server is stopping", "upload again later")
                self._jobs[job_id] = job
                self._queue.append(job)
                self._lock.notify_all()
                self._start()
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            with self._lock:
                self._reserved -= 1
        self._tidy()
        return job.view(self.clock())

    # --- answering --------------------------------------------------------------------------

    def own(self, job_id: str) -> Job | None:
        """A job of this process."""
        return self._jobs.get(job_id)

    def view(self, job_id: str) -> dict[str, Any] | None:
        """A job of the database as the API shows it (None: no such job)."""
        job = self._jobs.get(job_id)
        if job is not None:
            return job.view(self.clock())
        record = self.store.get(job_id)
        return None if record is None else public(self.settled(record))

    def jobs(self, visible: Callable[[str], bool]) -> list[dict[str, Any]]:
        """The most recent jobs of the graphs `visible` says yes to, newest first."""
        now = self.clock()
        with self._lock:
            own = list(self._jobs.values())
        found = {job.id: job.view(now) for job in own}
        for record in self.store.all():
            if record["id"] not in found:
                found[record["id"]] = public(self.settled(record))
        shown = [view for view in found.values() if visible(view["graph"])]
        return sorted(shown, key=lambda view: view["created"], reverse=True)[:RECENT]

    def settled(self, record: dict[str, Any]) -> dict[str, Any]:
        """A stored record, recorded `interrupted` first if its owner is gone."""
        if not orphaned(record, self.clock(), _LIVE):
            return record
        record = interrupted(record, self.clock())
        try:
            self.store.put(record)
            self.store.forget([record["id"]])
        except Exception as exc:  # the next reader records it
            log.warning("could not record job %s as interrupted: %s", record["id"], exc)
        return record

    def cancel(self, job_id: str) -> dict[str, Any] | None:
        """Cancel a job: a queued one of this process at once, a running one at its next
        batch, another server's when it next looks (None: no such job; 409: ended)."""
        job = self._jobs.get(job_id)
        if job is None:
            record = self.store.get(job_id)
            if record is None:
                return None
            record = self.settled(record)
            _refuse_ended(record)
            self.store.ask_cancel(job_id)
            return {**public(record), "cancel_requested": True}
        with self._lock:
            _refuse_ended(job.view(self.clock()))
            queued = job in self._queue
            if queued:
                self._queue.remove(job)
            job.ask_stop("cancelled")
        if queued:
            self._finish(job, "cancelled", _STOPPED["cancelled"])
        else:
            self._save(job)
        return job.view(self.clock())

    def stopping(self) -> bool:
        """Whether this server is stopping (event streams then end)."""
        return self._closing or self.server_exiting()

    # --- starting and stopping --------------------------------------------------------------

    def sweep(self) -> None:
        """At start: record the jobs of dead owners `interrupted`, and remove the upload
        folders that dead processes of this host left behind."""
        for record in self.store.all():
            self.settled(record)
        remove_dead_folders(self.folder, _LIVE)

    def close(self, wait_s: float = 120.0) -> None:
        """Stop: queued jobs end `interrupted` now, the running one after its file."""
        with self._lock:
            self._closing = True
            queued, self._queue = list(self._queue), deque()
            for job in self._jobs.values():
                if job.state not in ENDED:
                    job.ask_stop("interrupted")
            self._lock.notify_all()
        for job in queued:
            self._finish(job, "interrupted", _STOPPED["interrupted"])
        for thread in self._threads:
            thread.join(timeout=wait_s)
        _LIVE.discard(self.nonce)

    def _start(self) -> None:
        """The worker and beat threads, on the first job (under the lock)."""
        if not self._threads:
            for target, name in ((self._work, "hopgraph-jobs"), (self._beat, "hopgraph-beat")):
                thread = threading.Thread(target=target, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    # --- the worker -------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closing:
                    self._lock.wait()
                if not self._queue:
                    return
                job = self._queue.popleft()
            self._run(job)

    def _run(self, job: Job) -> None:
        """Run one job to its end, whatever happens."""
        job.begin(self.clock())
        self._save(job)
        state, error = "done", None
        try:
            with self.pool.use(job.graph) as service:
                ingest_upload(job, service)
            if all(entry.state == "failed" for entry in job.files):
                state, error = "failed", "no file could be stored: see `problems`"
        except Stopped as stop:
            state = str(stop)
            error = _STOPPED.get(state, state)
        except HTTPError as exc:  # the graph was dropped
            state, error = "failed", self.pool.hide(str(exc.detail))
        except Exception as exc:  # logged whole; told (to write keys) without the places
            log.exception("upload job %s failed", job.id)
            state, error = "failed", clip(self.pool.hide(str(exc) or type(exc).__name__), 1000)
        self._finish(job, state, error)

    def _finish(self, job: Job, state: str, error: str | None) -> None:
        shutil.rmtree(job.folder, ignore_errors=True)  # gone before the job reads as ended
        job.end(state, error, self.clock())
        self._save(job)
        try:
            self.store.forget([job.id])
        except Exception as exc:
            log.warning("could not clear job %s's cancel request: %s", job.id, exc)
        log.info("upload job %s %s: %d documents, %d problems", job.id, state,
                 len(job.documents), len(job.problems))

    def _beat(self) -> None:
        """Write changed records (once a second at most) and heartbeats; take the cancel
        requests other servers left for this process's jobs."""
        while True:
            with self._lock:
                live = [job for job in self._jobs.values() if job.state not in ENDED]
                if self._closing and not live and not self._queue:
                    return
                self._lock.wait(timeout=1.0)
            now = self.clock()
            for job in live:
                version, at = self._saved.get(job.id, (-1, 0.0))
                if job.version != version or now - at >= HEARTBEAT_S:
                    self._save(job)
            try:
                for job_id in self.store.cancels([job.id for job in live]):
                    if self._jobs[job_id].state not in ENDED:
                        self.cancel(job_id)
            except Exception as exc:
                log.warning("could not take the cancel requests of jobs: %s", exc)

    def _save(self, job: Job, strict: bool = False) -> None:
        """Write the job's record (one writer at a time: the version read under the lock
        only grows); a failure is logged (the beat writes it again) unless `strict`."""
        with self._save_lock:
            now = self.clock()
            version = job.version
            try:
                self.store.put(job.record(now))
                self._saved[job.id] = (version, now)
            except Exception as exc:
                if strict:
                    raise
                log.warning("could not record job %s: %s", job.id, exc)

    def _tidy(self) -> None:
        """Forget ended jobs of this process beyond KEPT_HERE (the database keeps them), and
        prune the database's oldest records."""
        with self._lock:
            ended = [j for j in self._jobs.values() if j.state in ENDED]
            for job in ended[:max(len(ended) - KEPT_HERE, 0)]:
                del self._jobs[job.id]
                self._saved.pop(job.id, None)
            live = set(self._jobs)
        try:
            self.store.prune(live)
        except Exception as exc:
            log.warning("could not prune old job records: %s", exc)


def _refuse_ended(view: dict[str, Any]) -> None:
    if view["state"] in ENDED:
        raise HTTPError(409, f"job {view['id']} has ended ({view['state']})",
                        "nothing to cancel; GET /jobs/{id} shows how it ended")
