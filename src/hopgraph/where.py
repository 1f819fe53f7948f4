"""`where`: the filter a query carries over its passages' `doc_id` and metadata.

A filter is a JSON object: `{"year": {"$gte": 2020, "$lt": 2023}, "lang": "en", "$or": [..]}`.
Its keys, all to hold, are fields or `$and` / `$or` (a non-empty list of filters) / `$not` (one
filter). A field is `doc_id` (the passage's document) or a top-level metadata key, taken as is
(no dotted paths); its value is a scalar (`$eq`) or an object of operators, all to hold.

Meaning (of `Where.matches`, and of `store.where_expr`'s Milvus filter): a value is *comparable*
when it is a string or a number, else *absent*:

| filter on key k           | a passage matches when its value v at k is...                 |
|---------------------------|---------------------------------------------------------------|
| `x` or `{"$eq": x}`       | comparable, of x's kind (string or number), equal to x        |
| `{"$ne": x}`              | comparable and not `$eq x` (absent never matches `$ne`)       |
| `{"$in": [x, ...]}`       | `$eq` one of them                                             |
| `{"$nin": [x, ...]}`      | comparable and `$eq` none of them                             |
| `$gt` `$gte` `$lt` `$lte` | comparable, of x's kind, and so ordered against x             |
| `{"$exists": true}`       | comparable (`false`: absent)                                  |
| `{"$not": F}`             | F does not match: the complement over all passages            |
| `{"$and"/"$or": [F, ..]}` | every F / some F matches                                      |

- Kinds: strings compare with strings (code-point order), numbers with numbers (2020 ==
  2020.0, never "2020"). `true` and `false` ARE the numbers 1 and 0, as in Milvus Lite.
- Absent: a missing key, null, a list, an object (and NaN/inf, which Milvus stores as null),
  alike because Lite cannot tell null from missing nor a 2.3 server null from a list or object.
- `doc_id` is always a present string; a metadata key named "doc_id" cannot be filtered on.

`Where.parse` checks a filter first; a problem is a `UsageError` naming its place, e.g.
`where.$or[2].lang.$regex: unknown operator '$regex'; use ...`. Bounds: depth, parts, list and
string lengths; numbers within +-(2**53 - 1); field names without `[`, `]` or control
characters (why: `hopgraph.store.where_expr`, from what Milvus does).
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopgraph.errors import UsageError

MAX_DEPTH = 10  # nested filters ($and/$or/$not)
MAX_PARTS = 2000  # keys, operators and values, all told
MAX_LIST = 1000  # values of one $in / $nin
MAX_KEY = 256
MAX_STRING = 2048
MAX_NUMBER = 2**53 - 1
DOC_ID = "doc_id"
ORDER = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
OPERATORS = ("$eq", "$ne", "$in", "$nin", *ORDER, "$exists")
Scalar = str | int | float | bool
_BAD_KEY = re.compile(r"[\[\]\x00-\x1f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_PLAIN_KEY = re.compile(r"\$?[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class Condition:
    """One operator on one field; `value` is a tuple for `$in` / `$nin`, a bool for `$exists`."""

    field: str
    op: str
    value: Scalar | tuple[Scalar, ...]

    def values(self) -> tuple[Scalar, ...]:
        """The values compared against (one, or those of `$in` / `$nin`)."""
        return self.value if isinstance(self.value, tuple) else (self.value,)


@dataclass(frozen=True)
class Group:
    """`$and` (all parts), `$or` (any part) or `$not` (its one part does not hold)."""

    op: str
    parts: tuple[Condition | Group, ...]


Node = Condition | Group


def comparable(value: object) -> tuple[int, int | float | str] | None:
    """How a filter sees a value: (0, number) or (1, string); None when absent."""
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return (0, value)
    return None


def holds(condition: Condition, raw: object) -> bool:
    """Whether one condition holds for a field's raw value (None: missing)."""
    have = comparable(raw)
    if condition.op == "$exists":
        return (have is not None) == condition.value
    if have is None:
        return False
    if condition.op in ORDER:
        want = comparable(condition.value)
        return want is not None and have[0] == want[0] and ORDER[condition.op](have[1], want[1])
    equal = any(have == comparable(v) for v in condition.values())
    return equal if condition.op in ("$eq", "$in") else not equal


