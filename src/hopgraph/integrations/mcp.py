"""hopgraph over MCP (the Model Context Protocol): one graph as tools an agent calls,
`search`, `ask` (when the server has an LLM), `entity` and `documents` (extra `mcp`: the MCP
Python SDK 2.x, whose server class is `MCPServer`).

`build_server(service)` makes the server and `hopgraph mcp` (cli/mcp.py) runs it, over stdio
or streamable HTTP. The graph is a `serve.service.GraphService`, as behind `hopgraph serve`:
opened once and kept warm, calls answered at once on its current version (tool calls run on
worker threads, so several may run together), other processes' writes followed. The tools
only translate: arguments into a `Query`, records into `mcp_views`. A hopgraph error (a bad
filter, an unknown method, an LLM that failed) comes back as a tool error whose text says
what was wrong and where, for the agent to correct its call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, Strict

from hopgraph import __version__
from hopgraph.answer import ANSWER_TOP_K, stream_answer
from hopgraph.errors import HopgraphError
from hopgraph.integrations import mcp_views as views
from hopgraph.records import Answer
from hopgraph.retrieve import registry
from hopgraph.retrieve.query import DEFAULT_TOP_K, MAX_QUESTION_CHARS, Query
from hopgraph.serve.models import REQUEST_TOP_K, Whole
from hopgraph.serve.service import GraphService
from hopgraph.store import NAME_MAX
from hopgraph.where import Where

__all__ = ["GraphServer", "GraphTools", "build_server"]

# A guard wraps the HTTP app (an ASGI app) in another: `mcp_http.key_check(...)`.
Guard = Callable[..., Any]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                             open_world_hint=False)


def _method_enum(schema: dict[str, Any]) -> None:
    """The registry's method names, read when the tool's schema is made."""
    schema["enum"] = list(registry.names())


Question = Annotated[str, Field(
    min_length=1, max_length=MAX_QUESTION_CHARS,
    description="the question in natural language, whole: a multi-hop question as asked "
                "(\"What did the son of Euler's teacher contribute?\"), not split into "
                "parts or cut down to keywords")]
Method = Annotated[str, Field(json_schema_extra=_method_enum, description=(
    "retrieval method; the default suits almost every question (the tool description "
    "lists the others)"))]
WhereFilter = Annotated[dict[str, Any] | None, Field(description=(
    "keep only the passages this filter matches: a JSON object over `doc_id` (a passage's "
    "document) and the passages' metadata keys, e.g. {\"doc_id\": \"report.pdf\"}, "
    "{\"doc_id\": {\"$in\": [\"a.pdf\", \"b.pdf\"]}}, {\"year\": {\"$gte\": 2020}, "
    "\"lang\": \"en\"}; operators $eq $ne $in $nin $gt $gte $lt $lte $exists, combined with "
    "$and $or $not. Leave it out to search everything"))]
# A whole number as REST takes it: 3 or 3.0, never true or "3" (the SDK's arguments are
# checked in pydantic's lax mode, which would take true as 1).
TopK = Annotated[Whole, Strict(), Field(ge=1, le=REQUEST_TOP_K)]
EntityName = Annotated[str, Field(min_length=1, max_length=NAME_MAX, description=(
    "the entity's name as the graph spells it (case and spacing do not matter), e.g. one "
    "from a search result's entities, bridges or relations"))]

SEARCH_HELP = """\
Find the passages of the knowledge graph {graph!r} that answer a question. Use it first for \
any question about what the graph's documents say, and above all for multi-hop questions, \
whose answer is in a passage that shares no words with the question ("What did the son of \
Euler's teacher contribute?": the graph steps from Euler to his teacher Johann Bernoulli to \
his son Daniel Bernoulli). Pass the whole question. Returns passages best first, each with \
its text, score, doc_id (its document) and `relations`, the graph facts that led to it \
(`via`: their ids); then the entities linked from the question, the relations stepped \
along, the bridge entities reached, and notes. Narrow it to some documents or metadata \
with `where` (`documents` lists the doc_ids). Methods: {methods}."""

ASK_HELP = """\
Answer a question about the knowledge graph {graph!r} in a few sentences written by the \
server's LLM from the passages retrieval finds, citing them as [n] (passage n of those \
returned with the answer, counted from 1). Use it when a finished, cited answer is wanted; \
use `search` to read the evidence yourself or to see more of it. `where` narrows the \
passages as for `search`."""

ENTITY_HELP = """\
Look up one entity of the knowledge graph {graph!r} by name and list its relations (facts \
as "subject predicate object" sentences, with how many passages state each) and its \
neighbours. Use it to explore around a name a search returned, e.g. everything the graph \
knows about a person; it does not search passages (use `search` for questions). An \
unknown name is an error."""

DOCUMENTS_HELP = """\
List the documents stored in the knowledge graph {graph!r} with their passage counts. Use \
it to learn what the graph covers and which doc_id values a `where` filter can name."""

INSTRUCTIONS = """\
hopgraph: multi-hop retrieval over the knowledge graph {graph!r}. Call `search` with the \
whole question (multi-hop questions too) to get passages and the graph relations that led \
to them; `entity` explores around a name; `documents` lists what is stored.{ask}"""


