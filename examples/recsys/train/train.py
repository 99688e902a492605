"""The recommender's training step, run by each worker of a 2-worker weir job (torch.distributed's
variables: RANK, WORLD_SIZE): the model is each item's popularity, the seconds the day's viewers
watched it, and each rank scores its share of the items (item_id % WORLD_SIZE == RANK).

    python3 train.py FEATURES_CSV OUT_PREFIX DS

reads the features (a header, then user_id,item_id,views,seconds) and writes
OUT_PREFIX.RANK.csv: ds,item_id,score, highest first.  Standard library only; seconds.
"""

import collections
import csv
import os
import sys


def main(argv):
    features, prefix, ds = argv[1:4]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    score = collections.Counter()
    with open(features, newline="") as f:
        for row in csv.DictReader(f):
            item = int(row["item_id"])
            if item % world == rank:
                score[item] += int(row["seconds"])
    path = "%s.%d.csv" % (prefix, rank)
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ds", "item_id", "score"])
        for item, s in sorted(score.items(), key=lambda kv: (-kv[1], kv[0])):
            w.writerow([ds, item, s])
    os.replace(path + ".tmp", path)
    print("rank %d of %d: %d items scored into %s" % (rank, world, len(score), path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
