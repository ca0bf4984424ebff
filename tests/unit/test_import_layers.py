"""The package's layers, as CI enforces them: a lower layer never imports a higher one, and no module
imports itself back through others (an import circle).

Read from the source with `ast` (every import, lazy ones inside functions included: a lazy import is
still a dependency), so the test needs nothing importable and fails with the offending lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "core" / "cairn"

# Lowest first; a module may import its own layer and those below it. `bootstrap` is the composition
# root the entry points call (the API app, the Lambda entry, `cairn serve`), so it sits under them.
# `api` and `web` are one layer: the API app mounts the web UI, the UI maps errors as the API does.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"cairn", "domain", "atomic"}),  # atomic.py imports nothing from Cairn
    frozenset({"redaction", "userdirs", "projects", "project_files", "settings"}),
    frozenset({"adapters", "search", "transcripts"}),
    frozenset({"services"}),
    frozenset({"pipeline"}),
    frozenset({"capture"}),
    frozenset({"bootstrap"}),
    frozenset({"api", "web"}),
    frozenset({"cli"}),
)
# inside the pipeline: what a session did, what is learned of it, how it is remembered, the stages
# that orchestrate those, and the runners of the stages
PIPELINE_LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"pipeline", "models", "keys"}),
    frozenset({"reading"}),
    frozenset({"learning"}),
    frozenset({"deps"}),
    frozenset({"remembering"}),
    frozenset({"stages"}),
    frozenset({"running"}),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) for every `cairn` module this file imports, resolved to the module itself:
    `from cairn.pipeline.running import inline` imports `cairn.pipeline.running.inline`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "cairn"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "cairn":
                continue
            for a in node.names:
                name = f"{node.module}.{a.name}"
                out.append((node.lineno, name if name in modules else node.module))
    return out


def layer_of(module: str, layers: tuple[frozenset[str], ...], depth: int) -> int:
    parts = module.split(".")
    part = parts[depth] if len(parts) > depth else parts[depth - 1]
    for i, names in enumerate(layers):
        if part in names:
            return i
    raise AssertionError(f"{module}: `{part}` is in no layer of test_import_layers.py; give it one")


def upward_imports(modules: dict[str, Path]) -> list[str]:
    found = []
    for module, path in modules.items():
        for line, target in imports_of(path, modules):
            if layer_of(target, LAYERS, 1) > layer_of(module, LAYERS, 1):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target}")
            both_pipeline = module.startswith("cairn.pipeline.") and target.startswith("cairn.pipeline.")
            if both_pipeline and layer_of(target, PIPELINE_LAYERS, 2) > layer_of(module, PIPELINE_LAYERS, 2):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target}")
    return found


def import_circles(modules: dict[str, Path]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a circle of imports."""
    graph = {
        m: sorted({t for _, t in imports_of(p, modules) if t in modules and t != m})
        for m, p in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return circles


def test_no_lower_layer_imports_a_higher_one():
    found = upward_imports(all_modules())
    assert not found, "imports that run upward:\n" + "\n".join(found)


def test_no_module_imports_itself_back_through_others():
    circles = import_circles(all_modules())
    assert not circles, "modules that import each other round a circle:\n" + "\n".join(
        ", ".join(c) for c in circles
    )


def test_every_package_of_cairn_has_a_layer():
    for module in all_modules():
        layer_of(module, LAYERS, 1)
        if module.startswith("cairn.pipeline."):
            layer_of(module, PIPELINE_LAYERS, 2)
