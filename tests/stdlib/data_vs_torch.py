# The PyTorch twin of data_vs_torch.tsl: the same steps with torch.randperm and slicing,
# and the data sets read with Python's csv and gzip modules.
import csv
import gzip
import math

import torch
import torch.nn.functional as F

torch.manual_seed(3)
for idx in torch.randperm(10).split(4):
    print(idx)
for idx in torch.arange(10).split(4)[:2]:
    print(idx)
print(0, 1, 1)
x = torch.arange(40).reshape(20, 2).to(torch.float32)
y = torch.arange(20)


def split(x, y, fraction, shuffle):
    n_test = math.ceil(x.size(0) * fraction)
    order = torch.randperm(x.size(0)) if shuffle else torch.arange(x.size(0))
    test, train = order[:n_test], order[n_test:]
    return x[train], x[test], y[train], y[test]


a, b, c, d = split(x, y, 0.25, True)
print(a.shape, b.shape, c, d)
a, b, c, d = split(x, y, 0.33, False)
print(b.shape, d)
m = torch.randn(50, 4) * torch.tensor([1.0, 10.0, 0.1, 0.0]) + 3.0
mean, std = m.mean(0), m.std(0, unbiased=False)
std = torch.where(std == 0, torch.ones_like(std), std)
print(mean, std)
z = (m - mean) / std
print(z.mean(0).abs().max().item() < 1e-5, z.std(0, unbiased=False))
print(F.one_hot(torch.tensor([2, 0, 1]), 4).float())
print(F.one_hot(torch.tensor([1]), 2).double())
logits = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
print((logits.argmax(1) == torch.tensor([1, 0, 0, 0])).float().mean().item())
DATA = "/usr/lib/python3/dist-packages/sklearn/datasets/data/"
for name, file, header in [("digits", "digits.csv.gz", False), ("iris", "iris.csv", True),
                           ("wine", "wine_data.csv", True),
                           ("breast_cancer", "breast_cancer.csv", True)]:
    opener = gzip.open if file.endswith(".gz") else open
    with opener(DATA + file, "rt") as f:
        rows = list(csv.reader(f))[1 if header else 0:]
    t = torch.tensor([[float(v) for v in r] for r in rows if r], dtype=torch.float32)
    feats, labels = t[:, :-1], t[:, -1].to(torch.int64)
    print(name, feats.shape, labels.shape, feats.sum().item(), labels.sum().item(),
          int(labels.max().item()) + 1)
