"""`specc report`: a finished run as one HTML page that opens anywhere, offline.

The page holds the run's headline (what it searched, how its trials ended, the best trial and its config), a
learning curve per metric (one line per trial, the best one thick), for a search the parallel coordinates of the
sampled hyperparameters against the metric, and the table of trials (or epochs), sortable by any column.

Self-contained: plotly.js is inlined once, the styles are inline and use the system's fonts, nothing is
fetched when the page is viewed. The same run directory always gives the same bytes (fixed element ids, no
time of writing). Needs the `report` extra (plotly); imported only when a report is written.
"""

from __future__ import annotations

import html
import json
import os
from collections import Counter

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
from specc.results.run_dir import (
    STATUS_ORDER,
    RunResults,
    best_config,
    best_metrics,
    best_trial_metrics,
    best_value,
    format_value,
    is_number,
    read_run,
    short_names,
)
from specc.results.run_files import printable
from specc.spec.errors import UsageError
from specc.spec.version import __version__

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
NUMBER = ' class="number"'
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def write_report(run: RunResults | str | os.PathLike, out: str | os.PathLike | None = None) -> str:
    """Writes the report of a run (its directory, or the run already read) to `out` (default RUN_DIR/report.html),
    atomically; returns the path written. A directory that is not a run's, or a missing plotly, is a UsageError;
    what is wrong with the run's files is in the run's `warnings` (and on the page).

    A report in the run directory is never written through a symbolic link: a run directory may be someone
    else's, and a report.html they linked to a file of yours must not replace it."""
    from specc.read.files import write_file

    results = run if isinstance(run, RunResults) else read_run(os.path.abspath(run))  # named wherever it is opened
    within = results.run_dir if out is None else None  # the default report.html stays inside the run directory
    if out is None:
        out = os.path.join(results.run_dir if isinstance(run, RunResults) else os.fspath(run), "report.html")
    _refuse_a_link_in_the_run(results.run_dir, os.fspath(out))
    out = os.fspath(out)
    if os.path.isdir(out):
        raise UsageError(f"{out}: is a directory; give the report's file name, e.g. {os.path.join(out, 'report.html')}")
    page = report_html(results)
    try:
        write_file(out, page, within=within)
    except OSError as error:
        raise UsageError(f"{out}: cannot be written: {error.strerror}") from None
    return out


def _refuse_a_link_in_the_run(run_dir: str, out: str) -> None:
    """A symbolic link in the run directory is not written through: the directory may be someone else's."""
    inside = os.path.realpath(os.path.dirname(os.path.abspath(out))) == os.path.realpath(run_dir)
    if inside and os.path.islink(out):
        target = os.path.realpath(out)
        raise UsageError(
            f"{printable(out)}: a symbolic link in the run directory (to {printable(target)}); not written through: "
            "give the report's file with -o"
        )


def report_html(results: RunResults) -> str:
    """The whole page, as text."""
    plotly = _plotly()
    lines = curves(results)
    metrics = metric_names(results, lines)
    figures = [_curve_figure(results, lines, metric) for metric in metrics]
    view = parallel(results)
    curve_divs = [_div(plotly, figure, f"curves-{index}", "380px") for index, figure in enumerate(figures)]
    sections = [_headline(results), *_warnings_section(results), _best_block(results)]
    sections.append(_curves_section(results, lines, metrics, curve_divs))
    if view is not None:
        sections.append(_parallel_section(view, _div(plotly, _parallel_figure(view), "parallel-coordinates", "480px")))
    front = front_view(results)
    if front is not None:
        sections.append(_front_section(front, _div(plotly, _front_figure(front), "pareto-front", "460px")))
    sections.append(_table_section(results))
    sections.append(f"<footer>Written by specc {html.escape(__version__)} · <code>specc report</code></footer>")
    return PAGE.format(
        title=html.escape(f"{_run_name(results)}: specc report"),
        style=STYLE,
        plotly=plotly.offline.get_plotlyjs(),
        body="\n".join(sections),
        script=SORT_SCRIPT,
    )


