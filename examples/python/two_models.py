"""Seed 002's pipeline as one Python program: prepare a data set, train two scikit-learn
models side by side on weir (each call with its own CPUs and memory), collect both fitted
models and compare them.

    PYTHONPATH=python python3 examples/python/two_models.py [--rows N] [--queue Q]

The data set is stored once with weir.put and read by both trainings (weir unpacks it once
per node).  With --queue, both trainings go where the server's routing sends that queue
(e.g. Slurm) and nothing else changes.
"""

import argparse
import random
import time

import weir


def prepare(rows=2000, features=20, seed=7):
    """The data set: rows of (features, label) with two classes that overlap a little, as
    the seed's `select features, label from table1` would give."""
    rnd = random.Random(seed)
    centre = [[rnd.uniform(-1, 1) for _ in range(features)] for _ in range(2)]
    data = []
    for i in range(rows):
        label = i % 2
        data.append({"features": [c + rnd.gauss(0, 1.2) for c in centre[label]],
                     "label": label})
    return data


def fit(kind, data, test_share=0.25):
    """Fits one model on the first rows and scores it on the rest: (model, accuracy)."""
    from sklearn.naive_bayes import GaussianNB
    from sklearn.svm import SVC

    X = [row["features"] for row in data]
    y = [row["label"] for row in data]
    cut = int(len(X) * (1 - test_share))
    model = {"BAYES": GaussianNB, "SVC": SVC}[kind]()
    model.fit(X[:cut], y[:cut])
    return model, float(model.score(X[cut:], y[cut:]))


# each training has its own resources: the SVC asks more
train_bayes = weir.remote(cpus=1, memory="1g", name="train_bayes")(fit)
train_svc = weir.remote(cpus=2, memory="2g", name="train_svc")(fit)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--queue", default=None, help="a queue of the server (local or Slurm)")
    a = ap.parse_args(argv)

    data = weir.put(prepare(a.rows))  # written once, read by both trainings
    t0 = time.monotonic()
    bayes, svc = train_bayes, train_svc
    if a.queue:
        bayes, svc = bayes.options(queue=a.queue), svc.options(queue=a.queue)
    futures = [bayes.remote("BAYES", data), svc.remote("SVC", data)]
    (nb, nb_acc), (sv, sv_acc) = weir.get(futures)
    print("trained both in %.1fs (jobs %s)" % (time.monotonic() - t0,
                                               ", ".join(str(f.job_id) for f in futures)))
    print("%-12s accuracy %.4f" % (type(nb).__name__, nb_acc))
    print("%-12s accuracy %.4f" % (type(sv).__name__, sv_acc))
    best = "GaussianNB" if nb_acc >= sv_acc else "SVC"
    print("best: %s" % best)
    return {"GaussianNB": (nb, nb_acc), "SVC": (sv, sv_acc)}


if __name__ == "__main__":
    main()
