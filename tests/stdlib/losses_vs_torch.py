# The PyTorch twin of losses_vs_torch.tsl: the same numbers from torch.nn.functional.
import torch
import torch.nn.functional as F

torch.manual_seed(3)
x = torch.randn(6, 4, dtype=torch.float64) * 3.0
t = torch.randn(6, 4, dtype=torch.float64)
p = torch.sigmoid(torch.randn(6, 4, dtype=torch.float64))
y01 = (torch.rand(6, 4, dtype=torch.float64) > 0.5).to(torch.float64)
labels = torch.randint(0, 4, [6])
w = torch.rand(4, dtype=torch.float64) + 0.5
pw = torch.rand(4, dtype=torch.float64) * 3.0


def grad_of(f, x):
    x = x.clone().requires_grad_()
    f(x).backward()
    return x.grad


for r in ["mean", "sum", "none"]:
    print(r)
    print(F.mse_loss(x, t, reduction=r))
    print(F.l1_loss(x, t, reduction=r))
    print(F.huber_loss(x, t, reduction=r, delta=1.0))
    print(F.huber_loss(x, t, reduction=r, delta=2.5))
    print(F.smooth_l1_loss(x, t, reduction=r, beta=0.5))
    print(F.smooth_l1_loss(x, t, reduction=r, beta=0.0))
    print(F.binary_cross_entropy(p, y01, reduction=r))
    print(F.binary_cross_entropy_with_logits(x, y01, reduction=r))
    print(F.binary_cross_entropy_with_logits(x * 20.0, y01, w, reduction=r, pos_weight=pw))
    print(F.cross_entropy(x, labels, reduction=r))
    print(F.nll_loss(torch.log_softmax(x, 1), labels, w, reduction=r))
print(grad_of(lambda a: F.huber_loss(a, t, reduction="sum", delta=0.7), x))
print(grad_of(lambda a: F.smooth_l1_loss(a, t, reduction="sum", beta=0.5), x))
print(grad_of(lambda a: F.binary_cross_entropy_with_logits(a, y01, pos_weight=pw), x))
print(grad_of(lambda a: F.cross_entropy(a, labels, w, label_smoothing=0.2), x))
