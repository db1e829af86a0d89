"""The one list of the step's stages (solver.STAGES) against the step itself: the stages that
are kernels of their own name are called in the list's order, each traced check names a stage
that runs before it, and the solver's docstring and ARCHITECTURE.md name every stage."""
import ast
from pathlib import Path

from test_physics_kernels import ROOT

from sharnir.physics import solver


def _step_calls():
    """The names step() calls, in the order of its source (the traced checks as
    ('traced', STAGE_*)); read from the file (a kernel without a wrapper is not for Python to
    name: test_physics_kernels)."""
    module = ast.parse(Path(solver.__file__).read_text())
    step = next(node for node in module.body
                if isinstance(node, ast.FunctionDef) and node.name == "step")
    calls = []
    for node in ast.walk(step):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in ("traced", "traced_motors"):
                name = (name, node.args[-1].id)
            calls.append((node.lineno, node.col_offset, name))
    return [name for *_, name in sorted(calls)]


def test_step_runs_the_stages_in_the_order_of_the_list():
    calls = _step_calls()
    kernels = [name for name in calls if name in solver.STAGE_NAMES]
    assert kernels == [name for name in solver.STAGE_NAMES if name in kernels]
    assert len(set(kernels)) == len(kernels)


def test_each_traced_check_follows_its_stage():
    calls = _step_calls()
    traced = [name for name in calls if isinstance(name, tuple)]
    assert len(traced) == 9
    for _, constant in traced:
        stage = getattr(solver, constant)
        assert constant == "STAGE_" + solver.STAGE_NAMES[stage].upper()
        at = calls.index(next(c for c in calls if isinstance(c, tuple) and c[1] == constant))
        assert solver.STAGE_NAMES[stage] in calls[:at]   # (a kernel of the stage's name)


def test_the_docs_name_every_stage():
    architecture = (ROOT / "ARCHITECTURE.md").read_text()
    for name, words in solver.STAGES:
        assert f"\n    {name} " in solver.__doc__, name
        assert f"| `{name}` |" in architecture, name
        assert words and words == words.strip()
