"""`specc` on the command line: parse arguments, call specc.api, print, exit with a documented code.

Only SpecError and UsageError become plain messages; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
from enum import IntEnum

from specc.read import terminal
from specc.read.terminal import err, say, write, write_err
from specc.spec.errors import SpecError, UsageError
from specc.spec.version import __version__


class Exit(IntEnum):
    OK = 0
    PROBLEMS = 1  # a spec has errors (or --check found a stale file)
    USAGE = 2  # bad arguments, missing files


Parser = terminal.Parser  # argparse's messages through the print gate


def _overrides(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a value, YAML-typed (repeatable): --set training.epochs=5 --set model.hidden_sizes=[64]",
    )


def _root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="the project a spec may read from (extends, factory modules); default: the git work tree holding it",
    )


def _spec_dir(parser: argparse.ArgumentParser) -> None:
    """The after-training commands' (evaluate, predict, export) way to name a run's spec directory."""
    parser.add_argument(
        "--spec-dir",
        metavar="DIR",
        help="the directory of the spec the run was compiled from (default: the one best.json records)",
    )


def _templates(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--templates", metavar="DIR", help="your templates, searched before the built-in ones")


def _dashboard(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--address",
        metavar="URL",
        help="the head's dashboard, http://HEAD:8265 (default: RAY_API_SERVER_ADDRESS, or an http RAY_ADDRESS)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="specc", description="Declarative experiment specs compiled to Ray Train / Ray Tune scripts.")
    parser.add_argument("--version", action="version", version=f"specc {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check spec files; exit 1 when any has errors")
    validate.add_argument("paths", nargs="+", metavar="PATH", help="spec files, directories (recursive) or globs")
    validate.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    validate.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    validate.add_argument(
        "--skip-non-specs", action="store_true", help="leave out YAML files with no top-level `specc:` key (hooks)"
    )
    _overrides(validate)
    _root(validate)

    show = commands.add_parser("show", help="print the resolved spec with every default filled in")
    show.add_argument("spec", metavar="SPEC")
    _overrides(show)
    _root(show)

    compile_ = commands.add_parser(
        "compile", help="write the standalone Ray script a spec compiles to, and specc_runtime.py beside it"
    )
    compile_.add_argument("spec", metavar="SPEC")
    compile_.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="the experiment file's path ('-' prints it); default: build/<spec>.py; specc_runtime.py goes beside it",
    )
    compile_.add_argument(
        "--single-file", action="store_true", help="one file: the runtime inlined at the end of OUT, none beside it"
    )
    compile_.add_argument(
        "--check", action="store_true", help="exit 1 when OUT or the runtime beside it is not what SPEC compiles to"
    )
    _templates(compile_)
    _overrides(compile_)
    _root(compile_)

    stale = commands.add_parser(
        "check-compiled", help="exit 1 when a committed compiled script differs from what its spec compiles to"
    )
    stale.add_argument(
        "paths", nargs="*", metavar="SCRIPT", help="scripts to check (default: every Python file git tracks)"
    )
    _templates(stale)
    _root(stale)

    diff = commands.add_parser("diff", help="the unified diff of two specs' compiled scripts")
    diff.add_argument("old", metavar="A")
    diff.add_argument("new", metavar="B")
    _templates(diff)
    _root(diff)

    run = commands.add_parser("run", help="compile a spec and run it in this process on Ray")
    run.add_argument("spec", metavar="SPEC")
    run.add_argument("--smoke", action="store_true", help="1 epoch, a few batches, at most 2 workers, CPU")
    run.add_argument("--resume", action="store_true", help="continue the run of the same name from its checkpoint")
    run.add_argument("--force", action="store_true", help="with --resume: even if the spec changed since the run began")
    run.add_argument("--address", help="Ray cluster address (default: the spec's cluster.address, else a local Ray)")
    run.add_argument("--storage-path", help="where run directories go (default: the spec's run.storage_path)")
    run.add_argument("--dry-run", action="store_true", help="validate, compile and print the plan; start nothing")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines or bar: the summary only")
    run.add_argument(
        "-v", "--verbose", action="store_true", help="Ray's own output on the console too (it is always in ray.log)"
    )
    _templates(run)
    _overrides(run)
    _root(run)

    submit = commands.add_parser("submit", help="compile a spec and submit it to a Ray cluster as a Ray Job")
    submit.add_argument("spec", metavar="SPEC")
    _dashboard(submit)
    submit.add_argument("--wait", action="store_true", help="follow the job's logs; exit with its outcome")
    submit.add_argument(
        "--dry-run",
        action="store_true",
        help="compile and list what would travel with the job (files, sizes, what stays behind); contact no cluster",
    )
    submit.add_argument(
        "--python",
        default="python",
        metavar="PY",
        help="the interpreter on the cluster that runs the script (default: python on the head's PATH)",
    )
    submit.add_argument("--storage-path", help="where the run directory goes (default: the spec's run.storage_path)")
    submit.add_argument("--submission-id", metavar="ID", help="the job's id (default: specc-<name>-<time>-<hex>)")
    submit.add_argument("--smoke", action="store_true", help="1 epoch, a few batches, at most 2 workers, CPU")
    submit.add_argument("--resume", action="store_true", help="continue the run of the same name from its checkpoint")
    submit.add_argument(
        "--force", action="store_true", help="with --resume: even if the spec changed since the run began"
    )
    _templates(submit)
    _overrides(submit)
    _root(submit)

    jobs = commands.add_parser("jobs", help="the Ray Jobs submitted with specc submit: list, status, logs, stop")
    jobs.add_argument("action", choices=("list", "status", "logs", "stop"))
    jobs.add_argument("job_id", nargs="?", metavar="ID", help="the submission id (all but list)")
    _dashboard(jobs)
    jobs.add_argument("--follow", action="store_true", help="logs: follow until the job ends")

    init = commands.add_parser("init", help="write a commented starter spec that validates and runs as written")
    init.add_argument("name", metavar="NAME", help="the experiment's name; the file is NAME.yaml")
    init.add_argument(
        "-o", "--output", metavar="PATH", help="the file (or a directory for NAME.yaml); default ./NAME.yaml"
    )
    init.add_argument("--framework", choices=("torch", "tensorflow"), default="torch")
    init.add_argument("--with-tune", action="store_true", help="add a Tune search (ASHA) over lr and width")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")

    plan = commands.add_parser("plan", help="trials, resources and fit, scheduler rungs, budget, first configs")
    plan.add_argument("spec", metavar="SPEC")
    plan.add_argument("--configs", type=int, default=5, metavar="N", help="sampled configs to show (default 5)")
    plan.add_argument("--format", choices=("text", "json"), default="text")
    _overrides(plan)
    _root(plan)

    results = commands.add_parser("results", help="a finished run's table of trials (or epochs) and its best trial")
    results.add_argument("run_dir", metavar="RUN_DIR", help="the run directory, <run.storage_path>/<run.name>")
    results.add_argument("--format", choices=("text", "csv", "json"), default="text")
    results.add_argument(
        "--plot",
        metavar="DIR",
        help="also write the report's plots as PNG files into DIR (learning curves, parallel coordinates)",
    )

    report = commands.add_parser(
        "report", help="write a finished run as one self-contained HTML page: curves, hyperparameters, table"
    )
    report.add_argument("run_dir", metavar="RUN_DIR", help="the run directory, <run.storage_path>/<run.name>")
    report.add_argument("-o", "--output", metavar="OUT", help="the HTML file to write (default: RUN_DIR/report.html)")

    evaluate = commands.add_parser(
        "evaluate", help="the best checkpoint of a finished run, measured on the test or validation split"
    )
    evaluate.add_argument("run_dir", metavar="RUN_DIR", help="the run directory, <run.storage_path>/<run.name>")
    evaluate.add_argument(
        "--split",
        choices=("test", "validation"),
        help="test: the data set's test split (torchvision, keras_dataset); validation: the split the run held out "
        "(default: test when the data set has one)",
    )
    evaluate.add_argument(
        "-o", "--output", metavar="FILE", help="the JSON file to write (default: RUN_DIR/evaluation.json)"
    )
    _spec_dir(evaluate)
    evaluate.add_argument("--address", metavar="ADDR", help="a Ray cluster for data read by Ray Data (default: local)")
    _root(evaluate)

    predict = commands.add_parser(
        "predict", help="the best checkpoint of a run trained on files, over new files: predictions as parquet or csv"
    )
    predict.add_argument("run_dir", metavar="RUN_DIR", help="the run directory, <run.storage_path>/<run.name>")
    predict.add_argument(
        "input", metavar="INPUT", help="csv, parquet or jsonl files (a file or a directory), or a folder of images"
    )
    predict.add_argument(
        "-o", "--output", metavar="OUTPUT", required=True, help="the predictions to write: a .parquet or .csv file"
    )
    predict.add_argument(
        "--id",
        metavar="COLUMN",
        dest="id_column",
        help="an input column to copy beside each prediction (default: row, the row's number; images: their path)",
    )
    predict.add_argument(
        "--actors", metavar="N", type=int, help="copies of the model, one per Ray actor (default: half the CPUs)"
    )
    _spec_dir(predict)
    predict.add_argument("--address", metavar="ADDR", help="a Ray cluster to predict on (default: start a local Ray)")
    _root(predict)

    export = commands.add_parser(
        "export", help="the best checkpoint of a finished run as a model file that loads without specc, checked"
    )
    export.add_argument("run_dir", metavar="RUN_DIR", help="the run directory, <run.storage_path>/<run.name>")
    export.add_argument(
        "--format",
        required=True,
        choices=("torchscript", "onnx", "saved_model"),
        dest="fmt",
        help="torch: torchscript or onnx; tensorflow: saved_model",
    )
    export.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        required=True,
        help="the model file to write (a SavedModel: a new directory); its preprocessing JSON goes beside it",
    )
    _spec_dir(export)
    export.add_argument("--address", metavar="ADDR", help="a Ray cluster for data read by Ray Data (default: local)")
    _root(export)

    completion = commands.add_parser("completion", help="print a shell completion script (bash, zsh or tcsh)")
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"))

    schema = commands.add_parser("schema", help="write the JSON Schema of the spec format")
    schema.add_argument(
        "-o",
        "--output",
        default="schemas",
        metavar="DIR",
        help="directory for experiment.schema.json ('-' prints it); default: schemas",
    )
    schema.add_argument("--check", action="store_true", help="exit 1 when the file differs from the models")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as error:
        err(f"specc {args.command}: error: {error}")
        return Exit.USAGE
    except SpecError as error:
        from specc.output import text

        write_err(text(list(error.problems), terminal.colour(to_stderr=True)))
        return Exit.PROBLEMS
    except BrokenPipeError:
        return Exit.OK


def cmd_validate(args) -> int:
    from specc import api
    from specc.output import render

    reports = api.validate_files(args.paths, args.overrides, skip_non_specs=args.skip_non_specs, root=args.root)
    problems = [problem for report in reports for problem in report.problems]
    write(render(problems, args.format, terminal.colour()))
    terminal.flush()
    failed = sum(not report.ok for report in reports)
    if not args.quiet and args.format == "text":
        errors = sum(problem.severity == "error" for problem in problems)
        files = f"{len(reports)} spec file{'s' * (len(reports) != 1)}"
        summary = f"{files} valid" if not failed else f"{errors} error(s) in {failed} of {files}"
        warnings = len(problems) - errors
        if warnings:
            summary += f", {warnings} warning(s)"
        err(summary)
    return Exit.PROBLEMS if failed else Exit.OK


def cmd_show(args) -> int:
    from specc import api

    experiment = api.load(args.spec, args.overrides, args.root)
    write(api.show(experiment))
    return Exit.OK


def cmd_schema(args) -> int:
    from specc import api

    if args.output == "-":
        write(api.schema_text())
        return Exit.OK
    target = os.path.join(args.output, "experiment.schema.json")
    if args.check:
        return _up_to_date({target: api.schema_text()}, f"specc schema -o {args.output}")
    say(api.write_schema(args.output))
    return Exit.OK


def _up_to_date(expected: dict[str, str], remedy: str) -> int:
    """--check: OK when each path holds exactly its expected text, else one line naming those that are stale or
    missing and saying how to refresh them."""
    from specc.read.files import read_file

    found = []
    for path, text in expected.items():
        wanted = text.encode("utf-8")
        try:  # the read gate: a FIFO is refused without blocking; no more is read than tells it differs
            current = read_file(path, len(wanted), root=os.path.dirname(os.path.abspath(path)))
        except OSError:
            current = None
        if current != wanted:
            found.append(f"{path} is {'stale' if current is not None else 'missing'}")
    if not found:
        return Exit.OK
    err(f"{' and '.join(found)}: run `{remedy}`")
    return Exit.PROBLEMS


def default_output(spec: str) -> str:
    return os.path.join("build", os.path.splitext(os.path.basename(spec))[0] + ".py")


def cmd_compile(args) -> int:
    import shlex

    from specc import api, runtime
    from specc.read.files import write_file

    output = args.output or default_output(args.spec)
    if output != "-" and os.path.basename(output) == runtime.FILE:
        raise UsageError(f"-o {output}: {runtime.FILE} is the runtime's name, written beside every compiled script")
    experiment = api.load(args.spec, args.overrides, args.root)
    if output == "-":  # the experiment alone (or, with --single-file, the one file)
        source = api.compile(experiment, output, args.templates)
        write(runtime.single_file(source) if args.single_file else source)
        return Exit.OK
    written = api.compiled_files(experiment, output, args.templates, single_file=args.single_file)
    if args.check:
        remedy = shlex.join(["specc", "compile", args.spec, "-o", output, *(["--single-file"] * args.single_file)])
        return _up_to_date(written, remedy)
    # the default output stays below the working directory: a committed `build` link does not carry it elsewhere
    for path, text in reversed(written.items()):  # the runtime first: the experiment file never lacks its runtime
        write_file(path, text, within=None if args.output else os.getcwd())
    for path in written:  # the experiment, then the runtime beside it
        say(path)
    return Exit.OK


def cmd_check_compiled(args) -> int:
    from specc.compiler.stale import check

    count, findings = check(args.paths or None, args.templates, args.root)
    for finding in findings:
        write_err(f"{finding}\n")  # a spec's problems follow it, one a line
    err(f"{count} compiled script{'s' * (count != 1)}, {len(findings)} out of date")
    return Exit.PROBLEMS if findings else Exit.OK


def cmd_diff(args) -> int:
    import difflib

    from specc import api

    old = api.compile(api.load(args.old, root=args.root), default_output(args.old), args.templates)
    new = api.compile(api.load(args.new, root=args.root), default_output(args.old), args.templates)
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), args.old, args.new)
    write("".join(lines))
    return Exit.OK


def cmd_plan(args) -> int:
    from specc import api

    if args.configs < 0:
        raise UsageError(f"--configs must be 0 or more, got {args.configs}")
    experiment = api.load(args.spec, args.overrides, args.root)
    report = api.plan_report(experiment, configs=args.configs)
    if args.format == "json":
        write(terminal.json_text(report, indent=2, default=str) + "\n")
    else:
        write(api.format_plan(report))
    _fit_warnings(api.fit_warnings(experiment))
    return Exit.OK


def _fit_warnings(problems) -> None:
    """W340/W341 (the spec as written and this machine) on stderr, after the plan, as validate shows problems."""
    if problems:
        from specc.output import text

        terminal.flush()
        write_err(text(list(problems), terminal.colour(to_stderr=True)))


def _needs_ray(command: str) -> None:
    """Running needs the `run` extra (Ray, torch, TensorFlow, ...), which a plain `pip install specc` leaves out."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError(f"{command} needs Ray and the training frameworks: pip install 'specc[run]'")


