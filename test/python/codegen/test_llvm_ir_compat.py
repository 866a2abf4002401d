"""make_llc_compatible: infinities and NaNs as the second operand of an instruction
(``fcmp oeq float %x, -inf``, which IsInf lowers to) and of half type are rewritten in
the hexadecimal form opt-22 parses."""

import subprocess

import pytest

from dnnf_mlir.codegen.cpu.objects import make_llc_compatible
from dnnf_mlir.codegen.cpu.toolchain import find_opt

MODULE = """
define i1 @is_negative_infinity(float %x) {
  %r = fcmp oeq float %x, -inf
  ret i1 %r
}

define half @infinity_if(i1 %c, half %x) {
  %r = select i1 %c, half %x, half inf
  ret half %r
}

define double @plus_nan(double %x) {
  %r = fadd double nan, %x
  ret double %r
}
"""


def test_special_literals_rewritten():
    text = make_llc_compatible(MODULE)
    assert "float %x, 0xFFF0000000000000" in text
    assert "half %x, half 0xH7C00" in text
    assert "double 0x7FF8000000000000, %x" in text


@pytest.mark.skipif(find_opt() is None, reason="opt-22 is not installed")
def test_rewritten_module_parses():
    for text, parses in ((MODULE, False), (make_llc_compatible(MODULE), True)):
        result = subprocess.run([find_opt(), "-o", "/dev/null", "-"], input=text, capture_output=True, text=True)
        assert (result.returncode == 0) == parses, result.stderr
