"""BERT's exact GELU in numpy, for the MiniLM forward pass (`minilm.py`)."""

from __future__ import annotations

import math

import numpy as np

from deep_research.embedding.weights import FloatArray


def gelu(x: FloatArray) -> FloatArray:
    """BERT's exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), in place on fresh buffers: the
    inner layer is the largest array of the forward pass, and each temporary of that size
    costs more than the arithmetic. numpy has no erf: Abramowitz & Stegun 7.1.26, with an
    absolute error below 1.5e-7 (float32's own precision)."""
    z = x * np.float32(1 / math.sqrt(2))
    a = np.abs(z)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    erfc = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        erfc += np.float32(coefficient)
        erfc *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    erfc *= a  # erfc(|z|)
    np.subtract(1, erfc, out=erfc)  # erf(|z|)
    np.copysign(erfc, z, out=erfc)  # erf(z)
    erfc += 1
    erfc *= x
    erfc *= np.float32(0.5)
    return erfc
