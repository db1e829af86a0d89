"""A seeded sample of bench/fuzz.py (issue 13): mutated scene, URDF and MJCF files, each run
by `sharnir run` in a child process with a time and a memory limit, end as a result or as one
clean error: no crash, no hang, no silent NaN.

The full run (10,000 cases) and its counts are in bench/results.md, "Fuzz"; this keeps it
fixed in CI with 40 cases of a fixed seed (the cases are the same on every machine). The
classification itself is checked on made-up child outcomes.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import fuzz  # noqa: E402  (bench/fuzz.py, a script beside the package)

SAMPLE = 40
SEED = 13


def test_a_seeded_sample_has_no_crash_hang_or_silent_nan(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "fuzz.py"), "--cases", str(SAMPLE), "--seed",
         str(SEED), "-j", "2", "--timeout", "60", "--json", "--keep-bad", str(tmp_path)],
        capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    bad = [f"{r['index']} {r['outcome']}: {r['seed']} {r['mutation']} ({r['detail']}): "
           f"{r['message']}" for r in report["results"]
           if r["outcome"] in ("crash", "hang", "nonfinite_silent", "oom")]
    assert not bad, "\n".join(bad)
    assert sum(report["counts"].values()) == SAMPLE
    # the sample exercises both sides: runs that finish and inputs that are refused
    assert report["counts"].get("ok", 0) > 0 and report["counts"].get("clean_error", 0) > 0


def test_the_cases_of_a_seed_are_the_same_on_every_run():
    seeds = fuzz.seed_inputs()
    first = [fuzz.make_case(SEED, k, seeds) for k in range(20)]
    again = [fuzz.make_case(SEED, k, seeds) for k in range(20)]
    assert [(c.seed, c.mutation, c.detail, c.files, c.sets) for c in first] == \
        [(c.seed, c.mutation, c.detail, c.files, c.sets) for c in again]
    # every input is mutated (the first cases take the inputs in order)
    assert {c.seed for c in first} >= {s.name for s in seeds[:20]}


@pytest.mark.parametrize("code,stderr,outcome", [
    (2, "sharnir: error: DIR/s.toml: duration: must be at most 1e+06\n", "clean_error"),
    (2, "  25%  1/4 steps\nsharnir: error: the simulation became non-finite\n", "clean_error"),
    (2, "sharnir: error: DIR/s.toml: " + "x" * 400 + "\n", "crash"),
    (2, "Traceback (most recent call last):\nValueError: boom\n", "crash"),
    (1, "sharnir: error: something\n", "crash"),
    (2, "usage: sharnir\n", "crash"),
    (-11, "", "crash"),
    (fuzz.OOM_STATUS, "MemoryError (fuzz child)\n", "oom"),
    (2, "Traceback (most recent call last):\nMemoryError\n", "oom"),
])
def test_outcomes_are_sorted_by_status_and_message(tmp_path, code, stderr, outcome):
    stderr = stderr.replace("DIR", str(tmp_path))
    assert fuzz.classify(code, stderr, tmp_path / "out.npz", tmp_path / "s.toml")[0] == outcome


def test_a_run_is_ok_only_when_its_recording_is_finite(tmp_path):
    import numpy as np

    np.savez(tmp_path / "good.npz", body_pos=np.zeros((3, 2, 3)), names=np.array(["a"]))
    np.savez(tmp_path / "bad.npz", body_pos=np.array([[[0.0, np.nan, 0.0]]]))
    assert fuzz.classify(0, "", tmp_path / "good.npz", tmp_path / "s.toml")[0] == "ok"
    assert fuzz.classify(0, "", tmp_path / "bad.npz", tmp_path / "s.toml")[0] == \
        "nonfinite_silent"
