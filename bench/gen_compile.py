# Writes the compile-latency benchmark's function (issue 6): a 300-line function of
# straight-line tensor math on two 16x16 inputs, the same text every time (a fixed
# seed). `--tsl PATH` writes a TSL file with the function `big0`; `--py PATH
# --copies K` writes a Python module with K copies `big0` .. `big{K-1}` (torch.jit.script
# caches a scripted function, so each timing needs a fresh one).
import argparse
import random

LINES = 300  # the def line, the body, the return


def statement(rng, target, names):
    """One line of tensor math assigning `target` from recent values in `names`."""
    a, b = rng.choice(names[-20:]), rng.choice(names[-20:])
    c = f"{rng.uniform(0.1, 0.9):.3f}"
    forms = [
        f"{target} = torch.tanh({a} * {c} + {b})",
        f"{target} = torch.sigmoid({a} - {b} * {c})",
        f"{target} = torch.relu({a}) + {b} * {c}",
        f"{target} = torch.tanh({a} @ {b} * {c})",
        f"{target} = torch.exp(-torch.abs({a})) * {b}",
        f"{target} = {a} * {b} - {a}.sum(dim=1, keepdim=True) * {c}",
    ]
    return "    " + rng.choice(forms)


def function_text(name):
    rng = random.Random(300)
    names = ["x", "y"]
    lines = [f"def {name}(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:"]
    for i in range(LINES - 2):
        target = f"v{i}"
        lines.append(statement(rng, target, names))
        names.append(target)
    lines.append(f"    return torch.tanh({names[-1]} + {names[-2]})")
    assert len(lines) == LINES
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tsl", help="write the TSL file here")
    parser.add_argument("--py", help="write the Python module here")
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    header = "import torch\n\n\n"
    if args.tsl:
        with open(args.tsl, "w") as f:
            f.write(header + function_text("big0"))
    if args.py:
        with open(args.py, "w") as f:
            f.write(header + "\n\n".join(function_text(f"big{k}") for k in range(args.copies)))


if __name__ == "__main__":
    main()
