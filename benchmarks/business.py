"""A company's own documents: one fictional organisation's folder of memos, e-mails, incident
reports, policies, minutes, profiles, tables and multi-page PDFs, with questions that each
need two or three of its documents, scored as recall at budgets of retrieved words.

The sets are in benchmarks/business/: `dev` (Ashby Vale Packaging, a food-packaging maker;
tune on it), `dev_b` (Tolland & Reeve Building Services, a maintenance contractor, written
later by someone who had not read the code, as a second set to tune on: a rule that helps
one company's folder and not the other's fits a folder, not company documents), `dev_c`
(Harrowgate Cold Chain, a refrigerated haulier) and `dev_d` (Brackenridge Homes, a housing
association), two more written the same way, `dev_e` (Aldermoor Travel, a bus and coach
operator) and `dev_f` (Corvane Software, a hosted-software company), two more written the
same way and first measured as folders the code had never seen, and `holdout` (another
company, written apart; do not tune on it). A set is a
folder of .md and .txt documents, PDFs given as `NAME.pdf.json` sources
(`hopgraph.shape.write_report_pdf`: several pages, a running header, a footer
"Confidential - page N of M", lines wrapped at a fixed width, tables set cell by cell) and
`questions.json` (the
HotpotQA/MuSiQue shape: the title of a gold paragraph is its file name, its text is copied
from the document; for a PDF, from its source). A set that brings its own printer,
`render.py`, is built by it instead (`render.py DIR --with-docs` writes every document).

The folder is built in a temporary directory (documents copied, PDFs printed) and run as
`hopgraph eval --documents DIR --questions Q --method naive --method default` runs it (the
same calls: ingest with the product's defaults, offline extractor, no LLM; recall at 200,
400 and 800 words, `hopgraph.budget`). Printed beside the recall: how many questions have
every gold paragraph in the first 800 words, and how many gold paragraphs can be found at
all in the text the product reads from the files (a gold the reader loses cannot be
retrieved by any method).

Usage (from the repository root):
  .venv/bin/python benchmarks/business.py [--set dev|dev_b|...|dev_f|holdout] [--keep DIR]
      [--json FILE]
~2 min for the dev set on 2 cores shared with other jobs (most of it embedding).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hopgraph.api import GraphRAG
from hopgraph.budget import (
    BUDGETS,
    RETRIEVED,
    budget_text,
    evaluate_budgets,
    found,
    load_gold,
    normalise,
)
from hopgraph.ingest.reading import read_documents
from hopgraph.retrieve.query import Query
from hopgraph.shape import write_report_pdf

SETS = Path(__file__).resolve().parent / "business"
METHODS = ["naive", "default"]
QUESTIONS = "questions.json"
README = "README.md"  # what the set is, not one of its documents
PDF_SOURCE = ".pdf.json"
COPIED = (".md", ".txt", ".pdf")
RENDER = "render.py"
FULL = 800  # the budget at which "every gold piece found" is counted


def build(source: Path, target: Path) -> dict[str, int]:
    """The set's documents in `target`: Markdown and text copied, PDF sources printed.
    Returns the number of files of each format (and "pdf pages")."""
    target.mkdir(parents=True, exist_ok=True)
    if (source / RENDER).is_file():
        return _render(source, target)
    counts: Counter[str] = Counter()
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.name in (QUESTIONS, README):
            continue
        if path.name.endswith(PDF_SOURCE):
            name = path.name[: -len(".json")]
            pages = write_report_pdf(_fresh(target / name),
                                     json.loads(path.read_text(encoding="utf-8")))
            counts["pdf"] += 1
            counts["pdf pages"] += pages
        elif path.suffix in COPIED:
            shutil.copyfile(path, _fresh(target / path.name))
            counts[path.suffix[1:]] += 1
        else:
            print(f"note: {path.relative_to(source)} is not a document; left out",
                  file=sys.stderr)
    return dict(counts)


def _render(source: Path, target: Path) -> dict[str, int]:
    """A set printed by its own `render.py`; the files it wrote, counted."""
    done = subprocess.run([sys.executable, str(source / RENDER), str(target), "--with-docs"],
                          capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"{source / RENDER} failed ({done.returncode}):\n{done.stderr}")
    counts: Counter[str] = Counter(path.suffix[1:] for path in target.iterdir()
                                   if path.suffix in COPIED)
    if counts["pdf"]:
        import pypdf

        counts["pdf pages"] = sum(len(pypdf.PdfReader(path).pages)
                                  for path in target.glob("*.pdf"))
    return dict(counts)


def _fresh(path: Path) -> Path:
    if path.exists():
        sys.exit(f"two documents named {path.name}: questions name documents by file name")
    return path


def readable_gold(folder: Path, questions_path: Path) -> tuple[int, list[str]]:
    """How many gold paragraphs are found (`budget.found`) in the text the product reads
    from their file, and the ones that are not ("file: first words")."""
    texts = {Path(doc.path).name: normalise(doc.text) for doc in read_documents([folder])}
    total, missing = 0, []
    for question in json.loads(questions_path.read_text(encoding="utf-8")):
        for paragraph in question["paragraphs"]:
            if not paragraph.get("is_supporting"):
                continue
            total += 1
            if not found(texts.get(paragraph["title"], ""), paragraph["paragraph_text"]):
                missing.append(f"{paragraph['title']}: {paragraph['paragraph_text'][:70]}")
    return total, missing


def run(folder: Path, questions_path: Path, work: Path) -> dict:
    """Ingest the folder with the defaults and score both methods, as `hopgraph eval
    --documents` does; also each question's gold paragraphs found at `FULL` words."""
    questions = load_gold(questions_path)
    with GraphRAG(uri=str(work / "eval.db"), graph="eval") as rag:
        summary = rag.add_files([folder])
        rag.wait_indexed()
        scores = evaluate_budgets(rag, questions, METHODS, BUDGETS)
        complete: dict[str, list[bool]] = {}
        for method in METHODS:
            complete[method] = []
            for question in questions:
                passages = rag.retrieve(Query(question.text, method, RETRIEVED)).passages
                text = budget_text([p.text for p in passages], FULL)
                complete[method].append(all(found(text, gold) for gold in question.gold))
    return {"chunks": summary.passages_added, "index_seconds": round(summary.seconds, 1),
            "extractor": summary.extractor, "questions": len(questions),
            "recall": {m: {b: s.recall[b] for b in BUDGETS} for m, s in scores.items()},
            "complete": complete,
            "question_texts": [q.text for q in questions]}


