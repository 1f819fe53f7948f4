"""Reading speed per format (issue 36): how fast hopgraph reads each document format into
text, apart from chunking; no embedding, no extraction, nothing stored.

The same MuSiQue paragraphs (the first `--paragraphs`, in corpus order, 8 to a file as
`hopgraph.shape.write_corpus` groups them) are written once per format: md, txt, pdf, docx,
html and pptx by `hopgraph.shape`'s writers; xlsx as a workbook per group (openpyxl) with a
sheet of title/text rows and a sheet of figures about them; csv as the same title/text rows
(the csv module); eml as an e-mail per group (the stdlib `email` package) whose body is the
paragraphs, each under its title. Then for each format's folder:

- read: `hopgraph.ingest.reading.read_documents([folder])`, one warm-up run, then the median
  wall time of `--runs` runs (5);
- chunk: `hopgraph.ingest.documents.chunk_documents` of what was read, timed the same way.

It prints a markdown table: format, files, MB on disk, pages (PDF pages, slides, sheets),
characters of text read, read seconds, MB/s and pages/s of reading, the chunks made (at the
default chunk size) and the seconds to make them.

Usage (from the repository root):
  .venv/bin/python benchmarks/read_speed.py [--paragraphs 400] [--formats md,txt,...]
      [--runs 5] [--json out.json]
~1.5 min at the defaults on 2 cores (shared).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from hopgraph.ingest.documents import chunk_documents
from hopgraph.ingest.reading import read_documents
from hopgraph.shape import PER_FILE, write_corpus

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
FORMATS = ("md", "txt", "pdf", "docx", "html", "pptx", "xlsx", "csv", "eml")
PAGED = ("pdf", "pptx", "xlsx")  # formats whose reader tells pages (PDF pages, slides, sheets)
Items = Sequence[dict[str, str]]


def groups(items: Items) -> list[Items]:
    """The items `PER_FILE` to a group, as `write_corpus` makes its files."""
    return [items[start:start + PER_FILE] for start in range(0, len(items), PER_FILE)]


def write_xlsx(path: Path, group: Items) -> None:
    """A workbook: a "Paragraphs" sheet of title/text rows and a "Figures" sheet of numbers
    about them (characters, words, sentences, average word length)."""
    import openpyxl

    book = openpyxl.Workbook()
    rows = book.active
    rows.title = "Paragraphs"
    rows.append(["title", "text"])
    for item in group:
        rows.append([item["title"], item["text"]])
    figures = book.create_sheet("Figures")
    figures.append(["paragraph", "characters", "words", "sentences", "mean word length"])
    for number, item in enumerate(group, start=1):
        words = item["text"].split()
        figures.append([number, len(item["text"]), len(words), item["text"].count(". ") + 1,
                        round(sum(map(len, words)) / max(1, len(words)), 2)])
    book.save(str(path))


def write_csv(path: Path, group: Items) -> None:
    """The items as title/text rows under a header."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["title", "text"])
        writer.writerows([item["title"], item["text"]] for item in group)


def write_eml(path: Path, group: Items, number: int) -> None:
    """An e-mail whose plain-text body is the items, each under its title; its subject is
    the first title."""
    message = EmailMessage()
    message["From"] = "Research Desk <desk@example.org>"
    message["To"] = "Reading List <list@example.org>"
    message["Date"] = format_datetime(datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
                                      + timedelta(hours=number))
    message["Subject"] = f"Notes: {group[0]['title']}"
    message.set_content("".join(f"{item['title']}\n{item['text']}\n\n" for item in group))
    path.write_bytes(bytes(message))


def build(items: Items, folder: Path, kind: str) -> list[Path]:
    """`items` written into `folder` as files of format `kind`, `PER_FILE` items a file."""
    if kind not in ("xlsx", "csv", "eml"):
        return write_corpus(items, folder, "musique", [kind])
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, group in enumerate(groups(items)):
        path = folder / f"musique-{number:04d}.{kind}"
        if kind == "eml":
            write_eml(path, group, number)
        else:
            (write_xlsx if kind == "xlsx" else write_csv)(path, group)
        written.append(path)
    return written


def median_time(work: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """The median wall seconds of `runs` calls of `work` after one warm-up, and its result."""
    result = work()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def measure(folder: Path, kind: str, runs: int) -> dict[str, Any]:
    """Read the folder and chunk what was read: sizes, median times and rates."""
    files = [p for p in folder.iterdir() if p.is_file()]
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    read_s, docs = median_time(lambda: read_documents([folder]), runs)
    if len(docs) != len(files):
        sys.exit(f"{kind}: read {len(docs)} documents of {len(files)} files")
    chunk_s, chunks = median_time(lambda: chunk_documents(docs), runs)
    pages = sum(len(doc.pages) for doc in docs) if kind in PAGED else None
    return {"format": kind, "files": len(files), "mb": megabytes, "pages": pages,
            "characters": sum(len(doc.text) for doc in docs), "read_s": read_s,
            "mb_per_s": megabytes / read_s, "pages_per_s": pages / read_s if pages else None,
            "chunks": len(chunks), "chunk_s": chunk_s}


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The measurements as a markdown table."""
    lines = ["| format | files | MB on disk | pages | characters read | read s (median) "
             "| MB/s | pages/s | chunks | chunk s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        pages = "-" if row["pages"] is None else f"{row['pages']:,}"
        per_page = "-" if row["pages_per_s"] is None else f"{row['pages_per_s']:,.0f}"
        lines.append(f"| {row['format']} | {row['files']} | {row['mb']:.2f} | {pages} | "
                     f"{row['characters']:,} | {row['read_s']:.4f} | {row['mb_per_s']:.1f} | "
                     f"{per_page} | {row['chunks']} | {row['chunk_s']:.3f} |")
    return "\n".join(lines)


def first_paragraphs(count: int) -> list[dict[str, str]]:
    """The first `count` paragraphs of MuSiQue's corpus as `{"title", "text"}` items."""
    corpus = DATA / "musique" / "corpus.json"
    if not corpus.exists():
        sys.exit(f"MuSiQue data not found at {corpus.resolve()} (expected ../shared/data)")
    rows = json.loads(corpus.read_text(encoding="utf-8"))[:count]
    return [{"title": row["title"], "text": row["text"]} for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paragraphs", type=int, default=400)
    parser.add_argument("--formats", default=",".join(FORMATS), help=f"of {','.join(FORMATS)}")
    parser.add_argument("--runs", type=int, default=5, help="timed runs after one warm-up")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    kinds = args.formats.split(",")
    unknown = sorted(set(kinds) - set(FORMATS))
    if unknown or args.paragraphs < 1 or args.runs < 1:
        parser.error(f"unknown format {unknown[0]!r}" if unknown
                     else "--paragraphs and --runs must be at least 1")
    items = first_paragraphs(args.paragraphs)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hopgraph-read-speed-") as tmp:
        for kind in kinds:
            build(items, Path(tmp) / kind, kind)
            rows.append(measure(Path(tmp) / kind, kind, args.runs))
            print(f"{kind}: read in {rows[-1]['read_s']:.3f} s", file=sys.stderr)
    print(f"\n{len(items)} MuSiQue paragraphs, {PER_FILE} a file; median of {args.runs} runs "
          "after a warm-up\n")
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"paragraphs": len(items), "runs": args.runs,
                                               "rows": rows}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