@contextmanager
def _as_tool_error() -> Iterator[None]:
    """A hopgraph error as a tool error (the agent reads its text: what, where, what to do);
    anything else stays a crash, which the SDK reports without its text."""
    try:
        yield
    except HopgraphError as exc:
        raise ToolError(str(exc)) from exc


def _result(text: str, data: Any) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data)


class GraphTools:
    """The tools over one served graph; each returns text and data (`mcp_views`)."""

    def __init__(self, service: GraphService) -> None:
        self.service = service

    @property
    def graph(self) -> str:
        """The name of the graph served."""
        return self.service.rag.name

    def search(self, question: Question,
               top_k: Annotated[TopK, Field(description="passages to return")] = DEFAULT_TOP_K,
               method: Method = registry.DEFAULT, where: WhereFilter = None
               ) -> Annotated[CallToolResult, views.SearchView]:
        """Passages for a question, with the relations and entities that led to them."""
        with _as_tool_error():
            query = Query(question, method, top_k, where=Where.parse(where))
            result = self.service.retrieve(query)
        view = views.search_view(result)
        return _result(views.search_text(view), view)

    def ask(self, question: Question,
            top_k: Annotated[TopK, Field(description="passages the answer is written "
                                                "from")] = ANSWER_TOP_K,
            where: WhereFilter = None) -> Annotated[CallToolResult, views.AnswerView]:
        """A cited answer written by the server's LLM (what `GraphRAG.ask` does, on the
        served version of the graph)."""
        llm = self.service.llm
        if llm is None:  # not listed then; a client that calls it anyway learns why
            raise ToolError("this server has no LLM to write answers; start `hopgraph mcp` "
                            "with --llm MODEL (or HOPGRAPH_LLM_MODEL), or call `search` for "
                            "the evidence")
        with _as_tool_error():
            query = Query(question, self.service.default_method(), top_k,
                          where=Where.parse(where))
            result = self.service.retrieve(query)
            text = "".join(stream_answer(llm, question, result.passages))
        view = views.answer_view(Answer(question, text, result, llm.usage.as_dict()))
        return _result(views.answer_text(view), view)

    def entity(self, name: EntityName) -> Annotated[CallToolResult, views.EntityView]:
        """An entity's relations and neighbours."""
        found = self.service.entity(name)
        if found is None:
            raise ToolError(f"no entity named {name!r} in graph {self.graph!r}; names come "
                            "from search results (entities, bridges, relations): search "
                            "first, then look up a name it gives")
        view = views.entity_view(found)
        return _result(views.entity_text(view), view)

    def documents(self) -> Annotated[CallToolResult, views.DocumentsView]:
        """The stored documents and their passage counts."""
        view = views.documents_view(self.service.documents())
        return _result(views.documents_text(view), view)


class GraphServer(MCPServer):
    """An `MCPServer` whose streamable HTTP app runs `guard` (ASGI middleware, such as the
    API-key check of `mcp_http`) in front of every request it serves."""

    def __init__(self, *args: Any, guard: Guard | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard

    def streamable_http_app(self, **options: Any) -> Any:
        """The SDK's app, guarded (the SDK's `run` serves what this returns)."""
        app = super().streamable_http_app(**options)
        if self.guard is not None:
            app.add_middleware(self.guard)
        return app


def _methods(has_llm: bool) -> str:
    """The methods, each with what it does (and whether this server can run it)."""
    listed = []
    for name in registry.names():
        method = registry.get(name)
        missing = method.needs_llm and not has_llm
        listed.append(f"{name} ({method.summary.rstrip('.')}"
                      f"{'; not here: this server has no LLM' if missing else ''})")
    return "; ".join(listed)


def build_server(service: GraphService, guard: Guard | None = None,
                 log_level: LogLevel = "WARNING") -> GraphServer:
    """The MCP server of `service`'s graph: `search`, `entity`, `documents`, and `ask` when
    the service has an LLM (without one it is not listed: an agent should not plan on it)."""
    tools = GraphTools(service)
    graph = tools.graph
    has_llm = service.llm is not None
    server = GraphServer(
        "hopgraph", title=f"hopgraph graph {graph!r}", version=__version__,
        instructions=INSTRUCTIONS.format(graph=graph, ask=(
            " `ask` returns an answer written from the passages, with citations."
            if has_llm else "")),
        guard=guard, log_level=log_level)
    server.add_tool(tools.search, name="search", title="Search the graph",
                    description=SEARCH_HELP.format(graph=graph, methods=_methods(has_llm)),
                    annotations=_READ_ONLY)
    if has_llm:
        server.add_tool(tools.ask, name="ask", title="Answer from the graph",
                        description=ASK_HELP.format(graph=graph), annotations=_READ_ONLY)
    server.add_tool(tools.entity, name="entity", title="Look up an entity",
                    description=ENTITY_HELP.format(graph=graph), annotations=_READ_ONLY)
    server.add_tool(tools.documents, name="documents", title="List the documents",
                    description=DOCUMENTS_HELP.format(graph=graph), annotations=_READ_ONLY)
    return server
