"""What each field of the spec is in Ray, torch and Keras terms, and an example of it: the reference's own text.

Keys are a field's anchor on its reference page (`training.optimizer.sgd.lr`, `dataset.csv.path`,
`tune.space.uniform`) or, for a field several kinds share, its path without the kind (`dataset.batch_size`); the
anchor wins. A field with no EXAMPLES entry shows its default, or no example when it has none worth showing. Every
field needs a MEANING entry: tests/unit/docs/test_reference.py names the ones missing.
"""

from __future__ import annotations

NO_EXAMPLE = object()

# -- what each field is in Ray, torch and Keras terms --------------------------------------------------------------

MEANING: dict[str, str] = {
    # the top level
    "specc": "specc's own: which format the file is written in. Ray never sees it.",
    "name": "Ray's `RunConfig(name=...)` unless `run.name` says otherwise: the run directory under "
    "`run.storage_path`. The compiled script is named after it too.",
    "description": "specc's own; kept in the resolved spec and shown by `specc show`.",
    "extends": "specc's own: read before validation. Ray sees only the merged spec.",
    "framework": "`torch`: a `ray.train.torch.TorchTrainer` over torch code. `tensorflow`: a "
    "`ray.train.tensorflow.TensorflowTrainer` over tf_keras (Keras 2) code.",
    "objective": "The trainable of `tune.Tuner(...)`: your function or `Trainable` class, wrapped in "
    "`tune.with_resources`.",
    "model": "The `build_model` function of the compiled script: a `torch.nn.Module` or a `keras.Model`.",
    "dataset": "The `load_data` / `make_loaders` / `make_datasets` functions: in-memory arrays, DataLoaders, or "
    "Ray Data datasets handed to the Trainer (`datasets=`).",
    "training": "The `train_func` every Ray Train worker runs (or each Tune trial, with one worker).",
    "scaling": "`ray.train.ScalingConfig(...)`.",
    "tune": "`tune.Tuner(..., tune_config=tune.TuneConfig(...), param_space=...)`.",
    "scheduler": "`TuneConfig(scheduler=...)`: one of `ray.tune.schedulers`.",
    "stop": "`RunConfig(stop=...)`: a `ray.tune.Stopper`, and `TuneConfig(time_budget_s=...)`.",
    "run": "`RunConfig(...)` with its `CheckpointConfig` and `FailureConfig`, and the script's results files.",
    "cluster": "`ray.init(address=..., runtime_env=...)`, or the Ray Job's `runtime_env` with `specc submit`.",
    # objective
    "objective.function": "The Tune function trainable, `function(config)`, called once per trial; it calls "
    "`ray.tune.report(...)`.",
    "objective.params": "The trial's `config`: Tune's `param_space` with the sampled values written in.",
    "objective.metrics": "The keys of the dicts the function passes to `ray.tune.report`.",
    "objective.max_steps": "A stopper on Tune's `training_iteration`; also the default `max_t` of asha and hyperband.",
    "objective.trainable": "A `ray.tune.Trainable` subclass passed to `tune.Tuner(...)` itself, as in Ray's "
    "`pbt_example.py`.",
    "objective.checkpoint_every": "`tune.CheckpointConfig(checkpoint_frequency=N)`.",
    "objective.checkpoint_at_end": "`tune.CheckpointConfig(checkpoint_at_end=...)`.",
    # model
    "model.mlp.type": "torch: `nn.Sequential` of `nn.Linear` layers after `nn.Flatten`. Keras: `Dense` layers after "
    "`Flatten`.",
    "model.cnn.type": "torch: `nn.Conv2d` blocks, then `nn.Linear` layers. Keras: `Conv2D` blocks, then `Dense`.",
    "model.torchvision.type": "`torchvision.models.get_model(name, weights=None, num_classes=...)`.",
    "model.keras_application.type": "`keras.applications.<Name>(weights=None, input_shape=..., classes=...)`.",
    "model.custom.type": "Your function's return value: a `torch.nn.Module` (torch) or a `keras.Model` (tensorflow).",
    "model.hidden_sizes": "torch: one `nn.Linear(width, size)` per entry. Keras: one `Dense(size)` per entry.",
    "model.activation": "torch: an activation module after each layer (`nn.ReLU()`, `nn.GELU()`, `nn.SiLU()`, ...). "
    "Keras: `ReLU()` or `Activation(name)`; `silu` is Keras' `swish`, `leaky_relu` keeps torch's slope 0.01. "
    "Any other name is an activation of the catalog: [torch's](catalog-torch.md#activations), "
    "[Keras'](catalog-keras.md#activations).",
    "model.mlp.dropout": "torch: `nn.Dropout(p)` after each hidden layer. Keras: `Dropout(rate)`.",
    "model.cnn.dropout": "torch: `nn.Dropout(p)` before each `nn.Linear` of the head. Keras: `Dropout(rate)`.",
    "model.mlp.batch_norm": "torch: `nn.BatchNorm1d` after each `nn.Linear`. Keras: `BatchNormalization()`.",
    "model.cnn.batch_norm": "torch: `nn.BatchNorm2d` after each `nn.Conv2d`. Keras: `BatchNormalization()`.",
    "model.channels": "torch: `nn.Conv2d(in, out, kernel_size)` per entry. Keras: `Conv2D(filters, kernel_size)`.",
    "model.kernel_size": "`nn.Conv2d(kernel_size=...)`; Keras' `Conv2D(kernel_size=...)`.",
    "model.padding": 'torch: `padding=kernel_size // 2` (same) or `0` (valid). Keras: `padding="same"` or `"valid"`.',
    "model.pool": "torch: `nn.MaxPool2d(size, stride)`. Keras: `MaxPooling2D(size, strides)`.",
    "model.pool.size": "`nn.MaxPool2d(kernel_size=...)`; Keras' `MaxPooling2D(pool_size=...)`.",
    "model.pool.stride": "`nn.MaxPool2d(stride=...)`; Keras' `MaxPooling2D(strides=...)`.",
    "model.torchvision.name": "The name `torchvision.models.get_model` takes: `resnet18`, `mobilenet_v3_small`, ...",
    "model.keras_application.name": "A class of `keras.applications`: `ResNet50`, `MobileNetV2`, ...",
    "model.num_classes": "`get_model(num_classes=...)`: the size of the last layer.",
    "model.in_channels": "The first `nn.Conv2d` is replaced by one with this many input channels.",
    "model.weights": "`weights=None`: random weights. Nothing is downloaded.",
    "model.factory": "Called as `factory(input_shape, num_outputs, **kwargs)` in every worker; it returns the model.",
    "model.kwargs": "The `**kwargs` of the factory call.",
    # dataset: every kind
    "dataset.batch_size": "The batch each Ray Train worker takes: `DataLoader(batch_size=...)`, "
    "`iter_torch_batches(batch_size=...)`. Keras: the global batch is this times the workers, which "
    "`MultiWorkerMirroredStrategy` splits.",
    "dataset.global_batch_size": "Divided by `ScalingConfig.num_workers` into each worker's batch.",
    "dataset.validation_fraction": "The share a seeded split holds out of the training examples (no Ray or torch "
    "call: the script's own `split`, or a seeded hash of each row for files).",
    "dataset.shuffle_seed": "Seeds the split and the order of batches (each worker adds its rank).",
    "dataset.shuffle": "torch: a new `DistributedSampler` order each epoch (`sampler.set_epoch`). Ray Data: a new file "
    "order and a local shuffle buffer each epoch.",
    "dataset.standardize": "scikit-learn-style standardisation of the features; for files, Ray Data's "
    "`StandardScaler` fitted on the training split.",
    "dataset.subset": "Slices of the splits (`torch.utils.data.Subset`, or the first rows of each split).",
    "dataset.augment": "torch: `torchvision.transforms.v2` transforms on each training image. Keras: preprocessing "
    "layers (`RandomFlip`, `RandomCrop`, ...) on the training batches. A class named by its own name is that class "
    "with the spec's keyword arguments: `v2.RandomAffine(degrees=0, translate=(0.1, 0.1))`.",
    "dataset.loader_workers": "`torch.utils.data.DataLoader(num_workers=...)`.",
    "dataset.loader": "`torch_dataloader`: a `DataLoader` wrapped by `ray.train.torch.prepare_data_loader`. "
    "`ray_data`: `ray.train.get_dataset_shard(...)` and `iter_torch_batches` / `iter_tf_batches`.",
    "dataset.csv.loader": "Always `ray_data`: `ray.data.read_csv`-style streaming into `get_dataset_shard`.",
    "dataset.image_folder.loader": "`ray_data`: Ray Data's tasks decode the images into `get_dataset_shard`. "
    "`torch_dataloader`: each worker's `DataLoader` decodes its files.",
    # dataset: kinds
    "dataset.synthetic_classification.type": "`sklearn.datasets.make_classification(...)`, in memory.",
    "dataset.synthetic_regression.type": "`sklearn.datasets.make_regression(...)`, in memory; the target standardised.",
    "dataset.digits.type": "`sklearn.datasets.load_digits()`, as 1x8x8 images in [0, 1] (8x8x1 for Keras).",
    "dataset.iris.type": "`sklearn.datasets.load_iris()`.",
    "dataset.wine.type": "`sklearn.datasets.load_wine()`.",
    "dataset.breast_cancer.type": "`sklearn.datasets.load_breast_cancer()`.",
    "dataset.csv.type": "Streamed with Ray Data from CSV files (pyarrow's reader).",
    "dataset.parquet.type": "Streamed with Ray Data through the script's `ParquetSlices` datasource (pyarrow).",
    "dataset.jsonl.type": "Streamed with Ray Data from JSON Lines files.",
    "dataset.npz.type": "`numpy.load` of each archive, streamed with Ray Data.",
    "dataset.torchvision.type": "A class of `torchvision.datasets` (`MNIST`, `CIFAR10`, ...) read from `root`.",
    "dataset.keras_dataset.type": "The files `keras.datasets.<name>.load_data()` downloads, read with NumPy.",
    "dataset.image_folder.type": "The layout of `torchvision.datasets.ImageFolder` and Keras' "
    "`image_dataset_from_directory`; decoded as Ray Data's `read_images` decodes.",
    "dataset.custom.type": "Your function returns `((x_train, y_train), (x_val, y_val))` as NumPy arrays.",
    "dataset.n_samples": "`make_classification(n_samples=...)` / `make_regression(n_samples=...)`.",
    "dataset.n_features": "`make_classification(n_features=...)` / `make_regression(n_features=...)`.",
    "dataset.n_classes": "`make_classification(n_classes=...)`.",
    "dataset.synthetic_classification.noise": "`make_classification(flip_y=...)`.",
    "dataset.synthetic_regression.noise": "`make_regression(noise=...)`.",
    "dataset.seed": "`random_state=` of scikit-learn's generator.",
    "dataset.subset.train": "The first N training examples after the seeded shuffle.",
    "dataset.subset.validation": "The first N validation examples.",
    "dataset.augment.random_crop": "torch: `v2.RandomCrop(size, padding=...)`. Keras: `ZeroPadding2D(padding)` then "
    "`RandomCrop(size, size)`.",
    "dataset.augment.random_crop.size": "`v2.RandomCrop(size=...)`; Keras' `RandomCrop(height, width)`.",
    "dataset.augment.random_crop.padding": "`v2.RandomCrop(padding=...)`; Keras' `ZeroPadding2D(padding)`.",
    "dataset.augment.random_rotation": "torch: `v2.RandomRotation(degrees)`. Keras: `RandomRotation(degrees / 360, "
    'fill_mode="constant")`.',
    "dataset.augment.random_resized_crop": "`v2.RandomResizedCrop(size)` (torch only; Keras has no such layer).",
    "dataset.augment.random_resized_crop.size": "`v2.RandomResizedCrop(size=...)`.",
    "dataset.augment.color_jitter": "torch: `v2.ColorJitter(...)`. Keras: `RandomBrightness`, `RandomContrast` and "
    "`tf.image.random_saturation`.",
    "dataset.augment.color_jitter.brightness": "`v2.ColorJitter(brightness=...)`; Keras' "
    "`RandomBrightness(factor, value_range=(0, 1))`.",
    "dataset.augment.color_jitter.contrast": "`v2.ColorJitter(contrast=...)`; Keras' `RandomContrast(factor)`.",
    "dataset.augment.color_jitter.saturation": "`v2.ColorJitter(saturation=...)`; "
    "`tf.image.random_saturation(images, 1 - s, 1 + s)`.",
    "dataset.augment.random_translation": "Keras: `RandomTranslation(height, width, fill_mode=fill, "
    'interpolation="nearest")`. torch: `v2.RandomCrop((H, W), padding=(shift_w, shift_h), padding_mode=...)` '
    "(nearest: `edge`, reflect: `symmetric`), shifts in whole pixels (the fraction of the side, rounded, at least 1).",
    "dataset.augment.random_translation.height": "Keras' `height_factor`; torch: the top/bottom padding of "
    "`v2.RandomCrop`.",
    "dataset.augment.random_translation.width": "Keras' `width_factor`; torch: the left/right padding of "
    "`v2.RandomCrop`.",
    "dataset.augment.random_translation.fill": "Keras' `fill_mode`; torch's `padding_mode` (`edge`, `constant`, "
    "`symmetric`).",
    "dataset.task": "Picks the loss's targets: class indices (classification) or float columns (regression).",
    "dataset.num_classes": "The model's output size for classification.",
    "dataset.path": "The paths Ray Data reads: a file, a directory, a glob or a URI (`s3://`, `gs://`).",
    "dataset.npz.path": "The archives Ray Data reads: a file, a directory, a glob or a URI.",
    "dataset.keras_dataset.path": "Where Keras caches its downloads (`~/.keras/datasets`), or the file itself.",
    "dataset.image_folder.path": "The root `torchvision.datasets.ImageFolder` would take.",
    "dataset.features": "The columns that become the model's input tensor.",
    "dataset.npz.features": "The arrays of the archive that become the model's input.",
    "dataset.label": "The column that becomes the loss's target.",
    "dataset.npz.label": "The array of the archive that becomes the loss's target.",
    "dataset.categorical": "Ray Data's `OneHotEncoder`, fitted on the training split.",
    "dataset.missing": "Ray Data's `SimpleImputer` (`mean`, `most_frequent`), an approximate median, or rows dropped.",
    "dataset.validation_from": "Which split the `val_*` metrics of `ray.train.report` come from.",
    "dataset.shuffle_validation": "torch: the validation `DataLoader(..., shuffle=True)`. Keras: the validation "
    "`tf.data` pipeline in a new seeded order each epoch. Ray Data: `iter_torch_batches` / `iter_tf_batches` with "
    "`local_shuffle_buffer_size` (and the files in a new order).",
    "dataset.torchvision.name": "The class of `torchvision.datasets`.",
    "dataset.keras_dataset.name": "The module of `keras.datasets`.",
    "dataset.root": "`torchvision.datasets.<Name>(root=...)`.",
    "dataset.torchvision.download": "`torchvision.datasets.<Name>(download=...)`.",
    "dataset.keras_dataset.download": "Never: `keras.datasets.<name>.load_data()` fetches the files, not specc.",
    "dataset.resize": "`v2.Resize(size)` before the other transforms.",
    "dataset.normalize": "`v2.Normalize(mean, std)`.",
    "dataset.normalize.mean": "`v2.Normalize(mean=...)`.",
    "dataset.normalize.std": "`v2.Normalize(std=...)`.",
    "dataset.image_size": "Each image resized to `[height, width]`, as Ray Data's `read_images(size=...)` does.",
    "dataset.channels": '`mode="L"` (1) or `"RGB"` (3), as `read_images(mode=...)` converts.',
    "dataset.validation_path": "A second root of the same layout, read the same way.",
    "dataset.custom.factory": "Called as `factory(**kwargs)` in the driver; it returns NumPy arrays.",
    "dataset.kwargs": "The `**kwargs` of the factory call.",
    # training
    "training.epochs": "The epoch loop of `train_func`. Each epoch ends in one `ray.train.report`: Tune's "
    "`training_iteration` counts them.",
    "training.loss": "torch: `nn.CrossEntropyLoss`, `nn.MSELoss`, `nn.BCEWithLogitsLoss`, `nn.L1Loss`, "
    "`nn.HuberLoss`. Keras: `SparseCategoricalCrossentropy(from_logits=True)`, `MeanSquaredError`, "
    "`BinaryCrossentropy(from_logits=True)`, `MeanAbsoluteError`, `Huber`.",
    "training.optimizer": "`make_optimizer`: a `torch.optim` optimizer or a `keras.optimizers` one.",
    "training.lr_schedule": "torch: a `torch.optim.lr_scheduler`, stepped once per epoch (or per optimizer step). "
    "Keras: the learning rate set at each epoch's start by a `LearningRateScheduler`, computed as torch's scheduler "
    "would; a `keras.optimizers.schedules` class stepped per step is the optimizer's learning_rate. Each epoch "
    "reports its rate as `lr`.",
    "training.loss.type": "Any loss of the catalog: `nn.<Class>` ([torch's](catalog-torch.md#losses)) or "
    "`keras.losses.<Class>` ([Keras'](catalog-keras.md#losses), with `from_logits=True` where it takes it). A "
    "specc name (cross_entropy, mse, bce_with_logits, l1, huber) is the class it compiles to.",
    "training.lr_schedule.per": "epoch: `scheduler.step()` after each epoch (Keras: a `LearningRateScheduler`). "
    "step: after each `optimizer.step()` (Keras: the schedule as the optimizer's `learning_rate`).",
    "training.lr_schedule.warmup": "torch: `SequentialLR([LinearLR(optimizer, start_factor, total_iters=epochs), "
    "schedule], milestones=[epochs])`. Keras: the same rates, per epoch.",
    "training.lr_schedule.warmup.epochs": "`LinearLR(total_iters=...)`, and the `SequentialLR`'s milestone.",
    "training.lr_schedule.warmup.start_factor": "`LinearLR(start_factor=...)`.",
    "training.lr_schedule.other.type": "Any schedule of the catalog: `torch.optim.lr_scheduler.<Class>` "
    "([torch's](catalog-torch.md#lr_schedules)) or `keras.optimizers.schedules.<Class>` "
    "([Keras'](catalog-keras.md#lr_schedules)); the optimizer, a OneCycleLR's step counts and a Keras schedule's "
    "`initial_learning_rate` come from the script. reduce_on_plateau on Keras is the `ReduceLROnPlateau` callback.",
    "training.lr_schedule.other.metric": "torch: `scheduler.step(metrics[metric])` and `mode=`; Keras: "
    "`ReduceLROnPlateau(monitor=..., mode=...)`, with train_loss as Keras' logs name it (`loss`).",
    "training.metrics": "Computed on the validation batches and reported as `val_<name>` with `ray.train.report`. "
    "Keras: `SparseCategoricalAccuracy`, `SparseTopKCategoricalAccuracy(k=5)`, `MeanSquaredError`, "
    "`MeanAbsoluteError`.",
    "training.grad_clip_norm": "torch: `nn.utils.clip_grad_norm_(model.parameters(), max_norm)`. Keras: the "
    "optimizer's `global_clipnorm`.",
    "training.mixed_precision": "torch: `torch.autocast` with a `torch.amp.GradScaler`. Keras: "
    '`keras.mixed_precision.set_global_policy("mixed_float16")`.',
    "training.seed": "torch: `torch.manual_seed(seed + rank)` and NumPy's. Keras: "
    "`keras.utils.set_random_seed(seed + rank)`.",
    "training.checkpoint_every": "How often `ray.train.report(..., checkpoint=Checkpoint(...))` carries a checkpoint.",
    "training.steps_per_epoch": "Keras' `fit(steps_per_epoch=...)`; Ray's examples call it `EPOCH_SIZE`.",
    "training.validation_steps": "Keras' `fit(validation_steps=...)`.",
    "training.train_metrics": "The same metrics computed on the training batches, reported as `train_<name>`.",
    "training.optimizer.sgd.type": "`torch.optim.SGD`; Keras' `keras.optimizers.SGD`.",
    "training.optimizer.adam.type": "`torch.optim.Adam`; Keras' `keras.optimizers.Adam`.",
    "training.optimizer.adamw.type": "`torch.optim.AdamW`; Keras' `keras.optimizers.AdamW`.",
    "training.optimizer.rmsprop.type": "`torch.optim.RMSprop`; Keras' `keras.optimizers.RMSprop`.",
    "training.optimizer.other.type": "Any optimizer of the catalog: `torch.optim.<Class>` "
    "([torch's](catalog-torch.md#optimizers)) or `keras.optimizers.<Class>` ([Keras'](catalog-keras.md#optimizers)). "
    "The other keys are passed as keyword arguments, checked against the class's signature.",
    "training.optimizer.lr": "torch: `lr=`. Keras: `learning_rate=`.",
    "training.optimizer.momentum": "`momentum=` in torch and Keras.",
    "training.optimizer.weight_decay": "torch: `weight_decay=`. Keras decays weights apart from the gradient: there "
    "only `adamw` takes it.",
    "training.optimizer.adamw.weight_decay": "`weight_decay=` of `torch.optim.AdamW` and `keras.optimizers.AdamW`.",
    "training.optimizer.nesterov": "`nesterov=` in torch and Keras.",
    "training.optimizer.betas": "torch: `betas=(b1, b2)`. Keras: `beta_1=`, `beta_2=`.",
    "training.optimizer.eps": "torch: `eps=`. Keras: `epsilon=`.",
    "training.optimizer.amsgrad": "`amsgrad=` in torch and Keras.",
    "training.optimizer.alpha": "torch: `alpha=`. Keras: `rho=`.",
    "training.optimizer.centered": "`centered=` in torch and Keras.",
    "training.lr_schedule.none.type": "No scheduler: the optimizer's `lr` throughout.",
    "training.lr_schedule.step.type": "`torch.optim.lr_scheduler.StepLR`.",
    "training.lr_schedule.multistep.type": "`torch.optim.lr_scheduler.MultiStepLR`.",
    "training.lr_schedule.cosine.type": "`torch.optim.lr_scheduler.CosineAnnealingLR`.",
    "training.lr_schedule.exponential.type": "`torch.optim.lr_scheduler.ExponentialLR`.",
    "training.lr_schedule.step_size": "`StepLR(step_size=...)`.",
    "training.lr_schedule.gamma": "`gamma=` of `StepLR`, `MultiStepLR` and `ExponentialLR`.",
    "training.lr_schedule.milestones": "`MultiStepLR(milestones=...)`.",
    "training.lr_schedule.t_max": "`CosineAnnealingLR(T_max=...)`.",
    "training.lr_schedule.eta_min": "`CosineAnnealingLR(eta_min=...)`.",
    # scaling
    "scaling.num_workers": "`ScalingConfig(num_workers=...)`. 0 is Ray Train's local mode. In a search, 0 or 1 makes "
    "each trial a Tune function trainable.",
    "scaling.use_gpu": "`ScalingConfig(use_gpu=...)`.",
    "scaling.resources_per_worker": "`ScalingConfig(resources_per_worker=...)`.",
    "scaling.placement_strategy": "`ScalingConfig(placement_strategy=...)`: Ray's placement group strategy.",
    "scaling.backend": "`TorchTrainer(torch_config=TorchConfig(backend=...))`: `torch.distributed`'s backend.",
    "scaling.accelerator_type": "`ScalingConfig(accelerator_type=...)`: a node resource `accelerator_type:<name>`.",
    "scaling.data_cpus": "`ray.data.ExecutionResources(cpu=...)` as the `resource_limits` of Ray Data's execution.",
    # tune
    "tune.metric": "`TuneConfig(metric=...)`; a list goes to `OptunaSearch(metric=[...])` instead.",
    "tune.mode": "`TuneConfig(mode=...)`; a list goes to `OptunaSearch(mode=[...])` instead.",
    "tune.num_samples": "`TuneConfig(num_samples=...)`.",
    "tune.max_concurrent_trials": "`TuneConfig(max_concurrent_trials=...)`, or the `BasicVariantGenerator`'s "
    "`max_concurrent` for random and grid.",
    "tune.search": "`TuneConfig(search_alg=...)`.",
    "tune.space": "`Tuner(param_space=...)`: each path becomes a Ray Tune domain (`tune.uniform`, ...).",
    "tune.search.seed": "`random_state=` of `BasicVariantGenerator` and `BayesOptSearch`; Optuna's sampler seed; "
    "HyperOpt's `random_state_seed`; `AxSearch(random_seed=...)`, AxClient's.",
    "tune.search.points_to_evaluate": "`points_to_evaluate=` of the searcher.",
    "tune.search.random.type": "`ray.tune.search.BasicVariantGenerator`.",
    "tune.search.grid.type": "`ray.tune.search.BasicVariantGenerator` over `tune.grid_search` entries.",
    "tune.search.optuna.type": "`ray.tune.search.optuna.OptunaSearch`.",
    "tune.search.hyperopt.type": "`ray.tune.search.hyperopt.HyperOptSearch`.",
    "tune.search.bayesopt.type": "`ray.tune.search.bayesopt.BayesOptSearch`.",
    "tune.search.sampler": "`OptunaSearch(sampler=optuna.samplers.TPESampler(seed=...))` or `RandomSampler`.",
    "tune.search.n_initial_points": "`HyperOptSearch(n_initial_points=...)`.",
    "tune.search.utility": '`BayesOptSearch(utility_kwargs={"kind": ...})`.',
    "tune.search.kappa": '`BayesOptSearch(utility_kwargs={"kappa": ...})`.',
    "tune.search.xi": '`BayesOptSearch(utility_kwargs={"xi": ...})`.',
    "tune.search.random_search_steps": "`BayesOptSearch(random_search_steps=...)`.",
    "tune.search.bohb.type": "`ray.tune.search.bohb.TuneBOHB` (hpbandster and ConfigSpace); with "
    "`HyperBandForBOHB` as the scheduler. Other keys: `TuneBOHB`'s keyword arguments (`bohb_config`, ...).",
    "tune.search.nevergrad.type": "`ray.tune.search.nevergrad.NevergradSearch`. Other keys: its keyword arguments.",
    "tune.search.zoopt.type": "`ray.tune.search.zoopt.ZOOptSearch`. Other keys: its keyword arguments "
    "(`parallel_num`, ...).",
    "tune.search.hebo.type": "`ray.tune.search.hebo.HEBOSearch`: refused (E238), its library cannot be installed "
    "beside the pinned packages.",
    "tune.search.ax.type": "`ray.tune.search.ax.AxSearch` over ax-platform 1.2.4 (Ray 2.60's AxSearch reads "
    "`Objective.metric`, which Ax 1.3 removed), AxClient's log line for each trial off (`verbose_logging=False`).",
    "tune.search.parameter_constraints": "`AxSearch(parameter_constraints=[...])`, each tune.space path replaced by "
    "the name AxSearch gives its parameter (an objective's param key, `/` between nested keys).",
    "tune.search.outcome_constraints": "`AxSearch(outcome_constraints=[...])`.",
    "tune.search.optimizer": '`NevergradSearch(optimizer=ng.optimizers.registry["..."])`.',
    "tune.search.nevergrad.budget": '`NevergradSearch(optimizer_kwargs={"budget": ...})`.',
    "tune.search.zoopt.budget": "`ZOOptSearch(budget=...)`.",
    "tune.search.algo": "`ZOOptSearch(algo=...)`.",
    "tune.repeat": "`tune.search.Repeater(searcher, repeat=...)`; a model spec's repeats train from `training.seed` + "
    "`TRIAL_INDEX`.",
    "tune.space.uniform": "`tune.uniform(lo, hi)`.",
    "tune.space.quniform": "`tune.quniform(lo, hi, q)`.",
    "tune.space.loguniform": "`tune.loguniform(lo, hi)`.",
    "tune.space.qloguniform": "`tune.qloguniform(lo, hi, q)`.",
    "tune.space.randint": "`tune.randint(lo, hi)`.",
    "tune.space.qrandint": "`tune.qrandint(lo, hi, q)`.",
    "tune.space.lograndint": "`tune.lograndint(lo, hi)`.",
    "tune.space.randn": "`tune.randn(mean, sd)`.",
    "tune.space.qrandn": "`tune.qrandn(mean, sd, q)`.",
    "tune.space.choice": "`tune.choice([...])`.",
    "tune.space.grid": "`tune.grid_search([...])`.",
    # scheduler
    "scheduler.fifo.type": "`ray.tune.schedulers.FIFOScheduler`.",
    "scheduler.asha.type": '`ray.tune.schedulers.ASHAScheduler`, with `time_attr="training_iteration"`.',
    "scheduler.hyperband.type": '`ray.tune.schedulers.HyperBandScheduler`, with `time_attr="training_iteration"`.',
    "scheduler.median_stopping.type": "`ray.tune.schedulers.MedianStoppingRule`, with "
    '`time_attr="training_iteration"`.',
    "scheduler.pbt.type": "`ray.tune.schedulers.PopulationBasedTraining`.",
    "scheduler.pb2.type": "`ray.tune.schedulers.pb2.PB2`.",
    "scheduler.hyperband_for_bohb.type": "`ray.tune.schedulers.HyperBandForBOHB`, with "
    '`time_attr="training_iteration"`; with the bohb searcher.',
    "scheduler.max_t": "`max_t=` of `ASHAScheduler` and `HyperBandScheduler`, in epochs.",
    "scheduler.grace_period": "`grace_period=` of `ASHAScheduler` and `MedianStoppingRule`, in epochs.",
    "scheduler.reduction_factor": "`reduction_factor=` of `ASHAScheduler` and `HyperBandScheduler`.",
    "scheduler.brackets": "`ASHAScheduler(brackets=...)`.",
    "scheduler.stop_last_trials": "`HyperBandScheduler(stop_last_trials=...)`.",
    "scheduler.min_samples_required": "`MedianStoppingRule(min_samples_required=...)`.",
    "scheduler.hard_stop": "`MedianStoppingRule(hard_stop=...)`.",
    "scheduler.perturbation_interval": "`perturbation_interval=` of `PopulationBasedTraining` and `PB2`, in epochs.",
    "scheduler.quantile_fraction": "`quantile_fraction=` of `PopulationBasedTraining` and `PB2`.",
    "scheduler.synch": "`synch=` of `PopulationBasedTraining` and `PB2`.",
    "scheduler.mutations": "`PopulationBasedTraining(hyperparam_mutations=...)`: Ray domains or lists.",
    "scheduler.resample_probability": "`PopulationBasedTraining(resample_probability=...)`.",
    "scheduler.perturbation_factors": "`PopulationBasedTraining(perturbation_factors=(up, down))`.",
    "scheduler.burn_in_period": "`PopulationBasedTraining(burn_in_period=...)`.",
    "scheduler.bounds": "`PB2(hyperparam_bounds=...)`.",
    # stop
    "stop.when": "A `ray.tune.Stopper` (the script's `StopRules`) whose `__call__(trial_id, result)` tests each "
    "condition.",
    "stop.all_when": "A `ray.tune.Stopper` (the script's `StopSearch`) whose `stop_all()` ends the search.",
    "stop.max_trial_time_s": "A condition on Tune's `time_total_s` in the script's `StopRules`.",
    "stop.time_budget_s": "`TuneConfig(time_budget_s=...)`.",
    "stop.plateau": "`ray.tune.stopper.TrialPlateauStopper`.",
    "stop.plateau.metric": "`TrialPlateauStopper(metric=...)`.",
    "stop.plateau.std": "`TrialPlateauStopper(std=...)`.",
    "stop.plateau.num_results": "`TrialPlateauStopper(num_results=...)`.",
    "stop.plateau.grace_period": "`TrialPlateauStopper(grace_period=...)`.",
    "stop.plateau.metric_threshold": "`TrialPlateauStopper(metric_threshold=..., mode=tune.mode)`.",
    # run
    "run.storage_path": "`RunConfig(storage_path=...)`.",
    "run.name": "`RunConfig(name=...)`.",
    "run.checkpoints_to_keep": "`CheckpointConfig(num_to_keep=...)`.",
    "run.checkpoint_score": "`CheckpointConfig(checkpoint_score_attribute=..., checkpoint_score_order=...)`.",
    "run.checkpoint_score.metric": "`CheckpointConfig(checkpoint_score_attribute=...)`.",
    "run.checkpoint_score.mode": "`CheckpointConfig(checkpoint_score_order=...)`.",
    "run.max_failures": "`FailureConfig(max_failures=...)` of Ray Train or Ray Tune.",
    "run.fail_fast": "`ray.tune.FailureConfig(fail_fast=...)` (Ray Train's `fail_fast` is deprecated in 2.60).",
    "run.callbacks": "A search: Tune's `TBXLoggerCallback`, `MLflowLoggerCallback`, `WandbLoggerCallback`. A "
    "training run: a `ray.train.UserCallback` that writes the same.",
    "run.resume": "`Tuner.restore(..., resume_unfinished=..., resume_errored=...)`.",
    # cluster
    "cluster.address": "`ray.init(address=...)`.",
    "cluster.runtime_env": "`ray.init(runtime_env=...)`, or the Ray Job's `runtime_env`.",
    "cluster.working_dir": "The `working_dir` of the job's `runtime_env`.",
    "cluster.excludes": "The `excludes` of the job's `runtime_env` (gitignore patterns, as Ray matches them).",
    "cluster.include": "specc's own: what would stay behind as a secret travels after all.",
    "cluster.init_timeout_s": "How long the run waits for the address (the Ray, or `specc submit`'s dashboard) to "
    "answer before it stops (E402); an address that refuses stops it at once.",
    "cluster.runtime_env.env_vars": '`runtime_env={"env_vars": {...}}`.',
    "cluster.runtime_env.pip": '`runtime_env={"pip": ...}`: a list, a requirements file, or a mapping.',
    "cluster.runtime_env.uv": '`runtime_env={"uv": [...]}`.',
    "cluster.runtime_env.conda": '`runtime_env={"conda": ...}`.',
    "cluster.runtime_env.py_modules": '`runtime_env={"py_modules": [...]}`.',
    "cluster.runtime_env.image_uri": '`runtime_env={"image_uri": ...}`.',
    "cluster.runtime_env.config": '`runtime_env={"config": {...}}`.',
    "cluster.runtime_env.pip.packages": '`runtime_env={"pip": {"packages": [...]}}`.',
    "cluster.runtime_env.pip.pip_check": '`runtime_env={"pip": {"pip_check": ...}}`.',
    "cluster.runtime_env.pip.pip_version": '`runtime_env={"pip": {"pip_version": ...}}`.',
    "cluster.runtime_env.config.setup_timeout_seconds": '`runtime_env={"config": {"setup_timeout_seconds": ...}}`.',
    "cluster.runtime_env.config.eager_install": '`runtime_env={"config": {"eager_install": ...}}`.',
}

