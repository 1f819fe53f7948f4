"""The answer step: the prompt, and a streamed, cited answer from a scripted LLM."""

from conftest import QUESTION
from llm_server import FakeLLMServer
from scripted_llm import good_llm

from hopgraph.answer import answer_prompt, stream_answer


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