def table(result: dict) -> str:
    """Recall at each budget and questions with every gold paragraph at `FULL` words."""
    head = " | ".join(f"{b} words" for b in BUDGETS)
    lines = [f"| method | {head} | all gold at {FULL} words |",
             "|---|" + "---:|" * (len(BUDGETS) + 1)]
    for method in METHODS:
        cells = " | ".join(f"{100 * result['recall'][method][b]:.1f}" for b in BUDGETS)
        done = sum(result["complete"][method])
        lines.append(f"| {method} | {cells} | {done} / {result['questions']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="dev",
                        help="a folder of benchmarks/business/ (dev, dev_b to dev_f, holdout)")
    parser.add_argument("--keep", metavar="DIR",
                        help="build the documents into DIR (new or empty) and leave them there")
    parser.add_argument("--json", metavar="FILE", help="also write the results (per question)")
    args = parser.parse_args()
    source = SETS / args.set
    if not (source / QUESTIONS).is_file():
        sys.exit(f"no {args.set} set at {source} (expected {QUESTIONS} beside the documents)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hopgraph-business-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "docs"
        if folder.exists() and any(folder.iterdir()):
            sys.exit(f"{folder} is not empty")
        counts = build(source, folder)
        total, missing = readable_gold(folder, source / QUESTIONS)
        result = run(folder, source / QUESTIONS, Path(tmp))
    seconds = time.perf_counter() - started
    files = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("md", "txt", "pdf"))
    print(f"\n{args.set} set: {sum(counts.get(k, 0) for k in ('md', 'txt', 'pdf'))} documents "
          f"({files}; {counts.get('pdf pages', 0)} PDF pages), {result['chunks']} chunks, "
          f"{result['questions']} questions; extractor {result['extractor']}\n")
    print(table(result))
    print(f"\ngold paragraphs found in the text the product reads: {total - len(missing)} / "
          f"{total}")
    for line in missing:
        print(f"  not found: {line}")
    print(f"\ningest {result['index_seconds']:.1f} s; whole run {seconds:.0f} s")
    if args.keep:
        print(f"documents left in {folder}")
    if args.json:
        result.update(set=args.set, documents=counts, gold_paragraphs=total,
                      gold_not_readable=missing, seconds=round(seconds, 1))
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
