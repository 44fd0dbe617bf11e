#!/usr/bin/env python3
"""`:tape NAME` and `:dot NAME` (Note [The tape view]) after an eager backward(), through a
pseudo-terminal: the nodes behind a loss in the order backward() runs them (latest
sequence_nr first), each with the nodes its gradients flow to, the leaves last with
their variable's name, value and .grad (the same numbers `print(w.grad)` shows), a
summary for a large leaf, and clear answers for a leaf, a tensor without grad and a
name that is no tensor; `:dot loss` writes loss.tape.dot with the same nodes and the
leaf's grad, which Graphviz renders (loss.tape.svg and .png where it is installed).
  tests/repl/repl_tape.py --tsl build/release/tsl"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    failures = []
    tsl = os.path.abspath(args.tsl)
    folder = tempfile.mkdtemp()
    os.chdir(folder)
    s = Session(tsl, args.timeout)
    try:
        for line in ["import torch", "import torch.nn.functional as F",
                     "w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)",
                     "x = torch.tensor([0.5, 1.0, 2.0])",
                     "loss = F.mse_loss(w * x, torch.zeros(3)) + w.pow(2).sum()",
                     "loss.backward()"]:
            s.send(line)
        grad_line = s.send("print(w.grad)")
        tape = s.send(":tape loss")
        lines = [l.strip() for l in tape.splitlines() if l.strip().startswith("[")]
        header = [l for l in tape.splitlines() if l.startswith("loss = ")]
        if not header or "nodes, in the order backward() runs them" not in header[0]:
            failures.append(f"no header in:\n{tape}")
        names = [re.sub(r"^\[\d+\] ", "", l).split(" ")[0] for l in lines]
        if not names or names[0] != "AddBackward0" or names[-1] != "AccumulateGrad(w)":
            failures.append(f"first node AddBackward0, last AccumulateGrad(w), got {names}")
        seqs = [int(m.group(1)) for l in lines for m in [re.search(r"\(seq (\d+)\)", l)] if m]
        if seqs != sorted(seqs, reverse=True) or len(seqs) != len(lines) - 1:
            failures.append(f"nodes not in backward order: {seqs}")
        if "[1] AddBackward0" not in tape or "-> [" not in tape:
            failures.append(f"no edges in:\n{tape}")
        wanted = re.search(r"tensor\(\[[^\]]*\]\)", grad_line)
        if not wanted or f"grad {wanted.group(0)}" not in tape:
            failures.append(f"the leaf's grad {wanted and wanted.group(0)} not in:\n{tape}")
        s.send("big = torch.ones(20, 30, requires_grad=True)")
        s.send("y = (big * 3.0).sum()")
        s.send("y.backward()")
        big = s.send(":tape y")
        if "Tensor[20, 30] float32 mean 3 norm" not in big:
            failures.append(f"no summary of a large grad in:\n{big}")
        # :dot of a tensor draws its tape: a DOT file (and an SVG where Graphviz is).
        drawn = s.send(":dot loss")
        if "the tape of loss" not in drawn or "loss.tape.dot" not in drawn or \
                not os.path.exists("loss.tape.dot"):
            failures.append(f":dot loss wrote no loss.tape.dot:\n{drawn}")
        else:
            dot_text = open("loss.tape.dot").read()
            leaf_grad = "grad " + (wanted.group(0) if wanted else "?")
            for piece in ["AccumulateGrad(w)", "AddBackward0", leaf_grad]:
                if piece not in dot_text.replace("\\", ""):
                    failures.append(f"{piece!r} not in loss.tape.dot:\n{dot_text}")
            if shutil.which("dot"):
                r = subprocess.run(["dot", "-Tsvg", "loss.tape.dot"], capture_output=True, text=True)
                if r.returncode != 0 or "<svg" not in r.stdout:
                    failures.append(f"dot could not render loss.tape.dot: {r.stderr}")
                for picture in ("loss.tape.svg", "loss.tape.png"):
                    if picture not in drawn or not os.path.exists(picture):
                        failures.append(f":dot loss drew no {picture} with Graphviz installed:"
                                        f"\n{drawn}")
        for cmd, wanted in [(":tape w", "w has no tape: it is a leaf"),
                            (":tape x", "x has no tape: it does not require grad"),
                            (":tape nothing", "takes the name of a tensor variable"),
                            (":help tape", ":tape NAME")]:
            out = s.send(cmd)
            if wanted not in out:
                failures.append(f"{cmd}: expected {wanted!r} in:\n{out}")
    finally:
        s.close()
        shutil.rmtree(folder, ignore_errors=True)
    if failures:
        print("\n\n".join(failures))
        print(f"FAIL: {len(failures)} check(s)")
        return 1
    print("ok: :tape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
