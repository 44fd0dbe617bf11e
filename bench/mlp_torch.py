# The MLP training step of bench/mlp.tsl in PyTorch: eager (autograd, in-place SGD
# under no_grad, as a PyTorch user writes it) or with the loss under torch.jit.script
# (TorchScript's differentiable graph, same backward and update). Same seed, data,
# initial weights and step count as the TSL side; prints ms per step and the loss.
import torch
import torch.nn.functional as F

import torch_common


def loss_fn(w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor,
            x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    h = F.relu(F.linear(x, w1, b1))
    return F.cross_entropy(F.linear(h, w2, b2), t)


def main():
    args = torch_common.parse_args("MLP training step in PyTorch")
    blocks, block_steps, warmup = (1, 3, 2) if args.quick else (5, 20, 5)
    lr = 0.1
    torch.manual_seed(0)
    x = torch.randn(64, 784)
    t = torch.randint(0, 10, (64,))
    params = [torch.randn(256, 784) * 0.05, torch.zeros(256),
              torch.randn(10, 256) * 0.05, torch.zeros(10)]
    for p in params:
        p.requires_grad_()
    fn = torch.jit.script(loss_fn) if args.mode == "torchscript" else loss_fn
    last = []

    def step():
        value = fn(*params, x, t)
        value.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
                p.grad = None
        last[:] = [value]

    ms = torch_common.best_block_ms(step, blocks, block_steps, warmup, budget_s=None)
    print(f"ms_per_step {ms:.4f}")
    print(f"steps {warmup + blocks * block_steps}")
    print(f"loss {last[0].item():.6f}")
    torch_common.print_threads()


if __name__ == "__main__":
    main()
