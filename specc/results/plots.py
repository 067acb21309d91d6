"""`specc results RUN_DIR --plot DIR`: the report's plots as PNG files, for a README, a paper or a chat.

`curves_<metric>.png` for each metric the run reported (one line per trial, the best one thick and red), and for
a search `parallel_coordinates.png` (each sampled hyperparameter against the metric, every axis scaled to its
range and ticked in real values, lines coloured by the metric, the best trial thick). Drawn with matplotlib's
Agg backend (no display needed); needs the `report` extra, imported only when plots are written.
"""

from __future__ import annotations

import os
import re

from specc.results.history import (
    BEST,
    LEGEND_UP_TO,
    METRIC_COLOURS,
    OTHERS,
    Curve,
    Parallel,
    _finite,
    curves,
    metric_names,
    parallel,
)
from specc.results.pareto import FrontView, front_view
from specc.results.run_dir import RunResults, read_run
from specc.results.run_files import printable
from specc.spec.errors import UsageError

DPI = 150


def write_plots(run: RunResults | str | os.PathLike, out_dir: str | os.PathLike) -> list[str]:
    """Writes the PNG plots of a run (its directory, or the run already read) into `out_dir` (made if missing);
    returns their paths."""
    from specc.read.files import writable

    results = run if isinstance(run, RunResults) else read_run(run)
    plt = _pyplot()
    out_dir = os.fspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"{printable(out_dir)}: not a directory; --plot takes the directory the PNG files go to")
    lines = curves(results)
    view, front = parallel(results), front_view(results)
    drawings = [
        (f"curves_{_file_part(metric)}.png", lambda metric=metric: _curve_figure(plt, results, lines, metric))
        for metric in metric_names(results, lines)
    ]
    drawings += [("parallel_coordinates.png", lambda: _parallel_figure(plt, view))] if view is not None else []
    drawings += [("pareto_front.png", lambda: _front_figure(plt, front))] if front is not None else []
    for name, _ in drawings:  # a planted link or FIFO among them: refused before any plot is written
        writable(os.path.join(out_dir, name))
    return [_save(plt, draw(), os.path.join(out_dir, name)) for name, draw in drawings]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UsageError("plotting needs matplotlib: pip install 'specc[report]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _file_part(metric: str) -> str:
    """A metric's name as part of a file name: safe characters only, and short enough for any file system."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", metric)[:100] or "metric"


def _label(text) -> str:
    """Text from the run's files as matplotlib draws it: `$` would start mathtext (a parse error at savefig), a
    control character shows as its escape."""
    return printable(str(text)).replace("$", r"\$")


def _save(plt, figure, path: str) -> str:
    """Saves whole or not at all (the write gate), with no timestamp in the PNG."""
    import io

    from specc.read.files import write_file

    png = io.BytesIO()
    try:
        figure.savefig(png, dpi=DPI, format="png", metadata={"Software": None})
    finally:
        plt.close(figure)
    try:
        write_file(path, png.getvalue())
    except OSError as error:
        raise UsageError(f"{printable(path)}: cannot be written: {error.strerror}") from None
    return path


def _style(axes) -> None:
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.grid(True, color="#e5e5e5", linewidth=0.8)
    axes.set_axisbelow(True)


# The Pareto front


def _front_figure(plt, view: FrontView):
    """The first two objectives' last values, one dot per trial, the front red and joined in x order."""
    figure, axes = plt.subplots(figsize=(7.5, 5))
    others = [i for i, on in enumerate(view.on_front) if not on]
    axes.scatter([view.x[i] for i in others], [view.y[i] for i in others], color="#9aa5b1", s=36, label="dominated")
    step = "pre" if view.x_mode == "max" else "post"  # the corners of the region the front dominates
    axes.step(view.front_x, view.front_y, where=step, color=BEST, linewidth=1.5)
    axes.scatter(view.front_x, view.front_y, color=BEST, s=60, zorder=3, label="Pareto front")
    for x, y, trial in zip(view.front_x, view.front_y, view.front_trials, strict=True):
        axes.annotate(_label(trial), (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8, color="#444")
    axes.set_xlabel(_label(f"{view.x_name} ({view.x_mode})"))
    axes.set_ylabel(_label(f"{view.y_name} ({view.y_mode})"))
    axes.set_title(_label(f"Pareto front: {view.x_name} against {view.y_name}"), loc="left", fontsize=12)
    axes.legend(frameon=False)
    _style(axes)
    figure.tight_layout()
    return figure


# Learning curves


def _curve_figure(plt, results: RunResults, lines: list[Curve], metric: str):
    from matplotlib.ticker import MaxNLocator

    many = len(lines) > LEGEND_UP_TO
    figure, axes = plt.subplots(figsize=(9.5 if results.kind == "tune" and not many else 8, 4.8))
    _style(axes)
    if results.kind == "train":
        _train_lines(axes, results, lines[0], metric)
        title = f"{_label(metric)} per epoch"
    else:
        others = [line for line in lines if not line.best]
        for index, line in enumerate(others):
            x, y = line.points(metric)
            label = _label(line.name + (f" ({line.status})" if line.status and line.status != "completed" else ""))
            axes.plot(
                x, y, color=OTHERS[index % len(OTHERS)], linewidth=1.4, alpha=0.75, marker="o", markersize=3,
                linestyle=":" if line.status == "error" else "-", label=None if many else label,
            )  # fmt: skip
        for line in lines:
            if line.best:
                x, y = line.points(metric)
                label = _label(f"{line.name} (best)")
                axes.plot(x, y, color=BEST, linewidth=3.2, marker="o", markersize=6, label=label, zorder=5)
        if many:
            axes.plot([], [], color="#999999", linewidth=1.4, label=f"{len(others)} other trials")
        count = len(lines)
        title = f"{_label(metric)} per epoch: {count} trial{'s' * (count != 1)}"
    axes.set_title(title, loc="left", fontsize=13, fontweight="bold")
    axes.set_xlabel("epoch")
    axes.set_ylabel(_label(metric))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    if axes.get_legend_handles_labels()[0]:
        if results.kind == "tune":
            axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5, frameon=False)
        else:
            axes.legend(fontsize=9, frameon=False)
    figure.tight_layout()
    return figure


def _train_lines(axes, results: RunResults, line: Curve, metric: str) -> None:
    x, y = line.points(metric)
    axes.plot(x, y, color=OTHERS[0], linewidth=2.4, marker="o", markersize=4, label=_label(metric))
    if results.best_row is None:
        return
    row = results.rows[results.best_row]
    if _finite(row.get(metric)) and _finite(row.get("epoch")):
        label = "best epoch" if results.metric else "last epoch (kept)"
        axes.plot([row["epoch"]], [row[metric]], linestyle="none", marker="*", markersize=17, color=BEST,
                  markeredgecolor="white", label=label, zorder=5)  # fmt: skip


# Parallel coordinates


def _parallel_figure(plt, view: Parallel):
    import matplotlib.patheffects as effects
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    count = len(view.axes)
    figure, axes = plt.subplots(figsize=(max(7.5, 2.1 * count + 2.0), 5.4))
    from matplotlib.colors import LinearSegmentedColormap

    colormap = LinearSegmentedColormap.from_list("metric", [(at, colour) for at, colour in METRIC_COLOURS])
    if view.mode == "min":
        colormap = colormap.reversed()
    low, high = min(view.metric), max(view.metric)
    norm = Normalize(vmin=low, vmax=high if high > low else low + 1)
    xs = list(range(count))

    def y(axis, value):
        return (value - axis.low) / (axis.high - axis.low)

    order = [i for i in range(len(view.trials)) if i != view.best] + ([view.best] if view.best is not None else [])
    for i in order:
        ys = [y(axis, axis.values[i]) for axis in view.axes]
        color = colormap(norm(view.metric[i]))
        if i == view.best:
            outline = [effects.withStroke(linewidth=6.5, foreground="white")]
            axes.plot(xs, ys, color=color, linewidth=3.5, zorder=5, path_effects=outline,
                      label=_label(f"best trial {view.trials[i]}"), solid_capstyle="round")  # fmt: skip
        else:
            axes.plot(xs, ys, color=color, linewidth=1.4, alpha=0.8, zorder=3)
    for x, axis in zip(xs, view.axes, strict=True):
        last = x == count - 1  # the metric: ticks to the right, where no line comes in
        axes.axvline(x, color="#444444", linewidth=1.0, zorder=1)
        for position, text in axis.ticks:
            at = y(axis, position)
            if -0.001 <= at <= 1.001:
                axes.plot([x, x + 0.03] if last else [x - 0.03, x], [at, at], color="#444444", linewidth=1.0, zorder=1)
                bold = "bold" if text.startswith("★") else "normal"
                label = _label(text.replace("★ ", "best "))
                axes.text(x + 0.05 if last else x - 0.05, at, label, ha="left" if last else "right", va="center",
                          fontsize=8.5, color="#333333", fontweight=bold, zorder=6,
                          bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5})  # fmt: skip
        axes.text(x, 1.04, _label(axis.label), ha="center", va="bottom", fontsize=10.5, fontweight="bold")
    axes.set_xlim(-0.6, count - 0.4)
    axes.set_ylim(-0.03, 1.1)
    axes.axis("off")
    colorbar = figure.colorbar(ScalarMappable(norm=norm, cmap=colormap), ax=axes, fraction=0.03, pad=0.02)
    colorbar.set_label(_label(f"best {view.metric_name}"))
    count = len(view.trials)
    title = f"Hyperparameters against {_label(view.metric_name)}: {count} trial{'s' * (count != 1)}"
    if view.left_out:
        title += f" ({len(view.left_out)} without {_label(view.metric_name)} left out)"
    axes.set_title(title, loc="left", fontsize=13, fontweight="bold", pad=26)
    if view.best is not None:
        axes.legend(loc="lower left", bbox_to_anchor=(0.0, -0.1), fontsize=9, frameon=False)
    figure.tight_layout()
    return figure
