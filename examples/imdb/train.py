#!/usr/bin/env python3
"""A distributed text classifier for the IMDB-like reviews of make_data.py.

PyTorch DistributedDataParallel on CPU with the gloo backend.  The process group comes from
the environment (init_method env://): MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE, which weir
sets for a pytorch-framework job.  The model is a bag of word embeddings and a linear layer.
Each rank trains on its shard, then the ranks evaluate their shards of the test set and sum
the counts, so every rank prints the same line:

    final accuracy: 0.XXXX

    python train.py --data_dir DIR [--epochs N (5)] [--output_dir DIR]
"""

import argparse
import csv
import os
import re
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

WORD = re.compile(r"[a-z']+")


def tokens(text):
    return WORD.findall(text.lower())


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [(int(r["label"]), r["text"]) for r in rows]


class Reviews(Dataset):
    def __init__(self, rows, vocab):
        self.items = [(torch.tensor([vocab.get(w, 0) for w in tokens(t)] or [0]), label)
                      for label, t in rows]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    ids = torch.cat([x for x, _ in batch])
    offsets = torch.tensor([0] + [len(x) for x, _ in batch[:-1]]).cumsum(0)
    labels = torch.tensor([y for _, y in batch], dtype=torch.float32)
    return ids, offsets, labels


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.out = nn.Linear(dim, 1)

    def forward(self, ids, offsets):
        return self.out(self.embed(ids, offsets)).squeeze(1)


def log(rank, msg):
    print("[rank %d] %s" % (rank, msg), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data_dir", default="data")
    ap.add_argument("--output_dir", default=None)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--dim", type=int, default=32)
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts rank 0's)
    # gloo picks its interface from the host name, which may not resolve here: on one machine,
    # the loopback interface is the right one.
    if os.environ.get("MASTER_ADDR", "").startswith("127.") and \
            "GLOO_SOCKET_IFNAME" not in os.environ:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    log(rank, "joined a group of %d (master %s:%s)" % (world, os.environ.get("MASTER_ADDR"),
                                                       os.environ.get("MASTER_PORT")))

    train_rows = read_csv(os.path.join(args.data_dir, "train.csv"))
    test_rows = read_csv(os.path.join(args.data_dir, "test.csv"))
    # every rank builds the same vocabulary from the same file: no need to ship it
    words = sorted({w for _, t in train_rows for w in tokens(t)})
    vocab = {w: i + 1 for i, w in enumerate(words)}  # 0: unknown
    train, test = Reviews(train_rows, vocab), Reviews(test_rows, vocab)

    model = DistributedDataParallel(BagOfEmbeddings(len(vocab) + 1, args.dim))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr * world, momentum=0.9)
    loss_fn = nn.BCEWithLogitsLoss()
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler, collate_fn=collate)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        start, total, n = time.monotonic(), 0.0, 0
        for ids, offsets, labels in loader:
            opt.zero_grad()
            loss = loss_fn(model(ids, offsets), labels)
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        log(rank, "epoch %d: loss %.4f (%d batches, %.1fs)"
            % (epoch + 1, total / max(n, 1), n, time.monotonic() - start))

    # evaluation: each rank its own slice of the test set, then the counts are summed
    model.eval()
    mine = torch.utils.data.Subset(test, range(rank, len(test), world))
    correct = torch.zeros(2)
    with torch.no_grad():
        for ids, offsets, labels in DataLoader(mine, batch_size=256, collate_fn=collate):
            pred = (model(ids, offsets) > 0).float()
            correct[0] += (pred == labels).sum()
            correct[1] += len(labels)
    dist.all_reduce(correct, op=dist.ReduceOp.SUM)
    accuracy = (correct[0] / correct[1]).item()
    print("final accuracy: %.4f" % accuracy, flush=True)

    if args.output_dir and rank == 0 and "://" not in args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.output_dir, "model.pt"))
        log(rank, "model saved to %s" % args.output_dir)
    dist.destroy_process_group()
    return 0 if accuracy > 0.6 else 1


if __name__ == "__main__":
    sys.exit(main())
