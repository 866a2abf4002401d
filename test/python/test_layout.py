"""The package's layout rules, checked over the source of python/dnnf_mlir/ with ``ast``.

- No import cycles among the package's modules. Every import counts, at module
  level or inside a function (a late import is still a dependency). An import
  names one module: ``from pkg import sub`` depends on ``pkg.sub`` when that is a
  module, else on ``pkg`` (a name its ``__init__`` defines). Python also runs
  ``pkg/__init__`` before ``pkg.sub``, but that implicit edge is left out: with it,
  every ``__init__`` that imports its own submodules would close a cycle with each
  of them. A submodule that imports a name back from its package's ``__init__``
  still closes a real cycle, and it is reported.
- No private name (``_x``) used across modules: neither imported (``from m import
  _x``) nor reached through a module (``m._x``). A private module (``_mlir``) is
  private to its package: anything inside that package may import it.
- No module over ``MAX_LINES`` lines, unless ``LONG_MODULES`` names it with the reason.
- The code generator's backend seam (``codegen/backend.py``): a backend is a package of
  ``codegen/`` (``codegen/cpu/``, ...). No module of ``codegen/`` outside a backend
  imports one, but ``REGISTRATION_POINT``, which imports each so that it registers
  itself; no module outside ``codegen/`` imports a backend, but those
  ``BACKEND_SPECIFIC`` names for it, each with the reason it belongs to that backend.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = "dnnf_mlir"
ROOT = Path(__file__).resolve().parents[2] / "python" / PACKAGE
MAX_LINES = 600

# Modules allowed over MAX_LINES: module -> why it stays one file.
LONG_MODULES = {}

CODEGEN = f"{PACKAGE}.codegen"
# The one module of codegen/ outside a backend that imports the backends: the package's
# face, where importing each registers it and its targets (codegen.target.register_backend).
REGISTRATION_POINT = CODEGEN
CPU_BACKEND = f"{CODEGEN}.cpu"
GPU_BACKEND = f"{CODEGEN}.gpu"
# Modules outside codegen/ that import a backend: backend -> {module: why it belongs to it}.
BACKEND_SPECIFIC = {
    CPU_BACKEND: {
        f"{PACKAGE}.compiler.cpu_library": "the CPU's artifact writer: opt + llc into model.o, OpenMP, the CMake build",
        f"{PACKAGE}.compiler.cpu_glue": "the CPU's part of the C glue: memref descriptors, the CPU feature check",
        f"{PACKAGE}.compiler.team_sizing": "the CPU glue's OpenMP team per run, which spins for libomp's blocktime",
        f"{PACKAGE}.compiler.artifact": "model.h's dnnf_missing_cpu_features refuses this CPU: UnsupportedCpuError",
        f"{PACKAGE}.fusion.profiling": "measures fusion candidates on this machine's CPU, through the JIT",
        f"{PACKAGE}.conversion.jit": "the loops harness runs LLVM in this process, big functions split as the CPU's are",
        f"{PACKAGE}.roofline": "this CPU's FMA peak (its widest vector ISA, built by the CPU toolchain's clang) and bandwidth",
    },
    GPU_BACKEND: {
        f"{PACKAGE}.compiler.vulkan_library": "Vulkan's artifact writer: the dispatch plan and the SPIR-V of the module",
        f"{PACKAGE}.compiler.vulkan_glue": "Vulkan's part of the C glue: the plan and the kernels in model.c",
        f"{PACKAGE}.compiler.opencl_library": "OpenCL's artifact writer: the dispatch plan and the program's source",
        f"{PACKAGE}.compiler.opencl_glue": "OpenCL's part of the C glue: the plan's tables and the source in model.c",
        f"{PACKAGE}.fuzz.gpu": "the fuzzer's GPU mode: validates each artifact's SPIR-V with the Vulkan backend's spirv-val",
    },
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in SOURCES.items()}


def is_package(module: str) -> bool:
    return SOURCES[module].name == "__init__.py"


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def base_of(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` reads from."""
    if not node.level:
        return node.module
    package = module.split(".") if is_package(module) else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def imports(module: str):
    """(imported module, name or None, line) for every import of the package's modules in ``module``.

    ``name`` is what is read from the imported module (None when the import binds the module itself).
    """
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in SOURCES:
                    yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = base_of(module, node)
            if base not in SOURCES:
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in SOURCES:
                    yield submodule, None, node.lineno
                else:
                    yield base, alias.name, node.lineno


