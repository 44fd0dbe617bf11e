#!/usr/bin/env python3
"""Checks that a portable TSL binary runs on every x86-64-v2 CPU.

Usage: check_portable.py BINARY CAPABILITY...

Note [One binary for every x86-64] (runtime/tensor/cpu_capability.h): only the code of
the kernel files built per capability may use instructions beyond x86-64-v2, and each of
their functions says which capability it is in its name (the suffix ".avx2", or the
namespace cpu_avx2; cmake/private_inline_copies.sh). So the disassembly of every other
function must hold no AVX, AVX-512 or BMI instruction: one there would be an inline
function whose AVX2 copy the linker kept for the whole program, or a file built with the
wrong flags, and the binary would die with SIGILL on an older CPU.

It also checks that the capabilities' code is there and uses its instruction set (a
check that found no AVX anywhere would pass a build that has none).
"""
import re
import subprocess
import sys

# Beyond x86-64-v2: any VEX or EVEX instruction (their mnemonics start with "v" in
# objdump's AT&T output), YMM, ZMM and mask registers, and the BMI1/BMI2/LZCNT/MOVBE
# instructions of x86-64-v3. Not tzcnt: GCC writes `rep bsf` for x86-64-v2, which
# objdump shows as tzcnt and which older CPUs run as bsf.
BEYOND_V2_MNEMONIC = re.compile(
    r"^(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe)\b")
BEYOND_V2_REGISTER = re.compile(r"%(ymm|zmm)\d+|%k[0-7]\b")
FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSTRUCTION = re.compile(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$")


def capability_of(name, capabilities):
    for c in capabilities:
        if name.endswith("." + c) or ("cpu_" + c) in name:
            return c
    return None


def main():
    binary, capabilities = sys.argv[1], sys.argv[2:]
    if capabilities == ["native"]:
        print("a TSL_NATIVE build: all of it is for one CPU; nothing to check")
        return 77
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], check=True,
                          capture_output=True, text=True).stdout
    bad = {}
    used = {c: 0 for c in capabilities}
    functions = {c: 0 for c in capabilities}
    name = None
    cap = None
    for line in dump.splitlines():
        m = FUNCTION.match(line)
        if m:
            name = m.group(1)
            cap = capability_of(name, capabilities)
            if cap:
                functions[cap] += 1
            continue
        m = INSTRUCTION.match(line)
        if not m or name is None:
            continue
        mnemonic, operands = m.group(1), m.group(2)
        beyond = bool(BEYOND_V2_MNEMONIC.match(mnemonic) or BEYOND_V2_REGISTER.search(operands))
        if not beyond:
            continue
        if cap:
            used[cap] += 1
        elif name not in bad:
            bad[name] = f"{mnemonic} {operands}"
    ok = True
    if bad:
        ok = False
        print(f"{len(bad)} functions outside the capabilities' code use instructions beyond "
              "x86-64-v2:")
        for n, insn in sorted(bad.items())[:40]:
            print(f"  {n}: {insn}")
    for c in capabilities:
        print(f"{c}: {functions[c]} functions, {used[c]} instructions beyond x86-64-v2")
        if functions[c] == 0:
            ok = False
            print(f"  no function of capability {c} in {binary}")
        elif c != "default" and used[c] == 0:
            ok = False
            print(f"  capability {c} uses nothing beyond x86-64-v2: built with the wrong flags?")
        elif c == "default" and used[c] != 0:
            ok = False
            print("  the default capability uses instructions beyond x86-64-v2")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
