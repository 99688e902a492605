"""Seed 002's program as the platform team's algorithm people write it for Ray: one table put
in the object store once, two scikit-learn models trained from it side by side, each call with
the CPUs and memory it asks for, the fitted models stored and compared.  Nothing here names
weir: `weir run` (or `python3 -m weir.run`) makes `import ray` weir's, and the same file runs
on Ray.

    weir run examples/python/ray_two_models.py [--rows N] [--out DIR]

`ray.init()` joins the server found as the `weir` command finds it, or starts a private one
for the program when none answers (docs/ray.md).
"""

import argparse
import os
import pickle
import random
import time

import ray


def load_table(rows, features=20, seed=7):
    """The table the article reads with `select features, label from table1`: rows of
    (features, label), two classes that overlap a little."""
    rnd = random.Random(seed)
    centre = [[rnd.uniform(-1, 1) for _ in range(features)] for _ in range(2)]
    X, y = [], []
    for i in range(rows):
        label = i % 2
        X.append([c + rnd.gauss(0, 1.2) for c in centre[label]])
        y.append(label)
    return {"X": X, "y": y}


@ray.remote(num_cpus=1, memory=1024 * 1024 * 1024)
def train_bayes(table, test_share=0.25):
    from sklearn.naive_bayes import GaussianNB

    return fit(GaussianNB(), table, test_share)


@ray.remote(num_cpus=2, memory=2 * 1024 * 1024 * 1024)
def train_forest(table, test_share=0.25):
    from sklearn.ensemble import RandomForestClassifier

    return fit(RandomForestClassifier(n_estimators=50, random_state=0), table, test_share)


def fit(model, table, test_share):
    """The model fitted on the first rows and scored on the rest: (model, accuracy, pid)."""
    cut = int(len(table["X"]) * (1 - test_share))
    model.fit(table["X"][:cut], table["y"][:cut])
    return model, float(model.score(table["X"][cut:], table["y"][cut:])), os.getpid()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--out", default="models", help="where the fitted models are stored")
    a = ap.parse_args(argv)

    ray.init()
    table = ray.put(load_table(a.rows))  # once; both trainings read it
    t0 = time.monotonic()
    refs = {"bayes": train_bayes.remote(table), "forest": train_forest.remote(table)}
    results = dict(zip(refs, ray.get(list(refs.values()))))
    took = time.monotonic() - t0

    os.makedirs(a.out, exist_ok=True)
    for name, (model, accuracy, pid) in results.items():
        with open(os.path.join(a.out, name + ".pkl"), "wb") as f:
            pickle.dump(model, f)
        print("%-6s accuracy %.3f (trained in process %d)" % (name, accuracy, pid))
    best = max(results, key=lambda n: results[n][1])
    print("best: %s; both trained in %.1f s; models in %s" % (best, took, a.out))
    ray.shutdown()


if __name__ == "__main__":
    main()
