"""`scaling`: how many Ray Train workers each trial uses and what each one gets (ray.train.ScalingConfig)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from specc.spec.base import RESOURCE_PATTERN, NonNegativeFloat, NonNegativeInt, Section, describe

ResourceName = Annotated[str, StringConstraints(pattern=RESOURCE_PATTERN)]


class Scaling(Section):
    """Data-parallel workers per trial. num_workers 0 is Ray Train's local mode: training runs in the driver."""

    num_workers: NonNegativeInt = describe(
        "Ray Train workers per trial; 0 = local mode (no worker group: quick, for small jobs).", 1
    )
    use_gpu: bool = describe("Give each worker a GPU.", False)
    resources_per_worker: dict[ResourceName, NonNegativeFloat] | None = describe(
        "Resources each worker reserves, e.g. {CPU: 2, GPU: 1}; default: Ray's (1 CPU, plus 1 GPU with use_gpu).",
        None,
    )
    placement_strategy: Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"] = describe(
        "How workers are placed on nodes.", "PACK"
    )
    backend: Literal["gloo", "nccl"] | None = describe(
        "torch.distributed backend; default: nccl with GPUs, else gloo (torch only).", None
    )
    accelerator_type: Annotated[str, StringConstraints(min_length=1)] | None = describe(
        "Required accelerator type, e.g. A100 (Ray's accelerator_type).", None
    )
    data_cpus: Annotated[float, Field(ge=1)] | None = describe(
        "CPUs Ray Data's read and preprocessing tasks may use beside the workers (file and image_folder data sets, "
        "which stream); at least 1, since each of its tasks takes a whole CPU. null: what the cluster has beyond the "
        "workers. Less than one CPU left is a problem before the run starts (Ray Data's reads would wait forever): "
        "give the workers fractional CPUs, e.g. resources_per_worker: {CPU: 0.5}.",
        None,
    )