def cmd_run(args) -> int:
    from specc import api

    experiment = api.load(args.spec, args.overrides, args.root)
    if args.dry_run:
        api.compile(experiment, templates=args.templates)
        write(api.describe_plan(experiment))
        if not args.address:  # --address: the cluster's resources are known only when the run joins it
            _fit_warnings(api.fit_warnings(experiment))
        return Exit.OK
    _needs_ray("specc run")
    import time

    from specc.execute.run import run

    started = time.monotonic()
    result = run(
        experiment,
        smoke=args.smoke,
        resume=args.resume,
        force=args.force,
        address=args.address,
        storage_path=args.storage_path,
        templates=args.templates,
        quiet=args.quiet,
        verbose=args.verbose,
        echo=False,
    )
    seconds = time.monotonic() - started
    if "://" in result.run_dir:  # results in remote storage: what the run returned
        say(f"{experiment.run.name}: {result.metrics}")
        say(f"run directory: {result.run_dir}")
        say(f"checkpoint: {result.checkpoint}")
    else:
        from specc.results.run_dir import format_text, read_run
        from specc.results.summary import summary

        results = read_run(result.run_dir)
        if experiment.tune is not None and not args.quiet:
            write("\n" + format_text(results, max_rows=20))
        say()
        write(summary(results, seconds, terminal.colour()))
    if result.problems:  # a diverged run (E415, exit 1) or a search's diverged trials (W310)
        from specc.output import text

        terminal.flush()
        write_err(text(list(result.problems), terminal.colour(to_stderr=True)))
    return Exit.PROBLEMS if result.status == "diverged" else Exit.OK


