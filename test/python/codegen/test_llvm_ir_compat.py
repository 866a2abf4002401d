"""make_llc_compatible: infinities and NaNs as the second operand of an instruction
(``fcmp oeq float %x, -inf``, which IsInf lowers to) and of half type are rewritten in
the hexadecimal form opt-22 parses; so are bfloat literals (decimals of 6 digits, which are
not their exact values, and 4-digit hexadecimal ones, which would read as a half's)."""

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

define bfloat @bfloat_literals(bfloat %x) {
  %a = fadd bfloat %x, -5.429690e-01
  %b = select i1 true, bfloat %a, bfloat inf
  %c = fadd bfloat %b, f0x3FC0
  ret bfloat %c
}

define <2 x bfloat> @bfloat_vector(<2 x bfloat> %x) {
  %r = fmul <2 x bfloat> %x, <bfloat 1.296880e+00, bfloat f0xBF80>
  ret <2 x bfloat> %r
}

define double @plus_nan(double %x) {
  %r = fadd double nan, %x
  ret double %r
}

define <4 x float> @quiet_nan_splat(<4 x i1> %c, <4 x float> %x) {
  %r = select <4 x i1> %c, <4 x float> splat (float +qnan), <4 x float> %x
  ret <4 x float> %r
}
"""


def test_special_literals_rewritten():
    text = make_llc_compatible(MODULE)
    assert "float %x, 0xFFF0000000000000" in text
    assert "half %x, half 0xH7C00" in text
    assert "double 0x7FF8000000000000, %x" in text
    assert "splat (float 0x7FF8000000000000)" in text  # newer LLVM's quiet NaN spelling
    # a bfloat's 6-digit decimal is not its value (-0.54296875): its bits; hex literals as 0xR, not a half's 0xH
    assert "bfloat %x, 0xRBF0B" in text and "bfloat %a, bfloat 0xR7F80" in text and "bfloat %b, 0xR3FC0" in text
    assert "<bfloat 0xR3FA6, bfloat 0xRBF80>" in text


@pytest.mark.skipif(find_opt() is None, reason="opt-22 is not installed")
def test_rewritten_module_parses():
    for text, parses in ((MODULE, False), (make_llc_compatible(MODULE), True)):
        result = subprocess.run([find_opt(), "-o", "/dev/null", "-"], input=text, capture_output=True, text=True)
        assert (result.returncode == 0) == parses, result.stderr
