"""convert-ecg-to-linalg on the bitwise and trigonometric ops: the interpreter (numpy)
against the loops harness and the optimizing code generator, as test_ecg_to_linalg checks
every other element-wise op."""

import numpy as np
import pytest
from test_ecg_to_linalg import RNG, check

# mnemonic -> inputs inside its domain (values of order 1, where the functions are steep enough
# that a wrong function or a swapped operand fails rtol 1e-5)
TRIGONOMETRIC = {
    "tan": (-1.4, 1.4), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atan": (-6, 6), "sinh": (-4, 4),
    "cosh": (-4, 4), "asinh": (-6, 6), "acosh": (1.01, 8), "atanh": (-0.99, 0.99),
}


@pytest.mark.parametrize("mnemonic", TRIGONOMETRIC)
def test_trigonometric(mnemonic):
    low, high = TRIGONOMETRIC[mnemonic]
    check([RNG.uniform(low, high, (3, 37)).astype(np.float32)], lambda b, x: b.op(mnemonic, x))


def _full_range(dtype, shape):
    limits = np.iinfo(dtype)
    return RNG.integers(limits.min, limits.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64])
def test_bitwise(dtype):
    """Every bit pattern of the type, broadcast (4, 1, 6) against (3, 1)."""
    x, y = _full_range(dtype, (4, 1, 6)), _full_range(dtype, (3, 1))
    check([x, y], lambda b, x, y: [b.op(m, x, y) for m in ("bitwise_and", "bitwise_or", "bitwise_xor")]
          + [b.op("bitwise_not", x)])