def _plotly():
    try:
        import plotly.graph_objects
        import plotly.io
        import plotly.offline
    except ImportError:
        raise UsageError("writing a report needs plotly: pip install 'specc[report]'") from None
    import plotly

    return plotly


def _div(plotly, figure, div_id: str, height: str) -> str:
    return plotly.io.to_html(
        figure,
        include_plotlyjs=False,
        full_html=False,
        div_id=div_id,
        config=PLOTLY_CONFIG,
        default_height=height,
    )


def _run_name(results: RunResults) -> str:
    return os.path.basename(os.path.normpath(results.run_dir)) or results.run_dir


def _text(value, digits: int = 4) -> str:
    """A value as the page shows it, HTML-escaped."""
    return html.escape(format_value(value, digits))


def _plain(text: str) -> str:
    """Text for plotly's labels, which read a little HTML: shown as it is."""
    return html.escape(text, quote=False)


# The top of the page


def _headline(results: RunResults) -> str:
    if results.kind == "tune":
        statuses = Counter(row.get("status") or "unknown" for row in results.rows)
        order = [*STATUS_ORDER, *sorted(set(statuses) - set(STATUS_ORDER))]
        chips = "".join(
            f'<span class="chip {html.escape(status)}">{statuses[status]} {html.escape(status)}</span>'
            for status in order
            if status in statuses
        )
        count = len(results.rows)
        what = f"Ray Tune search · {count} trial{'s' * (count != 1)} {chips}"
    else:
        count = len(results.rows)
        what = f"Ray Train run · {count} epoch{'s' * (count != 1)}"
        where = results.best.get("diverged")
        if isinstance(where, dict):  # a loss became NaN or infinite: training stopped at that epoch
            what += f' <span class="chip diverged">diverged at epoch {html.escape(str(where.get("epoch")))}</span>'
    goal = (
        f" · best by <b>{html.escape(results.metric)}</b> ({html.escape(results.mode or 'max')})"
        if results.metric
        else " · no metric ranks the epochs: the last one is kept"
    )
    if results.objectives:
        pairs = " and ".join(f"<b>{html.escape(m)}</b> ({html.escape(mode)})" for m, mode in results.objectives)
        goal = f" · Pareto front of {pairs}: {len(results.front)} trials"
    return (
        f"<header><h1>{html.escape(_run_name(results))}</h1>"
        f'<p class="sub">{what}{goal}</p>'
        f'<p class="path">{html.escape(results.run_dir)}</p></header>'
    )


def _warnings_section(results: RunResults) -> list[str]:
    """What is wrong with the run's files (reading them, curves included, is done by now): a reader of the page
    should know that what it shows was read in part."""
    if not results.warnings:
        return []
    items = "".join(f"<li><code>{html.escape(str(problem))}</code></li>" for problem in results.warnings)
    return [f'<section class="warnings"><h2>Read in part</h2><ul>{items}</ul></section>']


