#!/bin/sh
# The compiler launcher of the files built once per CPU capability
# (cmake/cpu_capabilities.cmake):
#   private_inline_copies.sh CAPABILITY NM OBJCOPY [LAUNCHER] COMPILER ARGS...
# runs the compile, then renames in its object the copies of inline functions and
# templates it holds, and its vtables, with the suffix ".CAPABILITY".
#
# Note [Private inline copies]
# A file built with -march=x86-64-v3 holds its own copy of every inline function and
# template it uses (Tensor::sizes, std::vector<int64_t>'s members, Eigen's functions),
# compiled for AVX2. These copies are weak symbols in COMDAT groups, and the linker keeps
# one copy of each name for the whole program, whichever it meets first: baseline code
# could then call the AVX2 copy and die with SIGILL on a CPU without AVX2. Renamed, each
# capability's objects call their own copies and the baseline code the baseline's. So:
# * weak function definitions (nm's W), and the signatures of the COMDAT groups that
#   hold them where the group is named otherwise (nm's n: a constructor's C5 group for
#   its C1 and C2 copies), get the suffix;
# * vtables (_ZTV, _ZTT, _ZTC), which point at such copies, get it too: an object made
#   in a capability's code calls its virtual functions there, one made in baseline code
#   the baseline's; type identity lives in the typeinfo (_ZTI), which stays shared;
# * weak data (static locals of inline functions, template statics: V and u) stays
#   shared, so that the program has one of each;
# * local functions (nm's t: those of anonymous namespaces) get the suffix as well, only
#   so that every function of a capability's objects says so in its name (profiles,
#   backtraces, and the check below).
# Nothing in the capability's own namespace (cpu_avx2, TSL_CAPABILITY_NAMESPACE) is
# renamed: its names are the capability's already, and baseline code calls its entry
# points (explicit instantiations of templates, which are weak, among them). Nor are
# strong definitions: a file's functions outside that namespace are defined once per
# capability, which the linker rejects. tests/layers/check_portable.py checks the result:
# no AVX instruction outside a capability's code.
set -e
capability=$1
nm=$2
objcopy=$3
shift 3
# No launcher of the compiler: an empty argument.
if [ -z "$1" ]; then shift; fi
"$@"
out=
prev=
for arg in "$@"; do
  if [ "$prev" = "-o" ]; then out=$arg; fi
  prev=$arg
done
# A compile without an object (a dependency scan) has nothing to rename.
case "$out" in *.o) ;; *) exit 0 ;; esac
renames="$out.renames"
"$nm" --defined-only "$out" |
  awk -v suffix=".$capability" -v own="cpu_$capability" \
    'index($3, own) == 0 && ($2 ~ /^[Wnt]$/ || ($2 == "V" && $3 ~ /^_ZT[VTC]/)) {
       print $3 " " $3 suffix
     }' > "$renames"
if [ -s "$renames" ]; then
  "$objcopy" --redefine-syms="$renames" "$out"
fi
rm -f "$renames"
