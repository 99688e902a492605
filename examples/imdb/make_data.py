#!/usr/bin/env python3
"""Generates an IMDB-like movie review dataset: no downloads, same output for the same seed.

Each review is a few sentences built from positive or negative phrases mixed with neutral
filler, so that a bag-of-words model can learn it but not perfectly (some reviews carry a
phrase of the other side, a few labels are flipped).  Writes train.csv and test.csv
(columns: label,text; label 1 is positive) into the output directory.

    python3 make_data.py DIR [--train N] [--test N] [--seed S]
"""

import argparse
import csv
import os
import random

POSITIVE = ["a wonderful film", "brilliant acting", "i loved every minute", "a true masterpiece",
            "the cast is superb", "beautifully shot", "moving and funny", "an absolute delight",
            "great storytelling", "highly recommended", "the score is gorgeous",
            "a joy to watch", "clever and touching", "the best film this year",
            "strong performances all round", "i would watch it again"]
NEGATIVE = ["a terrible film", "wooden acting", "i was bored throughout", "a complete mess",
            "the cast looks lost", "badly edited", "dull and predictable", "an utter waste",
            "the plot makes no sense", "avoid this one", "the dialogue is awful",
            "painful to sit through", "lazy and cynical", "the worst film this year",
            "weak performances all round", "i walked out early"]
NEUTRAL = ["the movie runs two hours", "it was released in the spring", "i saw it on a tuesday",
           "the director also wrote it", "it is based on a novel", "the story is set in a city",
           "there is a long car chase", "the lead plays a teacher", "my friend picked it",
           "it has a sequel", "the trailer shows most of it", "the ending is in the rain"]


def review(rng, positive):
    own, other = (POSITIVE, NEGATIVE) if positive else (NEGATIVE, POSITIVE)
    parts = rng.sample(own, rng.randint(1, 3)) + rng.sample(NEUTRAL, rng.randint(1, 3))
    if rng.random() < 0.3:
        parts.append(rng.choice(other))  # mixed feelings
    rng.shuffle(parts)
    return ". ".join(parts) + "."


def write(path, n, rng):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["label", "text"])
        for i in range(n):
            positive = i % 2 == 0
            label = int(positive)
            if rng.random() < 0.05:
                label = 1 - label  # reviewers are not always consistent
            w.writerow([label, review(rng, positive)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--train", type=int, default=4000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    rng = random.Random(args.seed)
    write(os.path.join(args.out_dir, "train.csv"), args.train, rng)
    write(os.path.join(args.out_dir, "test.csv"), args.test, rng)
    print("wrote %d training and %d test reviews to %s" % (args.train, args.test, args.out_dir))


if __name__ == "__main__":
    main()