def _best_block(results: RunResults) -> str:
    noun = "trial" if results.kind == "tune" else "epoch"
    title = f"The best {noun}" if results.metric or results.kind == "tune" else "The epoch kept"
    if results.best_row is None:
        what = f"reported {html.escape(results.metric or 'a metric')}"
        what = "stayed finite: the run diverged" if results.best.get("status") == "diverged" else what
        return f'<section class="best"><p>No best {noun}: none {what}.</p></section>'
    row = results.rows[results.best_row]
    cards = []
    if results.objectives:  # the front's first member (best.yaml's): the front itself has its own section
        title = f"The Pareto front's first by {html.escape(results.objectives[0][0])}"
        cards.append(_card("trial", html.escape(str(row.get("trial_id")))))
        cards.append(_card("on the front", _text(len(results.front)), "trials (pareto true)"))
        cards.extend(_card(m, _text(row.get(f"last_{m}")), "last") for m, _ in results.objectives)
    elif results.kind == "tune":
        cards.append(_card("best trial", html.escape(str(row.get("trial_id")))))
        epoch = best_metrics(results.best).get("epoch")
        at = f"at epoch {_text(epoch)}" if epoch is not None else ""
        cards.append(_card(results.metric or "metric", _text(best_value(results, row) if results.metric else None), at))
    else:
        cards.append(_card("best epoch" if results.metric else "last epoch", _text(row.get("epoch"))))
        if results.metric:
            cards.append(_card(results.metric, _text(row.get(results.metric))))
    config, shown = best_config(results, row), best_trial_metrics(results, row)
    parts = [f'<div class="cards">{"".join(cards)}</div>']
    if config:
        names = dict(zip(config, short_names(list(config)), strict=True))
        items = "".join(
            f'<div title="{html.escape(path)}"><dt>{html.escape(names[path])}</dt><dd>{_text(value, 6)}</dd></div>'
            for path, value in config.items()
        )
        parts.append(f'<h3>its config</h3><dl class="config">{items}</dl>')
    if shown:
        items = "".join(f"<div><dt>{html.escape(n)}</dt><dd>{_text(v)}</dd></div>" for n, v in shown.items())
        parts.append(f'<h3>its metrics</h3><dl class="config metrics">{items}</dl>')
    notes = []
    if "checkpoint" in results.best:
        notes.append(f"checkpoint <code>{html.escape(str(results.best['checkpoint'] or 'none kept'))}</code>")
    if results.best_spec:
        notes.append(f"retrain it: <code>specc run {html.escape(results.best_spec)}</code>")
    if notes:
        parts.append(f'<p class="notes">{"<br>".join(notes)}</p>')
    return f'<section class="best"><h2>{title}</h2>{"".join(parts)}</section>'


def _card(label: str, value: str, note: str = "") -> str:
    note = f'<span class="note">{note}</span>' if note else ""
    label = f'<span class="label">{html.escape(label)}</span>'
    return f'<div class="card">{label}<span class="value">{value}</span>{note}</div>'


# Learning curves


def _curves_section(results: RunResults, lines: list[Curve], metrics: list[str], divs: list[str]) -> str:
    if not divs:
        return '<section><h2>Learning curves</h2><p class="empty">No trial reported an epoch.</p></section>'
    silent = [line.name for line in lines if not line.epochs]
    note = ""
    if results.kind == "tune":
        note = (
            f'One line per trial, the best one (<b style="color:{BEST}">{html.escape(_best_name(lines))}</b>) thick. '
            "Hover a line for its trial and config; click a legend entry to hide it, double-click to show it alone."
        )
        if silent:
            note += f" No epochs reported by: {html.escape(', '.join(silent))}."
    grid = "".join(f'<div class="figure">{div}</div>' for div in divs)
    return f'<section><h2>Learning curves</h2><p class="note">{note}</p><div class="grid">{grid}</div></section>'


def _best_name(lines: list[Curve]) -> str:
    return next((line.name for line in lines if line.best), "none")


def _curve_figure(results: RunResults, lines: list[Curve], metric: str):
    import plotly.graph_objects as go

    figure = go.Figure()
    if results.kind == "train":
        _train_traces(figure, results, lines[0], metric)
    else:
        ordered = [line for line in lines if not line.best] + [line for line in lines if line.best]
        names = dict(zip(results.space, short_names(results.space), strict=True))  # once, not once per trial
        for index, line in enumerate(ordered):
            _trial_trace(figure, names, line, metric, OTHERS[index % len(OTHERS)], len(lines))
    epochs = [epoch["epoch"] for line in lines for epoch in line.epochs if metric in epoch]
    figure.update_layout(_layout(metric, results.kind == "tune"))
    if epochs and max(epochs) - min(epochs) <= 20:
        figure.update_xaxes(tickmode="linear", tick0=0, dtick=1)
    return figure


def _trial_trace(figure, names: dict[str, str], line: Curve, metric: str, color: str, count: int) -> None:
    """The trial's line; `names` are the search-space paths' short names, for its hover text."""
    import plotly.graph_objects as go

    x, y = line.points(metric)
    if not x:
        return
    config = "<br>".join(f"{_plain(names.get(p, p))} = {_plain(format_value(v))}" for p, v in line.config.items())
    status = f" ({_plain(line.status)})" if line.status and line.status != "completed" else ""
    name = _plain(line.name) + (" ★ best" if line.best else status)
    hover = f"<b>{name}</b><br>epoch %{{x}}<br>{_plain(metric)} %{{y:.4g}}<br>{config}<extra></extra>"
    figure.add_trace(
        go.Scatter(
            x=x,
            y=y,
            name=name,
            mode="lines+markers",
            line={"color": BEST if line.best else color, "width": 4 if line.best else 1.6,
                  "dash": "dot" if line.status == "error" else "solid"},
            marker={"size": 7 if line.best else 5},
            opacity=1.0 if line.best else 0.6,
            hovertemplate=hover,
            legendrank=1 if line.best else 1000,
            showlegend=line.best or count <= LEGEND_UP_TO,
        )
    )  # fmt: skip


