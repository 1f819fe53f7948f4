"""Check the held-out business set: every gold paragraph is in its document, word for word.

For each question in questions.json: an answer, two or three distinct documents among its
supporting paragraphs, each document present (docs/NAME for .md and .txt, pdf_sources/STEM.json
for a .pdf), and each paragraph found verbatim in that document's source once runs of
whitespace are made single spaces (so a hard-wrapped e-mail matches a one-line gold text).
A PDF's source text is its items' titles and texts. A gold paragraph has one to three
sentences (counted with syntok when it is installed, which is what hopgraph.budget uses).

It also counts the documents by format and their words, flags documents outside 150-900
words and e-mail lines longer than 76 characters, and lists documents no question uses.

With --pdf DIR (PDFs printed by render.py; needs pypdf), it also reads each PDF's text and
reports the gold paragraphs that are not in it once case, punctuation, accents and line
breaks are set aside (a paragraph broken by a page's header and footer shows up here), and
the PDFs with fewer than two pages or without "page N of M" footers.

Usage:
  python benchmarks/business/holdout/validate.py [--pdf DIR]
Exit status 0 when every check passes, 1 otherwise (the --pdf report is informative only).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
SOURCES = HERE / "pdf_sources"
QUESTIONS = HERE / "questions.json"
MIN_WORDS, MAX_WORDS = 150, 900
EMAIL_WIDTH = 76
_WORDS = re.compile(r"\w+")

try:
    from syntok import segmenter
except ImportError:  # counted with a plain rule instead
    segmenter = None


def squeeze(text: str) -> str:
    """Runs of whitespace made single spaces."""
    return " ".join(text.split())


def words(text: str) -> str:
    """Lower-case words without accents or punctuation, as hopgraph.budget compares text."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = "".join(ch if ord(ch) < 256 else " " for ch in text)
    return " ".join(_WORDS.findall(text.lower()))


def sentence_count(text: str) -> int:
    if segmenter is not None:
        return sum(1 for paragraph in segmenter.analyze(text) for _ in paragraph)
    return len([s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9|])", text.strip()) if s])


def source_text(title: str) -> str | None:
    """The text a document was written as: the file, or a PDF's JSON items."""
    if title.endswith(".pdf"):
        path = SOURCES / f"{title[:-4]}.json"
        if not path.is_file():
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        return "\n\n".join(f"{item.get('title', '')}\n{item.get('text', '')}"
                           for item in doc["items"])
    path = DOCS / title
    return path.read_text(encoding="utf-8") if path.is_file() else None


def documents() -> dict[str, str]:
    """Every document of the set by its file name, with its source text."""
    names = [p.name for p in sorted(DOCS.iterdir()) if p.suffix in (".md", ".txt")]
    names += [f"{p.stem}.pdf" for p in sorted(SOURCES.glob("*.json"))]
    return {name: source_text(name) or "" for name in names}


def check_questions(questions: list, docs: dict[str, str]) -> tuple[list[str], Counter]:
    errors: list[str] = []
    used: Counter = Counter()
    seen: set[str] = set()
    for n, item in enumerate(questions, 1):
        where = f"question {n}"
        text = item.get("question", "")
        if not text or not item.get("answer"):
            errors.append(f"{where}: missing question or answer")
        if text in seen:
            errors.append(f"{where}: asked twice: {text}")
        seen.add(text)
        paragraphs = item.get("paragraphs") or []
        titles = {p.get("title") for p in paragraphs}
        if not 2 <= len(titles) <= 3:
            errors.append(f"{where}: {len(titles)} distinct documents, expected 2 or 3")
        for p in paragraphs:
            title, gold = p.get("title", ""), p.get("paragraph_text", "")
            used[title] += 1
            if p.get("is_supporting") is not True:
                errors.append(f"{where}: paragraph of {title} is not marked supporting")
            if title not in docs:
                errors.append(f"{where}: no document {title}")
                continue
            if squeeze(gold) not in squeeze(docs[title]):
                errors.append(f"{where}: not verbatim in {title}: {gold[:70]!r}")
            count = sentence_count(gold)
            if not 1 <= count <= 3:
                errors.append(f"{where}: gold in {title} has {count} sentences")
    return errors, used


def check_documents(docs: dict[str, str]) -> list[str]:
    errors = []
    for name, text in docs.items():
        count = len(text.split())
        if not MIN_WORDS <= count <= MAX_WORDS:
            errors.append(f"{name}: {count} words, outside {MIN_WORDS}-{MAX_WORDS}")
        if name.startswith("email_"):
            long = [line for line in text.splitlines() if len(line) > EMAIL_WIDTH]
            if long:
                errors.append(f"{name}: {len(long)} lines longer than {EMAIL_WIDTH}")
    return errors


def check_pdfs(folder: Path, questions: list) -> list[str]:
    from pypdf import PdfReader

    notes = []
    texts = {}
    for path in sorted(folder.glob("*.pdf")):
        reader = PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
        texts[path.name] = words("\n".join(pages))
        footers = sum(bool(re.search(rf"page {i} of {len(pages)}", page))
                      for i, page in enumerate(pages, 1))
        if len(pages) < 2 or footers != len(pages):
            notes.append(f"{path.name}: {len(pages)} pages, {footers} with a page N of M footer")
    for n, item in enumerate(questions, 1):
        for p in item["paragraphs"]:
            if p["title"].endswith(".pdf"):
                text = texts.get(p["title"])
                if text is None:
                    notes.append(f"question {n}: {p['title']} not printed in {folder}")
                elif f" {words(p['paragraph_text'])} " not in f" {text} ":
                    notes.append(f"question {n}: gold not in the text of {p['title']} "
                                 f"(a page break inside it?)")
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", type=Path, help="folder of PDFs printed by render.py")
    args = parser.parse_args(argv)
    docs = documents()
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    errors, used = check_questions(questions, docs)
    errors += check_documents(docs)

    formats = Counter(Path(name).suffix for name in docs)
    total = sum(len(text.split()) for text in docs.values())
    per_question = Counter(len({p["title"] for p in q["paragraphs"]}) for q in questions)
    golds = sum(len(q["paragraphs"]) for q in questions)
    sizes = [len(text.split()) for text in docs.values()]
    by_format = ", ".join(f"{n} {ext}" for ext, n in sorted(formats.items()))
    print(f"documents: {len(docs)} ({by_format}), {total} words, "
          f"{min(sizes)}-{max(sizes)} per document")
    print(f"questions: {len(questions)} ({per_question[2]} over two documents, "
          f"{per_question[3]} over three), {golds} gold paragraphs")
    unused = sorted(set(docs) - set(used))
    print(f"documents no question uses: {', '.join(unused) if unused else 'none'}")
    if args.pdf:
        notes = check_pdfs(args.pdf, questions)
        print(f"printed PDFs in {args.pdf}: " + ("every gold paragraph found, every PDF paged"
                                                  if not notes else f"{len(notes)} notes"))
        for note in notes:
            print(f"  note: {note}")
    for error in errors:
        print(f"ERROR {error}")
    print("OK" if not errors else f"{len(errors)} errors")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
