"""Make the synthetic table of examples/release: people.csv (20 000 rows) and counties.csv.

Each row is one income record of a person (person_id); a person has 1 to 6 records, in one
county, with an age group, a sex and an income (heavy-tailed, some above the clamping bound of
the spec). Everything is drawn from a fixed seed, so the files are the same on every run.
The key file counties.csv is public knowledge (the list of counties), not read from the data:
it lists two counties that have no record at all, released as noisy zeros.

    python examples/release/make_data.py [--rows 20000] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import os

import numpy as np

COUNTIES = [f"C{i:02d}" for i in range(1, 41)]  # C39 and C40 get no records
AGE_GROUPS = ["18-34", "35-54", "55-74", "75+"]


def make(rows: int, out: str, seed: int = 2026) -> str:
    rng = np.random.default_rng(seed)
    path = os.path.join(out, "people.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["person_id", "county", "age_group", "sex", "income"])
        pid, n = 0, 0
        while n < rows:
            pid += 1
            k = min(int(rng.integers(1, 7)), rows - n)  # 1–6 records per person
            county = COUNTIES[int(rng.integers(0, 38))]
            age = AGE_GROUPS[int(rng.choice(4, p=[0.3, 0.35, 0.25, 0.1]))]
            sex = "F" if rng.random() < 0.5 else "M"
            for _ in range(k):
                w.writerow([pid, county, age, sex, int(rng.lognormal(10.6, 0.8))])
            n += k
    with open(os.path.join(out, "counties.csv"), "w", newline="") as f:
        f.write("county\n" + "".join(f"{c}\n" for c in COUNTIES))
    return path


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    print("wrote", make(a.rows, a.out))