def cmd_submit(args) -> int:
    from specc import api
    from specc.execute import shipping, submit

    experiment = api.load(args.spec, args.overrides, args.root)
    _needs_ray("specc submit")
    how = {"python": args.python, "storage_path": args.storage_path, "templates": args.templates}
    how.update(smoke=args.smoke, resume=args.resume, force=args.force)
    if args.dry_run:
        job = submit.prepare(experiment, **how)
        write(shipping.listing(job.package))
        say(f"entrypoint: {job.entrypoint}")
        return Exit.OK
    done = submit.submit(experiment, address=args.address, job_id=args.submission_id, **how)
    warning = shipping.left_behind_warning(done.package, getattr(getattr(experiment, "_raw", None), "file", None))
    if warning:
        err(warning)
    run_dir = done.storage_path.rstrip("/") + "/" + experiment.run.name
    err(f"submitted {done.submission_id} to {done.address}")
    err(f"  shipped:    {done.package.root} ({done.package.describe()})")
    err(f"  entrypoint: {done.entrypoint}")
    err(f"  run dir:    {run_dir} (on the cluster)")
    if not args.wait:
        err(f"  follow:     specc jobs logs {done.submission_id} --address {done.address} --follow")
        err(f"  stop:       specc jobs stop {done.submission_id} --address {done.address}")
        say(done.submission_id)
        return Exit.OK
    return _follow(submit.client(done.address), done.address, done.submission_id)


