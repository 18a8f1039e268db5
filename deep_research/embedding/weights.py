"""The float32 tensors of a safetensors file, mapped rather than read (MiniLM's weights)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

FloatArray = np.ndarray[Any, np.dtype[np.float32]]


def mapped_tensors(file: BinaryIO | Path) -> dict[str, FloatArray]:
    """The float32 tensors of a safetensors file, mapped, not read: the OS pages in the
    embeddings' rows a pass reads, and the layers' weights as onnxruntime copies them,
    without holding the GIL while a run is starting. The format: an 8-byte little-endian
    header length, a JSON header naming each tensor's dtype, shape and byte range, then the
    bytes. The mapping is of `file`'s descriptor (when given an open file): the file hashed
    is the file mapped."""
    path = file if isinstance(file, Path) else getattr(file, "name", "safetensors file")
    data = np.memmap(file, dtype=np.uint8, mode="r", offset=0).view(np.ndarray)
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file")
    size = int.from_bytes(bytes(data[:8]), "little")
    if not 2 <= size <= min(len(data) - 8, 100_000_000):
        raise ValueError(f"{path}: not a safetensors file")
    header = json.loads(bytes(data[8 : 8 + size]))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file (its header is not an object)")
    body = data[8 + size :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: not a safetensors file (tensor {name} is not an object)")
        if entry.get("dtype") != "F32":
            continue  # e.g. BERT's int64 position ids, which the forward pass does not read
        begin, end, shape = _placement(path, name, entry)
        if not 0 <= begin <= end <= len(body) or end - begin != 4 * math.prod(shape):
            raise ValueError(f"{path}: tensor {name} lies outside the file")
        tensors[name] = body[begin:end].view("<f4").reshape(shape)
    return tensors


def _placement(path: object, name: str, entry: dict[str, Any]) -> tuple[int, int, tuple[int, ...]]:
    """A tensor's byte range and shape, as whole numbers (a damaged header: ValueError)."""
    offsets, shape = entry.get("data_offsets"), entry.get("shape")
    if not (
        isinstance(offsets, list)
        and len(offsets) == 2
        and isinstance(shape, list)
        and all(type(n) is int and n >= 0 for n in [*offsets, *shape])
    ):
        raise ValueError(f"{path}: not a safetensors file (tensor {name}'s offsets or shape)")
    return offsets[0], offsets[1], tuple(shape)
