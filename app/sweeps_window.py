"""The app's Sweeps window: the table and a plot of a sweep's results (the folder `sharnir
sweep` wrote: runs.csv and sweep.json, app/sweep.py), where clicking a row opens that run's
scene with its values.

A run's scene is its spec's scene read with the run's ``--set`` values (the spec's `set`
and the run's own, as the sweep ran it), written as a TOML scene into the sweep's folder
(``scenes/run-NNNN.toml``, `sharnir convert`'s writer) and opened as any file, through
the panel's `request_load`: the scene on screen is that run's, and its file can be
reopened or run headless.

`load_sweep`, `run_scene` and `plot_data` do the work without drawing (the tests call
them); `draw` is the window, drawn by the panel each frame while open.
"""
import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .sweep import (
    CSV_NAME,
    JSON_NAME,
    Planner,
    SweepError,
    _parse_cell,
    spec_from_raw,
)

WINDOW_SIZE = (720.0, 560.0)
TABLE_SHARE = 0.5   # of the window's free height, the rest for the plot


@dataclass
class SweepTable:
    folder: Path
    info: dict            # sweep.json
    parameters: list      # column names of the swept values, in the spec's order
    metrics: list         # column names of the metrics
    rows: list            # dicts by column, sorted by run
    grid: list = field(default_factory=list)   # the parameters that are a grid's


