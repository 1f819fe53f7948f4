"""hopgraph over MCP from the SDK's own client: start `hopgraph mcp` on the demo graph over
stdio, list its tools, search a multi-hop question, then look up the entity in its middle.

Run from the repository root (offline):
  pip install ".[mcp]"    # in the checkout (docs/install.md)
  hopgraph ingest ../shared/data/bernoulli/nano.json --graph demo
  python examples/mcp_client_example.py
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

QUESTION = "What contribution did the son of Euler's teacher make?"
# The server is this Python's `hopgraph` (the SDK passes only a few variables on by
# default: the rest of the environment, HOPGRAPH_* included, is given on purpose).
SERVER = StdioServerParameters(
    command=sys.executable,
    args=["-m", "hopgraph.cli", "mcp", "--uri", "hopgraph.db", "--graph", "demo"],
    env=dict(os.environ))


async def main() -> None:
    async with stdio_client(SERVER) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        print("tools:", ", ".join(tool.name for tool in tools))

        found = await session.call_tool("search", {"question": QUESTION, "top_k": 3})
        for passage in found.structured_content["passages"]:
            print(f"[{passage['score']:.3f}] {passage['doc_id']}: {passage['text'][:70]}...")
            for relation in passage["relations"][:1]:
                print(f"    via: {relation}")

        teacher = await session.call_tool("entity", {"name": "johann bernoulli"})
        print(teacher.content[0].text)  # the readable text beside the data


if __name__ == "__main__":
    anyio.run(main)