def _follow(jobs, address: str, job_id: str) -> int:
    """Follows the job's logs through the client `jobs`; the exit code is its outcome (130: detached)."""
    from specc.execute import submit

    logs = terminal.Relay()
    try:
        status = submit.follow(jobs, address, job_id, out=logs)
    except submit.Detached as detached:
        logs.close()
        write_err("\n" + detached.advice())
        return 130
    logs.close()
    problem = submit.outcome(jobs, job_id, status)
    if problem:
        raise SpecError([problem])
    err(f"job {job_id} succeeded")
    return Exit.OK


def cmd_jobs(args) -> int:
    from specc.execute import submit

    _needs_ray("specc jobs")
    address = submit.dashboard_address(args.address)
    if args.action != "list" and not args.job_id:
        raise UsageError(f"jobs {args.action} needs the job's submission id")
    jobs = submit.client(address)
    if args.action == "logs" and args.follow:
        submit.job_info(jobs, args.job_id)
        return _follow(jobs, address, args.job_id)
    if args.action == "list":
        write(submit.list_text(jobs))
    elif args.action == "status":
        write(submit.status_text(jobs, args.job_id))
    elif args.action == "logs":
        submit.job_info(jobs, args.job_id)
        write(jobs.get_job_logs(args.job_id))
    else:
        say(f"job {args.job_id}: {submit.stop(jobs, args.job_id)}")
    return Exit.OK


