"""LLM triplet extraction: prompts, token estimates, replies good and bad, resuming."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from llm_server import FakeLLMServer, Reply

from hopgraph.embed.local import count_tokens
from hopgraph.ingest.documents import Chunk
from hopgraph.ingest.llm_extractor import (
    PASSAGE_MARKER,
    build_prompt,
    estimate,
    extract_records,
    load_prompt,
)
from hopgraph.records import Triplet


@pytest.fixture
def make_client(llm_client_factory: Any) -> Any:
    """Clients against the scripted `server`; see conftest.llm_client_factory."""
    return functools.partial(llm_client_factory, max_retries=1, retry_base_delay=0.001,
                             concurrency=2)


def triplets_json(*triplets: list[Any]) -> str:
    return json.dumps({"triplets": list(triplets)})


def make_chunks(*texts: str, doc: str = "notes/a.txt") -> list[Chunk]:
    return [Chunk(doc, i, text, count_tokens(text)) for i, text in enumerate(texts)]


def answer_by_passage(replies: dict[str, Reply]) -> Any:
    """A responder picking the reply whose key appears in the prompt's passage."""
    def respond(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        passage = prompt[len(build_prompt(load_prompt(), "").rstrip()):]
        return next(reply for key, reply in replies.items() if key in passage)
    return respond


def test_prompt_template_has_one_marker_and_survives_braces() -> None:
    template = load_prompt()
    assert template.count(PASSAGE_MARKER) == 1 and '{"triplets": [' in template
    prompt = build_prompt(template, 'Set {x} and {"y": 1}.')
    assert prompt.endswith('Set {x} and {"y": 1}.\n') and PASSAGE_MARKER not in prompt
    with pytest.raises(ValueError, match="exactly once"):
        estimate([], prompt_template="no marker here")


def test_estimate_counts_prompt_tokens_without_any_request(server: FakeLLMServer) -> None:
    chunks = make_chunks("Alice met Bob in Paris.", "Bob married Carol in 1901.")
    result = estimate(chunks, "Extract facts: <<PASSAGE>>")
    expected = [count_tokens(f"Extract facts: {c.text}") for c in chunks]
    assert result.chunks == 2 and result.prompt_tokens == sum(expected)
    assert result.chunk_tokens == sum(c.tokens for c in chunks)
    assert result.template_tokens == count_tokens("Extract facts: ")
    assert result.max_prompt_tokens == max(expected)
    assert estimate(chunks).prompt_tokens > result.prompt_tokens  # the real prompt is longer
    assert server.requests == []


def test_good_replies_become_records(server: FakeLLMServer, make_client: Any) -> None:
    server.responder = answer_by_passage({
        "Alice": Reply(content=triplets_json(["Alice", "met", "Bob"],
                                             [" Alice ", "lives in", "Paris"],
                                             ["Alice", "met", "Bob"])),
        "Carol": Reply(content=triplets_json()),
    })
    chunks = make_chunks("Alice met Bob in Paris.", "Carol stayed home.")
    seen: list[int] = []
    report = extract_records(make_client(), chunks, progress=seen.append)
    assert sum(seen) == 2
    assert [r.source for r in report.records] == ["notes/a.txt#0", "notes/a.txt#1"]
    assert {r.doc_id for r in report.records} == {"notes/a.txt"}  # the file is the document
    first = report.records[0]
    assert first.text == "Alice met Bob in Paris."
    assert first.metadata == {"source": "notes/a.txt", "file": "notes/a.txt", "type": "txt",
                              "chunk": 0, "section": "", "headings": [], "start": 0, "end": 0}
    assert first.triplets == [Triplet("Alice", "met", "Bob"), Triplet("Alice", "lives in", "Paris")]
    assert report.records[1].triplets == []
    assert (report.chunks, report.triplets, report.chunks_failed) == (2, 2, 0)
    # A repeated fact is skipped and reported, exactly as a repeat in an input file is.
    assert report.triplets_skipped == 1
    assert [str(p) for p in report.problems] == [
        "notes/a.txt#0 triplet 2: duplicate of an earlier triplet"]
    bodies = [r.body for r in server.chat_requests]
    assert all(b["response_format"] == {"type": "json_object"} for b in bodies)
    assert sorted(b["messages"][-1]["content"] for b in bodies) == sorted(
        build_prompt(load_prompt(), c.text) for c in chunks)


def test_json_inside_prose_is_read(server: FakeLLMServer, make_client: Any) -> None:
    server.script(Reply(content='Sure!\n```json\n{"triplets": [["Ada", "knew", "Babbage"]]}\n```'))
    report = extract_records(make_client(), make_chunks("Ada knew Babbage."))
    assert report.records[0].triplets == [Triplet("Ada", "knew", "Babbage")]


def test_non_json_reply_is_a_problem_and_other_chunks_are_kept(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = answer_by_passage({
        "first": Reply(content=triplets_json(["X", "is", "first"])),
        "second": Reply(content="I cannot help with that."),
        "third": Reply(content='{"facts": []}'),
        "fourth": Reply(content=triplets_json(["Z", "is", "fourth"])),
    })
    chunks = make_chunks("the first one", "the second one", "the third one", "the fourth one")
    report = extract_records(make_client(), chunks)
    assert [r.source for r in report.records] == ["notes/a.txt#0", "notes/a.txt#3"]
    assert report.chunks_failed == 2
    assert [p.where for p in report.problems] == ["notes/a.txt#1", "notes/a.txt#2"]
    assert report.problems[0].what == "reply is not JSON: 'I cannot help with that.'"
    assert report.problems[1].what.startswith('reply has no "triplets" list')


def test_malformed_triplets_are_skipped_and_counted(server: FakeLLMServer, make_client: Any
                                                    ) -> None:
    server.script(Reply(content=triplets_json(
        ["Ann", "wrote", "Book"], ["Ann", "wrote"], ["Ann", "", "Book"], "Ann wrote Book",
        ["Ann", 3, "Book"], {"subject": "Book", "predicate": "cites", "object": "Paper"})))
    report = extract_records(make_client(), make_chunks("Ann wrote Book, which cites Paper."))
    assert report.records[0].triplets == [Triplet("Ann", "wrote", "Book"),
                                          Triplet("Book", "cites", "Paper")]
    assert report.triplets == 2 and report.triplets_skipped == 4 and report.chunks_failed == 0
    assert [p.where for p in report.problems] == [f"notes/a.txt#0 triplet {i}" for i in range(1, 5)]
    assert [p.what for p in report.problems] == [
        "expected 3 parts, got 2", "predicate is empty",
        "expected [subject, predicate, object], got str", "predicate is int, expected a string"]


def test_persistent_500_fails_its_chunk_and_the_rest_go_on(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = answer_by_passage({
        "broken": Reply(status=500),
        "fine": Reply(content=triplets_json(["A", "is", "fine"])),
    })
    chunks = make_chunks("fine 0", "broken 1", "fine 2", "fine 3")
    report = extract_records(make_client(concurrency=1), chunks)
    assert [r.source for r in report.records] == [
        "notes/a.txt#0", "notes/a.txt#2", "notes/a.txt#3"]
    assert report.chunks_failed == 1
    assert report.problems[0].where == "notes/a.txt#1"
    assert "HTTP 500" in report.problems[0].what
    assert len(server.chat_requests) == 5  # the broken chunk: one try plus one retry


def test_rerun_after_interruption_sends_only_missing_chunks(
    server: FakeLLMServer, make_client: Any
) -> None:
    server.responder = lambda body: Reply(content=triplets_json(["P", "is", "done"]))
    chunks = make_chunks(*(f"passage number {i}" for i in range(5)))

    def interrupt(done: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first batch

    with pytest.raises(KeyboardInterrupt):
        extract_records(make_client(), chunks, progress=interrupt, batch_size=2)
    assert len(server.chat_requests) == 2
    report = extract_records(make_client(), chunks, batch_size=2)
    assert len(server.chat_requests) == 5  # only the three unanswered chunks were sent
    sent = [r.body["messages"][-1]["content"] for r in server.chat_requests[2:]]
    assert sorted(sent) == [build_prompt(load_prompt(), c.text) for c in chunks[2:]]
    assert report.cached == 2 and len(report.records) == 5 and report.chunks_failed == 0


def test_an_extraction_reports_its_own_usage_not_the_clients_totals(
    server: FakeLLMServer, make_client: Any, tmp_path: Any
) -> None:
    from hopgraph.ingest import extract

    server.responder = lambda body: Reply(content=triplets_json(["Ada", "knew", "Babbage"]))
    (tmp_path / "a.txt").write_text("Ada Lovelace knew Charles Babbage.", encoding="utf-8")
    client = make_client()
    client.complete([{"role": "user", "content": "warm-up"}])  # usage the extraction did not cause
    plan = extract.prepare([tmp_path / "a.txt"], "llm", has_llm=True)
    first = extract.run(plan, client)
    again = extract.run(plan, client)  # every chunk from the cache
    assert "LLM prompt_tokens" in first.lines[0] and "requests 1," in first.lines[0]
    assert "requests 0, cache_hits 1" in again.lines[0]
