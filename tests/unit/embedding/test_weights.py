"""safetensors files mapped, not read: float32 tensors kept, others skipped, bad headers refused.
(Damaged offsets and shapes: test_minilm.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deep_research.embedding.weights import mapped_tensors


def write(path: Path, header: Any, body: bytes) -> Path:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + body)
    return path


def test_float32_tensors_come_back_with_their_shape_and_values(tmp_path: Path) -> None:
    matrix = np.arange(6, dtype="<f4").reshape(2, 3)
    ids = np.arange(2, dtype="<i8")
    body = matrix.tobytes() + ids.tobytes()
    header = {
        "__metadata__": {"format": "pt"},
        "m": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "ids": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    tensors = mapped_tensors(write(tmp_path / "w.safetensors", header, body))
    assert list(tensors) == ["m"]  # metadata and int64 position ids are not read
    np.testing.assert_array_equal(tensors["m"], matrix)
    assert tensors["m"].dtype == np.float32 and not tensors["m"].flags.writeable


@pytest.mark.parametrize(
    ("header", "body"),
    [
        (b"[1, 2]", b""),  # JSON, but not an object
        (b"{not json", b""),
        ({"w": "F32"}, b""),  # a tensor entry that is not an object
        ({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, bytes(8)),  # size
        ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(4)),  # past end
        (b"{", b""),  # a header length under two bytes
    ],
)
def test_a_malformed_header_is_a_value_error(tmp_path: Path, header: Any, body: bytes) -> None:
    with pytest.raises(ValueError, match="safetensors|outside the file|Expecting"):
        mapped_tensors(write(tmp_path / "w.safetensors", header, body))


def test_a_file_shorter_than_its_length_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.safetensors"
    path.write_bytes(b"\x02\x00")
    with pytest.raises(ValueError, match="not a safetensors file"):
        mapped_tensors(path)
