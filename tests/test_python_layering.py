"""The modules of python/coiter import one way (docs/architecture.md, "Python layering").

Imports are read from the source with ``ast``, wherever they are written: at the top of a
module, inside a function, under ``if TYPE_CHECKING:``. An import deferred into a function runs
later but is still a dependency, so one that closes a loop counts as a cycle here.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "python" / "coiter"

# Lowest first. A module may import modules of its own layer and of the layers below. A module
# not listed (a new one) counts as above them all: a listed module cannot import it until it is
# given its place here.
LAYERS = {
    "foundation": [
        "_core",
        "errors",
        "dtypes",
        "config",
        "cuda_libraries",
        "threads",
        "progress",
        "plotting",
        "display",
        "auto_statistics",
        "cache_directory",
    ],
    "formats and index notation": [
        "formats",
        "shapes",
        "notation",
        "parser",
        "schedule",
        "format_inference",
    ],
    "tensor storage": ["tensor"],
    "construction": [
        "scipy_interop",
        "creation",
        "interop_pandas",
        "interop_pydata",
        "interop_cupy",
        "cuda",
        "conversion",
        "io",
        "io.casting",
        "io.text_table",
        "io.frostt",
        "io.matrix_market",
        "io.npz",
    ],
    "compiler": ["compiler", "auto_keys", "evaluate"],
    "array operators": [
        "elementwise",
        "operators",
        "indexing",
        "shaping",
        "linalg",
        "numpy_protocols",
    ],
    # The autoscheduler (docs/autoscheduling.md) compiles, evaluates and times kernels.
    "autoscheduler": [
        "autosched.pipeline",
        "autosched.frontier",
        "autosched.cost_estimate",
        "autosched.candidates",
        "autosched.frontier_cache",
        "autosched.space",
        "autosched.trimming",
        "autosched.search",
        "autosched.database",
        "autosched.report",
        "autosched.api",
        "autosched",
    ],
    "package": ["tensor_methods", "kernel_cache", ""],  # "": coiter/__init__.py
    # coiter.distributed (docs/distributed.md): `import coiter` does not import it (ct.distributed
    # imports it on first use, by name), so it sits above the whole package.
    "distributed: blocks, bounds and the cluster": [
        "distributed.bounds",
        "distributed.blocks",
        "distributed.cluster",
        "distributed.linearity",
        "distributed.distribution",
        "distributed.reduction",
    ],
    "distributed: partitioned tensors": [
        "distributed.partitioned",
        "distributed.partition",
        "distributed.dask_arrays",
    ],
    "distributed: execution": [
        "distributed.execution",
        "distributed.files",
        "distributed.operators",
    ],
    "distributed: package": ["distributed.partitioned_methods", "distributed"],
    # The command-line tool (docs/cli.md): built on the package, imported by no module of it.
    "command line": ["cli", "__main__"],
}


def package_modules():
    """{module name relative to coiter ("" for the package, "io.npz"): (path, is a package)}."""
    modules = {"_core": (None, False)}  # the compiled core: imports nothing of the package
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def _absolute(name):
    """``coiter.x.y`` as "x.y", ``coiter`` as ""; None for other packages."""
    if name == "coiter":
        return ""
    return name[len("coiter.") :] if name.startswith("coiter.") else None


def imports_of(name, path, is_package, modules):
    """The package modules that module ``name`` imports, anywhere in its source."""
    here = name.split(".") if name else []
    package = here if is_package else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {_absolute(alias.name) for alias in node.names} - {None}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = _absolute(node.module or "")
                if target is None:
                    continue
            for alias in node.names:
                # `from . import x` and `from .io import npz` name submodules
                submodule = f"{target}.{alias.name}" if target else alias.name
                found.add(submodule if submodule in modules else target)
    found.discard(name)
    return found


def import_graph():
    modules = package_modules()
    return {
        name: imports_of(name, path, is_package, modules) if path else set()
        for name, (path, is_package) in modules.items()
    }


def find_cycle(graph):
    """One import cycle as a list of modules (the first repeated at the end), or None."""
    state, stack = {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                return stack[stack.index(imported) :] + [imported]
            if imported not in state:
                cycle = visit(imported)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_the_import_graph_is_read():
    graph = import_graph()
    # Imports of every kind are seen: relative, of a submodule, of a sibling in a subpackage.
    assert {"notation", "formats", "_core"} <= graph["tensor"]
    assert {"io.npz", "conversion"} <= graph["io"]
    assert "io.casting" in graph["io.npz"]


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(f"coiter.{m}".rstrip(".") for m in cycle)


def test_the_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_module_imports_only_its_layer_and_below():
    graph = import_graph()
    layer_of = {module: n for n, modules in enumerate(LAYERS.values()) for module in modules}
    names = list(LAYERS)
    assert not set(layer_of) - set(graph), "listed in LAYERS but not in the package"
    upward = [
        f"coiter.{module} ({names[layer_of[module]]}) imports coiter.{imported} "
        f"({names[layer_of[imported]] if imported in layer_of else 'not in LAYERS'})"
        for module in sorted(layer_of)
        for imported in sorted(graph[module])
        if layer_of.get(imported, len(names)) > layer_of[module]
    ]
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)
