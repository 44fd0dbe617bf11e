# PyTorch's side of bench/digits.tsl: the same two models (an MLP and a small CNN on
# scikit-learn's digits), torch.nn layers with their default initialization and
# torch.optim.Adam, timed per training epoch the same way (best of 3 after a warm-up).
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def load():
    import gzip
    rows = [list(map(float, line.split(","))) for line in gzip.open(DATA, "rt") if line.strip()]
    t = torch.tensor(rows, dtype=torch.float32)
    return t[:, :64].contiguous(), t[:, 64].to(torch.int64)


def main():
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else torch.get_num_threads())
    torch.manual_seed(0)
    x, y = load()
    order = torch.randperm(x.size(0))
    n_test = (x.size(0) * 2 + 9) // 10
    train = order[n_test:]
    x_train, y_train = x[train], y[train]
    mean, std = x_train.mean(0), x_train.std(0, unbiased=False)
    std = torch.where(std == 0, torch.ones_like(std), std)
    models = {
        "mlp": (nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)),
                (x_train - mean) / std, 64, 2e-3),
        "cnn": (nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                              nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(32 * 4 * 4, 10)),
                (x_train / 16.0).reshape(-1, 1, 8, 8), 32, 3e-3),
    }
    for name, (model, inputs, batch, lr) in models.items():
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        best, last = float("inf"), 0.0
        for epoch in range(4):
            start = time.perf_counter()
            for idx in torch.randperm(inputs.size(0)).split(batch):
                loss = F.cross_entropy(model(inputs[idx]), y_train[idx])
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                last = loss.item()
            ms = (time.perf_counter() - start) * 1000.0
            if epoch > 0:
                best = min(best, ms)
        print(f"{name}_epoch_ms {best}")
        print(f"{name}_loss {last}")


if __name__ == "__main__":
    main()
