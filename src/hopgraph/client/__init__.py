"""`hopgraph serve`'s REST API from Python: `Client` (blocking) and `AsyncClient` (asyncio),
over httpx. Results are hopgraph's own records (`PassageHit`, `Retrieval`, `Answer`) or the
typed `Comparison` and ask events; the server's errors are raised as typed errors that also
derive from the hopgraph error the same failure raises in process (docs/client.md).

    with Client("http://127.0.0.1:8000", api_key="...") as client:
        for hit in client.retrieve("Who founded the company?", top_k=3).passages:
            print(hit.score, hit.text)
"""

from hopgraph.client.aio import AsyncClient
from hopgraph.client.errors import (
    ApiError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    ServerError,
    TooLarge,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    UpstreamFailed,
)
from hopgraph.client.events import AskEvent, Done, Evidence, NoAnswer, Token
from hopgraph.client.results import Comparison, PassageHitWithMetadata
from hopgraph.client.sync import Client

__all__ = [
    "ApiError",
    "AskEvent",
    "AsyncClient",
    "BadRequest",
    "Client",
    "Comparison",
    "Conflict",
    "ConnectionFailed",
    "Done",
    "Evidence",
    "Forbidden",
    "InvalidRequest",
    "MethodNotAllowed",
    "NoAnswer",
    "NotFound",
    "PassageHitWithMetadata",
    "ServerError",
    "Token",
    "TooLarge",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "UpstreamFailed",
]
