"""Problems found in a spec, and the exception that carries them.

A Problem is data (code, message, where, hint); `str(problem)` is the one-line text form users see:

    specs/x.yaml:14:5: error[E106]: scheduler.grace_period: must be >= 1

Codes are stable: tools and users match on them. docs/problems.md documents every code in CODES
(a test keeps the two in sync).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

# code -> (name, one-line meaning). Never renumber; retire a code by leaving it here, unused.
CODES: dict[str, tuple[str, str]] = {
    # E0xx: reading the file
    "E001": ("file-unreadable", "the file does not exist or cannot be read"),
    "E002": ("file-too-large", "the file is larger than the loader accepts"),
    "E003": ("not-utf8", "the file is not valid UTF-8"),
    "E004": ("yaml-syntax", "the file is not valid YAML"),
    "E005": ("empty-document", "the file holds no YAML document"),
    "E006": ("not-a-mapping", "the document (or an extended file) is not a mapping of keys to values"),
    "E007": ("duplicate-key", "a key appears twice in the same mapping"),
    "E008": ("tag-not-allowed", "an explicit YAML tag such as !!python/object; only plain data is accepted"),
    "E009": (
        "too-many-aliases",  # the name predates the size bound without aliases; names are stable
        "the document holds too many values, through aliases (a 'billion laughs' document) or itself",
    ),
    "E010": ("too-deep", "the document nests deeper than the loader accepts, or an alias refers to itself"),
    "E011": ("multiple-documents", "the file holds more than one YAML document"),
    "E012": ("key-not-string", "a mapping key is not a string (e.g. `yes:` or `1:` unquoted)"),
    "E013": (
        "ambiguous-number",
        "a plain value YAML 1.1 and 1.2 read differently (`1:30`, `0x1F`, `0b1`, `017`, `0o17`)",
    ),
    # E02x: extends and --set
    "E020": ("extends-unreadable", "a file named in `extends` does not exist or cannot be read"),
    "E021": ("extends-cycle", "`extends` files extend each other in a cycle"),
    "E022": ("bad-override", "a --set override is malformed or names a path that cannot be set"),
    "E023": (
        "outside-project",
        "a file the spec names (an `extends` target, a factory module) lies outside the spec's project",
    ),
    # E1xx: the spec's schema
    "E100": ("invalid-value", "a value is not valid for its field"),
    "E101": ("unknown-key", "a key that the section does not have"),
    "E102": ("missing-key", "a required key is missing"),
    "E103": ("wrong-type", "a value has the wrong type (e.g. a string where a number belongs)"),
    "E104": ("invalid-choice", "a value is not one of the allowed choices"),
    "E105": ("unknown-type", "a section's `type` is not one of the known types"),
    "E106": ("out-of-range", "a number is outside the allowed range"),
    "E107": ("bad-format", "a string does not have the required form (names, addresses, factories)"),
    "E108": ("unsupported-version", "the `specc` format version is not one this specc supports"),
    "E109": ("wrong-length", "a list has too few or too many items"),
    "E110": ("bad-distribution", "a search-space entry is malformed (bounds, q, empty choices)"),
    "E111": ("bad-stop-condition", "a `stop.when` (or `stop.all_when`) condition is not `<metric> <op> <number>`"),
    # E2xx: rules across fields
    "E201": ("unknown-metric", "a metric name that the spec does not report"),
    "E202": ("space-path-not-found", "a search-space, mutation or bounds key names no field of the spec"),
    "E203": ("space-value-invalid", "a value the search space can produce is not valid for its field"),
    "E204": ("search-unsupported", "the search algorithm cannot sample this distribution"),
    "E205": ("needs-tune", "a `scheduler` or `stop` section without a `tune` section"),
    "E206": (
        "needs-checkpointing",
        "pbt/pb2 or retries (`run.max_failures`) need checkpoints the spec does not write (often enough)",
    ),
    "E207": ("framework-mismatch", "a model, dataset or setting that the chosen framework does not support"),
    "E208": ("task-mismatch", "a loss or metric that does not fit the dataset's task or class count"),
    "E209": ("scheduler-budget", "scheduler budgets that contradict each other or `training.epochs`"),
    "E210": ("model-data-mismatch", "a model that cannot take the dataset's input (e.g. a CNN on table rows)"),
    "E211": (
        "scaling-mismatch",
        "scaling settings that contradict each other, or a global batch size the workers do not divide",
    ),
    "E212": ("points-invalid", "a `points_to_evaluate` entry that does not fit the search space"),
    "E213": (
        "fixed-before-trials",
        "a search-space key names a setting fixed before trials start (driver-read data, what the script reports)",
    ),
    "E214": (
        "factory-refused",
        "a factory or objective that is not a function or class defined in a module of the project, or of an "
        "installed package in a namespace for building models (`torchvision.models`, `keras.applications`) or one "
        "the project trusts (`[tool.specc] trusted-modules` in its pyproject.toml)",
    ),
    "E220": ("batch-size-twice", "batch_size and global_batch_size both set (or neither): give exactly one"),
    "E221": (
        "validation-mismatch",
        "validation_fraction on a data set that validates on its test split (validation_from: test) or not at all, "
        "or beside an image_folder's validation_path (or a validation_path with validation_from: none, or "
        "validation_from: train with a null validation_fraction); validation_from: none with loader ray_data on an "
        "in-memory data set; or shuffle_validation with no validation",
    ),
    "E222": (
        "column-mismatch",
        "a categorical column that is the label, not among dataset.features, or named twice",
    ),
    "E224": (
        "augment-mismatch",
        "an augmentation the data cannot take (table rows, saturation of grayscale images, a crop to another size), "
        "or a searched augment, loader_workers or shuffle_validation",
    ),
    "E230": ("objective-or-model", "an objective beside model, dataset or training: a spec runs one or the other"),
    "E231": (
        "stop-condition-unusable",
        "a stop condition on Ray's training_iteration or time_total_s that every trial meets at its first report, or "
        "a fractional count of reports",
    ),
    "E232": (
        "option-invalid",
        "an option of a conditional choice or grid (a mapping holding distributions) that is not valid as the section "
        "it stands for, e.g. a momentum in an adam optimizer",
    ),
    "E233": (
        "conditional-unsearchable",
        "a conditional space its searcher cannot sample: bayesopt, a grid inside an option, or pbt mutations",
    ),
    "E234": (
        "type-compiled-in",
        "options that choose another type for a section the script compiles one type of (any but training.optimizer)",
    ),
    "E235": ("multi-objective-searcher", "a list of metrics (tune.metric) with a searcher other than optuna"),
    "E236": (
        "objectives-mismatch",
        "tune.metric and tune.mode not lists of the same length, or a metric named twice in the list",
    ),
    "E237": (
        "needs-one-metric",
        "a scheduler (asha, hyperband, median_stopping, pbt, pb2) or stop.plateau.metric_threshold beside several "
        "objectives: it ranks trials by one metric in one direction",
    ),
    "E238": (
        "searcher-unavailable",
        "a searcher whose library does not install beside the pinned packages or does not run with the pinned Ray "
        "(hebo): the problem says why",
    ),
    "E240": (
        "past-what-ray-runs",
        "a number past what Ray can run: an integer past int64, a distribution whose sampling overflows a float (a q "
        "too fine for its bounds), a resource past what a Ray node can have or below Ray's unit (0.0001), more trials "
        "than int64 counts",
    ),
    "E241": (
        "scheduler-too-fine",
        "an ASHA or HyperBand reduction_factor so close to 1 (or so many ASHA brackets) that the scheduler would keep "
        "more than 1,000 rungs (ASHA's over all its brackets, HyperBand's over a band) or ASHA more than 1,000 "
        "brackets",
    ),
    "E250": (
        "objective-not-runnable",
        "objective.function names an async def or a generator: Ray Tune's function trainable calls it and waits for "
        "it to return, so it would never train",
    ),
    "E251": (
        "objective-is-a-class",
        "objective.function names a class: Ray Tune's function trainable would build it once and never step it; a "
        "ray.tune.Trainable subclass is objective.trainable, anything else a def(config)",
    ),
    "E252": (
        "function-or-trainable",
        "objective names both function and trainable (or neither); objective.trainable names a function, a class "
        "that is not a ray.tune.Trainable or has no step(); checkpoint_every or checkpoint_at_end beside a function",
    ),
    "E260": (
        "not-drivable",
        "a class of the framework that the compiled training loop cannot drive (e.g. torch's LBFGS, whose step needs "
        "a closure): the problem says why",
    ),
    # E4xx: running
    "E401": (
        "run-refused",
        "the run cannot start as asked: its run directory exists without --resume, was started from another spec, "
        "or is in use by another run; or the data files it reads (keras_dataset) are missing",
    ),
    "E402": ("ray-unreachable", "Ray could not be started or the cluster address could not be reached"),
    "E403": (
        "cannot-ship",
        "the job's working directory cannot travel to the cluster: too large for Ray or to walk, the root or home "
        "directory, it does not hold the spec, or an exclude pattern Ray would take minutes to match",
    ),
    "E404": ("job-failed", "a submitted Ray Job failed, was stopped, or could not be submitted or found"),
    "E411": ("checkpoint-unreadable", "resuming, no checkpoint of the run can be read (each is named)"),
    "E415": ("diverged", "training diverged: a loss became NaN or infinite (in a search: in every trial)"),
    "E416": (
        "data-unusable",
        "the data files cannot make a run, found before training starts: a named column is missing, missing values "
        "with dataset.missing: error, no rows or images, or classification labels that are not class indices",
    ),
    "E417": (
        "no-data-cpus",
        "Ray Data would have no CPU to stream the data beside the workers (or scaling.data_cpus asks more than the "
        "cluster leaves): its reads would wait forever",
    ),
    # W3xx: likely mistakes that do not stop a run
    "W301": ("suspicious-mode", "optimising a loss or num_parameters upwards, or an accuracy downwards"),
    "W302": (
        "not-installed-here",
        "a searcher, tracker or factory module that is not installed where the spec is checked",
    ),
    "W303": (
        "left-behind",
        "files of the working directory that do not travel with the job: they look like secrets, or are links out "
        "of it or in a loop",
    ),
    "W320": ("setting-ignored", "a setting that has no effect on this spec's data (e.g. standardize on images)"),
    "W321": (
        "checkpoint-setting-ignored",
        "checkpoints_to_keep, or a search's checkpoint_score, with checkpoint_every never: nothing to keep or rank",
    ),
    "W322": (
        "ray-warns",
        "a setting Ray runs with a warning (checkpoints_to_keep below 3 with pbt/pb2, a quantized distribution whose q "
        "a searcher drops, a Repeater beside an early-stopping scheduler or with leftover trials): the problem gives "
        "Ray's reason",
    ),
    "W323": (
        "seed-searched-and-repeated",
        "training.seed in tune.space beside tune.repeat: each repeat already trains from its own seed (training.seed + "
        "its index), and a searched seed lets the searcher chase the luck of a seed the repeats are there to average",
    ),
    "W330": (
        "beyond-epochs",
        "a scheduler budget (max_t, grace_period) or a training_iteration stop condition beyond training.epochs: "
        "Ray accepts it, but the trials end at the last epoch first",
    ),
    "W334": (
        "objective-never-varies",
        "num_parameters among several objectives while the search changes no model.* field: every trial has the "
        "same count, and the front is the best trials by the other metrics",
    ),
    # W340-W344: the spec as written and the machine `specc plan` (or `specc run --dry-run`) runs on
    "W340": (
        "exceeds-this-machine",
        "the run (a search: one trial) needs more CPUs or GPUs than this machine has, counting Ray Data's share while "
        "it streams: a full run here is refused before training; --smoke fits it onto the machine",
    ),
    "W341": (
        "fewer-trials-at-once",
        "tune.max_concurrent_trials asks more trials at once than this machine holds beside Ray Data's share: the "
        "search runs fewer at a time",
    ),
    # W307-W309: reading a finished run's directory (specc results, specc report); the rest of the run is shown
    "W307": (
        "run-file-unreadable",
        "a file of the run directory is left out: not a regular file, too large, not UTF-8, or a link out of the run",
    ),
    "W308": (
        "run-file-malformed",
        "a file of the run directory is read in part: malformed or cut-off JSON, CSV or YAML, a value of the wrong "
        "type, or a number that is not finite",
    ),
    "W309": ("run-files-disagree", "best.json and results.csv disagree about the best trial (or epoch) or its metric"),
    "W310": ("trials-diverged", "some trials of a search diverged (a NaN or infinite loss) and were stopped"),
}


def printable(text: str) -> str:
    """`text` with every character a terminal or a CI log could act on rather than show (escape sequences, line
    ends that would start a forged `::error` line, the bidirectional controls that reorder what a reviewer reads)
    written as Python writes it in a string literal, `\\x1b`; other text as it is."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