def _train_traces(figure, results: RunResults, line: Curve, metric: str) -> None:
    import plotly.graph_objects as go

    x, y = line.points(metric)
    figure.add_trace(
        go.Scatter(
            x=x, y=y, name=_plain(metric), mode="lines+markers", line={"color": OTHERS[0], "width": 3},
            marker={"size": 6}, hovertemplate=f"epoch %{{x}}<br>{_plain(metric)} %{{y:.4g}}<extra></extra>",
        )
    )  # fmt: skip
    if results.best_row is None:
        return
    row = results.rows[results.best_row]
    if _finite(row.get(metric)) and _finite(row.get("epoch")):
        label = "best epoch" if results.metric else "last epoch (kept)"
        figure.add_trace(
            go.Scatter(
                x=[row["epoch"]], y=[row[metric]], name=label, mode="markers",
                marker={"color": BEST, "size": 16, "symbol": "star", "line": {"color": "white", "width": 1}},
                hovertemplate=f"{label} %{{x}}<br>{_plain(metric)} %{{y:.4g}}<extra></extra>",
            )
        )  # fmt: skip


def _layout(metric: str, legend: bool) -> dict:
    return {
        "template": "plotly_white",
        "title": {"text": f"<b>{_plain(metric)}</b>", "x": 0.01, "xanchor": "left", "font": {"size": 16}},
        "font": {"family": FONT, "size": 12, "color": "#222"},
        "xaxis": {"title": {"text": "epoch"}, "zeroline": False},
        "yaxis": {"title": {"text": _plain(metric)}, "zeroline": False},
        "margin": {"l": 60, "r": 20, "t": 48, "b": 48},
        "hovermode": "closest",
        "showlegend": True,
        "legend": {"font": {"size": 11}, "itemclick": "toggle", "itemdoubleclick": "toggleothers"}
        if legend
        else {"orientation": "h", "y": -0.2},
    }


# The Pareto front of a multi-objective search


def _front_section(view: FrontView, div: str) -> str:
    heading = f"<h2>Pareto front: {html.escape(view.x_name)} against {html.escape(view.y_name)}</h2>"
    members = html.escape(", ".join(view.front_trials))
    note = f"{html.escape(view.caption())} On the front: {members}."
    return f'<section>{heading}<p class="note">{note}</p>{div}</section>'


def _front_figure(view: FrontView):
    import plotly.graph_objects as go

    others = [i for i, on in enumerate(view.on_front) if not on]
    hover = f"<b>%{{text}}</b><br>{_plain(view.x_name)} %{{x:.4g}}<br>{_plain(view.y_name)} %{{y:.4g}}<extra></extra>"
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[view.x[i] for i in others], y=[view.y[i] for i in others], text=[view.trials[i] for i in others],
            mode="markers", name="dominated", marker={"color": "#9aa5b1", "size": 9}, hovertemplate=hover,
        )
    )  # fmt: skip
    figure.add_trace(
        go.Scatter(
            x=view.front_x, y=view.front_y, text=view.front_trials, mode="lines+markers", name="Pareto front",
            line={"color": BEST, "width": 2, "shape": "vh" if view.x_mode == "max" else "hv"},
            marker={"color": BEST, "size": 11}, hovertemplate=hover,
        )
    )  # fmt: skip
    figure.update_layout(
        template="plotly_white",
        font={"family": FONT, "size": 12},
        margin={"l": 70, "r": 30, "t": 30, "b": 60},
        xaxis={"title": {"text": f"{_plain(view.x_name)} ({view.x_mode})"}, "zeroline": False},
        yaxis={"title": {"text": f"{_plain(view.y_name)} ({view.y_mode})"}, "zeroline": False},
    )
    return figure


