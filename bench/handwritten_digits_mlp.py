"""The digits MLP of specs/digits_mlp.yaml, written by hand the way Ray Train users write it today.

The yardstick of bench/run_overhead.py: the same experiment as `specc run specs/digits_mlp.yaml`, in the
style of the seed's Ray Train example (a DataLoader over a dataset, `prepare_data_loader`,
`prepare_model`, `sampler.set_epoch`, `ray.train.report` with a Checkpoint every epoch, TorchTrainer,
ScalingConfig, RunConfig). Same data and split (sklearn digits / 16, a 20% validation split from a
permutation seeded 0), model (Flatten, Linear 64->64, ReLU, Linear 64->10), optimizer (SGD lr 0.1,
momentum 0.9), batch 64 per worker, 5 epochs (--epochs), 2 workers (gloo, Ray's default on CPU), a checkpoint every
epoch, 2 kept by val_accuracy. It is left as a Ray user writes it: a bare `ray.init()` (which starts the dashboard,
as specc's local Ray does too) and Ray Train's default controller poll, 2 s, which each of its epochs waits for.
One choice keeps the comparison like-for-like rather than typical: every worker evaluates the whole validation
set (its loader gets no distributed sampler), so the val_accuracy printed is over the same 359 examples as
specc's, not over rank 0's half.

    .venv/bin/python bench/handwritten_digits_mlp.py --storage-path /tmp/runs
"""

import argparse
import os
import tempfile

import numpy as np
import ray
import ray.train
import ray.train.torch
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset


def load_datasets():
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    order = np.random.default_rng(0).permutation(len(x))
    n_val = int(len(x) * 0.2)
    val, train = order[:n_val], order[n_val:]
    train_set = TensorDataset(torch.from_numpy(x[train]), torch.from_numpy(y[train]))
    val_set = TensorDataset(torch.from_numpy(x[val]), torch.from_numpy(y[val]))
    return train_set, val_set


def train_func(model, optimizer, criterion, train_loader):
    model.train()
    for data, target in train_loader:
        output = model(data)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_func(model, criterion, data_loader):
    model.eval()
    correct, total, loss = 0, 0, 0.0
    with torch.no_grad():
        for data, target in data_loader:
            outputs = model(data)
            loss += criterion(outputs, target).item() * target.size(0)
            _, predicted = torch.max(outputs.data, 1)
            total += target.size(0)
            correct += (predicted == target).sum().item()
    return loss / total, correct / total


def train_loop(config):
    torch.manual_seed(0)
    train_set, val_set = load_datasets()
    train_loader = DataLoader(train_set, batch_size=config["batch_size"], shuffle=True)
    val_loader = DataLoader(val_set, batch_size=config["batch_size"])

    # 1. Distribute the data: a DistributedSampler deals each worker its share of the training set.
    train_loader = ray.train.torch.prepare_data_loader(train_loader)
    val_loader = ray.train.torch.prepare_data_loader(val_loader, add_dist_sampler=False)

    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    # 2. Distribute the model (DistributedDataParallel).
    model = ray.train.torch.prepare_model(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"])

    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            train_loader.sampler.set_epoch(epoch)
        train_func(model, optimizer, criterion, train_loader)
        val_loss, acc = test_func(model, criterion, val_loader)

        # 3. Report metrics and save a checkpoint every epoch.
        metrics = {"epoch": epoch, "val_loss": val_loss, "val_accuracy": acc}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            checkpoint = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save(model.module.state_dict(), os.path.join(temp_checkpoint_dir, "model.pt"))
                checkpoint = ray.train.Checkpoint.from_directory(temp_checkpoint_dir)
            ray.train.report(metrics, checkpoint=checkpoint)
        if ray.train.get_context().get_world_rank() == 0:
            print(metrics)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage-path", default=os.path.abspath("./runs"))
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    ray.init()
    # 4. How many workers, and what each gets.
    scaling_config = ray.train.ScalingConfig(num_workers=2, use_gpu=False, resources_per_worker={"CPU": 1})
    # 5. Train data-parallel with a TorchTrainer.
    trainer = ray.train.torch.TorchTrainer(
        train_loop_per_worker=train_loop,
        train_loop_config={"batch_size": 64, "lr": 0.1, "momentum": 0.9, "epochs": args.epochs},
        scaling_config=scaling_config,
        run_config=ray.train.RunConfig(
            name="digits-mlp-handwritten",
            storage_path=os.path.abspath(args.storage_path),
            checkpoint_config=ray.train.CheckpointConfig(
                num_to_keep=2, checkpoint_score_attribute="val_accuracy", checkpoint_score_order="max"
            ),
        ),
    )
    result = trainer.fit()
    print(f"final metrics: {result.metrics}")
    print(f"checkpoint: {result.checkpoint.path if result.checkpoint else None}")
    ray.shutdown()


if __name__ == "__main__":
    main()
