"""The panel's logic apart from its drawing: app.panel_state imports, and does its work,
in a Python where ImGui cannot be imported at all (imgui_bundle blocked in sys.modules)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, sys
    sys.modules["imgui_bundle"] = None     # any `import imgui_bundle` now fails
    from sharnir.app import panel_state
    from sharnir.app.commands import SetSpeed

    sent = []
    state = panel_state.PanelState()
    state.note = panel_state.request_speed(sent.append, 1e9)
    try:
        import sharnir.app.panel   # the drawing needs ImGui: refused here
        drawing = "imported"
    except ImportError:
        drawing = "refused"
    print(json.dumps({
        "sent": [type(c).__name__ for c in sent],
        "speed": sent[0].factor if sent and isinstance(sent[0], SetSpeed) else None,
        "note": state.note,
        "rate": panel_state.frame_rate_text(None),
        "drawing": drawing,
    }))
""")


def test_the_panel_logic_imports_and_works_without_imgui(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(REPO)]))
    env["XDG_CONFIG_HOME"] = str(tmp_path / ".config")
    result = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["sent"] == ["SetSpeed"] and out["speed"] < 1e9      # clamped to its range
    assert "out of range" in out["note"]
    assert out["rate"] == "view: - frames/s"
    assert out["drawing"] == "refused"   # (the check above would pass with ImGui importable)
