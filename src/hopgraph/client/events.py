"""`POST /ask` read as typed events, whichever way the server answered: a Server-Sent Events
stream (`evidence`, `token`..., then `done` or `error`) when it has an LLM, or one JSON object
(`answer` null, `message`, `passages`) when it has none. Pure: both clients feed lines in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hopgraph.client.errors import ConnectionFailed, api_error, error_from_reply, unexpected_reply
from hopgraph.client.results import passage_hits
from hopgraph.errors import UsageError
from hopgraph.records import Answer, PassageHit, Retrieval


@dataclass(frozen=True)
class Evidence:
    """The passages the answer is written from, numbered from 1 by its citations [n]."""

    passages: list[PassageHit]


@dataclass(frozen=True)
class Token:
    """A piece of the answer, as the LLM wrote it."""

    text: str


@dataclass(frozen=True)
class Done:
    """The answer is complete; `usage` is the server's LLM token usage (its running totals,
    as the server reports them)."""

    usage: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class NoAnswer:
    """The server has no LLM, so no answer follows the evidence; `message` says how to give
    it one."""

    message: str


AskEvent = Evidence | Token | Done | NoAnswer


def answer_without_llm(status: int, content: bytes, where: str) -> list[AskEvent]:
    """The events of a JSON reply to `/ask`: an error raised, else the evidence and
    `NoAnswer`."""
    if status >= 400:
        raise error_from_reply(status, content, where)
    try:
        body = json.loads(content)
        return [Evidence(passage_hits(body["passages"])), NoAnswer(str(body["message"]))]
    except (ValueError, TypeError, KeyError) as exc:
        raise unexpected_reply(where, f"an /ask reply that is neither events nor "
                                      f"{{passages, message}} ({exc!r})") from exc


class EventReader:
    """Server-Sent Events, fed line by line, as `AskEvent`s: an `error` event is raised as
    the server's error would be, and a stream that ends before `done` is a
    `ConnectionFailed` (`end()`)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.finished = False
        self._name = ""
        self._data: list[str] = []

    def line(self, text: str) -> AskEvent | None:
        """Take one line (without its line break); an event when `text` ends one."""
        if text == "":
            name, data = self._name or "message", "\n".join(self._data)
            self._name, self._data = "", []
            return self._event(name, data) if data else None
        if text.startswith(":"):  # a comment (keep-alive)
            return None
        key, _, value = text.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            self._name = value
        elif key == "data":
            self._data.append(value)
        return None

    def end(self) -> None:
        """The stream is over: a ConnectionFailed unless it ended with `done`."""
        if not self.finished:
            raise ConnectionFailed("the answer stream ended before its `done` event",
                                   where=self.where,
                                   fix="ask again; if it keeps failing, see the server's log")

    def _event(self, name: str, data: str) -> AskEvent | None:
        try:
            payload: Any = json.loads(data)
            if name == "evidence":
                return Evidence(passage_hits(payload["passages"]))
            if name == "token":
                return Token(str(payload["text"]))
            if name == "done":
                self.finished = True
                return Done({str(k): int(v) for k, v in (payload.get("usage") or {}).items()})
            if name == "error":
                error = api_error(payload.get("error"), None, self.where)
            else:
                return None  # an event of a newer server: not this client's to read
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise unexpected_reply(self.where, f"a {name!r} event that cannot be read "
                                               f"({exc!r})") from exc
        self.finished = True  # raised outside the try: an InvalidRequest is a ValueError too
        raise error


class AnswerBuilder:
    """Joins the events of one `/ask` into a `hopgraph.Answer` (what `answer()` returns)."""

    def __init__(self, question: str, method: str | None, where: str) -> None:
        self.question = question
        self.method = method
        self.where = where
        self.passages: list[PassageHit] = []
        self.pieces: list[str] = []
        self.usage: dict[str, int] = {}
        self.missing: str | None = None

    def add(self, event: AskEvent) -> None:
        """Take one event."""
        if isinstance(event, Evidence):
            self.passages = event.passages
        elif isinstance(event, Token):
            self.pieces.append(event.text)
        elif isinstance(event, Done):
            self.usage = event.usage
        else:
            self.missing = event.message

    def answer(self) -> Answer:
        """The answer; a UsageError when the server has no LLM (as `GraphRAG.ask` without
        one; the `NoAnswer` event's message says more). Its retrieval's `method` is the one
        asked for, "" for the server's default (the stream does not name it)."""
        if self.missing is not None:
            raise UsageError("the server has no LLM to write an answer", where=self.where,
                             fix="start it with `hopgraph serve --llm MODEL` (docs/llm.md); "
                                 "`ask()` or `retrieve()` give the evidence without one")
        retrieval = Retrieval(self.question, self.method or "", self.passages)
        return Answer(self.question, "".join(self.pieces), retrieval, self.usage)
