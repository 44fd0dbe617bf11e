# The layer_norm forward and backward of bench/layer_norm.tsl in PyTorch eager: same
# seed, shapes and loss; prints ms per step and the same checksum.
import torch
import torch.nn.functional as F

import torch_common


def main():
    args = torch_common.parse_args("layer_norm forward and backward in PyTorch")
    blocks, block_steps, warmup = (1, 3, 2) if args.quick else (7, 50, 5)
    torch.manual_seed(0)
    x = (torch.randn(256, 1024) * 3.0 + 1.0).requires_grad_()
    w = (torch.rand(1024) + 0.5).requires_grad_()
    b = torch.randn(1024).requires_grad_()
    c = torch.randn(256, 1024)

    def step():
        for p in (x, w, b):
            p.grad = None
        (F.layer_norm(x, [1024], w, b) * c).sum().backward()

    ms = torch_common.best_block_ms(step, blocks, block_steps, warmup, budget_s=None)
    print(f"ms_per_step {ms:.4f}")
    print(f"checksum {x.grad.abs().sum().item():.4f} {w.grad.sum().item():.4f} "
          f"{b.grad.sum().item():.4f}")
    torch_common.print_threads()


if __name__ == "__main__":
    main()
