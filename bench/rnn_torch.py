# The tanh RNN of bench/rnn.tsl in PyTorch: the loss eager or under torch.jit.script,
# its gradients for the three weights by torch.autograd.grad. Same seed and data as
# the TSL side; prints ms per forward+backward and a checksum.
import torch

import torch_common


def rnn_loss(wx: torch.Tensor, wh: torch.Tensor, b: torch.Tensor,
             xs: torch.Tensor) -> torch.Tensor:
    h = torch.zeros(xs.shape[1], wh.shape[0])
    for i in range(xs.shape[0]):
        h = torch.tanh(xs[i] @ wx + h @ wh + b)
    return (h * h).mean()


def main():
    args = torch_common.parse_args("tanh RNN forward+backward in PyTorch")
    blocks, block_runs, warmup = (1, 2, 2) if args.quick else (5, 10, 4)
    torch.manual_seed(0)
    xs = torch.randn(50, 32, 64)
    weights = [torch.randn(64, 128) * 0.1, torch.randn(128, 128) * 0.1, torch.zeros(128)]
    for w in weights:
        w.requires_grad_()
    fn = torch.jit.script(rnn_loss) if args.mode == "torchscript" else rnn_loss
    last = []

    def run():
        value = fn(*weights, xs)
        gs = torch.autograd.grad(value, weights)
        last[:] = [value, gs]

    ms = torch_common.best_block_ms(run, blocks, block_runs, warmup)
    print(f"ms_per_run {ms:.4f}")
    print(f"loss {last[0].item():.6f}")
    print(f"grad_norm {last[1][1].norm().item():.6f}")
    torch_common.print_threads()


if __name__ == "__main__":
    main()
