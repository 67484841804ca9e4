"""The C++ core's folders form layers, and every #include goes down (docs/architecture.md,
"Layers"): the pipeline's stages read what the stages before them made, and nothing below
knows what is built on it. The test reads the sources, so a new include that goes up or
sideways fails here, naming the file and the include."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Bottom to top. A folder may include its own headers and those of folders listed before it.
LAYERS = [
    "util",  # errors, text, subprocesses, the target
    "memory",  # dtypes, buffers, allocation limits
    "ir",  # the imperative IR and its passes (plain data below every stage)
    "format",  # level types (their capabilities return IR) and formats
    "storage",  # tensors' arrays: packing, unpacking, validation
    "runtime",  # what compiled kernels call: threads, result memory, sorting, CUDA driver
    "notation",  # index notation
    "cin",  # concrete index notation: concretize, loop order, workspaces
    "schedule",  # scheduling commands and default schedules
    "lattice",  # iteration lattices
    "lower",  # lowering to IR
    "codegen",  # C, CUDA and LLVM printers of the IR
    "jit",  # engines, signatures, the disk cache
    "call",  # running a kernel on tensors: arguments, results, chunked assembly
    "autosched",  # the autoscheduler's asymptotic frontier (legality: the driver's, passed in)
    "driver",  # the compiler driver: every stage in order, the kernel cache
    "bindings",  # the Python module
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.MULTILINE)


def test_every_folder_is_a_layer():
    folders = {p.name for p in SRC.iterdir() if p.is_dir()}
    assert folders == set(LAYERS), f"folders without a layer: {folders - set(LAYERS)}"


def test_includes_go_down():
    rank = {name: k for k, name in enumerate(LAYERS)}
    upward = []
    for path in sorted(SRC.rglob("*.[ch]pp")):
        layer = path.relative_to(SRC).parts[0]
        for target in INCLUDE.findall(path.read_text()):
            if target in rank and rank[target] > rank[layer]:
                where = path.relative_to(SRC)
                upward.append(f"{where} includes {target}/ (layer {target} is above {layer})")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_include(tmp_path):
    # The pattern must match the project's include spelling, or the test above proves nothing.
    assert INCLUDE.findall('#include "lower/lowerer.hpp"\n#include <vector>\n') == ["lower"]


def test_only_the_level_formats_switch_on_a_levels_kind():
    """Outside src/format/ a level is known by what its type answers (its properties and
    capabilities), never by its kind: a new level type then works everywhere at once
    (docs/architecture.md, "Level types")."""
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted(SRC.rglob("*.[ch]pp"))
        if path.relative_to(SRC).parts[0] != "format"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "LevelKind::" in line
    ]
    assert offenders == []
