"""One outlined ``gpu.module`` -> OpenCL C 1.2 source, printed from the IR API.

The wheel has no C emitter (``translateToCpp`` is not bound) and PoCL takes no SPIR-V,
so the OpenCL target prints its kernels itself, from the same mapped code the Vulkan
target converts (``device.lower_device_code``, then ``storage.vectorize_storage``:
buffers of ``vector<4xf32>`` are ``float4`` arrays). Each ``gpu.func`` becomes a
``__kernel`` whose buffer arguments come as (buffer, byte offset) pairs: a dispatch
binds any range of a buffer, which ``clCreateSubBuffer``'s alignment rule would not
allow. Values are SSA: each result is a ``const`` local named after its op; loop and
``scf.if`` results are variables assigned at their ``scf.yield``.

Semantics kept from MLIR, not C: ``arith.maximumf`` / ``minimumf`` propagate NaN (C's
``fmax`` / ``fmin`` drop it: they print the ``maxnumf`` / ``minnumf`` ops); unordered
float predicates are true on NaN; unsigned integer ops go through unsigned types;
vector conversions use ``convert_<type>``. An op without a rule here is a
``CodegenError`` naming it and its kernel.

fp16 storage (``half.py``): f16 values are held as ``float`` and their buffers read and
written through ``vload_half`` / ``vstore_half_rte``, unless the kernel computes in half
(then ``half`` values, under the ``cl_khr_fp16`` pragma, ``required_extensions``).
"""

from __future__ import annotations

from ...._mlir import ir
from ...errors import CodegenError
from ...lowered_module import symbol_name
from .half import EXTENSION, PRAGMA, is_half, needs_half_arithmetic

SCALAR_TYPES = {"f32": "float", "f16": "half", "f64": "double", "index": "long", "i64": "long", "i32": "int",
                "i16": "short", "i8": "char", "i1": "bool"}
UNSIGNED = {"long": "ulong", "int": "uint", "short": "ushort", "char": "uchar", "bool": "uchar"}
ELEMENT_IN_MEMORY = {"bool": "uchar"}  # booleans are bytes in buffers and arrays
GPU_IDS = {"gpu.block_id": "get_group_id", "gpu.thread_id": "get_local_id", "gpu.block_dim": "get_local_size",
           "gpu.grid_dim": "get_num_groups", "gpu.global_id": "get_global_id"}
DIMENSIONS = {"x": 0, "y": 1, "z": 2}

INFIX = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.divsi": "/", "arith.remsi": "%",
         "arith.andi": "&", "arith.ori": "|", "arith.xori": "^", "arith.shli": "<<", "arith.shrsi": ">>",
         "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
UNSIGNED_INFIX = {"arith.divui": "/", "arith.remui": "%", "arith.shrui": ">>"}
# NaN-propagating maximum / minimum: fmax(a, b) unless either is NaN (select(a, b, c) is c ? b : a,
# lane-wise on vectors, so one expression serves both).
NAN_PROPAGATING = {"arith.maximumf": "fmax", "arith.minimumf": "fmin"}
CALLS = {"arith.maxnumf": "fmax", "arith.minnumf": "fmin", "arith.maxsi": "max", "arith.minsi": "min",
         "arith.remf": "fmod", "math.powf": "pow", "math.atan2": "atan2", "math.copysign": "copysign",
         "math.fma": "fma", "vector.fma": "fma",
         "math.exp": "exp", "math.exp2": "exp2", "math.expm1": "expm1", "math.log": "log", "math.log2": "log2",
         "math.log10": "log10", "math.log1p": "log1p", "math.sqrt": "sqrt", "math.rsqrt": "rsqrt",
         "math.cbrt": "cbrt", "math.absf": "fabs", "math.absi": "abs", "math.floor": "floor", "math.ceil": "ceil",
         "math.round": "round", "math.roundeven": "rint", "math.trunc": "trunc", "math.erf": "erf",
         "math.tanh": "tanh", "math.sin": "sin", "math.cos": "cos", "math.tan": "tan", "math.asin": "asin",
         "math.acos": "acos", "math.atan": "atan", "math.sinh": "sinh", "math.cosh": "cosh",
         "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh"}
