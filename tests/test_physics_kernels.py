"""Kernels without a CPython wrapper (physics/jit.py: KERNEL) crash the interpreter when Python
calls them, so every kernel that Python code names must be an ENTRY. Found by reading the
sources: any name or module attribute that resolves to a physics kernel, outside the bodies of
njit functions, in every .py file of the repository (physics, scenes, app, render, bench,
tests)."""
import ast
import importlib
import pkgutil
from pathlib import Path

from numba.core.registry import CPUDispatcher

import sharnir.physics as physics

ROOT = Path(physics.__file__).resolve().parent.parent
SKIPPED = {".venv", "build", ".git", "node_modules"}


def physics_kernels():
    """{(module, name): dispatcher} of every kernel defined in sharnir.physics."""
    found = {}
    for info in pkgutil.iter_modules(physics.__path__):
        module = importlib.import_module(f"sharnir.physics.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                found[(module.__name__, name)] = value
    return found


def _module_name(path):
    parts = ["sharnir", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node, current, is_package):
    if node.level == 0:
        return node.module
    base = current.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_njit(decorator):
    f = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
    return name in ("njit", "jit")


def _visit(node, in_kernel, names, where, found):
    """Record in found the kernels node names outside njit bodies; names maps a local name or
    (module alias, attribute) to a kernel's key."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for d in node.decorator_list:
            _visit(d, in_kernel, names, where, found)
        in_kernel = in_kernel or any(_is_njit(d) for d in node.decorator_list)
        for child in node.body:
            _visit(child, in_kernel, names, where, found)
        return
    if not in_kernel:
        key = None
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            key = names.get(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            key = names.get((node.value.id, node.attr))
        if key is not None:
            found.setdefault(key, []).append(f"{where}:{node.lineno}")
    for child in ast.iter_child_nodes(node):
        _visit(child, in_kernel, names, where, found)


def kernels_named_by_python(kernels):
    """{(module, name): ["file:line", ...]} of the kernels Python code names."""
    modules = {module for module, _ in kernels}
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        if SKIPPED & set(path.relative_to(ROOT).parts):
            continue
        current = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {key[1]: key for key in kernels if key[0] == current}   # its own kernels
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _imported(node, current, path.name == "__init__.py")
                imported = [(a.asname or a.name, f"{source}.{a.name}", (source, a.name))
                            for a in node.names]
            elif isinstance(node, ast.Import):
                imported = [(a.asname, a.name, None) for a in node.names if a.asname]
            else:
                continue
            for local, module, key in imported:
                if key in kernels:
                    names[local] = key
                if module in modules:
                    names.update({(local, n): (module, n) for m, n in kernels if m == module})
        _visit(tree, False, names, path.relative_to(ROOT), found)
    return found


def _has_wrapper(dispatcher):
    return not dispatcher.targetoptions.get("no_cpython_wrapper", False)


def test_every_kernel_python_names_keeps_its_wrapper():
    kernels = physics_kernels()
    named = kernels_named_by_python(kernels)
    assert ("sharnir.physics.solver", "step_many") in named   # (the reading finds calls)
    missing = [f"{m}.{n} (named at {', '.join(named[(m, n)][:3])})"
               for m, n in sorted(named) if not _has_wrapper(kernels[(m, n)])]
    assert not missing, "ENTRY needed (physics/jit.py): " + "; ".join(missing)


def test_only_the_kernels_python_names_have_wrappers():
    """A wrapper costs about a second of the first compile per kernel that takes the tuples:
    the others have none."""
    kernels = physics_kernels()
    named = kernels_named_by_python(kernels)
    extra = sorted(f"{m}.{n}" for (m, n), d in kernels.items()
                   if _has_wrapper(d) and (m, n) not in named)
    assert not extra, "wrapped but never called from Python: " + ", ".join(extra)
    assert len(named) < len(kernels) // 10
