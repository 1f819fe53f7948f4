"""The answer step: the prompt, and a streamed, cited answer from a scripted LLM."""

import pytest
from conftest import BERNOULLI, QUESTION, need
from llm_server import FakeLLMServer
from scripted_llm import good_llm

from hopgraph import Answer, UsageError
from hopgraph.answer import ANSWER_TOP_K, answer_prompt, stream_answer


def test_answer_prompt_numbers_passages() -> None:
    prompt = answer_prompt("Q?", ["first passage", "second passage"])
    assert "[1] first passage" in prompt and "[2] second passage" in prompt
    assert "I don't know" in prompt and prompt.rstrip().endswith("Answer:")


def test_stream_answer_cites_the_passage_it_used(server: FakeLLMServer,
                                                 llm_client_factory) -> None:
    server.responder = good_llm
    passages = ["Leonhard Euler was a student of Johann Bernoulli.",
                "Daniel Bernoulli, son of Johann, worked on fluid dynamics and probability."]
    answer = "".join(stream_answer(llm_client_factory(), QUESTION, passages))
    assert "fluid dynamics" in answer and "[2]" in answer
    assert server.chat_requests[-1].body.get("stream") is True


@pytest.mark.slow
def test_graphrag_ask_answers_from_the_filtered_passages(open_graph, server: FakeLLMServer,
                                                         llm_client_factory) -> None:
    """`GraphRAG.ask`: retrieval (a filter too), then the answer written from its passages;
    without an LLM, a UsageError that says how to add one."""
    server.responder = good_llm
    rag = open_graph("ask")
    rag.add_files([need(BERNOULLI)])
    with pytest.raises(UsageError, match="needs an LLM"):
        rag.ask(QUESTION)
    rag.llm = llm_client_factory()
    answer = rag.ask(QUESTION, method="default")
    assert isinstance(answer, Answer) and answer.question == QUESTION
    assert len(answer.retrieval.passages) == ANSWER_TOP_K and "fluid dynamics" in answer.text
    assert answer.usage["requests"] >= 1
    prompt = server.chat_requests[-1].body["messages"][0]["content"]
    assert all(p.text in prompt for p in answer.retrieval.passages)
    none = rag.ask(QUESTION, method="naive", where={"doc_id": "no such document"})
    assert none.retrieval.passages == []
    assert "(none)" in server.chat_requests[-1].body["messages"][0]["content"]
