#!/usr/bin/env python3
"""Writes `# expect:` lines into a TSL test script from what PyTorch prints for it.

A TSL script that is also valid Python (most TorchScript-style tests are) is run
under Python with PyTorch; the lines each `print` call writes are inserted as
`# expect: ...` comments right after that statement, so the expectation sits next
to the code that prints it. Existing `# expect:` comments are replaced.

    /usr/bin/python3 scripts/expect_from_torch.py tests/scripts/tensors/shapes.tsl

TSL differs from Python where TorchScript does: `x.shape` / `x.size()` are
List[int], so `torch.Size([2, 3])` is written `[2, 3]`.
"""
import builtins
import inspect
import io
import re
import sys


def run_and_capture(path):
    source = open(path).read()
    lines_out = {}
    real_print = builtins.print

    def recording_print(*args, **kwargs):
        buf = io.StringIO()
        kwargs["file"] = buf
        real_print(*args, **kwargs)
        frame = inspect.stack()[1]
        # Attribute output to the outermost statement of the script file.
        for f in inspect.stack()[1:]:
            if f.filename == path:
                frame = f
        lines_out.setdefault(frame.lineno, []).append(buf.getvalue())

    builtins.print = recording_print
    try:
        code = compile(source, path, "exec")
        exec(code, {"__name__": "__main__", "argv": [path]})
    finally:
        builtins.print = real_print
    return source, lines_out


def statement_end(lines, start):
    """The last line (1-based) of the statement that begins at line `start`."""
    depth = 0
    i = start
    while True:
        text = re.sub(r"#.*", "", lines[i - 1])
        depth += text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if depth <= 0 or i == len(lines):
            return i
        i += 1


def main(path):
    source, outputs = run_and_capture(path)
    lines = [l for l in source.splitlines() if not l.strip().startswith("# expect")]
    # Re-run on the cleaned text so line numbers match the file we write.
    cleaned = "\n".join(lines) + "\n"
    open(path, "w").write(cleaned)
    source, outputs = run_and_capture(path)
    lines = source.splitlines()
    result = []
    pending = {}
    for lineno, chunks in outputs.items():
        text = "".join(chunks)
        text = re.sub(r"torch\.Size\((\[[^\]]*\])\)", r"\1", text)
        pending[statement_end(lines, lineno)] = pending.get(statement_end(lines, lineno), "") + text
    for i, line in enumerate(lines, start=1):
        result.append(line)
        if i in pending:
            indent = re.match(r"\s*", line).group(0)
            text = pending[i]
            if text.endswith("\n"):
                text = text[:-1]
            for out_line in text.split("\n"):
                if out_line.rstrip() != out_line:
                    sys.exit(f"{path}:{i}: output line with trailing spaces: {out_line!r}")
                result.append(f"{indent}# expect: {out_line}" if out_line else f"{indent}# expect:")
    open(path, "w").write("\n".join(result) + "\n")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
