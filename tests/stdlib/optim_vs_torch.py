# The PyTorch twin of optim_vs_torch.tsl: the same training with torch.optim.
import torch

torch.manual_seed(0)
x = torch.randn(32, 5, dtype=torch.float64)
y = torch.randn(32, 2, dtype=torch.float64)


def init():
    torch.manual_seed(1)
    return [torch.randn(8, 5, dtype=torch.float64) * 0.3,
            torch.randn(8, dtype=torch.float64) * 0.3,
            torch.randn(2, 8, dtype=torch.float64) * 0.3,
            torch.randn(2, dtype=torch.float64) * 0.3]


def loss_of(w1, b1, w2, b2):
    h = torch.tanh(x @ w1.t() + b1)
    return ((h @ w2.t() + b2 - y) ** 2).mean()


def report(name, params):
    print(name, loss_of(*params).item())
    for p in params:
        print(p.detach())


def train(make_opt, log):
    params = [p.requires_grad_() for p in init()]
    opt = make_opt(params)
    for step in range(1, 101):
        loss = loss_of(*params)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if log and step % 25 == 1:
            print(step, loss.item())
    return params


for nesterov in [False, True]:
    if nesterov:
        make = lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True)
    else:
        make = lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                          weight_decay=0.01)
    report("sgd_ nesterov" if nesterov else "sgd_", train(make, True))

report("sgd", train(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
                    False))

for decoupled in [False, True]:
    if decoupled:
        make = lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1)
    else:
        make = lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), weight_decay=0.001)
    report("adamw_" if decoupled else "adam_", train(make, True))

for decoupled in [False, True]:
    if decoupled:
        make = lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1)
    else:
        make = lambda ps: torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.99), eps=1e-6,
                                           weight_decay=0.001)
    report("adamw" if decoupled else "adam", train(make, False))