UNSIGNED_CALLS = {"arith.maxui": "max", "arith.minui": "min"}
CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}  # eq ne slt sle sgt sge
CMPI_UNSIGNED = {6: "<", 7: "<=", 8: ">", 9: ">="}  # ult ule ugt uge
CMPF_ORDERED = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<="}  # C's relational operators are false on NaN
CMPF_UNORDERED = {9: "<=", 10: "<", 11: ">=", 12: ">"}  # ugt uge ult ule: the negated ordered opposite
CASTS = ("arith.index_cast", "arith.index_castui", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
         "arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci")
UNSIGNED_SOURCE = ("arith.index_castui", "arith.uitofp", "arith.extui")
LANES = "0123456789abcdef"


def c_type(t: ir.Type, half: str = "half") -> str:
    """The OpenCL C type of a scalar or 1-d vector ``t`` (``vector<4xi1>``: ``int4``, what
    OpenCL's vector comparisons give); f16 is ``half`` (``float`` where halves are held
    as floats, ``half.py``)."""
    if isinstance(t, ir.VectorType) and ir.VectorType(t).rank == 0:  # vector<f32>: one element
        return c_type(ir.VectorType(t).element_type, half)
    if isinstance(t, ir.VectorType):
        vector = ir.VectorType(t)
        if vector.rank != 1 or vector.shape[0] not in (2, 3, 4, 8, 16):
            raise CodegenError(f"no OpenCL C vector type for {t}")
        element = c_type(vector.element_type, half)
        return f"{'int' if element == 'bool' else element}{vector.shape[0]}"
    name = str(t)
    if name not in SCALAR_TYPES:
        raise CodegenError(f"no OpenCL C type for {t}")
    return half if name == "f16" else SCALAR_TYPES[name]


def _is_vector(value) -> bool:
    """Whether ``value`` is an OpenCL C vector (a 0-d MLIR vector is a scalar there)."""
    return isinstance(value.type, ir.VectorType) and ir.VectorType(value.type).rank > 0


def _width(value) -> str:
    """The ``N`` of ``vload_halfN`` for ``value``: its lanes, or nothing for a scalar."""
    return str(ir.VectorType(value.type).shape[0]) if _is_vector(value) else ""


def _lane_value(name: str, t: ir.Type) -> str:
    """A scalar as a lane of a vector: a boolean is -1 there (what vector comparisons give,
    and the bit ``select`` reads)."""
    return f"({name} ? -1 : 0)" if str(t) == "i1" else name


def _float_literal(value: float, t: str) -> str:
    if value != value:
        return "NAN"
    if value in (float("inf"), float("-inf")):
        return ("-" if value < 0 else "") + "INFINITY"
    return value.hex() + ("f" if t == "float" else "h" if t == "half" else "")


def _scalar_literal(attr: ir.Attribute, t: str) -> str:
    if isinstance(attr, ir.FloatAttr):
        return _float_literal(ir.FloatAttr(attr).value, t)
    return _integer_literal(ir.IntegerAttr(attr).value, t)


def _integer_literal(value: int, t: str) -> str:
    if t == "bool":
        return "true" if value else "false"
    if t == "long":
        return f"{value}L" if value != -(1 << 63) else "(-9223372036854775807L - 1)"
    return str(value)


