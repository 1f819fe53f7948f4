"""Request bodies, read before the framework reads them, so that every body it could not read
gets the project's error body and the documented status rather than the framework's
`400 "There was an error parsing the body"`.

- JSON: standard JSON text only (no NaN or Infinity, no lone surrogate: 422), nested at most
  MAX_DEPTH levels (422 naming the place where it goes deeper; Python's own parser gives up
  somewhere near a thousand, and where depends on the stack); a body that is not JSON is a
  400.
- Forms (uploads): parsed with the route's limits (`form_limits`), so more files than the
  route takes is a 422 naming the limit, a text field over the parser's part size a 413,
  and an empty text field a 422 (the framework would take `extractor=` for the default).

`CheckedRoute` does it, as the route class of every API router; the framework then finds the
body already read (Starlette keeps it on the request).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from fastapi import params
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from hopgraph.serve.errors import ECHO_CHARS, HTTPError, clip

MAX_DEPTH = 64  # levels of JSON nesting (a `where` filter needs two per level, and has 10)
# Starlette's multipart parser, unless a route's `form_limits` say otherwise.
PARSER_LIMITS = {"max_files": 1000, "max_fields": 1000, "max_part_size": 1024 * 1024}
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[][{},]')
_FIX = "see the request's schema at /openapi.json"
_STANDARD = "send standard JSON text (RFC 8259)"


class CheckedRoute(APIRoute):
    """An API route whose body is read and checked here first (see the module)."""

    files_fix = "send fewer files per request"  # what to do about too many files

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The framework's handler, after the body is read and checked."""
        handle = super().get_route_handler()
        form = self.body_field is not None and isinstance(self.body_field.field_info,
                                                          params.Form)
        limits = {**PARSER_LIMITS, **self.form_limits}
        fields = {field.alias for field in self.dependant.body_params}

        async def checked(request: Request) -> Response:
            try:
                if form:
                    await self._read_form(request, limits, fields)
                elif request.method in ("POST", "PUT", "PATCH"):
                    problem = json_problem(await request.body())
                    if problem is not None:
                        raise problem
            except ClientDisconnect:  # no one to answer; nothing was done
                raise HTTPError(400, "the request ended before its body did") from None
            return await handle(request)

        return checked

    async def _read_form(self, request: Request, limits: dict[str, Any],
                         fields: set[str]) -> None:
        try:
            form = await request.form(**limits)
        except StarletteHTTPException as exc:  # the parser's refusal, as Starlette words it
            raise self._form_problem(str(exc.detail), limits) from None
        for name, value in form.multi_items():
            if name in fields and value == "":
                raise HTTPError(422, f"body.{clip(name, 40)}: empty; leave the field out for "
                                "its default", _FIX)

    def _form_problem(self, detail: str, limits: dict[str, Any]) -> HTTPError:
        """The parser's refusal as the error to answer with; told apart by the parser's
        own words (Starlette's; tests/test_serve_contract.py holds them)."""
        if detail.startswith("Too many files"):
            most = limits["max_files"]
            return HTTPError(422, f"body.files: more than {most} files in one request, over "
                             f"the limit of {most}", self.files_fix)
        if detail.startswith("Too many fields"):
            return HTTPError(422, f"body: more than {limits['max_fields']} form fields",
                             _FIX)
        if "exceeded maximum size" in detail:
            return HTTPError(413, f"a form field over {limits['max_part_size'] // 1024} KB "
                             "(files go as files, with a file name)", _FIX)
        return HTTPError(400, f"body: the form could not be read: {clip(detail)}",
                         "send multipart/form-data")


def json_problem(body: bytes) -> HTTPError | None:
    """What makes a JSON body unacceptable although a parser may take it, as the error to
    answer with (None: nothing): not JSON (400), NaN or an infinity, a lone surrogate in a
    string, or nesting deeper than MAX_DEPTH (422)."""
    if not body:
        return None

    def refuse(constant: str) -> Any:
        raise _NotJSONNumber(f"{constant} is not a JSON number")

    try:
        data = json.loads(body, parse_constant=refuse)
    except RecursionError:  # deeper than Python's parser goes: find where it went too deep
        return _too_deep(_deep_place(body, MAX_DEPTH))
    except _NotJSONNumber as exc:
        return HTTPError(422, f"body: {exc}", _STANDARD)
    except ValueError as exc:
        return HTTPError(400, f"body: not JSON: {clip(str(exc))}", "send JSON text "
                         "(RFC 8259) with Content-Type: application/json")
    return _bad_value(data, "body", 0)


class _NotJSONNumber(ValueError):
    pass


def _too_deep(place: str) -> HTTPError:
    return HTTPError(422, f"{clip(place, ECHO_CHARS)}: nested deeper than {MAX_DEPTH} "
                     "levels", "send a flatter body; see the request's schema at "
                     "/openapi.json")


def _bad_value(value: Any, where: str, depth: int) -> HTTPError | None:
    """The first problem in `value`, found at `where` (`depth` levels down)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return HTTPError(422, f"{clip(where, 80)}: a lone surrogate is not text",
                             _STANDARD)
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return HTTPError(422, f"{clip(where, 80)}: a number too large for a float",
                         _STANDARD)
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    if depth >= MAX_DEPTH:
        return _too_deep(where)
    for key, item in items:
        found = _bad_value(key, where, depth) if isinstance(key, str) else None
        found = found or _bad_value(item, f"{where}.{key}", depth + 1)
        if found:
            return found
    return None


def _deep_place(body: bytes, limit: int) -> str:
    """Where (`body.where.$not.$not...`) JSON text that Python's parser could not nest into
    goes deeper than `limit` levels; read token by token (strings whole), no deeper."""
    kinds: list[bytes] = []  # the open containers, b"{" or b"["
    steps: list[str | int] = []  # the key or index reached in each
    key_next = False
    for match in _TOKENS.finditer(body):
        token = match.group()
        if token in (b"{", b"["):
            if len(kinds) == limit:
                break
            kinds.append(token)
            steps.append("" if token == b"{" else 0)
            key_next = token == b"{"
        elif token in (b"}", b"]"):
            if kinds:
                kinds.pop()
                steps.pop()
        elif token == b",":
            if kinds and kinds[-1] == b"[":
                steps[-1] = int(steps[-1]) + 1
            key_next = bool(kinds) and kinds[-1] == b"{"
        elif key_next:
            steps[-1] = _key(token)
            key_next = False
    return ".".join(["body", *(str(step) for step in steps)])


def _key(token: bytes) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return token[1:-1].decode("utf-8", "replace")
