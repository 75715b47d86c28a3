"""bench/report.py's latency goals: the lines under bench/run.sh's table
that say whether each row of issue 36's goals (docs/latency.md) is met,
so that a run shows a row slipping past its goal."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

import report  # noqa: E402


def rows(hit_ms, omp_ratio):
    def r(bench, impl, median, unit, ratio=None, is_asc=False):
        return {"benchmark": bench, "impl": impl, "median": median, "unit": unit,
                "ratio": ratio, "status": "ok", "is_asc": is_asc}
    return [r("compile softmax: cache hit", "asc cache hit (new process)", hit_ms, "ms",
              is_asc=True),
            r("launch round trip", "asc (launch + stream sync)", 1.8, "us", is_asc=True),
            r("launch round trip", "OpenMP empty parallel for", 0.9, "us", omp_ratio)]


def test_goals_met_and_missed():
    met = report.goal_lines(rows(1.8, 1.2))
    assert len(met) == 2 and all(line.endswith("met") for line in met)
    missed = report.goal_lines(rows(2.3, 0.5))
    assert len(missed) == 2 and all(line.endswith("MISSED") for line in missed)
    assert "2.30 ms" in missed[0] and "<= 2 ms" in missed[0]


def test_rows_not_run_have_no_line():
    assert report.goal_lines([]) == []
    failed = rows(1.0, 2.0)
    for r in failed:
        r["status"] = "FAILED"
    assert report.goal_lines(failed) == []
