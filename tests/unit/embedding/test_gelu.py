"""embedding.gelu: numpy's GELU matches the exact x·Φ(x) computed with math.erf."""

from __future__ import annotations

import math

import numpy as np

from deep_research.embedding.gelu import gelu


def _exact(x: float) -> float:
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def test_gelu_matches_the_erf_definition_at_many_points() -> None:
    x = np.concatenate(
        [np.linspace(-12, 12, 20_001), np.array([0.0, -0.0, 1e-8, -1e-8, 0.5, -3.0, 40.0, -40.0])]
    ).astype(np.float32)
    got = gelu(x)
    want = np.array([_exact(float(v)) for v in x])
    # A&S 7.1.26's erf is within 1.5e-7, scaled by |x|/2, plus float32 rounding.
    tolerance = 2e-7 * np.maximum(1.0, np.abs(x)) + 1e-7
    assert np.all(np.abs(got - want) <= tolerance), float(np.max(np.abs(got - want)))


def test_gelu_keeps_shape_and_float32_and_leaves_its_input_alone() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(scale=3.0, size=(4, 7, 33)).astype(np.float32)
    before = x.copy()
    got = gelu(x)
    assert got.shape == x.shape and got.dtype == np.float32
    assert np.array_equal(x, before)  # the forward pass reuses its input elsewhere
    assert got is not x


def test_gelu_is_odd_in_the_erf_sense_and_saturates() -> None:
    x = np.array([3.0, 8.0, 30.0], dtype=np.float32)
    # gelu(x) - gelu(-x) = x exactly in theory: the erf part is odd.
    assert np.allclose(gelu(x) - gelu(-x), x, atol=1e-6)
    assert np.allclose(gelu(x)[1:], x[1:], rtol=1e-7)  # Φ(x)→1
    assert np.all(np.abs(gelu(-x)[1:]) < 1e-6)  # Φ(-x)→0
    assert gelu(np.array([0.0], dtype=np.float32))[0] == 0.0


def test_gelu_stays_finite_at_the_float32_extremes() -> None:
    big = np.finfo(np.float32).max / 2
    x = np.array([big, -big], dtype=np.float32)
    with np.errstate(over="ignore"):  # x² overflows to inf; exp(-inf) is still 0
        got = gelu(x)
    assert got[0] == x[0] and got[1] == 0.0
    assert np.isnan(gelu(np.array([np.nan], dtype=np.float32)))[0]
