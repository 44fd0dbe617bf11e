// TSL programs shared by tests in different binaries.
#pragma once

namespace tsl {

// bench/mlp.tsl's training step: batch 64, 784 -> 256 -> 10, relu, cross-entropy,
// backward and SGD in one compiled function `step(w1, b1, w2, b2, x, t, lr)`, which
// returns the four new parameters and the loss; the inputs are globals.
inline constexpr const char* kMlpTrainingStep =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "from typing import Tuple\n"
    "from functorch import grad_and_value\n"
    "def loss(w1, b1, w2, b2, x, t):\n"
    "    h = F.relu(F.linear(x, w1, b1))\n"
    "    return F.cross_entropy(F.linear(h, w2, b2), t)\n"
    "def step(w1, b1, w2, b2, x, t, lr: float) -> Tuple[torch.Tensor, torch.Tensor, "
    "torch.Tensor, torch.Tensor, torch.Tensor]:\n"
    "    gs, value = grad_and_value(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, t)\n"
    "    return w1 - lr * gs[0], b1 - lr * gs[1], w2 - lr * gs[2], b2 - lr * gs[3], value\n"
    "torch.manual_seed(0)\n"
    "x = torch.randn(64, 784)\n"
    "t = torch.randint(0, 10, (64,))\n"
    "w1 = torch.randn(256, 784) * 0.05\n"
    "b1 = torch.zeros(256)\n"
    "w2 = torch.randn(10, 256) * 0.05\n"
    "b2 = torch.zeros(10)\n";

}  // namespace tsl
