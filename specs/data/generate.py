"""Writes the example data files of specs/ that specc's own examples read (committed; run again to recreate them
byte for byte):

- customers.csv: 800 customers of a made-up subscription service, to predict `churned` (0/1) from numbers
  (age, tenure_months, monthly_fee, support_calls), categories (plan, region) and missing values (age 6%,
  monthly_fee 4%, region 5%): specs/customers_csv.yaml.
- digits_png/<class>/<index>.png: 30 of scikit-learn's 8x8 digits per class as grayscale PNGs, a folder sorted
  into one directory per class: specs/digits_image_folder.yaml.

    .venv/bin/python specs/data/generate.py
"""

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.datasets import load_digits

HERE = Path(__file__).resolve().parent


def customers(n=800, seed=20261125) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    plan = rng.choice(["basic", "plus", "pro"], n, p=[0.5, 0.3, 0.2])
    region = rng.choice(["north", "south", "east", "west"], n)
    age = rng.integers(18, 80, n)
    tenure = rng.integers(1, 72, n)
    fee = np.round(np.select([plan == "basic", plan == "plus"], [20, 45], 80) + rng.normal(0, 5, n), 2)
    calls = rng.poisson(1.5, n)
    score = -0.04 * tenure + 0.5 * calls + 0.8 * (plan == "basic") - 0.6 * (plan == "pro")
    score += 0.5 * (region == "south") - 0.01 * (age - 45)
    churned = (score + rng.logistic(0, 0.6, n) > 0).astype(int)
    frame = pd.DataFrame(
        {"age": age, "tenure_months": tenure, "monthly_fee": fee, "support_calls": calls, "plan": plan}
        | {"region": region, "churned": churned}
    )
    frame["age"] = frame["age"].astype("Int64").mask(rng.random(n) < 0.06)
    frame["monthly_fee"] = frame["monthly_fee"].mask(rng.random(n) < 0.04)
    frame["region"] = frame["region"].mask(rng.random(n) < 0.05)
    return frame


def digit_images(root: Path, per_class=30) -> None:
    images, labels = load_digits(return_X_y=True)
    kept: dict[int, int] = {}
    for index, (image, label) in enumerate(zip(images, labels, strict=True)):
        if kept.get(label, 0) == per_class:
            continue
        kept[label] = kept.get(label, 0) + 1
        (root / str(label)).mkdir(parents=True, exist_ok=True)
        pixels = (image.reshape(8, 8) * 16).clip(0, 255).astype(np.uint8)
        Image.fromarray(pixels, mode="L").save(root / str(label) / f"{index:04d}.png")


if __name__ == "__main__":
    customers().to_csv(HERE / "customers.csv", index=False)
    digit_images(HERE / "digits_png")
