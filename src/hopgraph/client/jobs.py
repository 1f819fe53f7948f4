"""Uploads and their jobs as `Call`s: `POST /uploads` (files as multipart form data, read
from disk here), `GET /jobs`, `GET` and `DELETE /jobs/{id}`. Replies are the server's job
views as dicts (docs/server.md, "Uploads and jobs"); `Client` and `AsyncClient` send them
and poll a job until it ends (`ENDED`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hopgraph.client.calls import Call, segment
from hopgraph.client.results import json_object
from hopgraph.errors import UsageError
from hopgraph.ingest.extract import EXTRACTORS

ENDED = frozenset({"done", "failed", "cancelled", "interrupted"})  # as `serve.jobs.ENDED`
POLL_S = 0.5  # between looks at a job that has not ended
FileLike = str | Path | tuple[str, bytes]


def file_part(item: FileLike) -> tuple[str, bytes]:
    """(name, content) of one file to upload: a path read from disk, or a pair as given."""
    if isinstance(item, tuple):
        name, content = item
        if not isinstance(name, str) or not isinstance(content, bytes):
            raise UsageError("a file to upload is a path or a (name, bytes) pair",
                             fix="e.g. client.upload(['notes.txt', ('a.md', b'# A')])")
        return name, content
    path = Path(item)
    try:
        return path.name, path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}",
                         fix="give the path of a file that exists") from exc


def upload(prefix: str, files: Iterable[FileLike], extractor: str, append: bool
           ) -> Call[dict[str, Any]]:
    """`POST /uploads` of the graph at `prefix`: the job, just queued (202)."""
    if extractor not in EXTRACTORS:
        raise UsageError(f"extractor must be one of {', '.join(EXTRACTORS)}, got "
                         f"{extractor!r}")
    parts = tuple(file_part(item) for item in files)
    if not parts:
        raise UsageError("nothing to upload", fix="give one file or more")
    return Call("POST", f"{prefix}/uploads", json_object, files=parts,
                form={"extractor": extractor, "append": "true" if append else "false"})


def job(job_id: str) -> Call[dict[str, Any]]:
    """`GET /jobs/{id}`: one job's view."""
    return Call("GET", f"/jobs/{segment(job_id)}", json_object)


def jobs() -> Call[list[dict[str, Any]]]:
    """`GET /jobs`: the most recent jobs of the graphs the key may use, newest first."""
    return Call("GET", "/jobs", _job_list)


def cancel(job_id: str) -> Call[dict[str, Any]]:
    """`DELETE /jobs/{id}`: the job, asked to stop (it finishes the file it is storing)."""
    return Call("DELETE", f"/jobs/{segment(job_id)}", json_object)


def ended(view: dict[str, Any]) -> bool:
    """Whether a job view is of a job that has ended."""
    return view.get("state") in ENDED


def timed_out(view: dict[str, Any], timeout: float) -> TimeoutError:
    """The error for a job still running after `timeout` seconds."""
    return TimeoutError(f"job {view.get('id')} is still {view.get('state')} after "
                        f"{timeout:g} s ({view.get('files_done')} of "
                        f"{view.get('files_total')} files)")


def _job_list(body: Any) -> list[dict[str, Any]]:
    found = json_object(body)["jobs"]
    if not isinstance(found, list):
        raise TypeError("jobs is not a list")
    return [json_object(item) for item in found]
