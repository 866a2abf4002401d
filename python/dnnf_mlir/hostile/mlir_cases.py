"""Hostile MLIR: random edits of valid ECG IR (the seed models as dnnf-translate
prints them, and as bytecode) -- truncated and dropped lines, wrong types and
shapes, unknown ops, bad attributes, swapped SSA names -- plus hand-made ones."""

from __future__ import annotations

import random
import re

from ..asm import module_to_bytecode, module_to_text
from ..context import make_context
from ..frontend.onnx_importer import import_onnx
from .onnx_cases import Case, flip_bytes, truncate
from .seeds import SEEDS

_TYPE = re.compile(r"\b(f32|f16|f64|i64|i32|i1|bf16)\b")
_DIM = re.compile(r"(?<=[<x])(\d+)(?=x)")
_OP = re.compile(r'"ecg\.(\w+)"')
_ATTR = re.compile(r"(\w+) = ([^,}]+)")
_SSA = re.compile(r"%(\w+)")
ODD_TYPES = ("f32", "i32", "i1", "f16", "index", "tensor<2xf32>", "none", "!ecg.bogus")
ODD_OPS = ("bogus", "add", "relu", "gather", "fused", "constant", "yield", "mat_mul", "conv")
ODD_ATTRS = ('"x"', "99 : i64", "-99 : i64", "1.5 : f32", "[]", "[0, 0, 0]", "unit", "dense<1> : tensor<3xi64>",
             f"{1 << 62} : i64")


def seed_modules() -> dict:
    """name -> (MLIR text, MLIR bytecode) of each seed model, imported in a context of its own."""
    modules = {}
    for name, make in SEEDS.items():
        module = import_onnx(make(), context=make_context())
        modules[name] = (module_to_text(module), module_to_bytecode(module))
    return modules


def _lines(rng, text):
    lines = text.split("\n")
    return lines, rng.randrange(len(lines))


def _truncate_line(rng, text):
    lines, i = _lines(rng, text)
    lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    return "\n".join(lines)


def _drop_line(rng, text):
    lines, i = _lines(rng, text)
    del lines[i]
    return "\n".join(lines)


def _duplicate_line(rng, text):
    lines, i = _lines(rng, text)
    lines.insert(i, lines[i])
    return "\n".join(lines)


def _sub_one(pattern, replace):
    def mutate(rng, text):
        matches = list(pattern.finditer(text))
        if not matches:
            return text + "\n}"
        m = rng.choice(matches)
        return text[: m.start()] + replace(rng, m) + text[m.end():]

    mutate.__name__ = replace.__name__
    return mutate


def _wrong_type(rng, m):
    return rng.choice(ODD_TYPES)


def _wrong_dim(rng, m):
    return str(rng.choice((0, 1, 2, 7, 1 << 40, 1 << 62)))


def _unknown_op(rng, m):
    return f'"ecg.{rng.choice(ODD_OPS)}"'


def _bad_attribute(rng, m):
    return f"{rng.choice((m.group(1), 'bogus'))} = {rng.choice(ODD_ATTRS)}"


def _swap_ssa(rng, m):
    return f"%{rng.choice(('0', '1', '2', '3', 'arg0', 'arg9', '99'))}"


def _garble(rng, text):
    i = rng.randrange(len(text))
    return text[:i] + rng.choice(("{", "}", "(", ")", '"', ":", "->", "\x00", "\u00e9", "#", "^bb1:")) + text[i + 1:]


TEXT_MUTATIONS = (_truncate_line, _drop_line, _duplicate_line, _sub_one(_TYPE, _wrong_type), _sub_one(_DIM, _wrong_dim),
                  _sub_one(_OP, _unknown_op), _sub_one(_ATTR, _bad_attribute), _sub_one(_SSA, _swap_ssa), _garble)


def random_cases(rng: random.Random, count: int, modules: dict) -> list:
    """``count`` random edits of the seed modules: one in eight on the bytecode."""
    cases = []
    for index in range(count):
        name = rng.choice(sorted(modules))
        text, bytecode = modules[name]
        if index % 8 == 7:
            mutate = rng.choice((flip_bytes, truncate))
            cases.append(Case(f"{name}-bytecode-{mutate.__name__}-{index}", mutate(rng, bytecode), ".mlirbc"))
            continue
        for _ in range(rng.randint(1, 2)):
            mutate = rng.choice(TEXT_MUTATIONS)
            text = mutate(rng, text)
        cases.append(Case(f"{name}-{mutate.__name__}-{index}", text.encode("utf-8", "surrogatepass"), ".mlir"))
    return cases


def handmade_cases() -> list:
    """Malformed IR every tool must reject with a located diagnostic."""
    def mlir(name, text):
        return Case(name, text.encode(), ".mlir", must_fail=True)

    fn = "func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {{\n{body}\n}}\n"
    return [
        Case("empty-module", b"", ".mlir"),  # valid for dnnf-opt, not for dnnf-run
        mlir("unknown-ecg-op", fn.format(body='  %0 = "ecg.frobnicate"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>')),
        mlir("wrong-result-type", fn.format(body='  %0 = "ecg.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xi32>\n  return %0 : tensor<3xi32>')),
        mlir("wrong-arity", fn.format(body='  %0 = "ecg.add"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>')),
        mlir("bad-axis", fn.format(body='  %0 = "ecg.softmax"(%arg0) {axis = 7 : i64} : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>')),
        mlir("attribute-of-wrong-kind", fn.format(body='  %0 = "ecg.softmax"(%arg0) {axis = "x"} : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>')),
        mlir("use-before-def", fn.format(body='  %0 = "ecg.relu"(%1) : (tensor<2xf32>) -> tensor<2xf32>\n  %1 = "ecg.relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>')),
        mlir("missing-return", fn.format(body='  %0 = "ecg.relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>')),
        mlir("huge-tensor", "func.func @main(%arg0: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {\n"
             '  %0 = "ecg.relu"(%arg0) : (tensor<1099511627776xf32>) -> tensor<1099511627776xf32>\n'
             "  return %0 : tensor<1099511627776xf32>\n}\n"),
        mlir("dynamic-tensor", "func.func @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {\n"
             '  %0 = "ecg.relu"(%arg0) : (tensor<?xf32>) -> tensor<?xf32>\n  return %0 : tensor<?xf32>\n}\n'),
        mlir("gather-constant-out-of-range", fn.format(body=(
            '  %i = "ecg.constant"() {value = dense<[0, 9]> : tensor<2xi64>} : () -> tensor<2xi64>\n'
            '  %0 = "ecg.gather"(%arg0, %i) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32>\n'
            "  return %0 : tensor<2xf32>"))),
        mlir("resource-blob-too-short", fn.format(body=(
            '  %c = "ecg.constant"() {value = dense_resource<blob> : tensor<2xf32>} : () -> tensor<2xf32>\n'
            '  %0 = "ecg.add"(%arg0, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
            "  return %0 : tensor<2xf32>")) + '\n{-#\n  dialect_resources: {\n    builtin: {\n      blob: "0x0400000000"\n    }\n  }\n#-}\n'),
        mlir("missing-resource", fn.format(body=(
            '  %c = "ecg.constant"() {value = dense_resource<nothere> : tensor<2xf32>} : () -> tensor<2xf32>\n'
            '  %0 = "ecg.add"(%arg0, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
            "  return %0 : tensor<2xf32>"))),
        Case("binary-garbage", bytes(range(256)), ".mlir", True),
        Case("bytecode-magic-only", b"ML\xefR", ".mlirbc", True),
    ]