def load_sweep(folder):
    """The sweep in `folder` (or the folder of a runs.csv or sweep.json named); SweepError
    with one line when it is not one."""
    folder = Path(folder).expanduser()
    if folder.name in (CSV_NAME, JSON_NAME):
        folder = folder.parent
    import json

    try:
        info = json.loads((folder / JSON_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SweepError(f"{folder}: not a sweep's folder (no readable {JSON_NAME}: "
                         f"{getattr(exc, 'strerror', None) or exc})") from None
    try:
        parameters = [p["name"] for p in info["parameters"]]
        columns = info["columns"]
        spec = info["spec"]
    except (KeyError, TypeError):
        raise SweepError(f"{folder / JSON_NAME}: not written by sharnir sweep") from None
    metrics = [c for c in columns[1 + len(parameters):] if c not in
               ("status", "error", "steps", "step_s", "wall_s")]
    grid_paths = [g.get("path") for g in spec.get("grid", []) if isinstance(g, dict)]
    grid = [p["name"] for p in info["parameters"] if p.get("path") in grid_paths]
    rows = []
    try:
        with open(folder / CSV_NAME, newline="", encoding="utf-8") as f:
            for cells in csv.DictReader(f):
                if not (cells.get("run") or "").isdigit():
                    continue
                row = {"run": int(cells["run"]), "status": cells.get("status") or "",
                       "error": cells.get("error") or ""}
                for c in parameters:
                    row[c] = _parse_cell(cells.get(c) or "")
                for c in metrics:
                    text = cells.get(c) or ""
                    try:
                        row[c] = float(text) if text else None
                    except ValueError:
                        row[c] = None
                rows.append(row)
    except OSError as exc:
        raise SweepError(f"{folder / CSV_NAME}: cannot read it: {exc.strerror or exc}") \
            from None
    rows.sort(key=lambda r: r["run"])
    return SweepTable(folder, info, parameters, metrics, rows, grid)


def run_sets(table, run):
    """The --set values the sweep ran `run` with."""
    from ..scenes import read_scene

    raw = dict(table.info["spec"])
    raw["scene"] = table.info.get("scene", raw.get("scene"))   # (resolved when it ran)
    spec = spec_from_raw(raw, table.info.get("spec_file") or table.folder / "spec.toml")
    runs = Planner(spec, read_scene(spec.scene, spec.sets)).runs()
    if not 0 <= run < len(runs):
        raise SweepError(f"the sweep has no run {run} (0 to {len(runs) - 1})")
    return spec.scene, runs[run].sets


def run_scene(table, run):
    """Write the scene of `run` (its spec's scene with the run's values) as
    FOLDER/scenes/run-NNNN.toml and return its path."""
    from ..scenes import SceneError, read_scene
    from ..scenes.writer import scene_toml

    scene, sets = run_sets(table, run)
    out = table.folder / "scenes" / f"run-{run:04d}.toml"
    try:
        spec = read_scene(scene, sets)
    except SceneError as exc:
        raise SweepError(f"run {run}: {exc}") from None
    header = (f"Run {run} of the sweep in {table.folder}: {scene} with\n"
              + "\n".join(f"  --set {s}" for s in sets))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(scene_toml(spec, header=header, base=out.parent), encoding="utf-8")
    return out


def plot_data(table, metric):
    """What the plot of `metric` shows: {"kind": "line", "x", "y", "xlabel"} over one swept
    value (sorted; only the runs with a value), {"kind": "heat", "values" (rows: the second
    parameter's values, columns: the first's), "xs", "ys", ...} over two grid values,
    {"kind": "scatter", "x", "y", "z", ...} over two random ones, or {"kind": None, "why"}."""
    varied = [p for p in table.parameters
              if len({repr(r.get(p)) for r in table.rows}) > 1 and all(
                  _number(r.get(p)) for r in table.rows)]
    z = np.array([np.nan if r.get(metric) is None else r[metric] for r in table.rows], float)
    if not table.rows:
        return {"kind": None, "why": "no runs yet"}
    if len(varied) == 1:
        x = np.array([r[varied[0]] for r in table.rows], float)
        keep = np.isfinite(z)
        order = np.argsort(x[keep], kind="stable")
        return {"kind": "line", "x": np.ascontiguousarray(x[keep][order]),
                "y": np.ascontiguousarray(z[keep][order]), "xlabel": varied[0]}
    if len(varied) == 2:
        a, b = varied
        if a in table.grid and b in table.grid:
            xs = sorted({r[a] for r in table.rows})
            ys = sorted({r[b] for r in table.rows})
            values = np.full((len(ys), len(xs)), np.nan)
            for r, v in zip(table.rows, z):
                values[ys.index(r[b]), xs.index(r[a])] = v
            return {"kind": "heat", "values": values, "xs": xs, "ys": ys, "xlabel": a,
                    "ylabel": b}
        return {"kind": "scatter", "x": np.array([r[a] for r in table.rows], float),
                "y": np.array([r[b] for r in table.rows], float), "z": z, "xlabel": a,
                "ylabel": b}
    return {"kind": None, "why": f"{len(varied)} swept numbers: the plot shows one or two"}


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- the window ---------------------------------------------------------------------------


@dataclass
class SweepsState:
    open: bool = True
    path: str = ""
    table: SweepTable | None = None
    metric: int = 0
    selected: int | None = None   # the run last opened
    note: str | None = None


def toggle(panel_state):
    """Open or close the window (the panel's Sweeps... button)."""
    if panel_state.sweeps is None:
        panel_state.sweeps = SweepsState()
    else:
        panel_state.sweeps.open = not panel_state.sweeps.open


def request_sweep(state, path):
    """Load the sweep at `path` into the window; a note when it cannot be."""
    try:
        state.table = load_sweep(path)
    except SweepError as exc:
        state.note = str(exc)
        return state.note
    state.note = None
    state.metric = min(state.metric, max(len(state.table.metrics) - 1, 0))
    return None


def request_run(snapshot, send, panel_state, state, run):
    """Open the scene of `run` through the panel's Load; returns a note when it failed."""
    from .panel_state import request_load

    try:
        path = run_scene(state.table, run)
    except SweepError as exc:
        state.note = str(exc)
        return state.note
    state.selected = run
    note = request_load(snapshot, send, panel_state, str(path))
    state.note = note or f"opened run {run}: {path.name}"
    return note


def draw(snapshot, send, panel_state, left=0.0):
    """The Sweeps window, when the panel's state has it open."""
    state = panel_state.sweeps
    if state is None or not state.open:
        return
    from imgui_bundle import imgui

    imgui.set_next_window_pos(imgui.ImVec2(left + 20, 20), imgui.Cond_.first_use_ever)
    imgui.set_next_window_size(imgui.ImVec2(*WINDOW_SIZE), imgui.Cond_.first_use_ever)
    shown, state.open = imgui.begin("Sweeps", state.open)
    if shown:
        _draw_contents(snapshot, send, panel_state, state)
    imgui.end()


def _draw_contents(snapshot, send, panel_state, state):
    from imgui_bundle import imgui

    imgui.set_next_item_width(-110)
    entered, state.path = imgui.input_text("##sweep", state.path,
                                           imgui.InputTextFlags_.enter_returns_true)
    imgui.same_line()
    if imgui.button("Load") or entered:
        request_sweep(state, state.path)
    imgui.same_line()
    if imgui.button("Reload") and state.table is not None:
        request_sweep(state, state.table.folder)
    if state.note:
        imgui.text_wrapped(state.note)
    table = state.table
    if table is None:
        imgui.text_disabled("a folder written by `sharnir sweep` (runs.csv, sweep.json)")
        return
    failed = sum(r["status"] != "ok" for r in table.rows)
    imgui.text(f"{table.info.get('scene', '?')}: {len(table.rows)} of "
               f"{table.info.get('runs', '?')} runs" + (f", {failed} failed" if failed else "")
               + "; click a row to open its scene")
    free = imgui.get_content_region_avail().y
    _draw_table(snapshot, send, panel_state, state, table, free * TABLE_SHARE)
    if table.metrics:
        names = table.metrics
        imgui.set_next_item_width(240)
        _, state.metric = imgui.combo("metric", state.metric, names)
        _draw_plot(table, names[min(state.metric, len(names) - 1)])


def _draw_table(snapshot, send, panel_state, state, table, height):
    from imgui_bundle import imgui

    columns = ["run", *table.parameters, *table.metrics, "status"]
    flags = (imgui.TableFlags_.borders | imgui.TableFlags_.row_bg
             | imgui.TableFlags_.scroll_y | imgui.TableFlags_.scroll_x
             | imgui.TableFlags_.resizable)
    if not imgui.begin_table("runs", len(columns), flags, imgui.ImVec2(0, height)):
        return
    imgui.table_setup_scroll_freeze(1, 1)
    for c in columns:
        imgui.table_setup_column(c)
    imgui.table_headers_row()
    for row in table.rows:
        imgui.table_next_row()
        imgui.table_next_column()
        clicked, _ = imgui.selectable(f"{row['run']}##run{row['run']}",
                                      state.selected == row["run"],
                                      imgui.SelectableFlags_.span_all_columns)
        if clicked:
            request_run(snapshot, send, panel_state, state, row["run"])
        for c in columns[1:]:
            imgui.table_next_column()
            value = row.get(c)
            if c == "status" and value != "ok":
                imgui.text_colored(imgui.ImVec4(1.0, 0.45, 0.35, 1.0), str(value))
                if imgui.is_item_hovered() and row.get("error"):
                    imgui.set_tooltip(row["error"])
            else:
                imgui.text("" if value is None else f"{value:.6g}" if isinstance(value, float)
                           else str(value))
    imgui.end_table()


def _draw_plot(table, metric):
    from imgui_bundle import imgui, implot

    data = plot_data(table, metric)
    if data["kind"] is None:
        imgui.text_disabled(data["why"])
        return
    heat = data["kind"] == "heat"
    if heat:   # a sequential colour map and its scale at the right
        values = data["values"]
        finite = values[np.isfinite(values)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        high = high if high > low else low + 1.0
        implot.push_colormap(implot.Colormap_.viridis)
        size = imgui.ImVec2(-90, -1)
    else:
        size = imgui.ImVec2(-1, -1)
    if not implot.begin_plot(f"{metric}##sweep", size, implot.Flags_.no_legend):
        if heat:
            implot.pop_colormap()
        return
    if data["kind"] == "line":
        implot.setup_axes(data["xlabel"], metric, implot.AxisFlags_.auto_fit,
                          implot.AxisFlags_.auto_fit)
        implot.plot_line(metric, data["x"], data["y"])
        implot.plot_scatter(f"{metric}##points", data["x"], data["y"])
    elif heat:
        nx, ny = len(data["xs"]), len(data["ys"])
        implot.setup_axes(data["xlabel"], data["ylabel"], implot.AxisFlags_.auto_fit,
                          implot.AxisFlags_.auto_fit)
        implot.setup_axis_ticks(implot.ImAxis_.x1, 0.5, nx - 0.5, nx,
                                [f"{v:.4g}" for v in data["xs"]])
        implot.setup_axis_ticks(implot.ImAxis_.y1, 0.5, ny - 0.5, ny,
                                [f"{v:.4g}" for v in data["ys"]])
        # ImPlot draws the first row at the top: the second parameter grows upwards
        implot.plot_heatmap(metric, np.ascontiguousarray(np.nan_to_num(values[::-1], nan=low)),
                            low, high, "%.4g", implot.Point(0, 0), implot.Point(nx, ny))
    else:
        implot.setup_axes(data["xlabel"], data["ylabel"], implot.AxisFlags_.auto_fit,
                          implot.AxisFlags_.auto_fit)
        implot.plot_scatter(metric, np.ascontiguousarray(data["x"]),
                            np.ascontiguousarray(data["y"]))
    implot.end_plot()
    if heat:
        imgui.same_line()
        implot.colormap_scale(f"##{metric}scale", low, high, imgui.ImVec2(80, -1), "%.4g")
        implot.pop_colormap()
