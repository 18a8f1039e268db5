"""A BERT encoder's layers as an ONNX graph, for onnxruntime to compute (`encoder.py`).

The graph holds no weights: each is named as the model's safetensors names it and given
to onnxruntime when the session is made (`add_external_initializers`, which copies it;
every weight the graph names is given, so the place it says they are stored, "supplied",
is never looked for). It is written here as ONNX's protobuf messages (onnx.proto's field
numbers), since the `onnx` package, 17 MB, would be imported only to write these few
kilobytes. Its input is the embeddings' sum (`x`, one row a token
of the batch, padding included) and the attention mask as a large negative where a
position is padding (`blocked`, batch × 1 × 1 × length); its output `y` is the last
layer's rows, which `encoder.py` pools.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

# ONNX's numbers for what the graph uses: tensor element types, attribute types, the IR
# version whose operator set 20 (Gelu) onnxruntime 1.17 and later read.
FLOAT, INT64 = 1, 7
ATTRIBUTE_FLOAT, ATTRIBUTE_INT, ATTRIBUTE_INTS = 1, 2, 7
IR_VERSION, OPSET = 9, 20
EXTERNAL = 1  # TensorProto.DataLocation: its data comes from elsewhere (here: supplied)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 is its two's complement, ten bytes
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _float(field: int, value: float) -> bytes:
    return _varint(field << 3 | 5) + struct.pack("<f", value)


def _attribute(name: str, value: float | int | list[int]) -> bytes:
    # AttributeProto: name 1, f 2, i 3, ints 8, type 20.
    if isinstance(value, list):
        body = b"".join(_int(8, v) for v in value) + _int(20, ATTRIBUTE_INTS)
    elif isinstance(value, float):  # a whole-number float must be a float (`float(eps)`)
        body = _float(2, value) + _int(20, ATTRIBUTE_FLOAT)
    else:
        body = _int(3, value) + _int(20, ATTRIBUTE_INT)
    return _bytes(1, name) + body


def _tensor_type(element: int, dims: list[int | str]) -> bytes:
    # TypeProto.tensor_type 1 { elem_type 1, shape 2 { dim 1 { dim_value 1 | dim_param 2 } } }
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(1, _int(1, element) + _bytes(2, shape))


def _value_info(name: str, element: int, dims: list[int | str]) -> bytes:
    return _bytes(1, name) + _bytes(2, _tensor_type(element, dims))  # ValueInfoProto


def _constant(name: str, element: int, values: list[int] | list[float]) -> bytes:
    # TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian).
    code = "<q" if element == INT64 else "<f"
    raw = b"".join(struct.pack(code, v) for v in values)
    return _int(1, len(values)) + _int(2, element) + _bytes(8, name) + _bytes(9, raw)


def _supplied(name: str, dims: tuple[int, ...]) -> bytes:
    # TensorProto with external_data 13 { key 1, value 2 } and data_location 14: onnxruntime
    # takes it from the session's options (`add_external_initializers`), never from a file.
    entry = _bytes(1, "location") + _bytes(2, "supplied")
    return (
        b"".join(_int(1, d) for d in dims)
        + _int(2, FLOAT)
        + _bytes(8, name)
        + _bytes(13, entry)
        + _int(14, EXTERNAL)
    )


@dataclass(frozen=True)
class Shape:
    """What the graph is made for: config.json's numbers."""

    layers: int
    heads: int
    hidden: int
    inner: int
    eps: float


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.initializers: list[bytes] = []
        self.weights: dict[str, tuple[int, ...]] = {}

    def node(self, op: str, inputs: list[str], out: str, **attributes: float | list[int]) -> str:
        # NodeProto: input 1, output 2, name 3, op_type 4, attribute 5.
        self.nodes.append(
            b"".join(_bytes(1, name) for name in inputs)
            + _bytes(2, out)
            + _bytes(3, out)
            + _bytes(4, op)
            + b"".join(_bytes(5, _attribute(k, v)) for k, v in attributes.items())
        )
        return out

    def weight(self, name: str, *dims: int) -> str:
        self.weights[name] = dims
        self.initializers.append(_supplied(name, dims))
        return name