def cmd_init(args) -> int:
    from specc.compiler.starter import write_starter

    path = write_starter(args.name, args.output, args.framework, args.with_tune, args.force)
    say(path)
    err(f"next: specc run {path} --smoke")
    return Exit.OK


def cmd_completion(args) -> int:
    """The completion script for `args.shell`, from this very parser: e.g. `eval "$(specc completion bash)"`."""
    import shtab

    write(shtab.complete(build_parser(), shell=args.shell))
    return Exit.OK


def cmd_results(args) -> int:
    from specc.results.run_dir import read_run, render

    results = read_run(args.run_dir)
    written = []
    if args.plot is not None:
        from specc.results.plots import write_plots

        written = write_plots(results, args.plot)
    write(render(results, args.format))
    for path in written:  # after the table; beside csv or json, on stderr, so that stdout stays one document
        (say if args.format == "text" else err)(path)
    _run_warnings(results)
    return Exit.OK


def cmd_report(args) -> int:
    from specc.results.report import write_report
    from specc.results.run_dir import read_run

    results = read_run(os.path.abspath(args.run_dir))  # the page names the run wherever it is opened
    say(write_report(results, args.output or os.path.join(args.run_dir, "report.html")))
    _run_warnings(results)
    return Exit.OK


def cmd_evaluate(args) -> int:
    from specc import api

    done = api.evaluate(args.run_dir, args.split, args.output, args.root, args.spec_dir, args.address)
    best, shown = done.best, "  ".join(f"{name} {value:.6g}" for name, value in done.metrics.items())
    trial = f" (trial {best.trial_id})" if best.trial_id else ""
    say(f"{best.run.spec.get('name', 'run')}{trial}: {done.split} split  {shown}")
    say(f"  checkpoint  {best.directory}")
    script = done.script or "not written: the run directory is read-only"
    say(f"  written     {done.output} (script: {script})")
    _run_warnings(best.run)
    return Exit.OK


