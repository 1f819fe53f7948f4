"""The bodies of the upload and job routes (pydantic; part of the OpenAPI schema). A job's
view is built by `serve.jobs.Job.view`; these say what it holds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

JobState = Literal["queued", "running", "done", "failed", "cancelled", "interrupted"]
FileState = Literal["queued", "running", "done", "failed", "skipped"]


class JobFileView(BaseModel):
    """One file of an upload: its name (the document id it is stored under) and how far it
    got; `problem` says why it failed or was skipped, or what of it was skipped."""

    name: str
    size: int
    state: FileState
    passages_done: int
    passages_total: int
    problem: str | None


class JobProblem(BaseModel):
    """A file with a problem, and what it was."""

    file: str
    error: str


class JobView(BaseModel):
    """An upload job: its state, progress, the documents it wrote and its problems. Times
    are unix seconds; `rate` is passages stored per second, `eta_s` the seconds left."""

    id: str
    job: str = Field(description="the same as `id`")
    graph: str
    state: JobState
    created: float
    started: float | None
    finished: float | None
    files_total: int
    files_done: int = Field(description="files stored, or failed as bad files")
    passages_total: int = Field(description="of the files read so far")
    passages_done: int
    rate: float | None
    eta_s: float | None
    documents: list[str] = Field(description="the document ids written")
    problems: list[JobProblem]
    files: list[JobFileView]
    error: str | None = Field(description="why the job failed or stopped, when it did")
    extractor: Literal["auto", "offline", "llm"]
    append: bool
    stage: str = Field(description="queued, reading, extracting, storing or ended")
    cancel_requested: bool
    updated: float


class JobsResponse(BaseModel):
    """The most recent jobs of the graphs the key may use, newest first."""

    jobs: list[JobView]


class DocumentCount(BaseModel):
    """A stored document and its passage count."""

    doc_id: str
    passages: int


class DocumentsPage(BaseModel):
    """Stored documents (those whose id holds `q`, in id order) from `offset`, at most
    `limit` (null: all), and how many match in all."""

    documents: list[DocumentCount]
    total: int
    offset: int
    limit: int | None