EXCERPT = 40  # characters of a document's own text that a problem may quote
MAX_PATH = 160  # characters of a key path a problem shows


def excerpt(value: object, limit: int = EXCERPT) -> str:
    """A short, quoted, printable excerpt of a token from a document: problems quote no more of a file than this
    (they end up in public CI logs). Text is quoted; numbers, lists and the like are shown as Python shows them."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return "'" + printable(text) + "'" if isinstance(value, str) else printable(text)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec, located in the file where the offending text is.

    `origin` says how the value reached the spec when that is not plainly the file itself:
    "extended by specs/child.yaml" or "--set model.dropout=2".
    """

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str = ""
    hint: str | None = None
    origin: str | None = None

    def __post_init__(self) -> None:
        """Whatever a hostile document put in a key or a file name is shown, never acted on by a terminal or a CI
        log; a key path longer than anyone writes is cut short."""
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, str) and not value.isprintable():
                object.__setattr__(self, item.name, printable(value))
        if len(self.path) > MAX_PATH:
            object.__setattr__(self, "path", self.path[:MAX_PATH] + "...")

    @property
    def severity(self) -> str:
        return "warning" if self.code.startswith("W") else "error"

    @property
    def name(self) -> str:
        return CODES[self.code][0]

    def where(self) -> str:
        parts = [self.file or "<spec>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        text = f"{self.where()}: {self.severity}[{self.code}]: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        if self.origin:
            text += f" ({self.origin})"
        return text

    def to_dict(self) -> dict:
        data = asdict(self)
        data["severity"] = self.severity
        return data

    def sort_key(self) -> tuple:
        return (self.file or "", self.line or 0, self.column or 0, self.code)


class SpecError(Exception):
    """Raised by the library API when a spec has problems; carries all of them.

    The CLI prints `problems` and exits 1 instead of showing a traceback. Picklable, so it can cross
    Ray's process boundary intact.
    """

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]):
        self.problems = tuple(problems)
        super().__init__(self.problems)

    def __str__(self) -> str:
        return "\n".join(str(problem) for problem in self.problems)

    def __reduce__(self):
        return (type(self), (self.problems,))


class UsageError(Exception):
    """Bad command-line use (no such file, a malformed flag): exit code 2, a one-line message."""
