"""A `Where` as a Milvus boolean expression over the passage collection.

`milvus_expression(where)` selects the passages `where.matches` selects (`hopgraph.where` has
the meaning), on Milvus Lite (3.2, pure Python) and on a Milvus 2.3 server: a query filter, or
a search's `filter=`. What the two backends do with a JSON field, measured here on rows holding
missing keys, null, strings, ints, floats, bools, lists and objects:

| on m = metadata["k"]    | Milvus Lite 3.2                 | Milvus 2.3 server               |
|-------------------------|---------------------------------|---------------------------------|
| logic                   | Kleene: missing or null is      | two-valued: a missing key is    |
|                         | unknown, `not unknown` unknown  | false, `not` complements        |
| `exists m`              | false for null                  | TRUE for null                   |
| `m != "en"`             | unknown on missing/null         | true on missing/null            |
| `m == 1`, `m >= 0`      | true for `true` (True == 1)     | never true for bools            |
| `m == true`             | true for 1 and 1.0              | only for true                   |
| `m >= 2020` on "2020"   | unknown (a TypeError)           | false                           |
| `m == 2020` on 2020.0   | true                            | true                            |
| `m == "en"` / `m > 0`   | false / unknown                 | false / false: a list or object |
| on a list or object     |                                 | is just like null               |
| `m in ["en", "de"]`     | refused: "must be a field"      | works                           |
| `m == 2.0**53` on       | false (exact)                   | TRUE: int/float mixed compare   |
| 2**53 + 1               |                                 | as doubles (hence MAX_NUMBER)   |
| a key with U+0001       | found                           | never found                     |
| `metadata["]["]`        | fine                            | PANIC: the server exits         |
| `metadata[""]`          | fine                            | refused: "invalid identifier"   |

Strings: both take the escapes `\\"`, `\\\\`, `\\n`, `\\r`, `\\t` and any other character raw
(not a raw newline), in values and in keys; hostile text (`x" or doc_id != "`, `\\"`,
emoji, U+0000) stays one literal on both. Numbers: Python's repr (`-1.5e-07`, `1e+16`,
`2020.0`) parses on both, `-` as unary minus. Hence `hopgraph.where`'s rules: true and false
are the numbers 1 and 0 (Lite cannot tell them apart); null, lists and objects are absent;
numbers stay within +-(2**53 - 1); field names hold no `[`, `]` or control characters.

How the expression is built, so that the answer is exact on both:
- No `not` over anything that can be unknown on Lite: `$not` is pushed down to the leaves (De
  Morgan) and every leaf has a positive form and a negated form. In a formula of and/or over
  leaves that are each right, Lite's unknowns act as false, as on the server.
- Each leaf is written so both backends agree: `$ne x` is "comparable and m != x" (not
  `m != x` alone, which is true for missing keys on a server); "comparable" is `m >= ""` (any
  string) or `m >= -1.79e308` (any number) or `m == true` or `m == false`; "absent" is
  `not (exists m) or not (comparable)` (each part definite where it counts on Lite);
  `$eq 1` adds `or m == true` for the server; `$in` on metadata is an OR of `$eq` (Lite
  refuses `in` there); `doc_id` (a VARCHAR, never null) uses `in` / `not in`.
- Every atom and every and/or is parenthesized (`exists` binds loosest on a server, which
  reads `exists m and x` as `exists (m and x)` and refuses it); long and/or chains are
  balanced trees, not 1,000-deep ones; constant parts (a number against `doc_id`) fold away.

Left: on Lite, a list or object value is never matched where its key must be ABSENT (`$exists:
false`; `$not` of `$exists: true`, `$ne`, `$nin`, `$gt`...): on such a value Lite's ordering
tests are unknown and its equality tests are those of any unequal number, so no expression
tells an object from a number there. Lite then returns a subset of the matching passages (a
list or object under a filtered key is the only case); the server is exact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hopgraph.errors import UsageError
from hopgraph.where import DOC_ID, ORDER, Condition, Node, Where

Expr = str | bool  # an expression, or a constant (folded away before the end)
NEGATED = {"$gt": "<=", "$gte": "<", "$lt": ">=", "$lte": ">"}
SYMBOL = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
LOWEST = "-1.7976931348623157e+308"  # every finite float is >= this
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def milvus_expression(where: Where | dict[str, object] | str, metadata_field: str = "metadata",
                      doc_field: str = "doc_id") -> str:
    """The Milvus filter selecting exactly the passages `where` matches."""
    checked = Where.parse(where)
    if checked is None:
        raise UsageError("no filter to translate", where="milvus_expression",
                         fix="call it only for a query that has a `where`")
    for field in (metadata_field, doc_field):
        if not _IDENTIFIER.fullmatch(field):
            raise UsageError(f"{field!r} is not a Milvus field name", where="milvus_expression")
    found = _Translator(metadata_field, doc_field).node(checked.tree, negate=False)
    if isinstance(found, bool):  # e.g. {"doc_id": {"$exists": true}}
        return f'({doc_field} >= "")' if found else f'({doc_field} < "")'
    return found


def string(text: str) -> str:
    """A Milvus string literal for any text (lone surrogates are refused by `Where.parse`)."""
    return f'"{text.translate(_ESCAPES)}"'


def number(value: int | float | bool) -> str:
    """A Milvus number literal: ints as digits, floats by repr (exact; never inf/nan)."""
    return repr(int(value) if isinstance(value, bool) else value)


def all_of(parts: Sequence[Expr]) -> Expr:
    """`and` of the parts, constants folded, as a balanced tree."""
    if any(p is False for p in parts):
        return False
    kept = [p for p in parts if isinstance(p, str)]  # after the check above: not True
    return _balanced(kept, "and") if kept else True


def any_of(parts: Sequence[Expr]) -> Expr:
    """`or` of the parts, constants folded, as a balanced tree."""
    if any(p is True for p in parts):
        return True
    kept = [p for p in parts if isinstance(p, str)]  # after the check above: not False
    return _balanced(kept, "or") if kept else False


def _balanced(parts: list[str], joint: str) -> str:
    if len(parts) == 1:
        return parts[0]
    half = len(parts) // 2
    return f"({_balanced(parts[:half], joint)} {joint} {_balanced(parts[half:], joint)})"


class _Translator:
    """Writes one filter tree in negation normal form (see the module docstring)."""

    def __init__(self, metadata_field: str, doc_field: str) -> None:
        self.metadata_field = metadata_field
        self.doc = doc_field

    def node(self, node: Node, negate: bool) -> Expr:
        if isinstance(node, Condition):
            if node.field == DOC_ID:
                return self.doc_leaf(node, negate)
            return self.leaf(f"{self.metadata_field}[{string(node.field)}]", node, negate)
        if node.op == "$not":
            return self.node(node.parts[0], not negate)
        parts = [self.node(p, negate) for p in node.parts]
        return all_of(parts) if (node.op == "$and") != negate else any_of(parts)

    def leaf(self, m: str, c: Condition, negate: bool) -> Expr:
        """One condition on a metadata value `m` (or its negation)."""
        if c.op == "$exists":
            return _comparable(m) if c.value != negate else _absent(m)
        if c.op in ORDER:
            return self.order(m, c, negate)
        equal = any_of([atom for v in c.values() for atom in _equal(m, v, "==")])
        differs = all_of([atom for v in c.values() for atom in _equal(m, v, "!=")])
        if c.op in ("$eq", "$in"):
            # not equal: absent, or any other value; Lite's `!=` is definite when present
            return any_of([f"(not (exists {m}))", differs]) if negate else equal
        return any_of([_absent(m), equal]) if negate else all_of([_comparable(m), differs])

    def order(self, m: str, c: Condition, negate: bool) -> Expr:
        """`$gt`.. on a metadata value; negated: absent, of the other kind, or ordered so."""
        value = c.value
        assert isinstance(value, (int, float, str)) and not isinstance(value, bool)
        symbol = NEGATED[c.op] if negate else SYMBOL[c.op]
        if isinstance(value, str):
            atoms = [f"({m} {symbol} {string(value)})"]
            other = _number_kind(m)
        else:  # true and false are 1 and 0, which a server will not compare with numbers
            atoms = [f"({m} {symbol} {number(value)})"] + [
                f"({m} == {name})" for name, one in (("true", 1), ("false", 0))
                if (ORDER[c.op](one, value) != negate)]
            other = f'({m} >= "")'
        return any_of([_absent(m), other, *atoms]) if negate else any_of(atoms)

    def doc_leaf(self, c: Condition, negate: bool) -> Expr:
        """A condition on `doc_id`: always a present string, so `!=` and `not in` are safe."""
        d = self.doc
        if c.op == "$exists":
            return c.value != negate
        texts = [v for v in c.values() if isinstance(v, str)]  # numbers never match
        if c.op in ORDER:
            if not texts:
                return negate
            return f"({d} {NEGATED[c.op] if negate else SYMBOL[c.op]} {string(texts[0])})"
        none_of = (c.op in ("$ne", "$nin")) != negate
        if not texts:
            return none_of
        if len(texts) == 1:
            return f"({d} {'!=' if none_of else '=='} {string(texts[0])})"
        return f"({d} {'not in' if none_of else 'in'} [{', '.join(string(t) for t in texts)}])"


def _equal(m: str, value: object, symbol: str) -> list[str]:
    """Atoms for m == value ("==": any holds) or m != value ("!=": all hold), with bools as
    the numbers 1 and 0 on both backends."""
    if isinstance(value, str):
        return [f"({m} {symbol} {string(value)})"]
    assert isinstance(value, (int, float))
    atoms = [f"({m} {symbol} {number(value)})"]
    return atoms + [f"({m} {symbol} {name})" for name, one in (("true", 1), ("false", 0))
                    if value == one]


def _number_kind(m: str) -> str:
    return f"(({m} >= {LOWEST}) or ({m} == true) or ({m} == false))"


def _comparable(m: str) -> str:
    return f'(({m} >= "") or {_number_kind(m)})'


def _absent(m: str) -> str:
    return f"((not (exists {m})) or (not {_comparable(m)}))"