# Parallel coordinates


def _parallel_section(view: Parallel, div: str) -> str:
    best = html.escape(view.trials[view.best]) if view.best is not None else "none"
    note = (
        f"One line per trial through its sampled values, coloured by its best {html.escape(view.metric_name)} "
        f"(pale: worst, red: best): the best trial ({best}) ends at ★ on the last axis. "
        "Parameters sampled on a log scale are drawn on one, with their real values as ticks. "
        "Drag along an axis to keep only the trials in that range; drag an axis title to reorder."
    )
    if view.left_out:
        note += f" Left out (never reported {html.escape(view.metric_name)}): {html.escape(', '.join(view.left_out))}."
    heading = f"<h2>Hyperparameters against {html.escape(view.metric_name)}</h2>"
    return f'<section>{heading}<p class="note">{note}</p>{div}</section>'


def _parallel_figure(view: Parallel):
    import plotly.graph_objects as go

    dimensions = [
        {
            "label": _plain(axis.label),
            "values": list(axis.values),
            "range": [axis.low, axis.high],
            "tickvals": [position for position, _ in axis.ticks],
            "ticktext": [_plain(text) for _, text in axis.ticks],
        }
        for axis in view.axes
    ]
    figure = go.Figure(
        go.Parcoords(
            line={
                "color": list(view.metric),
                "colorscale": [list(stop) for stop in METRIC_COLOURS],
                "reversescale": view.mode == "min",
                "showscale": True,
                "colorbar": {"title": {"text": _plain(view.metric_name), "side": "right"}, "thickness": 14},
            },
            dimensions=dimensions,
            labelangle=0,
            labelside="top",
            labelfont={"size": 13, "family": FONT, "color": "#222"},
            tickfont={"size": 11, "family": FONT, "color": "#333"},
            rangefont={"size": 10, "family": FONT, "color": "#888"},
        )
    )
    figure.update_layout(
        template="plotly_white", font={"family": FONT, "size": 12}, margin={"l": 70, "r": 70, "t": 70, "b": 30}
    )
    return figure


# The table


def _table_section(results: RunResults) -> str:
    labels = dict(zip(results.space, short_names(results.space), strict=True))
    numbers = {name for name in results.columns if _numbers_only(row.get(name) for row in results.rows)}
    heads = "".join(
        f'<th{NUMBER if name in numbers else ""} title="{html.escape(name)} (click to sort)">'
        f"{html.escape(labels.get(name, name))}</th>"
        for name in results.columns
    )
    body = "".join(_table_row(results, index, row) for index, row in enumerate(results.rows))
    noun = "Trials" if results.kind == "tune" else "Epochs"
    best = "the best one marked ★" if results.best_row is not None else "none is best"
    return (
        f'<section><h2>{noun}</h2><p class="note">{len(results.rows)} rows of results.csv, {best}. '
        "Click a column's title to sort by it.</p>"
        f'<div class="table"><table class="sortable"><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table></div>'
        "</section>"
    )


def _numbers_only(values) -> bool:
    values = [value for value in values if value is not None]
    return bool(values) and all(is_number(v) for v in values)


def _table_row(results: RunResults, index: int, row: dict) -> str:
    cells = []
    for name in results.columns:
        value = row.get(name)
        text = _text(value)
        if name == "trial_id" or (results.kind == "train" and name == "epoch"):
            text = ("★ " if index == results.best_row else "") + text
        classes = []
        if is_number(value):
            sort = f' data-sort="{html.escape(json.dumps(value))}"' if value == value else ""
            classes.append("number")
        else:
            sort = ""
        if name == "status" and value:
            text = f'<span class="chip {html.escape(str(value))}">{text}</span>'
        if value is None:
            classes.append("missing")
        full = html.escape(format_value(value, 17))
        cls = f' class="{" ".join(classes)}"' if classes else ""
        cells.append(f'<td{cls}{sort} title="{full}">{text}</td>')
    row_class = ' class="best"' if index == results.best_row else ""
    return f"<tr{row_class}>{''.join(cells)}</tr>"