def module_aliases(module: str) -> dict:
    """Local name -> package module, for the names ``module``'s imports bind to modules."""
    aliases = {}
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in SOURCES and alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = base_of(module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in SOURCES:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    return aliases


def import_graph() -> dict:
    return {module: {target for target, _, _ in imports(module) if target != module} for module in SOURCES}


def cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm), sorted."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def describe_cycle(graph: dict, component: list) -> str:
    members = set(component)
    edges = [f"{source} -> {target}" for source in component for target in sorted(graph[source] & members)]
    return "cycle among " + ", ".join(component) + ":\n    " + "\n    ".join(edges)


def private_uses() -> list:
    """'module:line: what' for every private name one module takes from another."""
    found = []
    for module in SOURCES:
        for target, name, line in imports(module):
            if name is not None and is_private(name):
                found.append(f"{module}:{line}: imports {name} from {target}")
            elif name is None and is_private(target.rsplit(".", 1)[-1]):
                owner = target.rsplit(".", 1)[0]
                if module != owner and not module.startswith(owner + "."):
                    found.append(f"{module}:{line}: imports {target}, private to {owner}")
        aliases = module_aliases(module)
        for node in ast.walk(TREES[module]):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and is_private(node.attr)
            ):
                found.append(f"{module}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}")
    return sorted(found)


def line_count(module: str) -> int:
    return len(SOURCES[module].read_text(encoding="utf-8").splitlines())


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe_cycle(graph, c) for c in found)


def test_no_private_names_across_modules():
    found = private_uses()
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_no_long_modules():
    long = [f"{m}: {line_count(m)} lines" for m in SOURCES if line_count(m) > MAX_LINES and m not in LONG_MODULES]
    assert not long, f"modules over {MAX_LINES} lines (split them, or add them to LONG_MODULES with the reason):\n" + (
        "\n".join(long)
    )


def backends() -> list:
    """The backend packages: the packages directly under codegen/."""
    return [m for m in SOURCES if is_package(m) and m.rsplit(".", 1)[0] == CODEGEN]


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_codegen_outside_a_backend_imports_no_backend():
    assert sorted(backends()) == sorted(BACKEND_SPECIFIC)
    found = [
        f"{module}:{line}: imports {target}"
        for module in SOURCES
        if within(module, CODEGEN) and module != REGISTRATION_POINT and not any(within(module, b) for b in backends())
        for target, _, line in imports(module)
        if any(within(target, b) for b in backends())
    ]
    assert not found, f"modules of codegen/ import a backend (only {REGISTRATION_POINT} may):\n" + "\n".join(found)


@pytest.mark.parametrize("backend", sorted(BACKEND_SPECIFIC))
def test_only_modules_specific_to_a_backend_import_it(backend):
    users = {module for module in SOURCES if not within(module, CODEGEN)
             for target, _, _ in imports(module) if within(target, backend)}
    specific = set(BACKEND_SPECIFIC[backend])
    assert sorted(users - specific) == [], f"import {backend} (add them to BACKEND_SPECIFIC with the reason?)"
    assert sorted(specific - users) == [], f"BACKEND_SPECIFIC lists modules that no longer import {backend}"


def test_long_modules_are_long():
    """An allow-list entry goes when its module gets short (or goes)."""
    stale = [m for m in LONG_MODULES if m not in SOURCES or line_count(m) <= MAX_LINES]
    assert not stale, f"LONG_MODULES lists modules that are not over {MAX_LINES} lines: {stale}"