class _KernelPrinter:
    """Prints one ``gpu.func``: ``lines`` its body, ``local`` its workgroup arrays (which
    OpenCL C declares at the kernel's outermost scope)."""

    def __init__(self, function, kernel: str, half_in_float: bool):
        self.function = function
        self.kernel = kernel
        self.half_in_float = half_in_float  # f16 values held as float, memory through vload_half (``half.py``)
        self.names = {}
        self.lines, self.local = [], []
        self.depth = 1
        self.rules = {name: self.infix for name in INFIX}
        self.rules.update({name: self.infix for name in UNSIGNED_INFIX})
        self.rules.update({name: self.call for name in (*CALLS, *UNSIGNED_CALLS)})
        self.rules.update({name: self.nan_propagating for name in NAN_PROPAGATING})
        self.rules.update({name: self.cast for name in CASTS})
        self.rules.update({name: self.gpu_id for name in GPU_IDS})
        self.rules.update({
            "arith.constant": self.constant, "arith.negf": self.negate, "arith.cmpi": self.compare_integers,
            "arith.cmpf": self.compare_floats, "arith.select": self.select, "arith.bitcast": self.bitcast,
            "memref.load": self.load, "memref.store": self.store, "memref.alloc": self.allocate,
            "memref.alloca": self.allocate, "memref.subview": self.subview,
            "memref.reinterpret_cast": self.subview, "vector.load": self.vector_load,
            "vector.store": self.vector_store, "vector.broadcast": self.broadcast, "vector.splat": self.broadcast,
            "vector.extract": self.extract, "vector.insert": self.insert, "vector.from_elements": self.from_elements,
            "vector.to_elements": self.to_elements,
            "vector.reduction": self.reduction, "scf.for": self.loop, "scf.if": self.branch,
            "gpu.barrier": self.barrier, "ub.poison": self.poison, "gpu.return": self.ret,
        })
        self.views = {}  # memref value -> (pointer name, element offset expression)

    # ----- types

    def c_type(self, t: ir.Type) -> str:
        return c_type(t, "float" if self.half_in_float else "half")

    def memory_type(self, t: ir.Type) -> str:
        """The pointee of a buffer or array of element ``t``: f16 and its vectors ``half``
        where read through ``vload_half``."""
        if self.half_in_float and is_half(t):
            return "half"
        name = self.c_type(t)
        return ELEMENT_IN_MEMORY.get(name, name)

    def lane_type(self, t: ir.Type) -> str:
        """The C type of one lane of a vector of element type ``t``."""
        return "int" if str(t) == "i1" else self.c_type(t)

    # ----- names and lines

    def emit(self, line: str):
        self.lines.append("  " * self.depth + line)

    def name(self, value) -> str:
        return self.names[value]

    def define(self, op, expression: str, prefix: str = "v", result=None):
        result = op.results[0] if result is None else result
        name = self.names[result] = f"{prefix}{len(self.names)}"
        self.emit(f"const {self.c_type(result.type)} {name} = {expression};")

    def variable(self, value, prefix: str) -> str:
        name = self.names[value] = f"{prefix}{len(self.names)}"
        self.emit(f"{self.c_type(value.type)} {name};")
        return name

    def fail(self, op, what: str):
        raise CodegenError(f"OpenCL C: kernel {self.kernel}: {what} ({op.name})")

    # ----- the kernel

    def print(self) -> str:
        body = self.function.regions[0].blocks[0]
        parameters, prologue = [], []
        for index, argument in enumerate(body.arguments):
            if not isinstance(argument.type, ir.MemRefType):
                self.fail(self.function, f"argument {index} is {argument.type}, not a buffer")
            element = self.memory_type(ir.MemRefType(argument.type).element_type)
            name = self.names[argument] = f"a{index}"
            parameters.append(f"__global uchar *{name}_buffer, ulong {name}_offset")
            prologue.append(f"  __global {element} *{name} = (__global {element} *)({name}_buffer + {name}_offset);")
        self.block(body)
        x, y, z = list(ir.DenseI32ArrayAttr(self.function.attributes["known_block_size"]))
        return "\n".join([f"__kernel __attribute__((reqd_work_group_size({x}, {y}, {z})))",
                          f"void {self.kernel}({', '.join(parameters)}) {{", *prologue, *self.local, *self.lines, "}"])

    def block(self, block, on_yield=None):
        for op in block.operations:
            op = op.operation
            if op.name == "scf.yield":
                on_yield(op)
                continue
            rule = self.rules.get(op.name)
            if rule is None:
                self.fail(op, "no OpenCL C for this op")
            rule(op)

    # ----- arith and math

    def infix(self, op):
        left, right = (self.name(v) for v in op.operands)
        if op.name in UNSIGNED_INFIX:
            t = self.c_type(op.results[0].type)
            unsigned = UNSIGNED.get(t, t)
            cast = (lambda e: f"convert_{unsigned}({e})") if _is_vector(op.results[0]) else (lambda e: f"({unsigned}){e}")
            self.define(op, f"({t})({cast(left)} {UNSIGNED_INFIX[op.name]} {cast(right)})")
        else:
            self.define(op, f"{left} {INFIX[op.name]} {right}")

    def call(self, op):
        arguments = [self.name(v) for v in op.operands]
        if op.name in UNSIGNED_CALLS:
            t = self.c_type(op.results[0].type)
            arguments = [f"({UNSIGNED.get(t, t)}){a}" for a in arguments]
            self.define(op, f"({t}){UNSIGNED_CALLS[op.name]}({', '.join(arguments)})")
        else:
            self.define(op, f"{CALLS[op.name]}({', '.join(arguments)})")

    def nan_propagating(self, op):
        a, b = (self.name(v) for v in op.operands)
        self.define(op, f"select(select({NAN_PROPAGATING[op.name]}({a}, {b}), {b}, isnan({b})), {a}, isnan({a}))")

    def negate(self, op):
        self.define(op, f"-{self.name(op.operands[0])}")

    def constant(self, op):
        attr = op.attributes["value"]
        t = op.results[0].type
        if isinstance(t, ir.VectorType):
            element = self.c_type(ir.VectorType(t).element_type)
            dense = ir.DenseElementsAttr(attr)
            if dense.is_splat:
                values = [_scalar_literal(dense.get_splat_value(), element)]
            elif isinstance(ir.VectorType(t).element_type, ir.IntegerType):
                values = [_integer_literal(v, element) for v in ir.DenseIntElementsAttr(attr)]
            else:
                values = [_float_literal(v, element) for v in ir.DenseFPElementsAttr(attr)]
            if element == "bool":
                values = ["-1" if v == "true" else "0" for v in values]
            self.define(op, f"({self.c_type(t)})({', '.join(values)})")
        else:
            self.define(op, _scalar_literal(attr, self.c_type(t)))

    def compare_integers(self, op):
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value
        a, b = (self.name(v) for v in op.operands)
        if predicate in CMPI_UNSIGNED:
            t = self.c_type(op.operands[0].type)
            unsigned = UNSIGNED.get(t, t)
            if _is_vector(op.operands[0]):
                a, b = f"convert_{unsigned}({a})", f"convert_{unsigned}({b})"
            else:
                a, b = f"({unsigned}){a}", f"({unsigned}){b}"
            self.define(op, self.truth(op, f"{a} {CMPI_UNSIGNED[predicate]} {b}"))
        else:
            self.define(op, self.truth(op, f"{a} {CMPI[predicate]} {b}"))

    def truth(self, op, expression: str) -> str:
        """A comparison's result: OpenCL C compares vectors of longs (doubles, shorts) into
        vectors of that width; a ``vector<Nxi1>`` is an ``intN`` (-1 true) here."""
        return f"convert_{self.c_type(op.results[0].type)}({expression})" if _is_vector(op.results[0]) else expression

    def compare_floats(self, op):
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value
        a, b = (self.name(v) for v in op.operands)
        if predicate in CMPF_ORDERED:
            expression = f"{a} {CMPF_ORDERED[predicate]} {b}"
        elif predicate in CMPF_UNORDERED:
            expression = f"!({a} {CMPF_UNORDERED[predicate]} {b})"
        elif predicate == 6:  # one
            expression = f"({a} < {b}) || ({a} > {b})"
        elif predicate == 13:  # une
            expression = f"{a} != {b}"
        elif predicate == 8:  # ueq
            expression = f"!(({a} < {b}) || ({a} > {b}))"
        elif predicate == 7:  # ord
            expression = f"!isnan({a}) && !isnan({b})"
        elif predicate == 14:  # uno
            expression = f"isnan({a}) || isnan({b})"
        else:  # false, true
            self.fail(op, f"float predicate {predicate} is folded before this")
        self.define(op, self.truth(op, expression))

    def select(self, op):
        condition, yes, no = (self.name(v) for v in op.operands)
        if _is_vector(op.operands[0]):
            self.define(op, f"select({no}, {yes}, {condition})")
        else:
            self.define(op, f"{condition} ? {yes} : {no}")

    def cast(self, op):
        """A conversion; a boolean's true is 1 as a scalar and -1 as a vector lane, so
        extending one depends on the signedness: 1 unsigned, -1 signed."""
        source, result = op.operands[0], op.results[0]
        value = self.name(source)
        if op.name == "arith.truncf" and self.half_in_float and is_half(result.type):
            self.round_to_half(op)
            return
        element = str(ir.VectorType(source.type).element_type if _is_vector(source) else source.type)
        t = self.c_type(result.type)
        if str(ir.VectorType(result.type).element_type if _is_vector(result) else result.type) == "i1":
            value = f"({value} & 1)"  # trunci to i1 keeps the low bit
            self.define(op, f"convert_{t}(-{value})" if _is_vector(result) else f"{value} != 0")
            return
        if element == "i1":
            unsigned = op.name in UNSIGNED_SOURCE
            if _is_vector(source):
                self.define(op, f"convert_{t}({'-' if unsigned else ''}{value})")
            else:
                self.define(op, f"{'' if unsigned else '-'}({t}){value}")
            return
        if op.name in UNSIGNED_SOURCE:
            source_type = self.c_type(source.type)
            unsigned = UNSIGNED.get(source_type, source_type)
            value = f"convert_{unsigned}({value})" if _is_vector(source) else f"({unsigned}){value}"
        self.define(op, f"convert_{t}({value})" if _is_vector(result) else f"({t}){value}")

    def round_to_half(self, op):
        """A truncf to f16 held as float: rounded to nearest even through a private half
        (``vstore_half_rte``, then ``vload_half``), with no half arithmetic."""
        result, width = op.results[0], _width(op.results[0])
        name = self.names[result] = f"v{len(self.names)}"
        self.emit(f"ushort{width} {name}_bits;")
        self.emit(f"vstore_half{width}_rte({self.name(op.operands[0])}, 0, (__private half *)&{name}_bits);")
        self.emit(f"const {self.c_type(result.type)} {name} = vload_half{width}(0, (__private half *)&{name}_bits);")

    def bitcast(self, op):
        self.define(op, f"as_{self.c_type(op.results[0].type)}({self.name(op.operands[0])})")

    # ----- gpu

    def gpu_id(self, op):
        dimension = str(op.attributes["dimension"]).rstrip(">").split()[-1]
        self.define(op, f"(long){GPU_IDS[op.name]}({DIMENSIONS[dimension]})")

    def barrier(self, op):
        self.emit("barrier(CLK_LOCAL_MEM_FENCE);")

    def ret(self, op):
        self.emit("return;")

    # ----- memref

    def pointer(self, value, indices) -> str:
        """``base[index]`` of ``value`` at ``indices`` (``address``)."""
        return "{}[{}]".format(*self.address(value, indices))

    def address(self, value, indices) -> tuple:
        """(base, ``offset + sum(index * stride)``) of ``value`` at ``indices`` (its layout's
        strides: a subview's too), the index in elements of ``value``'s type."""
        base, offset = self.views.get(value, (self.name(value), None))
        t = ir.MemRefType(value.type)
        strides, static_offset = t.get_strides_and_offset()
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        if any(s == dynamic for s in strides) or (static_offset == dynamic and offset is None):
            raise CodegenError(f"OpenCL C: kernel {self.kernel}: a buffer of dynamic layout {t}")
        terms = [offset] if offset is not None else ([str(static_offset)] if static_offset else [])
        for index, stride in zip(indices, strides):
            terms.append(self.name(index) + (f" * {stride}" if stride != 1 else ""))
        return base, " + ".join(terms) or "0"

    def _in_half_memory(self, memref) -> bool:
        return self.half_in_float and is_half(memref.type)

    def load(self, op):
        operands = list(op.operands)
        if self._in_half_memory(operands[0]):  # vload_halfN(i, p) reads p[N * i ...]: a vector element's index
            base, index = self.address(operands[0], operands[1:])
            self.define(op, f"vload_half{_width(op.results[0])}({index}, {base})")
            return
        expression = self.pointer(operands[0], operands[1:])
        if str(op.results[0].type) == "i1":
            expression = f"(bool){expression}"
        self.define(op, expression)

    def store(self, op):
        operands = list(op.operands)
        value = self.name(operands[0])
        if self._in_half_memory(operands[1]):
            base, index = self.address(operands[1], operands[2:])
            self.emit(f"vstore_half{_width(operands[0])}_rte({value}, {index}, {base});")
            return
        if str(operands[0].type) == "i1":
            value = f"(uchar){value}"
        self.emit(f"{self.pointer(operands[1], operands[2:])} = {value};")

    def allocate(self, op):
        t = ir.MemRefType(op.results[0].type)
        elements = 1
        for n in t.shape:
            elements *= n
        name = self.names[op.results[0]] = f"m{len(self.names)}"
        space = str(t.memory_space) if t.memory_space is not None else ""
        declaration = f"{self.memory_type(t.element_type)} {name}[{elements}];"
        if "Workgroup" in space or "workgroup" in space:
            self.local.append(f"  __local {declaration}")
        else:
            self.emit(declaration)

    def subview(self, op):
        """A view: the same pointer, its offset in its result's layout (a dynamic one
        computed from the source's strides)."""
        source = op.operands[0]
        base, _ = self.views.get(source, (self.name(source), None))
        self.names[op.results[0]] = base
        result = ir.MemRefType(op.results[0].type)
        _, static_offset = result.get_strides_and_offset()
        if static_offset != ir.ShapedType.get_dynamic_stride_or_offset():
            self.views[op.results[0]] = (base, str(static_offset))
            return
        if op.name != "memref.subview":
            self.fail(op, "a view of dynamic offset")
        strides, source_offset = ir.MemRefType(source.type).get_strides_and_offset()
        offsets = list(ir.DenseI64ArrayAttr(op.attributes["static_offsets"]))
        dynamic_offsets = iter(list(op.operands)[1:])
        terms = [self.views[source][1]] if source in self.views else [str(source_offset)] if source_offset else []
        for offset, stride in zip(offsets, strides):
            if offset == ir.ShapedType.get_dynamic_stride_or_offset():
                terms.append(self.name(next(dynamic_offsets)) + (f" * {stride}" if stride != 1 else ""))
            elif offset:
                terms.append(str(offset * stride))
        self.views[op.results[0]] = (base, f"({' + '.join(terms) or '0'})")

    # ----- vector

    def vector_load(self, op):
        operands = list(op.operands)
        width = ir.VectorType(op.results[0].type).shape[0]
        if self._in_half_memory(operands[0]):
            base, index = self.address(operands[0], operands[1:])
            self.define(op, f"vload_half{width}(0, {base} + {index})")
            return
        self.define(op, f"vload{width}(0, &{self.pointer(operands[0], operands[1:])})")

    def vector_store(self, op):
        operands = list(op.operands)
        width = ir.VectorType(operands[0].type).shape[0]
        if self._in_half_memory(operands[1]):
            base, index = self.address(operands[1], operands[2:])
            self.emit(f"vstore_half{width}_rte({self.name(operands[0])}, 0, {base} + {index});")
            return
        self.emit(f"vstore{width}({self.name(operands[0])}, 0, &{self.pointer(operands[1], operands[2:])});")

    def broadcast(self, op):
        if _is_vector(op.operands[0]):
            self.fail(op, "a broadcast of a vector")
        value = op.operands[0]
        self.define(op, f"({self.c_type(op.results[0].type)})({_lane_value(self.name(value), value.type)})")

    def _lane(self, op) -> str:
        position = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        if len(position) != 1 or position[0] < 0:
            self.fail(op, f"a dynamic or multi-dimensional position {position}")
        return LANES[position[0]]

    def extract(self, op):
        vector = op.operands[0]
        position = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        if not _is_vector(vector):  # of a 0-d vector: its element
            self.define(op, self.name(vector))
        elif position == [ir.ShapedType.get_dynamic_size()] and len(op.operands) == 2:
            lane = self.lane_type(op.results[0].type)  # a lane chosen at run time: through its address
            value = f"((const {lane} *)&{self.name(vector)})[{self.name(op.operands[1])}]"
            self.define(op, f"({value} != 0)" if lane != self.c_type(op.results[0].type) else value)
        else:
            value = f"{self.name(vector)}.s{self._lane(op)}"
            self.define(op, f"({value} != 0)" if str(op.results[0].type) == "i1" else value)

    def poison(self, op):
        """An undefined value (a padding lane no one reads): zero."""
        self.define(op, f"({self.c_type(op.results[0].type)})(0)")

    def insert(self, op):
        value, vector = op.operands[0], op.operands[1]
        if not _is_vector(vector):  # into a 0-d vector: the value
            self.define(op, self.name(value))
            return
        name = self.variable(op.results[0], "w")
        self.emit(f"{name} = {self.name(vector)};")
        position = list(ir.DenseI64ArrayAttr(op.attributes["static_position"]))
        lane = _lane_value(self.name(value), value.type)
        if position == [ir.ShapedType.get_dynamic_size()] and len(op.operands) == 3:
            self.emit(f"(({self.lane_type(value.type)} *)&{name})[{self.name(op.operands[2])}] = {lane};")
        else:
            self.emit(f"{name}.s{self._lane(op)} = {lane};")

    def to_elements(self, op):
        """Each lane of a vector as a scalar of its own (of a 0-d vector: its element)."""
        vector = self.name(op.operands[0])
        lanes = [f"{vector}.s{lane}" for lane in LANES] if _is_vector(op.operands[0]) else [vector]
        for value, result in zip(lanes, op.results):
            self.define(op, f"({value} != 0)" if str(result.type) == "i1" else value, result=result)

    def from_elements(self, op):
        lanes = ", ".join(_lane_value(self.name(v), v.type) for v in op.operands)
        self.define(op, f"({self.c_type(op.results[0].type)})({lanes})")

    def reduction(self, op):
        kind = str(op.attributes["kind"])
        if not kind.endswith("add>") or len(op.operands) != 1:
            self.fail(op, f"a reduction {kind}")
        width = ir.VectorType(op.operands[0].type).shape[0]
        vector = self.name(op.operands[0])
        self.define(op, " + ".join(f"{vector}.s{LANES[i]}" for i in range(width)))

    # ----- scf

    def loop(self, op):
        lower, upper, step, *initial = list(op.operands)
        body = op.regions[0].blocks[0]
        results = []
        for result, init, carried in zip(op.results, initial, list(body.arguments)[1:]):
            name = self.variable(result, "r")
            self.names[carried] = name
            results.append(name)
            self.emit(f"{name} = {self.name(init)};")
        index = self.names[body.arguments[0]] = f"i{len(self.names)}"
        self.emit(f"for (long {index} = {self.name(lower)}; {index} < {self.name(upper)}; {index} += {self.name(step)}) {{")
        self.depth += 1
        self.block(body, lambda y: self.assign(results, y))
        self.depth -= 1
        self.emit("}")

    def assign(self, names: list, yield_op):
        """``names`` = the yielded values, all at once (a value yielded may be another's
        previous value)."""
        values = [self.name(v) for v in yield_op.operands]
        if any(v in names for v in values):
            temporaries = []
            for value, y in zip(values, yield_op.operands):
                temporary = f"t{len(self.names)}_{len(temporaries)}"
                self.emit(f"const {self.c_type(y.type)} {temporary} = {value};")
                temporaries.append(temporary)
            values = temporaries
        for name, value in zip(names, values):
            if name != value:
                self.emit(f"{name} = {value};")

    def branch(self, op):
        results = [self.variable(r, "r") for r in op.results]
        for index, region in enumerate(op.regions):
            if not len(region.blocks):
                continue
            self.emit(f"if ({self.name(op.operands[0])}) {{" if index == 0 else "else {")
            self.depth += 1
            self.block(region.blocks[0], lambda y: self.assign(results, y))
            self.depth -= 1
            self.emit("}")