class Where:
    """A checked filter. Equal (and hashed) by `canonical`, its compact JSON with sorted keys,
    so a query holding one can be a cache key; `as_dict()` gives back what was parsed."""

    __slots__ = ("_spec", "canonical", "tree")

    def __init__(self, tree: Node, spec: dict[str, Any]) -> None:
        self.tree = tree
        self._spec = spec
        self.canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def parse(cls, spec: Where | Mapping[str, Any] | str | None) -> Where | None:
        """Check a filter: a dict, JSON text (the CLI's) or a Where; None and {} mean none."""
        if isinstance(spec, str):
            spec = _from_json(spec)
        if isinstance(spec, Where):
            return spec
        if spec is None or (isinstance(spec, Mapping) and not spec):
            return None
        return cls(_Reader().filter(spec, "where", 1), _plain(spec))

    def as_dict(self) -> dict[str, Any]:
        """The filter as given (a fresh copy)."""
        return _plain(self._spec)  # type: ignore[no-any-return]

    def matches(self, doc_id: str | None, metadata: Mapping[str, Any] | None) -> bool:
        """Whether a passage of this document with this metadata matches."""
        return _matches(self.tree, doc_id, metadata or {})

    def mask(self, doc_ids: Sequence[str | None],
             metadatas: Sequence[Mapping[str, Any] | None]) -> np.ndarray:
        """`matches` for many passages at once, as a bool array."""
        return np.fromiter((self.matches(d, m) for d, m in zip(doc_ids, metadatas, strict=True)),
                           dtype=bool, count=len(doc_ids))

    def doc_ids(self) -> frozenset[str] | None:
        """The documents every matching passage is in when the top level restricts `doc_id` by
        `$eq` / `$in`, perhaps beside other conditions (necessary, see `only_docs`); else None."""
        found = [docs for docs in _doc_sets(self.tree) if docs is not None]
        return frozenset.intersection(*found) if found else None

    def only_docs(self) -> frozenset[str] | None:
        """The documents whose passages match, all of them, when the filter is nothing more
        than `doc_id` `$eq` / `$in` restrictions; else None (the filter needs metadata)."""
        return self.doc_ids() if None not in _doc_sets(self.tree) else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Where) and other.canonical == self.canonical

    def __hash__(self) -> int:
        return hash(self.canonical)

    def __repr__(self) -> str:
        return f"Where({self.canonical})"


def _matches(node: Node, doc_id: str | None, metadata: Mapping[str, Any]) -> bool:
    if isinstance(node, Condition):
        return holds(node, doc_id if node.field == DOC_ID else metadata.get(node.field))
    if node.op == "$not":
        return not _matches(node.parts[0], doc_id, metadata)
    found = (_matches(p, doc_id, metadata) for p in node.parts)
    return all(found) if node.op == "$and" else any(found)


def _doc_sets(node: Node) -> list[frozenset[str] | None]:
    """Per part of the top-level AND: the documents a `doc_id` `$eq` / `$in` allows, or None."""
    if isinstance(node, Group) and node.op == "$and":
        return [found for part in node.parts for found in _doc_sets(part)]
    if isinstance(node, Condition) and node.field == DOC_ID and node.op in ("$eq", "$in"):
        return [frozenset(v for v in node.values() if isinstance(v, str))]
    return [None]


def _plain(value: Any) -> Any:
    """A checked filter as plain JSON data (dicts, lists): a copy no caller can change."""
    return json.loads(json.dumps(value, default=dict))


