"""Upload jobs kept in the database, so every server of it sees them and a restarted one
finds what it was doing (`serve.jobs` runs them).

One collection per database (`hopgraph_jobs`), like the API keys (`store.keys`): one row per
job, its id the job's and its value the job's record as JSON (its graph, state, files,
progress, owner and heartbeat). A request to cancel a job that another server runs is a row
of its own (`cancel:<job id>`), written by whoever asks and read by the job's owner: a fact
added, never a record read, changed and written back by two processes at once.
"""

from __future__ import annotations

import json
from typing import Any

from hopgraph.errors import StoreError
from hopgraph.store import schema
from hopgraph.store.collections import Collections

COLLECTION = "hopgraph_jobs"
CANCEL = "cancel:"  # the id prefix of a cancel request's row
KEEP = 200  # job records kept: older ended ones go when a new job is recorded
_CUTTABLE = ("documents", "problems", "files")  # lists a record too large is cut from
_NO_VECTOR = [0.0, 1.0]  # Milvus needs a vector field; these rows are found by id


class JobStore:
    """The job records of the database `collections` is connected to."""

    def __init__(self, collections: Collections) -> None:
        self.rows = collections
        self._ready = False

    def _exists(self, create: bool = False) -> bool:
        """Whether the jobs collection exists (made now if `create`)."""
        if not self._ready:
            self._ready = self.rows.has_collection(COLLECTION)
            if not self._ready and create:
                self.rows.create_collection(COLLECTION, schema.create_jobs)
                self._ready = True
        return self._ready

    def put(self, record: dict[str, Any]) -> None:
        """Write a job's record (replacing the one of the same id)."""
        self._exists(create=True)
        self.rows.upsert(COLLECTION, [{"id": record["id"], "value": encoded(record),
                                       "vector": _NO_VECTOR}])

    def get(self, job_id: str) -> dict[str, Any] | None:
        """A job's record, read strong (another server may have just written it)."""
        if not self._exists() or job_id.startswith(CANCEL):
            return None
        rows = self.rows.get(COLLECTION, [job_id], ["id", "value"], strong=True)
        return json.loads(rows[0]["value"]) if rows else None

    def all(self) -> list[dict[str, Any]]:
        """Every job record, newest first (read strong)."""
        if not self._exists():
            return []
        rows = self.rows.where(COLLECTION, 'id != ""', ["id", "value"])
        records = [json.loads(row["value"]) for row in rows
                   if not str(row["id"]).startswith(CANCEL)]
        return sorted(records, key=lambda r: r.get("created") or 0, reverse=True)

    def ask_cancel(self, job_id: str) -> None:
        """Ask the server running `job_id` to cancel it (it looks every few seconds)."""
        self._exists(create=True)
        self.rows.upsert(COLLECTION, [{"id": CANCEL + job_id, "value": "{}",
                                       "vector": _NO_VECTOR}])

    def cancels(self, job_ids: list[str]) -> set[str]:
        """Which of these jobs someone asked to cancel."""
        if not job_ids or not self._exists():
            return set()
        rows = self.rows.get(COLLECTION, [CANCEL + j for j in job_ids], ["id"], strong=True)
        return {str(row["id"])[len(CANCEL):] for row in rows}

    def forget(self, job_ids: list[str], keep_records: bool = True) -> None:
        """Delete the cancel requests of these jobs (and, unless `keep_records`, the jobs)."""
        if job_ids and self._exists():
            ids = [CANCEL + j for j in job_ids] + ([] if keep_records else job_ids)
            self.rows.delete(COLLECTION, ids)

    def prune(self, live: set[str]) -> int:
        """Delete the oldest ended jobs beyond the newest KEEP (never one in `live`, or one
        still queued or running); returns how many went."""
        records = self.all()
        old = [r["id"] for r in records[KEEP:]
               if r["id"] not in live and r.get("state") not in ("queued", "running")]
        self.forget(old, keep_records=False)
        return len(old)


def encoded(record: dict[str, Any]) -> str:
    """A record as JSON that fits the value field: when too long, its longest list is cut
    in half (the count cut is kept as `<list>_cut`) until it fits."""
    record = dict(record)
    for _ in range(64):
        text = json.dumps(record, ensure_ascii=False)
        if len(text.encode("utf-8")) <= schema.JOB_VALUE_MAX:
            return text
        longest = max(_CUTTABLE, key=lambda name: len(json.dumps(record.get(name) or [])))
        items = list(record.get(longest) or [])
        if not items:
            break
        keep = len(items) // 2
        record[longest] = items[:keep]
        record[f"{longest}_cut"] = int(record.get(f"{longest}_cut", 0)) + len(items) - keep
    raise StoreError(f"job {record.get('id')}'s record does not fit in "
                     f"{schema.JOB_VALUE_MAX} bytes", fix="upload fewer files per job")
