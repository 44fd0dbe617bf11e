# The per-sample gradients of bench/vmap_grad.tsl with functorch's vmap(grad(loss)):
# same seed, data and timing rule; prints ms per call and the same checksum.
import torch
import torch.nn.functional as F
from functorch import grad, vmap

import torch_common


def loss(w1, b1, w2, b2, x, y):
    h = torch.relu(x @ w1 + b1)
    logits = h @ w2 + b2
    return F.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))


def main():
    args = torch_common.parse_args("per-sample gradients with functorch's vmap(grad)")
    blocks, block_runs, warmup = (1, 2, 1) if args.quick else (5, 20, 5)
    torch.manual_seed(0)
    w1 = torch.randn(32, 64) * 0.2
    b1 = torch.zeros(64)
    w2 = torch.randn(64, 10) * 0.2
    b2 = torch.zeros(10)
    xs = torch.randn(64, 32)
    ys = torch.randint(0, 10, [64])
    per_sample = vmap(grad(loss, argnums=(0, 1, 2, 3)), in_dims=(None, None, None, None, 0, 0))
    last = []

    def run():
        last[:] = per_sample(w1, b1, w2, b2, xs, ys)

    ms = torch_common.best_block_ms(run, blocks, block_runs, warmup)
    print(f"ms_per_call {ms:.4f}")
    print(f"grad_norm {last[0].norm().item() + last[2].norm().item():.6f}")
    torch_common.print_threads()


if __name__ == "__main__":
    main()