PRELUDE = "// OpenCL C 1.2, printed by dnnf-mlir (codegen/gpu/opencl/printer.py)\n"


def _kernel(gpu_module):
    """The one ``gpu.func`` of an outlined ``gpu_module``."""
    kernels = [op.operation for op in gpu_module.regions[0].blocks[0].operations if op.operation.name == "gpu.func"]
    if len(kernels) != 1:
        raise CodegenError(f"OpenCL C: gpu.module {symbol_name(gpu_module)} holds {len(kernels)} kernels, not one")
    return kernels[0]


def required_extensions(gpu_module) -> list:
    """The OpenCL extensions the kernel of ``gpu_module`` needs: ``cl_khr_fp16`` where it
    computes in half (``half.py``)."""
    return [EXTENSION] if needs_half_arithmetic(_kernel(gpu_module)) else []


def opencl_source(gpu_module) -> str:
    """The OpenCL C of the one ``gpu.func`` of an outlined ``gpu_module``, as a kernel named
    after the module (unique in the program, which holds every module's kernel)."""
    kernel = _kernel(gpu_module)
    native_half = needs_half_arithmetic(kernel)
    pragma = PRAGMA + "\n" if native_half else ""
    return PRELUDE + pragma + _KernelPrinter(kernel, symbol_name(gpu_module), not native_half).print() + "\n"


__all__ = ["c_type", "opencl_source", "required_extensions"]
