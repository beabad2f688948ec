"""`kmc compare --plot FILE.png|.svg`: the verdict matrix and the state counts per column,
drawn with matplotlib (imported only when a plot is asked for)."""

from __future__ import annotations

import importlib.util

import io
from pathlib import Path
from typing import Any, Sequence

from kmc.api import CheckResult, Verdict
from kmc.cli.output import check_writable, write_atomic
from kmc.errors import BadInput

SUFFIXES = (".png", ".svg")
COLOURS = {"holds": "#b7e4c7", "violated": "#f4a5a0", "report": "#ffe29a", "undecided": "#d9d9d9"}


def _cell(v: Verdict) -> tuple[str, str]:
    """(colour key, text) for a verdict."""
    if v.holds is True:
        return ("holds", "always" if v.report else "holds")
    if v.holds is False and v.trace is not None:
        return ("report" if v.report else "violated", f"{'fails' if v.report else 'violated'}\n{v.trace.length} steps")
    return ("undecided", "not decided")


def fixed_title(title: str, combos: Sequence[dict[str, Any]]) -> str:
    """A model's title without the options the columns vary (the mode, the --matrix ones)."""
    varied = {"mode", *(k for combo in combos for k in combo)}
    return " ".join(w for w in title.split()
                    if w.lstrip("-").split("=")[0].removeprefix("no-").replace("-", "_") not in varied)


def check_path(path: Path) -> None:
    """Before the runs: --plot names a .png or .svg file that can be written."""
    if path.suffix not in SUFFIXES:
        raise BadInput(f"--plot {path}: the file name must end in {' or '.join(SUFFIXES)}")
    if importlib.util.find_spec("matplotlib") is None:
        raise BadInput("--plot needs matplotlib, which the plot extra installs: pip install 'kmc[plot]'")
    check_writable(path, "--plot")


def plot(path: Path, title: str, results: Sequence[CheckResult], labels: Sequence[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    invariants = list(results[0].invariants)
    cols, rows = len(results), len(invariants)
    fig, (matrix, bars) = plt.subplots(
        2, 1, figsize=(max(6.0, 1.6 * cols + 2.5), 1.2 + 0.45 * rows + 3.0),
        gridspec_kw={"height_ratios": [max(rows, 1) * 0.45 + 0.6, 3.0]},
    )
    for i, inv in enumerate(invariants):
        for j, r in enumerate(results):
            key, text = _cell(r.invariants[inv])
            matrix.add_patch(plt.Rectangle((j, rows - 1 - i), 1, 1, facecolor=COLOURS[key], edgecolor="white", lw=2))
            matrix.text(j + 0.5, rows - 0.5 - i, text, ha="center", va="center", fontsize=8)
    matrix.set_xlim(0, cols)
    matrix.set_ylim(0, rows)
    matrix.set_xticks([j + 0.5 for j in range(cols)], labels, fontsize=8)
    matrix.xaxis.tick_top()
    matrix.set_yticks([rows - 0.5 - i for i in range(rows)], invariants, fontsize=8)
    matrix.tick_params(length=0)
    for side in matrix.spines.values():
        side.set_visible(False)
    matrix.set_title(title, fontsize=9, pad=24)
    matrix.legend(handles=[Patch(color=c, label=k) for k, c in COLOURS.items()], fontsize=7, ncol=4,
                  loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False)

    counts = [r.distinct_states for r in results]
    drawn = bars.bar(range(cols), counts, color="#8fb3de",
                     hatch=[None if r.complete else "//" for r in results])
    bars.bar_label(drawn, [f"{c:,}" for c in counts], fontsize=7)
    bars.set_xticks(range(cols), labels, fontsize=8)
    bars.set_ylabel("distinct states", fontsize=8)
    bars.tick_params(axis="y", labelsize=7)
    if not all(r.complete for r in results):
        bars.set_title("hatched: run incomplete (a limit stopped it)", fontsize=7)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format=path.suffix[1:], dpi=120)
    plt.close(fig)
    write_atomic(path, out.getvalue(), "--plot")
