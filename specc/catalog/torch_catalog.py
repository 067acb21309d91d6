"""torch and torchvision's families: optimizers, learning-rate schedules, losses, activations, augmentations.

Each table below is a decision specc makes about a class, with its reason; the classes themselves are found in the
packages (a new torch brings its new classes in; a class a table names that torch dropped is an error).
"""

from __future__ import annotations

import inspect

from specc.catalog.introspect import family, record

DISTRIBUTIONS = ("torch", "torchvision")

# What a training loop of `loss(model(x), y).backward(); optimizer.step()` cannot drive, and why.
NOT_DRIVABLE = {
    "optimizers": {
        "LBFGS": "its step needs a closure that evaluates the model and the loss again; a plain "
        "optimizer.step() cannot drive it",
        "SparseAdam": "it needs sparse gradients (nn.Embedding(sparse=True)); a model's dense gradients fail "
        "at its first step",
        "Muon": "it takes only 2-D parameters; a model's biases and normalisation weights are 1-D, so "
        "Muon(model.parameters()) fails",
    },
    "lr_schedules": {
        "LambdaLR": "its lr_lambda is a Python function, which a spec cannot hold",
        "MultiplicativeLR": "its lr_lambda is a Python function, which a spec cannot hold",
        "SequentialLR": "it takes other scheduler objects; `warmup` builds the SequentialLR a spec needs",
        "ChainedScheduler": "it takes other scheduler objects, which a spec cannot hold",
    },
    "losses": {
        "NLLLoss2d": "torch deprecates it: NLLLoss takes inputs of any dimension",
        "LinearCrossEntropyLoss": "it holds the final linear layer itself and takes the features before it "
        "(in_features, num_classes), not the model's outputs",
        "CosineEmbeddingLoss": "it takes two inputs and a target of 1 or -1, not a model's outputs and targets",
        "MarginRankingLoss": "it takes two inputs and a target of 1 or -1, not a model's outputs and targets",
        "TripletMarginLoss": "it takes three inputs (anchor, positive, negative), not outputs and targets",
        "TripletMarginWithDistanceLoss": "it takes three inputs (anchor, positive, negative), not outputs and targets",
        "GaussianNLLLoss": "it takes a variance besides the outputs and targets",
        "CTCLoss": "it takes the input and target lengths besides the outputs and targets",
        "NLLLoss": "it takes log-probabilities, and the model outputs logits: cross_entropy is log_softmax and "
        "nll_loss in one",
        "KLDivLoss": "it takes log-probabilities and a distribution per example as the target, and the model "
        "outputs logits for class indices",
        "BCELoss": "it takes probabilities, and the model outputs logits: bce_with_logits is sigmoid and bce in one",
        **dict.fromkeys(
            ("SoftMarginLoss", "HingeEmbeddingLoss"),
            "it takes targets of 1 or -1, and the data's are class indices",
        ),
        "MultiLabelMarginLoss": "it takes each example's classes as a row of indices padded with -1, and the data "
        "has one class index per example",
        "MultiLabelSoftMarginLoss": "it takes a 0/1 target for every class, and the data has one class index per "
        "example",
    },
    "activations": {
        "MultiheadAttention": "it is an attention layer (embed_dim, num_heads; query, key and value), not an "
        "element-wise activation",
        "GLU": "it halves the dimension it splits, so the next layer's input size would not match",
        "Softmax2d": "it takes 3D or 4D inputs only (over channels), and a dense layer's output is 2D",
    },
    "augmentations": {
        **dict.fromkeys(
            ("Compose", "RandomApply", "RandomChoice", "RandomOrder"),
            "it takes other transform objects; list the transforms in `augment` instead",
        ),
        "Lambda": "its lambd is a Python function, which a spec cannot hold",
        "LinearTransformation": "it takes tensors (transformation_matrix, mean_vector), which a spec cannot hold",
        **dict.fromkeys(
            ("CutMix", "MixUp"),
            "it mixes a batch and its labels, after batching; an `augment` entry transforms one image",
        ),
        **dict.fromkeys(("FiveCrop", "TenCrop"), "it returns a tuple of crops, not one image"),
        "ToTensor": "torchvision deprecates it: ToImage and ToDtype(scale=True) replace it",
        "ConvertImageDtype": "torchvision deprecates it: ToDtype(scale=True) replaces it",
        **dict.fromkeys(
            (
                "ClampBoundingBoxes",
                "ClampKeyPoints",
                "ConvertBoundingBoxFormat",
                "RandomIoUCrop",
                "SanitizeBoundingBoxes",
                "SanitizeKeyPoints",
                "SetClampingMode",
            ),
            "it works on bounding boxes or key points (detection data), which specc's datasets do not have",
        ),
        "UniformTemporalSubsample": "it samples the frames of a video, which specc's datasets are not",
        **dict.fromkeys(
            ("ToDtype", "ToImage", "ToPILImage", "PILToTensor", "ToPureTensor"),
            "it converts the image's type; the loop's images are already the float32 tensors in [0, 1] the model takes",
        ),
        "JPEG": "it encodes uint8 images, and the loop's images are float32 tensors in [0, 1]",
        "RGB": "it converts images to 3 channels, and the model takes the channels the data set loads "
        "(image_folder: `channels`)",
        **dict.fromkeys(
            ("Pad", "RandomZoomOut", "RandomResize", "RandomShortestSize", "ScaleJitter"),
            "it changes the images' size, and the model takes one size (validation images are not changed)",
        ),
    },
}
# The compiled code passes these: the model's parameters, the optimizer, the steps a OneCycleLR spans (the loop
# knows its epochs and batches), and last_epoch (a resumed run restores the schedule's state instead).
SUPPLIED = {
    "optimizers": frozenset({"params"}),
    "lr_schedules": frozenset({"optimizer", "total_steps", "epochs", "steps_per_epoch", "last_epoch"}),
}
SCHEDULE_ALIASES = {  # SPEC §13's short names beside the rule's (`_lr` dropped gives one_cycle, linear, cyclic ...)
    "cosine_warm_restarts": "CosineAnnealingWarmRestarts",
    "reduce_on_plateau": "ReduceLROnPlateau",
}
CATEGORIES = {"_geometry": "geometric", "_color": "color"}  # torchvision.transforms.v2's own grouping by module


