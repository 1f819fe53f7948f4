"""benchmarks/read_speed.py on a few hand-made paragraphs: each format it writes is read back
whole, and its table has a row per format."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from hopgraph.ingest.reading import read_documents

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "read_speed.py"
ITEMS = [{"title": f"Town {n}", "text": f"Town {n} lies on the river Vale. It was founded in "
          f"{1700 + n} by settlers from Harrow, and its mill still grinds wheat."}
         for n in range(16)]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("read_speed", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", ["xlsx", "csv", "eml"])
def test_the_formats_it_writes_itself_are_read_whole(kind: str, tmp_path: Path) -> None:
    if kind == "xlsx":
        pytest.importorskip("openpyxl")
    read_speed = load_script()
    assert len(read_speed.build(ITEMS, tmp_path / kind, kind)) == 2  # 8 paragraphs a file
    read = " ".join(" ".join(doc.text.split()) for doc in read_documents([tmp_path / kind]))
    assert all(item["title"] in read and item["text"] in read for item in ITEMS)
    row = read_speed.measure(tmp_path / kind, kind, runs=1)
    assert row["files"] == 2 and row["chunks"] >= 2
    assert row["pages"] == (4 if kind == "xlsx" else None)  # two sheets a workbook


def test_the_table_has_a_row_per_format(tmp_path: Path) -> None:
    read_speed = load_script()
    rows = [read_speed.measure(folder, kind, runs=1) for kind in ("md", "csv")
            for folder in [tmp_path / kind] if read_speed.build(ITEMS, folder, kind)]
    lines = read_speed.table(rows).splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| md | 2 |") and lines[3].startswith("| csv | 2 |")