STYLE = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #222; font: 14px/1.45 __FONT__; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 28px 40px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header .sub { margin: 0; font-size: 15px; color: #444; }
header .path, footer { margin: 4px 0 0; color: #888; font-size: 12px; word-break: break-all; }
section { background: white; border-radius: 10px; padding: 16px 20px 18px; margin: 18px 0;
          box-shadow: 0 1px 3px rgba(0,0,0,.08); }
h2 { margin: 0 0 6px; font-size: 18px; }
h3 { margin: 14px 0 6px; font-size: 13px; color: #666; text-transform: uppercase; letter-spacing: .04em; }
p.note { margin: 0 0 10px; color: #555; font-size: 13px; }
.chip { display: inline-block; margin-left: 6px; padding: 1px 8px; border-radius: 10px; font-size: 12px;
        background: #eceff3; color: #444; }
.chip.completed { background: #e3f4e6; color: #1d6b2c; }
.chip.stopped { background: #fff2d6; color: #8a5a00; }
.chip.error { background: #fde2e1; color: #a3211c; }
td .chip { margin-left: 0; }
section.best { border-left: 6px solid __BEST__; }
section.warnings { border-left: 6px solid #e0a800; }
section.warnings ul { margin: 0; padding-left: 18px; font-size: 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 14px; }
.card { min-width: 170px; padding: 8px 14px; background: #fafafa; border-radius: 8px; border: 1px solid #eee; }
.card .label { display: block; color: #666; font-size: 12px; }
.card .value { display: block; font-size: 22px; font-weight: 600; color: __BEST__; }
.card .note { color: #777; font-size: 12px; }
dl.config { display: flex; flex-wrap: wrap; gap: 6px 10px; margin: 0; }
dl.config div { background: #f6f7f9; border-radius: 6px; padding: 3px 10px; }
dl.config dt { display: inline; color: #666; }
dl.config dt::after { content: " "; }
dl.config dd { display: inline; margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
p.notes { margin: 12px 0 0; font-size: 12px; color: #555; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f1f2f4; padding: 1px 4px;
       border-radius: 4px; word-break: break-all; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 14px; }
.figure { border: 1px solid #eee; border-radius: 8px; padding: 4px; min-width: 0; }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th { position: sticky; top: 0; background: #f6f7f9; text-align: left; padding: 6px 10px; cursor: pointer;
     white-space: nowrap; border-bottom: 2px solid #ddd; user-select: none; }
th[data-order="asc"]::after { content: " ▲"; color: #888; }
th[data-order="desc"]::after { content: " ▼"; color: #888; }
td { padding: 5px 10px; border-bottom: 1px solid #eee; white-space: nowrap; }
td.number, th.number { text-align: right; }
td.missing { color: #aaa; }
tr.best td { background: #fdecea; font-weight: 600; }
tr.best td:first-child { box-shadow: inset 4px 0 0 __BEST__; }
tbody tr:hover td { background: #f0f4fa; }
tr.best:hover td { background: #fadbd8; }
p.empty { color: #888; }
footer { text-align: center; }
""".replace("__FONT__", FONT).replace("__BEST__", BEST)

# Sorting the table by a column: numbers by value, text as text, missing cells last either way.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var ascending = th.dataset.order !== "asc";
    table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
    th.dataset.order = ascending ? "asc" : "desc";
    var key = function (row) {
      var cell = row.cells[column];
      return cell.dataset.sort !== undefined ? Number(cell.dataset.sort) : cell.textContent.replace("★ ", "");
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var ma = a.cells[column].classList.contains("missing"), mb = b.cells[column].classList.contains("missing");
      if (ma !== mb) { return ma ? 1 : -1; }
      var x = key(a), y = key(b);
      var order = typeof x === "number" && typeof y === "number" ? x - y
        : String(x).localeCompare(String(y), undefined, {numeric: true});
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="specc report">
<title>{title}</title>
<style>{style}</style>
<script type="text/javascript">{plotly}</script>
</head>
<body>
<main>
{body}
</main>
<script>{script}</script>
</body>
</html>
"""
