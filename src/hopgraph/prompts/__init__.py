"""Prompt templates, kept as text files beside the code that fills them."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def template(name: str) -> str:
    """The text of prompts/<name>.txt."""
    return resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def fill(name: str, **values: str) -> str:
    """The template with each <<KEY>> marker replaced (JSON braces stay untouched)."""
    text = template(name)
    for key, value in values.items():
        text = text.replace(f"<<{key.upper()}>>", value)
    return text
