"""The digits MLP of bench/tf_vs_torch.py, written by hand as a Ray Train TensorFlow script the way users write it.

The yardstick of bench/tf_vs_torch.py for `specc run` with `framework: tensorflow`: the style of the seed's
TensorflowTrainer example and Ray's TensorFlow guide (MultiWorkerMirroredStrategy created in train_func, the
model built and compiled inside its scope, the per-worker batch scaled to the global batch, tf.data from the
arrays with TensorFlow's own auto-sharding, Ray's `ReportCheckpointCallback` reporting and checkpointing every
epoch, TensorflowTrainer, ScalingConfig, RunConfig) and RAY-2.60's working set-up for Keras (tf-keras, with
`TF_USE_LEGACY_KERAS=1` for the workers). Same data and split (sklearn digits / 16, a 20% validation split
from a permutation seeded 0), model (Dense 64 relu, Dense 10 logits), optimizer (SGD lr 0.1, momentum 0.9),
batch 64 per worker, 5 epochs, 2 workers with 1 CPU each, a checkpoint every epoch, 2 kept by val_accuracy,
`ray.init(include_dashboard=False)` as the compiled script does.

    .venv/bin/python bench/handwritten_tf_digits_mlp.py --storage-path /tmp/runs
"""

import argparse
import os

import numpy as np
import ray
import ray.train
from ray.train.tensorflow import TensorflowTrainer
from ray.train.tensorflow.keras import ReportCheckpointCallback
from sklearn.datasets import load_digits


def load_arrays():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    order = np.random.default_rng(0).permutation(len(x))
    n_val = int(len(x) * 0.2)
    val, train = order[:n_val], order[n_val:]
    return (x[train], y[train]), (x[val], y[val])


def train_func(config):
    import tensorflow as tf

    # 1. The strategy first: Ray Train has set TF_CONFIG for every worker.
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    tf.keras.utils.set_random_seed(0)

    # 2. The global batch: each worker's batch times the number of workers; TensorFlow shards the data.
    global_batch = config["batch_size"] * strategy.num_replicas_in_sync
    (x_train, y_train), (x_val, y_val) = load_arrays()
    train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train), seed=0).batch(global_batch)
    val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(global_batch)

    # 3. Build and compile the model inside the strategy's scope.
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.Input(shape=(64,)),
                tf.keras.layers.Dense(64, activation="relu"),
                tf.keras.layers.Dense(10),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.SGD(learning_rate=config["lr"], momentum=config["momentum"]),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )

    # 4. Report metrics and save a checkpoint every epoch.
    model.fit(
        train,
        validation_data=val,
        epochs=config["epochs"],
        callbacks=[ReportCheckpointCallback(checkpoint_on="epoch_end", report_metrics_on="epoch_end")],
        verbose=0,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage-path", default=os.path.abspath("./runs"))
    args = parser.parse_args()

    ray.init(include_dashboard=False)
    # 5. How many workers, and what each gets.
    scaling_config = ray.train.ScalingConfig(num_workers=2, use_gpu=False, resources_per_worker={"CPU": 1})
    # 6. Train data-parallel with a TensorflowTrainer; Keras 2 (tf-keras) in every worker.
    trainer = TensorflowTrainer(
        train_loop_per_worker=train_func,
        train_loop_config={"batch_size": 64, "lr": 0.1, "momentum": 0.9, "epochs": 5},
        scaling_config=scaling_config,
        run_config=ray.train.RunConfig(
            name="digits-mlp-tf-handwritten",
            storage_path=os.path.abspath(args.storage_path),
            checkpoint_config=ray.train.CheckpointConfig(
                num_to_keep=2, checkpoint_score_attribute="val_accuracy", checkpoint_score_order="max"
            ),
            worker_runtime_env={"env_vars": {"TF_USE_LEGACY_KERAS": "1"}},
        ),
    )
    result = trainer.fit()
    print(f"final metrics: {result.metrics}")
    print(f"checkpoint: {result.checkpoint.path if result.checkpoint else None}")
    ray.shutdown()


if __name__ == "__main__":
    main()
