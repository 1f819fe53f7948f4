"""hopgraph's Python client against a running `hopgraph serve`: passages for a multi-hop
question, then an answer streamed (or, from a server without an LLM, how to give it one),
then the same retrieval from asyncio.

Run from the repository root (offline):
  hopgraph ingest ../shared/data/bernoulli/nano.json
  hopgraph serve                         # another terminal; with a key: HOPGRAPH_API_KEY=...
  python examples/client_example.py [URL] [API_KEY]
"""

from __future__ import annotations

import asyncio
import sys

from hopgraph import Retrieval
from hopgraph.client import AsyncClient, Client, Done, NoAnswer, Token

QUESTION = "What contribution did the son of Euler's teacher make?"


def main(url: str, api_key: str | None) -> int:
    with Client(url, api_key=api_key) as client:
        result = client.query(QUESTION, top_k=3)
        for hit in result.graph:
            print(f"[{hit.score:.3f}] {hit.text[:70]}...")
        for event in client.ask(QUESTION):
            if isinstance(event, Token):
                print(event.text, end="", flush=True)
            elif isinstance(event, Done):
                print()
            elif isinstance(event, NoAnswer):
                print("(the server has no LLM: `hopgraph serve --llm MODEL` gives it one)")
    print("async:", [hit.id for hit in asyncio.run(retrieve(url, api_key)).passages])
    return 0


async def retrieve(url: str, api_key: str | None) -> Retrieval:
    async with AsyncClient(url, api_key=api_key) as client:
        return await client.retrieve(QUESTION, top_k=3)


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0] if args else "http://127.0.0.1:8000",
                  args[1] if len(args) > 1 else None))
