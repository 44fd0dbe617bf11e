# The PyTorch twin of nn_vs_torch.tsl: torch.nn.init and torch.nn.functional.
import math

import torch
import torch.nn.functional as F
import torch.nn.init as init

for shape in [[3, 4], [16, 8, 3, 3], [5, 2, 7]]:
    print(init._calculate_fan_in_and_fan_out(torch.empty(shape)))
for name in ["linear", "conv2d", "sigmoid", "tanh", "relu", "selu"]:
    print(name, init.calculate_gain(name))
print(init.calculate_gain("leaky_relu"), init.calculate_gain("leaky_relu", 0.2))


def summary(t):
    print(t.shape, t.sum().item(), t.abs().max().item(), t.std().item())
    print(t.flatten()[:6])


def new(shape, fill, *args, **kwargs):
    t = torch.empty(shape)
    fill(t, *args, **kwargs)
    return t


torch.manual_seed(7)
summary(new([64, 32], init.xavier_uniform_))
summary(new([16, 8, 3, 3], init.xavier_uniform_, gain=init.calculate_gain("relu")))
summary(new([64, 32], init.xavier_normal_))
summary(new([64, 32], init.kaiming_uniform_))
summary(new([32, 16, 3, 3], init.kaiming_uniform_, a=math.sqrt(5.0)))
summary(new([64, 32], init.kaiming_uniform_, mode="fan_out", nonlinearity="relu"))
summary(new([64, 32], init.kaiming_normal_, nonlinearity="relu"))
summary(new([64, 32], init.kaiming_normal_, a=0.1, mode="fan_out"))
summary(new([100], init.uniform_, -0.5, 2.0))
summary(new([100], init.normal_, 1.0, 0.25))
w = torch.empty(40, 30)
init.kaiming_uniform_(w, a=math.sqrt(5.0))
summary(w)
init.xavier_normal_(w, gain=0.5)
summary(w)
init.zeros_(w)
print(w.sum().item())
init.ones_(w)
print(w.sum().item())
big = new([1000, 500], init.kaiming_uniform_, nonlinearity="relu")
print(big.abs().max().item() <= math.sqrt(6.0 / 500), big.std().item())
big = new([1000, 500], init.xavier_normal_)
print(big.std().item(), big.mean().item())

torch.manual_seed(1)
x = torch.randn(5, 6, dtype=torch.float64)
ws = [torch.randn(8, 6, dtype=torch.float64), torch.randn(3, 8, dtype=torch.float64)]
bs = [torch.randn(8, dtype=torch.float64), torch.randn(3, dtype=torch.float64)]
acts = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "gelu": F.gelu,
        "silu": F.silu, "elu": F.elu, "leaky_relu": F.leaky_relu, "softplus": F.softplus,
        "identity": lambda h: h}


def mlp(x, ws, bs, act):
    h = F.linear(x, ws[0], bs[0])
    return F.linear(acts[act](h), ws[1], bs[1])


for act in acts:
    print(act, mlp(x, ws, bs, act).sum().item())
print(F.linear(x, ws[0], bs[0]))
print(F.linear(x, ws[0]))
img = torch.randn(2, 3, 6, 6, dtype=torch.float64)
k = torch.randn(4, 3, 3, 3, dtype=torch.float64)
out = F.conv2d(img, k, torch.ones(4, dtype=torch.float64), stride=2, padding=1)
print(out.shape, out.sum().item(), (6 + 2 - 3) // 2 + 1)
print(torch.nn.Flatten()(out).shape)
print(torch.allclose(F.dropout(x, 0.5, False), x, 0.0, 0.0))
print(torch.softmax(x, -1)[0], torch.log_softmax(x, 0)[0])
print(F.leaky_relu(x, 0.2)[0], F.gelu(x)[1], F.silu(x)[2], torch.sigmoid(x)[3], torch.tanh(x)[4])
w0 = ws[0].clone().requires_grad_()
mlp(x, [w0, ws[1]], bs, "tanh").pow(2).sum().backward()
print(w0.grad)
