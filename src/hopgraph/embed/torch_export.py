"""The torch side of the ONNX export. Imported only while exporting: it imports torch."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch


class HiddenStates(torch.nn.Module):
    """BertModel reduced to (input_ids, attention_mask) -> last hidden state.

    The exporter passes inputs by position, and BertModel's positional parameters differ
    between transformers versions ("got multiple values for argument 'use_cache'").
    """

    def __init__(self, bert: Any) -> None:
        super().__init__()
        self.bert = bert

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The transformer's last hidden state."""
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def export(model: Any, path: Path) -> None:
    """Write a sentence-transformers model's transformer to `path` as ONNX (opset 17), with
    dynamic batch and sequence axes."""
    sample = model.tokenizer(["an export sample", "a second, longer export sample"],
                             padding=True, return_tensors="pt")
    names = ("input_ids", "attention_mask", "last_hidden_state")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notices
        torch.onnx.export(HiddenStates(model[0].auto_model.eval()),
                          (sample["input_ids"], sample["attention_mask"]), str(path),
                          input_names=list(names[:2]), output_names=[names[2]],
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names},
                          opset_version=17, dynamo=False)