# -- examples, where the default shows nothing worth copying -------------------------------------------------------

EXAMPLES: dict[str, object] = {
    "specc": 1,
    "objective": {"function": "factories.objectives:easy_objective", "metrics": ["mean_loss"]},
    "model": {"type": "mlp", "hidden_sizes": [128, 64]},
    "dataset": {"type": "digits", "batch_size": 64},
    "training": {"epochs": 20, "optimizer": {"type": "sgd", "lr": 0.01, "momentum": 0.9}},
    "scaling": {"num_workers": 2, "resources_per_worker": {"CPU": 1}},
    "tune": {"metric": "val_accuracy", "mode": "max", "num_samples": 8},
    "scheduler": {"type": "asha", "grace_period": 2},
    "stop": {"when": ["val_accuracy >= 0.99"]},
    "run": {"storage_path": "./runs", "callbacks": ["csv"]},
    "cluster": {"address": "auto"},
    "name": "digits-mlp-asha",
    "description": "MLP on scikit-learn's digits, lr and momentum searched with ASHA",
    "extends": "base_digits.yaml",
    "framework": "torch",
    "objective.function": "factories.objectives:easy_objective",
    "objective.params": {"steps": 20, "width": 10, "height": 0},
    "objective.metrics": ["iterations", "mean_loss"],
    "objective.max_steps": 20,
    "objective.trainable": "factories.objectives:PBTBenchmark",
    "objective.checkpoint_every": 4,
    "objective.checkpoint_at_end": True,
    "model.mlp.dropout": 0.1,
    "model.cnn.dropout": 0.25,
    "model.mlp.batch_norm": True,
    "model.cnn.batch_norm": True,
    "model.padding": "valid",
    "model.cnn.pool": {"size": 2, "stride": 1},
    "model.torchvision.name": "resnet18",
    "model.keras_application.name": "ResNet50",
    "model.num_classes": 10,
    "model.in_channels": 1,
    "model.weights": None,
    "model.factory": "factories.tiny_models:make",
    "model.kwargs": {"hidden": 32},
    "dataset.batch_size": 64,
    "dataset.global_batch_size": 64,
    "dataset.validation_fraction": 0.1,
    "dataset.shuffle_seed": 7,
    "dataset.shuffle": False,
    "dataset.shuffle_validation": True,
    "dataset.standardize": False,
    "dataset.subset": {"train": 1000, "validation": 200},
    "dataset.augment": ["horizontal_flip", {"random_crop": {"size": 32, "padding": 4}}],
    "dataset.loader_workers": 2,
    "dataset.loader": "ray_data",
    "dataset.csv.loader": "ray_data",
    "dataset.image_folder.loader": "torch_dataloader",
    "dataset.n_samples": 2000,
    "dataset.n_features": 16,
    "dataset.n_classes": 4,
    "dataset.synthetic_classification.noise": 0.05,
    "dataset.synthetic_regression.noise": 0.5,
    "dataset.seed": 3,
    "dataset.subset.train": 1000,
    "dataset.subset.validation": 200,
    "dataset.augment.random_crop": {"size": 32, "padding": 4},
    "dataset.augment.random_crop.size": 32,
    "dataset.augment.random_crop.padding": 4,
    "dataset.augment.random_rotation": 15,
    "dataset.augment.random_resized_crop": {"size": 224},
    "dataset.augment.random_resized_crop.size": 224,
    "dataset.augment.color_jitter": {"brightness": 0.2, "contrast": 0.2},
    "dataset.augment.color_jitter.brightness": 0.2,
    "dataset.augment.color_jitter.contrast": 0.2,
    "dataset.augment.color_jitter.saturation": 0.2,
    "dataset.augment.random_translation": {"height": 0.1, "width": 0.1, "fill": "nearest"},
    "dataset.augment.random_translation.height": 0.1,
    "dataset.augment.random_translation.width": 0.1,
    "dataset.augment.random_translation.fill": "nearest",
    "dataset.task": "regression",
    "dataset.num_classes": 3,
    "dataset.csv.path": "data/customers.csv",
    "dataset.parquet.path": "data/rows/",
    "dataset.jsonl.path": "data/rows.jsonl",
    "dataset.npz.path": "data/arrays.npz",
    "dataset.keras_dataset.path": "~/.keras/datasets",
    "dataset.image_folder.path": "data/digits_png",
    "dataset.features": ["age", "plan", "region"],
    "dataset.npz.features": ["x"],
    "dataset.label": "churned",
    "dataset.npz.label": "y",
    "dataset.categorical": ["plan", "region"],
    "dataset.missing": "median",
    "dataset.validation_from": "train",
    "dataset.torchvision.name": "FashionMNIST",
    "dataset.keras_dataset.name": "cifar10",
    "dataset.root": "./data",
    "dataset.torchvision.download": True,
    "dataset.resize": 64,
    "dataset.normalize": {"mean": [0.5], "std": [0.5]},
    "dataset.normalize.mean": [0.4914, 0.4822, 0.4465],
    "dataset.normalize.std": [0.247, 0.2435, 0.2616],
    "dataset.image_size": [32, 32],
    "dataset.channels": 1,
    "dataset.validation_path": "data/validation_png",
    "dataset.image_folder.validation_fraction": 0.1,
    "dataset.torchvision.validation_fraction": 0.1,
    "dataset.keras_dataset.validation_fraction": 0.1,
    "dataset.custom.factory": "factories.data:load",
    "dataset.kwargs": {"rows": 500},
    "training.epochs": 20,
    "training.loss": "huber",
    "training.optimizer": {"type": "sgd", "lr": 0.01, "momentum": 0.9},
    "training.lr_schedule": {"type": "step", "step_size": 30, "gamma": 0.1},
    "training.metrics": ["accuracy", "top5_accuracy"],
    "training.grad_clip_norm": 1.0,
    "training.mixed_precision": True,
    "training.seed": 42,
    "training.checkpoint_every": 2,
    "training.steps_per_epoch": 50,
    "training.validation_steps": 10,
    "training.train_metrics": True,
    "training.optimizer.other.type": "nadam",
    "training.loss.type": "smooth_l1",
    "training.lr_schedule.per": "step",
    "training.lr_schedule.warmup": {"epochs": 2, "start_factor": 0.1},
    "training.lr_schedule.warmup.epochs": 2,
    "training.lr_schedule.warmup.start_factor": 0.1,
    "training.lr_schedule.other.type": "one_cycle",
    "training.lr_schedule.other.metric": "val_accuracy",
    "training.optimizer.sgd.lr": 0.1,
    "training.optimizer.adam.lr": 0.0003,
    "training.optimizer.adamw.lr": 0.0003,
    "training.optimizer.rmsprop.lr": 0.001,
    "training.optimizer.sgd.momentum": 0.9,
    "training.optimizer.rmsprop.momentum": 0.9,
    "training.optimizer.weight_decay": 0.0001,
    "training.optimizer.adamw.weight_decay": 0.05,
    "training.optimizer.nesterov": True,
    "training.optimizer.betas": [0.9, 0.98],
    "training.optimizer.eps": 1.0e-6,
    "training.optimizer.amsgrad": True,
    "training.optimizer.alpha": 0.9,
    "training.optimizer.centered": True,
    "training.lr_schedule.step_size": 30,
    "training.lr_schedule.step.gamma": 0.5,
    "training.lr_schedule.multistep.gamma": 0.1,
    "training.lr_schedule.exponential.gamma": 0.9,
    "training.lr_schedule.milestones": [10, 15],
    "training.lr_schedule.t_max": 20,
    "training.lr_schedule.eta_min": 1.0e-5,
    "scaling.num_workers": 2,
    "scaling.use_gpu": True,
    "scaling.resources_per_worker": {"CPU": 2, "GPU": 1},
    "scaling.placement_strategy": "SPREAD",
    "scaling.backend": "nccl",
    "scaling.accelerator_type": "A100",
    "scaling.data_cpus": 2,
    "tune.metric": "val_accuracy",
    "tune.mode": "max",
    "tune.num_samples": 16,
    "tune.max_concurrent_trials": 4,
    "tune.search": {"type": "optuna", "seed": 7},
    "tune.space": {"training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]}, "dataset.batch_size": {"grid": [32, 64]}},
    "tune.search.seed": 7,
    "tune.search.nevergrad.budget": 64,
    "tune.search.zoopt.budget": 64,
    "tune.search.parameter_constraints": ["model.dropout + training.optimizer.momentum <= 1.0"],
    "tune.search.outcome_constraints": ["num_parameters <= 50000"],
    "tune.search.points_to_evaluate": [{"training.optimizer.lr": 0.01}],
    "tune.search.sampler": "random",
    "tune.search.n_initial_points": 10,
    "tune.search.utility": "ei",
    "tune.search.kappa": 1.0,
    "tune.search.xi": 0.01,
    "tune.search.random_search_steps": 5,
    "tune.space.uniform": [0.0, 0.5],
    "tune.space.quniform": [0.0, 0.5, 0.05],
    "tune.space.loguniform": [1.0e-4, 0.1],
    "tune.space.qloguniform": [1.0e-4, 0.1, 1.0e-4],
    "tune.space.randint": [16, 257],
    "tune.space.qrandint": [32, 256, 32],
    "tune.space.lograndint": [16, 1025],
    "tune.space.randn": [0.0, 10.0],
    "tune.space.qrandn": [0.0, 10.0, 0.5],
    "tune.space.choice": ["relu", "gelu", "silu"],
    "tune.space.grid": [32, 64],
    "scheduler.max_t": 40,
    "scheduler.asha.grace_period": 2,
    "scheduler.median_stopping.grace_period": 3,
    "scheduler.asha.reduction_factor": 3,
    "scheduler.hyperband.reduction_factor": 2,
    "scheduler.brackets": 2,
    "scheduler.stop_last_trials": False,
    "scheduler.min_samples_required": 5,
    "scheduler.hard_stop": False,
    "scheduler.perturbation_interval": 4,
    "scheduler.quantile_fraction": 0.5,
    "scheduler.synch": True,
    "scheduler.mutations": {
        "training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]},
        "dataset.batch_size": [32, 64, 128],
    },
    "scheduler.resample_probability": 0.5,
    "scheduler.perturbation_factors": [1.5, 0.5],
    "scheduler.burn_in_period": 2,
    "scheduler.bounds": {"training.optimizer.lr": [1.0e-4, 0.1]},
    "stop.when": ["val_accuracy >= 0.99", "val_loss <= 0.01"],
    "stop.all_when": ["val_accuracy >= 0.995"],
    "stop.max_trial_time_s": 600,
    "stop.time_budget_s": 3600,
    "stop.plateau": {"metric": "val_loss", "std": 0.001},
    "stop.plateau.metric": "val_loss",
    "stop.plateau.std": 0.001,
    "stop.plateau.num_results": 6,
    "stop.plateau.grace_period": 8,
    "stop.plateau.metric_threshold": 0.9,
    "run.storage_path": "s3://bucket/runs",
    "run.name": "digits-asha-2",
    "run.checkpoints_to_keep": 3,
    "run.checkpoint_score": {"metric": "val_loss", "mode": "min"},
    "run.checkpoint_score.metric": "val_loss",
    "run.checkpoint_score.mode": "min",
    "run.max_failures": 2,
    "run.callbacks": ["csv", "tensorboard"],
    "run.resume": "errored_only",
    "cluster.address": "ray://head:10001",
    "cluster.runtime_env": {"env_vars": {"OMP_NUM_THREADS": "1"}},
    "cluster.working_dir": "..",
    "cluster.excludes": ["data/raw/", "*.ckpt"],
    "cluster.include": [".env"],
    "cluster.init_timeout_s": 120,
    "cluster.runtime_env.env_vars": {"OMP_NUM_THREADS": "1"},
    "cluster.runtime_env.pip": ["pandas>=2"],
    "cluster.runtime_env.uv": ["pandas>=2"],
    "cluster.runtime_env.conda": "environment.yml",
    "cluster.runtime_env.py_modules": ["mylib"],
    "cluster.runtime_env.image_uri": "rayproject/ray:2.60.0-py311",
    "cluster.runtime_env.config": {"setup_timeout_seconds": 1200},
    "cluster.runtime_env.pip.packages": ["pandas>=2"],
    "cluster.runtime_env.pip.pip_check": True,
    "cluster.runtime_env.pip.pip_version": "==24.0",
    "cluster.runtime_env.config.setup_timeout_seconds": 1200,
    "cluster.runtime_env.config.eager_install": False,
}

# The search-space path an example of each distribution samples (a spec writes it as the key in tune.space).
PLACEHOLDERS: dict[str, str] = {
    "Uniform": "model.dropout",
    "QUniform": "model.dropout",
    "LogUniform": "training.optimizer.lr",
    "QLogUniform": "training.optimizer.lr",
    "RandInt": "model.hidden_sizes.0",
    "QRandInt": "dataset.batch_size",
    "LogRandInt": "model.hidden_sizes.0",
    "RandN": "objective.params.height",
    "QRandN": "objective.params.height",
    "Choice": "model.activation",
    "Grid": "dataset.batch_size",
}


def _lookup(table: dict, field):
    for key in (field.anchor, field.generic_path, field.key):
        if key in table:
            return table[key]
    return None


def meaning(field) -> str | None:
    """What the field is in Ray, torch or Keras terms; None when terms.py does not say."""
    return _lookup(MEANING, field) or None


def example(field):
    """The value an example shows: EXAMPLES', a `type`'s own value, or a default worth showing; else NO_EXAMPLE."""
    for key in (field.anchor, field.generic_path, field.key):
        if key in EXAMPLES:
            return EXAMPLES[key]
    if "const" in field.schema:
        return field.schema["const"]
    default = field.schema.get("default")
    if default is not None and default not in ([], {}) and not isinstance(default, dict):
        return default
    return NO_EXAMPLE


def placeholder(field, token: str) -> str:
    """The key an example writes where the path says [PATH] or [NAME]."""
    block = field.block
    while block is not None:
        if block.definition in PLACEHOLDERS:
            return PLACEHOLDERS[block.definition]
        block = block.parent.block if block.parent is not None else None
    return "training.optimizer.lr" if token == "[PATH]" else "NAME"