def cmd_export(args) -> int:
    from specc import api

    done = api.export(args.run_dir, args.fmt, args.output, args.root, args.spec_dir, args.address)
    best, checked = done.best, done.checked
    trial = f" (trial {best.trial_id})" if best.trial_id else ""
    name = best.run.spec.get("name", "run")
    say(f"{name}{trial}: exported as {done.fmt}, loaded back without specc")
    say(f"  checked     {checked['examples']} inputs, max |difference| {checked['max_abs_difference']:.3g} (<= 1e-5)")
    say(f"  checkpoint  {best.directory}")
    script = done.script or "not written: the run directory is read-only"
    say(f"  written     {done.output}, {done.preprocessing} (script: {script})")
    _run_warnings(best.run)
    return Exit.OK


def cmd_predict(args) -> int:
    from specc import api

    progress = _rows_progress()
    try:
        done = api.predict(
            args.run_dir,
            args.input,
            args.output,
            args.id_column,
            args.root,
            args.spec_dir,
            args.address,
            args.actors,
            progress=progress,
        )
    finally:
        if progress is not None:  # the progress line gives way to what follows
            err(terminal.Styled("\r\033[K"), end="")
            terminal.flush(to_stderr=True)
    best = done.best
    trial = f" (trial {best.trial_id})" if best.trial_id else ""
    rate = done.rows / done.seconds if done.seconds else 0.0
    name = best.run.spec.get("name", "run")
    say(f"{name}{trial}: {done.rows:,} predictions in {done.seconds:.1f} s ({rate:,.0f} rows/s)")
    say(f"  checkpoint  {best.directory}")
    script = done.script or "not written: the run directory is read-only"
    say(f"  written     {done.output} (script: {script})")
    _run_warnings(best.run)
    return Exit.OK


def _rows_progress():
    """Rows written so far, on one line of a terminal's stderr, redrawn at most twice a second (nothing elsewhere:
    the last lines say it all)."""
    if not terminal.on_a_terminal(to_stderr=True):
        return None
    shown = [0.0]

    def progress(rows: int, seconds: float) -> None:
        if seconds - shown[0] >= 0.5:
            shown[0] = seconds
            line = f"\r  predicted {rows:,} rows ({rows / max(seconds, 1e-9):,.0f} rows/s)\033[K"  # numbers only
            err(terminal.Styled(line), end="")
            terminal.flush(to_stderr=True)

    return progress


WARNINGS_SHOWN = 20  # a run with more damaged files than this names the first ones and counts the rest


def _run_warnings(results) -> None:
    """What was wrong with the run directory's files, one line each on stderr (the table or page is still made)."""
    for problem in results.warnings[:WARNINGS_SHOWN]:
        err(problem)
    if len(results.warnings) > WARNINGS_SHOWN:
        err(f"... and {len(results.warnings) - WARNINGS_SHOWN} more warnings")


COMMANDS = {
    "validate": cmd_validate,
    "show": cmd_show,
    "schema": cmd_schema,
    "compile": cmd_compile,
    "diff": cmd_diff,
    "run": cmd_run,
    "plan": cmd_plan,
    "results": cmd_results,
    "report": cmd_report,
    "evaluate": cmd_evaluate,
    "predict": cmd_predict,
    "export": cmd_export,
    "submit": cmd_submit,
    "jobs": cmd_jobs,
    "init": cmd_init,
    "check-compiled": cmd_check_compiled,
    "completion": cmd_completion,
}