def _kind(value: object) -> str:
    kinds = ((bool, "a bool"), (str, "a string"), ((int, float), "a number"),
             (Mapping, "an object"), ((list, tuple), "a list"), (type(None), "null"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _join(path: str, key: str) -> str:
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}.{json.dumps(key if len(key) <= 40 else key[:40] + '...')}"


class _Reader:
    """One check of one filter: builds its tree, counting parts against MAX_PARTS."""

    parts = 0  # so far, in this check

    def count(self, path: str) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise UsageError(f"the filter has more than {MAX_PARTS} parts", where=path,
                             fix="use $in for many values of one field, or a smaller filter")

    def filter(self, spec: object, path: str, depth: int) -> Node:
        if not isinstance(spec, Mapping) or not spec or depth > MAX_DEPTH:
            what = (f"filters nested deeper than {MAX_DEPTH}" if depth > MAX_DEPTH else
                    f"expects a filter object, got {'{}' if spec == {} else _kind(spec)}")
            raise UsageError(what, where=path, fix='e.g. {"lang": "en", "year": {"$gte": 2020}}')
        parts: list[Node] = []
        for key, value in spec.items():
            self.count(path)
            at = _join(path, str(key))
            if key in ("$and", "$or") and isinstance(value, (list, tuple)) and value:
                parts.append(Group(key, tuple(self.filter(f, f"{at}[{i}]", depth + 1)
                                              for i, f in enumerate(value))))
            elif key in ("$and", "$or"):
                raise UsageError(f"expects a non-empty list of filters, got {_kind(value)}",
                                 where=at, fix=f'e.g. {{"{key}": [{{"a": 1}}, {{"b": 2}}]}}')
            elif key == "$not":
                parts.append(Group(key, (self.filter(value, at, depth + 1),)))
            elif not isinstance(key, str) or key.startswith("$"):
                what = (f"unknown operator {key!r} here" if isinstance(key, str)
                        else f"a key must be a string, got {_kind(key)}")
                raise UsageError(what, where=at, fix="a filter's keys are field names or $and, "
                                 "$or, $not")
            else:
                parts.extend(self.field(key, value, at))
        return parts[0] if len(parts) == 1 else Group("$and", tuple(parts))

    def field(self, key: str, value: object, path: str) -> list[Condition]:
        bad = _BAD_KEY.search(key)
        if bad or not 0 < len(key) <= MAX_KEY:
            what = (f"the character {bad.group()!r} is not allowed in a field name" if bad
                    else f"a field name must have 1 to {MAX_KEY} characters")
            raise UsageError(what, where=path, fix="filter on metadata keys without brackets "
                             "or control characters (Milvus cannot address them)")
        if not isinstance(value, Mapping):
            return [Condition(key, "$eq", self.scalar(value, path))]
        if not value or any(op not in OPERATORS for op in value):
            op = next((op for op in value if op not in OPERATORS), None)
            raise UsageError(f"unknown operator {op!r}" if value else "no operator",
                             where=_join(path, str(op)) if value else path,
                             fix=f"use {', '.join(OPERATORS)} (nested keys cannot be filtered on)")
        return [Condition(key, op, self.argument(op, arg, _join(path, op)))
                for op, arg in value.items()]

    def argument(self, op: str, arg: object, path: str) -> Scalar | tuple[Scalar, ...]:
        if op == "$exists" and not isinstance(arg, bool):
            raise UsageError(f"expects true or false, got {_kind(arg)}", where=path)
        if op == "$exists":
            return arg  # type: ignore[return-value]
        if op in ("$in", "$nin"):
            if not isinstance(arg, (list, tuple)) or not 0 < len(arg) <= MAX_LIST:
                got = f"{len(arg)} values" if isinstance(arg, (list, tuple)) else _kind(arg)
                raise UsageError(f"expects a list of 1 to {MAX_LIST} values, got {got}",
                                 where=path, fix=f'e.g. {{"{op}": ["en", "de"]}}')
            return tuple(self.scalar(v, f"{path}[{i}]") for i, v in enumerate(arg))
        if op in ORDER and isinstance(arg, bool):
            raise UsageError("expects a number or a string, got a bool", where=path,
                             fix="compare bools with $eq / $ne")
        return self.scalar(arg, path, "a number or a string" if op in ORDER else None)

    def scalar(self, value: object, path: str, expects: str | None = None) -> Scalar:
        self.count(path)
        if isinstance(value, str) and (len(value) > MAX_STRING or _SURROGATE.search(value)):
            raise UsageError(f"a string must be text of at most {MAX_STRING} characters "
                             "(no lone surrogates)", where=path)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not (
                (isinstance(value, int) or math.isfinite(value)) and abs(value) <= MAX_NUMBER):
            raise UsageError(f"the number {value!r} is not finite or beyond +-{MAX_NUMBER} "
                             "(2**53 - 1)", where=path, fix="Milvus compares larger integers "
                             "as floats, inexactly: store and filter such values as strings")
        if isinstance(value, (str, int, float)):  # bools too
            return value
        fix = ('use {"$exists": false} for passages without the key' if value is None else
               "use $in for one of several values" if isinstance(value, (list, tuple))
               and not expects else None)
        raise UsageError(f"expects {expects or 'a string, a number or a bool'}, got "
                         f"{_kind(value)}", where=path, fix=fix)


def _from_json(text: str) -> Any:
    """A filter's JSON text (NaN and Infinity parse, to be refused as numbers)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError("the filter's JSON is nested too deeply", where="where") from None
    except ValueError as exc:  # bad JSON, or an int of more than 4,300 digits
        raise UsageError(f"not valid JSON ({exc})", where="where",
                         fix='write a JSON object, e.g. {"lang": "en"}') from None
