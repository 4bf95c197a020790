"""The layers, read from the imports themselves (those inside functions too): each package
imports only the layers below it, so a change in a face never reaches the evaluator and a
dialect can be read without the harness."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "evotui"

# what each package may import of evotui (besides itself)
BELOW = {
    "core": set(),
    "config": set(),
    "task": {"core", "config"},
    "dialects": {"core", "config", "task"},
    "seed": {"core", "config", "task", "dialects"},
    "llm": {"core", "config"},
    "memory": {"core", "config", "llm"},
    "eval": {"core", "config", "task", "dialects"},
}
NO_TEXTUAL = ("engine", "eval", "memory", "dialects", "core", "task", "seed")
# the faces: each opens its run through engine.session and never imports another face;
# the command line (cli) sits above them and picks one
FACES = ("headless", "tui", "suite")


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _files(package: str) -> list[Path]:
    base = PACKAGE / package
    return sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]


@pytest.mark.parametrize("package", sorted(BELOW))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    wrong = []
    for f in _files(package):
        for name in _imports(f):
            parts = name.split(".")
            if parts[0] != "evotui" or len(parts) < 2:
                continue
            target = parts[1]
            ours = (PACKAGE / target).is_dir() or (PACKAGE / f"{target}.py").is_file()
            if ours and target != package and target not in BELOW[package]:
                wrong.append(f"{f.relative_to(PACKAGE.parent)} imports {name}")
    assert not wrong, "\n".join(sorted(set(wrong)))


@pytest.mark.parametrize("package", NO_TEXTUAL)
def test_the_headless_core_never_imports_the_tui(package: str) -> None:
    wrong = [f"{f.relative_to(PACKAGE.parent)} imports {n}" for f in _files(package)
             for n in _imports(f) if n.split(".")[0] == "textual" or n.startswith("evotui.tui")]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("face", FACES)
def test_a_face_never_imports_another_face_or_the_command_line(face: str) -> None:
    others = {*FACES, "cli"} - {face}
    wrong = [f"{f.relative_to(PACKAGE.parent)} imports {n}" for f in _files(face)
             for n in _imports(f) if n.split(".")[:2][-1] in others and n.startswith("evotui.")]
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_the_layer_map_names_real_packages() -> None:
    for package in (*BELOW, *FACES, "cli"):
        assert (PACKAGE / package).is_dir() or (PACKAGE / f"{package}.py").is_file(), package


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_two_modules_import_each_other_even_through_others() -> None:
    """Between any modules of the package, packages' ``__init__`` included (importing
    ``evotui.x.y`` runs ``evotui/x/__init__.py``, so ``from evotui.x import y`` depends on
    it); imports inside functions and under TYPE_CHECKING count."""
    files = {_module_name(f): f for f in PACKAGE.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph = {m: {r for n in _imports(f) if (r := resolve(n)) and r != m}
             for m, f in files.items()}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            raise AssertionError("import cycle: " + " → ".join([*path[path.index(node):], node]))
        if node not in done:
            for nxt in sorted(graph.get(node, ())):
                visit(nxt, [*path, node])
            done.add(node)

    for module in sorted(graph):
        visit(module, [])


def test_no_source_file_is_over_400_lines() -> None:
    long = {str(f.relative_to(PACKAGE.parent)): n for f in PACKAGE.rglob("*.py")
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long