def families() -> dict[str, dict[str, dict]]:
    return {
        "optimizers": optimizers(),
        "lr_schedules": lr_schedules(),
        "losses": losses(),
        "activations": activations(),
        "augmentations": augmentations(),
    }


def optimizers() -> dict[str, dict]:
    import torch.optim

    found = _exported(torch.optim, lambda cls: issubclass(cls, torch.optim.Optimizer), torch.optim.Optimizer)
    return family([_record("optimizers", cls, "torch.optim") for cls in found])


def lr_schedules() -> dict[str, dict]:
    from torch.optim import lr_scheduler

    def is_schedule(cls: type) -> bool:
        return issubclass(cls, (lr_scheduler.LRScheduler, lr_scheduler.ReduceLROnPlateau))

    found = _exported(lr_scheduler, is_schedule, lr_scheduler.LRScheduler)
    records = [_record("lr_schedules", cls, "torch.optim.lr_scheduler") for cls in found]
    return family(records, aliases=SCHEDULE_ALIASES, suffix="_lr")


def losses() -> dict[str, dict]:
    import torch.nn
    from torch.nn.modules import loss

    found = _exported(loss, lambda cls: issubclass(cls, loss._Loss), loss._Loss, loss._WeightedLoss)
    return family([_record("losses", cls, _public(torch.nn, cls, loss)) for cls in found], suffix="_loss")


def activations() -> dict[str, dict]:
    import torch.nn
    from torch.nn.modules import activation

    found = _exported(activation, lambda cls: issubclass(cls, torch.nn.Module))
    return family([_record("activations", cls, _public(torch.nn, cls, activation)) for cls in found])


def augmentations() -> dict[str, dict]:
    from torchvision.transforms import v2

    found = [cls for _, cls in inspect.getmembers(v2, inspect.isclass) if issubclass(cls, v2.Transform)]
    found = [cls for cls in found if cls is not v2.Transform]
    return family([_record("augmentations", cls, "torchvision.transforms.v2", tags=_tags(cls)) for cls in found])


def _tags(cls: type) -> tuple[str, ...]:
    category = cls.__module__.rsplit(".", 1)[-1]
    return (CATEGORIES.get(category, category.lstrip("_")), *(("random",) if cls.__name__.startswith("Random") else ()))


def _record(family_name: str, cls: type, module: str, tags: tuple[str, ...] = ()) -> dict:
    reasons = NOT_DRIVABLE.get(family_name, {})
    supplied = SUPPLIED.get(family_name, frozenset())
    return record(cls, module, supplied=supplied, not_drivable=reasons.get(cls.__name__), tags=tags)


def _exported(module, wanted, *bases: type) -> list[type]:
    """The classes a module exports (`__all__`) that `wanted` accepts, less its base classes."""
    objects = [getattr(module, name) for name in module.__all__]
    return [obj for obj in objects if inspect.isclass(obj) and wanted(obj) and obj not in bases]


def _public(package, cls: type, fallback) -> str:
    """`torch.nn` when the class is exported there (as people write it), else the module that defines it."""
    return package.__name__ if getattr(package, cls.__name__, None) is cls else fallback.__name__
