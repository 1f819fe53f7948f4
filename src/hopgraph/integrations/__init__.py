"""Adapters for other frameworks (LangChain, LlamaIndex, MCP): each needs its extra."""