def layers(shape: Shape) -> tuple[bytes, dict[str, tuple[int, ...]]]:
    """The serialized model and the weights it is to be given (name → shape)."""
    g = _Graph()
    h, size = shape.hidden, shape.hidden // shape.heads
    g.initializers += [
        _constant("first", INT64, [0]),
        _constant("last", INT64, [3]),
        _constant("per_head", INT64, [shape.heads, size]),
        _constant("rows", INT64, [-1, h]),
        _constant("scale", FLOAT, [size**-0.5]),
    ]
    # [batch, length, heads, size], from the mask's shape: `x` has a row a token.
    g.node("Shape", ["blocked"], "mask_shape")
    g.node("Gather", ["mask_shape", "first"], "batch", axis=0)
    g.node("Gather", ["mask_shape", "last"], "length", axis=0)
    g.node("Concat", ["batch", "length", "per_head"], "split", axis=0)

    def linear(x: str, name: str, rows: int, columns: int, out: str) -> str:
        weight = g.weight(f"{name}.weight", rows, columns)
        return g.node("Gemm", [x, weight, g.weight(f"{name}.bias", rows)], out, transB=1)

    def layer_norm(x: str, name: str, out: str) -> str:
        scale, shift = g.weight(f"{name}.weight", h), g.weight(f"{name}.bias", h)
        eps = float(shape.eps)
        return g.node("LayerNormalization", [x, scale, shift], out, axis=-1, epsilon=eps)

    x = layer_norm("x", "embeddings.LayerNorm", "embedded")
    for i in range(shape.layers):
        p = f"encoder.layer.{i}."

        def heads(x: str, p: str, projection: str, order: list[int]) -> str:
            y = linear(x, f"{p}attention.self.{projection}", h, h, f"{p}{projection}")
            split = g.node("Reshape", [y, "split"], f"{p}{projection}.split")
            return g.node("Transpose", [split], f"{p}{projection}.heads", perm=order)

        q = heads(x, p, "query", [0, 2, 1, 3])
        k = heads(x, p, "key", [0, 2, 3, 1])  # transposed for q·k
        v = heads(x, p, "value", [0, 2, 1, 3])
        scores = g.node("MatMul", [q, k], f"{p}scores")
        scores = g.node("Mul", [scores, "scale"], f"{p}scaled")
        scores = g.node("Add", [scores, "blocked"], f"{p}masked")
        attention = g.node("Softmax", [scores], f"{p}attention", axis=-1)
        context = g.node("MatMul", [attention, v], f"{p}context")
        context = g.node("Transpose", [context], f"{p}context.tokens", perm=[0, 2, 1, 3])
        context = g.node("Reshape", [context, "rows"], f"{p}context.rows")
        out = linear(context, f"{p}attention.output.dense", h, h, f"{p}attended")
        out = g.node("Add", [out, x], f"{p}attended.residual")
        x = layer_norm(out, f"{p}attention.output.LayerNorm", f"{p}attended.normed")
        inner = linear(x, f"{p}intermediate.dense", shape.inner, h, f"{p}inner")
        inner = g.node("Gelu", [inner], f"{p}inner.gelu")  # exact (erf), as BERT's
        out = linear(inner, f"{p}output.dense", h, shape.inner, f"{p}output")
        out = g.node("Add", [out, x], f"{p}output.residual")
        x = layer_norm(out, f"{p}output.LayerNorm", "y" if i == shape.layers - 1 else f"{p}out")
    # GraphProto: node 1, name 2, initializer 5, input 11, output 12.
    graph = (
        b"".join(_bytes(1, node) for node in g.nodes)
        + _bytes(2, "encoder")
        + b"".join(_bytes(5, tensor) for tensor in g.initializers)
        + _bytes(11, _value_info("x", FLOAT, ["rows", h]))
        + _bytes(11, _value_info("blocked", FLOAT, ["batch", 1, 1, "length"]))
        + _bytes(12, _value_info("y", FLOAT, ["rows", h]))
    )
    # ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 { version 2 }.
    model = _int(1, IR_VERSION) + _bytes(2, "deep_research") + _bytes(7, graph)
    return model + _bytes(8, _int(2, OPSET)), g.weights
