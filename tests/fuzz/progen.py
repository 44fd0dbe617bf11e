"""Random programs that are valid TSL and valid Python 3 + PyTorch 1.13 + functorch.

The generator tracks the static type of every value it writes (ints, floats, bools,
tensors with their exact shape, lists, Optionals), so every program it makes type-checks
in TSL and runs in Python without a shape error. It follows Csmith's idea: generate only
programs whose meaning is defined (no division by zero, no integer overflow, bounded
loops, domains kept positive where a function needs it), so any difference between the
two runs is a bug, not undefined behaviour.

A program is a few functions (`def`s with tensors, ints and floats as parameters; nested
if/elif/else with early returns, while/for loops with break/continue, lists, tuples,
Optional, calls of earlier functions, broadcasting tensor ops; with the `dict` feature also
Dict[str, Tensor] and Dict[int, float] literals, reads, writes, pops, `in`, iteration and
functions taking their tensors packed in a dict), then top-level code that
prints their values, their gradients through functorch's transforms (grad with argnums,
vjp, jvp, hessian) and through the eager tape (backward, .grad), and eager top-level
tensor code of its own.

Features (`--features a,b`; difffuzz.py turns on inplace, setitem, train and dict by
default): `inplace` adds augmented assignments to tensors, `setitem` item and masked
assignment, `train` SGD loops on the tape, `dict` the dicts above; `vmap` adds, for
functions that do not read tensors into Python values, vmap with random in_dims (None
included, negative dims) and out_dims, nested vmap, per-sample gradients (vmap of grad
with argnums) and jacrev/jacfwd.

Used by difffuzz.py; `Generator(seed, features).program()` returns the source text.
"""

import math
import random

FLOAT64 = "torch.float64"

# Unary tensor functions defined on all reals, with bounded or gentle growth.
SAFE_UNARY = [
    "torch.sin({})", "torch.cos({})", "torch.tanh({})", "torch.sigmoid({})", "torch.relu({})",
    "{}.abs()", "-{}", "torch.neg({})", "{}.sin()", "{}.tanh()", "F.softplus({})",
    "F.leaky_relu({}, 0.1)", "torch.clamp({}, -1.5, 1.5)", "{}.clamp(min=-0.5)",
    "torch.exp(torch.tanh({}))", "{}.square()", "torch.atan({})",
    "F.gelu({})", "F.silu({})", "torch.erf({})", "{} * {}",
]
# Unary functions whose argument must be kept away from their poles: the argument is
# wrapped as shown (`{}` is the operand).
DOMAIN_UNARY = [
    "torch.sqrt({}.abs() + 0.25)", "torch.log({}.abs() + 1.0)", "torch.log1p({}.abs())",
    "torch.rsqrt({}.abs() + 0.5)", "({}.abs() + 0.5).pow(1.5)", "torch.reciprocal({}.abs() + 1.0)",
]
BINARY_OPS = ["+", "-", "*"]
BINARY_FNS = ["torch.maximum({}, {})", "torch.minimum({}, {})", "torch.add({}, {}, alpha=0.5)",
              "torch.sub({}, {})", "torch.mul({}, {})"]


class Scope:
    """Variables visible at a point: name -> type. A child scope sees its parent's."""

    def __init__(self, parent=None):
        self.parent = parent
        self.vars = {}

    def all(self):
        out = dict(self.parent.all()) if self.parent else {}
        out.update(self.vars)
        return out


# Types: ("int",), ("float",), ("bool",), ("T", shape), ("LT", shape) list of tensors,
# ("LF",) list of floats, ("LI",) list of ints, ("OT", shape) Optional tensor,
# ("DT", ((key, shape), ...)) a Dict[str, Tensor] with those keys, ("DF", (key, ...)) a
# Dict[int, float] with those keys.
INT, FLOAT, BOOL = ("int",), ("float",), ("bool",)


def T(shape):
    return ("T", tuple(shape))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def shape_src(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


class Function:
    def __init__(self, name, params, ret, differentiable):
        self.name = name
        self.params = params      # [(name, type)]
        self.ret = ret            # a type: T(shape) or ("tuple", T(shape), FLOAT)
        self.differentiable = differentiable  # only pure tensor math on tensor params
        self.uses_data = False    # converts tensors to Python values (no vmap/hessian)
        # PyTorch 1.13 cannot take this function's hessian: softmax's double backward has
        # no forward AD ("_softmax_backward_data ... not implemented"), and sum() of a
        # 0-dim value fails in jacfwd's batch of one ("Could not allocate memory to
        # change Tensor SizesAndStrides!"), for a one-element input.
        self.no_hessian = False
        self.sums_0dim = False
        self.packed = False       # its tensors come in one Dict[str, Tensor] parameter `p`
        self.src = ""


class Generator:
    def __init__(self, seed, features=None):
        self.rng = random.Random(seed)
        self.features = set(features or [])
        self.functions = []
        self.lines = []
        self.fresh = 0
        self.depth = 0
        # Dicts written after their literal (a write, pop or update), and dicts that are
        # parameters: autodiff follows reads at run-time keys (iteration) only into dict
        # literals nothing writes, so those are not iterated, and parameters are not
        # written (the eager tape hands a call a copy of a dict argument it only reads).
        self.dict_written = set()
        self.dict_readonly = set()

    # ---- helpers -----------------------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def name(self, prefix):
        self.fresh += 1
        return "%s%d" % (prefix, self.fresh)

    def float_lit(self):
        return repr(round(self.rng.uniform(-2.0, 2.0), 2))

    def pos_float_lit(self):
        return repr(round(self.rng.uniform(0.1, 2.0), 2))

    def shape(self, max_rank=3):
        rank = self.rng.choice([0, 1, 1, 2, 2, 2, 3][: 1 + max_rank * 2])
        return tuple(self.rng.choice([1, 2, 3, 4]) for _ in range(rank))

    def some_shape(self, scope, max_rank=3):
        """Mostly the shape of a tensor variable in scope, so expressions use the inputs."""
        shapes = [t[1] for t in scope.all().values() if t[0] == "T" and len(t[1]) <= max_rank]
        if shapes and self.chance(0.75):
            return self.rng.choice(shapes)
        return self.shape(max_rank)

    def data(self, shape):
        if not shape:
            return self.float_lit()
        return "[" + ", ".join(self.data(shape[1:]) for _ in range(shape[0])) + "]"

    def tensor_lit(self, shape, requires_grad=False):
        rg = ", requires_grad=True" if requires_grad else ""
        return "torch.tensor(%s, dtype=%s%s)" % (self.data(shape), FLOAT64, rg)

    def vars_of(self, scope, typ):
        return [n for n, t in scope.all().items() if t == typ]

    # ---- expressions ---------------------------------------------------------------------
    def int_expr(self, scope, depth=0):
        choices = ["lit", "lit", "var", "var", "bin", "len", "shape"]
        if depth > 2:
            choices = ["lit", "var"]
        c = self.rng.choice(choices)
        if c == "var":
            vs = self.vars_of(scope, INT)
            if vs:
                return self.rng.choice(vs)
            c = "lit"
        if c == "bin":
            a, b = self.int_expr(scope, depth + 1), self.int_expr(scope, depth + 1)
            op = self.rng.choice(["+", "-", "%", "//", "min", "max"])
            if op in ("%", "//"):
                return "(%s %s %d)" % (a, op, self.rng.choice([2, 3, 5]))
            if op in ("min", "max"):
                return "%s(%s, %s)" % (op, a, b)
            return "(%s %s %s)" % (a, op, b)
        if c == "len":
            lists = [n for n, t in scope.all().items() if t[0] in ("LT", "LF", "LI", "DT", "DF")]
            if lists:
                return "len(%s)" % self.rng.choice(lists)
            c = "lit"
        if c == "shape":
            ts = [(n, t) for n, t in scope.all().items() if t[0] == "T" and t[1]]
            if ts:
                n, t = self.rng.choice(ts)
                d = self.rng.randrange(len(t[1]))
                return self.rng.choice(["%s.shape[%d]", "%s.size(%d)"]) % (n, d)
            c = "lit"
        return str(self.rng.randint(0, 4))

    def float_expr(self, scope, fn, depth=0):
        choices = ["lit", "lit", "var", "var", "bin", "fromint", "fromtensor", "math"]
        if depth > 2:
            choices = ["lit", "var"]
        c = self.rng.choice(choices)
        if c == "var":
            vs = self.vars_of(scope, FLOAT)
            if vs:
                return self.rng.choice(vs)
            c = "lit"
        if c == "bin":
            a, b = self.float_expr(scope, fn, depth + 1), self.float_expr(scope, fn, depth + 1)
            op = self.rng.choice(["+", "-", "*", "div", "min", "max"])
            if op == "div":
                return "(%s / (abs(%s) + 1.0))" % (a, b)
            if op in ("min", "max"):
                return "%s(%s, %s)" % (op, a, b)
            return "(%s %s %s)" % (a, op, b)
        if c == "fromint":
            return "float(%s)" % self.int_expr(scope, depth + 1)
        if c == "fromtensor":
            shape = self.some_shape(scope, 2)
            t = self.tensor_expr(scope, shape, fn, depth + 2)
            if fn is not None:
                fn.uses_data = True
            form = self.rng.choice(["float({}.sum())", "{}.sum().item()", "{}.mean().item()"])
            t = "(%s)" % t
            if fn is not None and fn.differentiable:
                t = "%s.detach()" % t
            return form.format(t)
        if c == "math":
            a = self.float_expr(scope, fn, depth + 1)
            return self.rng.choice(["math.sqrt(abs(%s) + 1.0)", "math.tanh(%s)", "abs(%s)",
                                    "math.exp(math.tanh(%s))"]) % a
        return self.float_lit()

    def bool_expr(self, scope, fn, depth=0):
        kinds = ["fcmp", "fcmp", "icmp", "tcmp", "not", "andor"] if depth < 2 else ["fcmp", "icmp"]
        if "dict" in self.features and depth < 2:
            kinds.append("in")
        c = self.rng.choice(kinds)
        if c == "fcmp":
            op = self.rng.choice(["<", ">", "<=", ">="])
            return "%s %s %s" % (self.float_expr(scope, fn, depth + 1), op,
                                 self.float_expr(scope, fn, depth + 1))
        if c == "icmp":
            op = self.rng.choice(["<", ">", "==", "!=", "<="])
            return "%s %s %s" % (self.int_expr(scope, depth + 1), op, self.int_expr(scope, depth + 1))
        if c == "tcmp":
            if fn is not None:
                fn.uses_data = True
            shape = self.some_shape(scope, 2)
            t = self.tensor_expr(scope, shape, fn, depth + 2)
            return "bool((%s).sum() > %s)" % (t, self.float_lit())
        if c == "not":
            return "not (%s)" % self.bool_expr(scope, fn, depth + 1)
        if c == "in":
            dicts = [(n, t) for n, t in scope.all().items() if t[0] == "DT"]
            if dicts:
                n, t = self.rng.choice(dicts)
                key = self.rng.choice([k for k, _ in t[1]] + ["zz"])
                return "%r %s %s" % (key, self.rng.choice(["in", "not in"]), n)
            return self.bool_expr(scope, fn, depth + 1)
        return "(%s) %s (%s)" % (self.bool_expr(scope, fn, depth + 1),
                                 self.rng.choice(["and", "or"]), self.bool_expr(scope, fn, depth + 1))

    def broadcast_partner(self, shape):
        """A shape that broadcasts with `shape` to `shape`."""
        if not shape:
            return ()
        r = self.rng.randint(0, len(shape))
        tail = list(shape[len(shape) - r:])
        for i in range(len(tail)):
            if self.chance(0.3):
                tail[i] = 1
        return tuple(tail)

    def tensor_leaf(self, scope, shape):
        vs = self.vars_of(scope, T(shape))
        reads = self.dict_reads(scope, shape)
        if reads and self.chance(0.3):
            return self.rng.choice(reads)
        if vs and self.chance(0.85):
            return self.rng.choice(vs)
        c = self.rng.choice(["lit", "ones", "full"])
        if c == "ones":
            return "(torch.ones(%s, dtype=%s) * %s)" % (shape_src(shape), FLOAT64, self.float_lit())
        if c == "full":
            return "torch.full(%s, %s, dtype=%s)" % (shape_src(shape), self.float_lit(), FLOAT64)
        return self.tensor_lit(shape)

    def dict_reads(self, scope, shape):
        """Reads of Dict[str, Tensor] entries of `shape` in scope: d["k"], d.get(...)."""
        out = []
        for n, t in scope.all().items():
            if t[0] != "DT":
                continue
            for k, s in t[1]:
                if s != tuple(shape):
                    continue
                out.append("%s[%r]" % (n, k))
                if self.chance(0.3):
                    missing = self.rng.choice([k, "zz"])
                    out.append("%s.get(%r, %s)" % (n, missing, self.tensor_lit(shape)))
        return out

    def tensor_expr(self, scope, shape, fn, depth=0):
        """A Tensor expression of exactly `shape` (float64)."""
        shape = tuple(shape)
        if depth >= 4 or self.chance(0.25 + 0.15 * depth):
            return self.tensor_leaf(scope, shape)
        kinds = ["unary", "unary", "domain", "binary", "binary", "scalar", "scalar", "reduce",
                 "where", "ternary", "call", "index", "cat", "stack", "listsum", "reshape",
                 "unsq", "stat", "dtype", "masked"]
        if len(shape) >= 1:
            kinds += ["matmul", "matmul", "slice", "softmax", "flip", "cumsum", "select_ops"]
        if len(shape) == 2:
            kinds += ["transpose", "tri"]
        k = self.rng.choice(kinds)
        sub = lambda s: self.tensor_expr(scope, s, fn, depth + 1)  # noqa: E731
        if k == "softmax":
            if fn is not None:
                fn.no_hessian = True
            d = self.rng.randrange(-len(shape), len(shape))
            f = self.rng.choice(["torch.softmax(%s, %d)", "F.log_softmax(%s, dim=%d)",
                                 "(%s).softmax(%d)"])
            return f % ("(%s)" % sub(shape), d)
        if k == "flip":
            d = self.rng.randrange(len(shape))
            return "torch.flip(%s, [%d])" % (sub(shape), d)
        if k == "cumsum":
            d = self.rng.randrange(len(shape))
            return "torch.cumsum(%s, %d)" % (sub(shape), d)
        if k == "tri":
            return self.rng.choice(["torch.tril(%s)", "torch.triu(%s, 1)", "(%s).tril(-1)"]) % sub(shape)
        if k == "select_ops":
            d = self.rng.randrange(len(shape))
            big = list(shape)
            big[d] += 1
            idx = sorted(self.rng.sample(range(big[d]), shape[d]))
            e = sub(tuple(big))
            return self.rng.choice([
                "torch.index_select(%s, %d, torch.tensor(%s))" % (e, d, idx),
                "(%s).narrow(%d, 1, %d)" % (e, d, shape[d])])
        if k == "stat":
            d = self.rng.randint(0, len(shape))
            m = self.rng.choice([2, 3])
            big = shape[:d] + (m,) + shape[d:]
            e = "(%s)" % sub(big)
            return self.rng.choice([
                "torch.var(%s, %d)" % (e, d), "%s.std(dim=%d, unbiased=False)" % (e, d),
                "torch.norm(%s + 0.5, dim=%d)" % (e, d) if False else "(%s.abs() + 0.5).norm(dim=%d)" % (e, d),
                "torch.max(%s, %d)[0]" % (e, d), "%s.min(dim=%d)[0]" % (e, d),
                "torch.mean(%s, dim=%d, keepdim=True).squeeze(%d)" % (e, d, d)])
        if k == "dtype":
            # A round trip through float32 (promotion and rounding on both sides).
            return self.rng.choice(["(%s).float().double()", "(%s).to(torch.float32).double()",
                                    "((%s).float() * 2.0).double()"]) % sub(shape)
        if k == "masked":
            e = sub(shape)
            c = sub(self.broadcast_partner(shape))
            return self.rng.choice([
                "torch.masked_fill(%s, %s > 0.5, %s)" % (e, c, self.float_lit()),
                "(%s).masked_fill(%s < 0.0, 0.0)" % (e, c),
                "torch.where(%s > 0.0, %s, torch.zeros_like(%s))" % (c, e, e) if c else "%s" % e])
        if k == "unary":
            form = self.rng.choice(SAFE_UNARY)
            if form == "{} * {}":
                e = sub(shape)
                return "(%s * %s)" % (e, e)
            return form.format("(%s)" % sub(shape))
        if k == "domain":
            return self.rng.choice(DOMAIN_UNARY).format("(%s)" % sub(shape))
        if k == "binary":
            a, b = sub(shape), sub(self.broadcast_partner(shape))
            if self.chance(0.5):
                a, b = b, a
            if self.chance(0.15):
                return "(%s / ((%s).abs() + 1.0))" % (a, b)
            if self.chance(0.7):
                return "(%s %s %s)" % (a, self.rng.choice(BINARY_OPS), b)
            return self.rng.choice(BINARY_FNS).format(a, b)
        if k == "scalar":
            a = sub(shape)
            s = self.float_expr(scope, fn, depth + 2) if self.chance(0.5) else \
                self.int_expr(scope, depth + 2)
            form = self.rng.choice(["({} * {})", "({} + {})", "({} - {})", "({1} * {0})",
                                    "({1} - {0})", "({0} / (abs({1}) + 1.0))"])
            return form.format(a, s)
        if k == "reduce":
            d = self.rng.randint(0, len(shape))
            m = self.rng.choice([1, 2, 3])
            big = shape[:d] + (m,) + shape[d:]
            op = self.rng.choice(["sum", "mean", "amax", "sum", "prod", "logsumexp"])
            e = "(%s)" % sub(big)
            if op == "prod":
                return "torch.tanh(%s).prod(%d)" % (e, d)
            if op == "logsumexp":
                return "torch.logsumexp(%s, %d)" % (e, d)
            if self.chance(0.3):
                return "%s.%s(dim=%d)" % (e, op, d)
            return "torch.%s(%s, %d)" % (op, e, d)
        if k == "where":
            c = sub(self.broadcast_partner(shape))
            return "torch.where(%s > %s, %s, %s)" % (c, self.float_lit(), sub(shape),
                                                     sub(self.broadcast_partner(shape)))
        if k == "ternary":
            return "(%s if %s else %s)" % (sub(shape), self.bool_expr(scope, fn, depth + 2),
                                           sub(shape))
        if k == "call":
            cands = [f for f in self.functions if f.ret == T(shape) and
                     (fn is None or not fn.differentiable or f.differentiable)]
            if cands:
                f = self.rng.choice(cands)
                return self.call_src(f, scope, fn, depth + 1)
            return sub(shape)
        if k == "index":
            m = self.rng.choice([1, 2, 3])
            i = self.rng.randrange(-m, m)
            return "(%s)[%d]" % (sub((m,) + shape), i)
        if k == "slice":
            extra = self.rng.choice([1, 2])
            big = (shape[0] + extra,) + shape[1:]
            e = "(%s)" % sub(big)
            form = self.rng.choice(["%s[%d:]" % (e, extra), "%s[:%d]" % (e, shape[0]),
                                    "%s[%d:%d]" % (e, extra, extra + shape[0])])
            return form
        if k == "cat":
            if not shape or shape[self.rng.randrange(len(shape))] < 2:
                return sub(shape)
            d = self.rng.randrange(len(shape))
            if shape[d] < 2:
                return sub(shape)
            a = self.rng.randint(1, shape[d] - 1)
            sa = shape[:d] + (a,) + shape[d + 1:]
            sb = shape[:d] + (shape[d] - a,) + shape[d + 1:]
            return "torch.cat([%s, %s], %s)" % (sub(sa), sub(sb), self.rng.choice([str(d), "dim=%d" % d]))
        if k == "stack":
            if not shape:
                return sub(shape)
            d = self.rng.randrange(len(shape))
            inner = shape[:d] + shape[d + 1:]
            parts = [sub(inner) for _ in range(shape[d])]
            return "torch.stack([%s], %d)" % (", ".join(parts), d)
        if k == "listsum":
            return "sum([%s, %s])" % (sub(shape), sub(shape))
        if k == "reshape":
            other = tuple(self.rng.sample([d for d in shape], len(shape)))
            e = "(%s)" % sub(other)
            if not shape:
                return "%s.reshape([])" % e if self.chance(0.5) else "%s.view([])" % e
            return "%s.reshape(%s)" % (e, ", ".join(str(d) for d in shape))
        if k == "unsq":
            if shape and shape[0] == 1:
                return "(%s).unsqueeze(0)" % sub(shape[1:])
            return sub(shape)
        if k == "transpose":
            e = "(%s)" % sub((shape[1], shape[0]))
            return self.rng.choice(["%s.t()", "%s.transpose(0, 1)", "%s.permute(1, 0)",
                                    "torch.transpose(%s, 1, 0)"]) % e
        if k == "matmul":
            kk = self.rng.choice([1, 2, 3])
            if len(shape) == 1:
                a, b = sub((kk,)), sub((kk, shape[0]))
            elif len(shape) == 2:
                a, b = sub((shape[0], kk)), sub((kk, shape[1]))
            else:
                a, b = sub(shape[:-1] + (kk,)), sub((kk, shape[-1]))
            return self.rng.choice(["(%s @ %s)", "torch.matmul(%s, %s)"]) % (a, b)
        return sub(shape)

    def call_src(self, f, scope, fn, depth):
        args = []
        for pname, ptype in f.params:
            if ptype == INT:
                args.append(self.int_expr(scope, 3))
            elif ptype == FLOAT:
                args.append(self.float_expr(scope, fn, 3))
            else:
                args.append(self.tensor_expr(scope, ptype[1], fn, depth + 1))
        if fn is not None:
            fn.uses_data |= f.uses_data
            fn.no_hessian |= f.no_hessian
            fn.sums_0dim |= f.sums_0dim
        return "%s(%s)" % (f.name, ", ".join(self.packed_args(f, args)))

    @staticmethod
    def packed_args(f, args):
        """The arguments of a call of f: its tensors in one dict when f takes them so."""
        if not f.packed:
            return args
        tensors = ["%r: %s" % (p, a) for (p, t), a in zip(f.params, args) if t[0] == "T"]
        rest = [a for (p, t), a in zip(f.params, args) if t[0] != "T"]
        return ["{%s}" % ", ".join(tensors)] + rest

    # ---- statements ----------------------------------------------------------------------
    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def block(self, scope, fn, indent, n, in_loop, loop_depth):
        """Emits about n statements; returns True when the block always returns."""
        start = len(self.lines)
        for _ in range(n):
            if self.statement(scope, fn, indent, in_loop, loop_depth):
                return True
        if len(self.lines) == start:
            self.emit(indent, "pass")
        return False

    def statement(self, scope, fn, indent, in_loop, loop_depth):
        kinds = ["assign", "assign", "assign", "reassign", "reassign", "aug"]
        if self.depth < 3:
            kinds += ["if", "if", "for", "while", "list", "optional"]
        if in_loop:
            kinds += ["breakcont"]
        if "setitem" in self.features:
            kinds += ["setitem"]
        if "dict" in self.features:
            kinds += ["dict", "dict"]
        if self.depth >= 1:
            kinds += ["return"]
        k = self.rng.choice(kinds)
        if k == "assign":
            typ = self.rng.choice([T(fn.ret_shape), T(self.some_shape(scope)),
                                   T(self.some_shape(scope)), INT, FLOAT])
            v = self.name("v")
            self.emit(indent, "%s = %s" % (v, self.expr_of(typ, scope, fn)))
            scope.vars[v] = typ
        elif k == "reassign":
            # While-loop counters (k...) stay untouched, so every loop ends.
            cands = [(n, t) for n, t in scope.all().items()
                     if t[0] in ("T", "int", "float") and not n.startswith("k")]
            if not cands:
                return False
            n, t = self.rng.choice(cands)
            self.emit(indent, "%s = %s" % (n, self.expr_of(t, scope, fn)))
        elif k == "aug":
            cands = [(n, t) for n, t in scope.all().items()
                     if t in (INT, FLOAT) and not n.startswith("k")]
            if "inplace" in self.features:
                cands += [(n, t) for n, t in scope.all().items()
                          if t[0] == "T" and n not in fn.param_names]
            if not cands:
                return False
            n, t = self.rng.choice(cands)
            op = self.rng.choice(["+=", "-=", "*="])
            if t == INT:
                self.emit(indent, "%s %s %s" % (n, op if op != "*=" else "+=", self.int_expr(scope, 2)))
            elif t == FLOAT:
                self.emit(indent, "%s %s %s" % (n, op, self.float_expr(scope, fn, 2)))
            else:
                self.emit(indent, "%s %s %s" % (n, op, self.tensor_expr(scope, self.broadcast_partner(t[1]), fn, 2)))
        elif k == "if":
            return self.if_stmt(scope, fn, indent, in_loop, loop_depth)
        elif k == "for":
            self.for_stmt(scope, fn, indent, loop_depth)
        elif k == "while":
            self.while_stmt(scope, fn, indent, loop_depth)
        elif k == "setitem":
            cands = [(n, t) for n, t in scope.all().items()
                     if t[0] == "T" and t[1] and n not in fn.param_names]
            if not cands:
                return False
            n, t = self.rng.choice(cands)
            shape = t[1]
            form = self.rng.choice(["row", "col", "mask", "slice", "aug"])
            if form == "row":
                i = self.rng.randrange(-shape[0], shape[0])
                self.emit(indent, "%s[%d] = %s" % (n, i, self.tensor_expr(scope, shape[1:], fn, 2)))
            elif form == "col" and len(shape) >= 2:
                j = self.rng.randrange(shape[1])
                self.emit(indent, "%s[:, %d] = %s" % (n, j, self.float_lit() if self.chance(0.5)
                                                       else self.tensor_expr(scope, (shape[0],), fn, 2)))
            elif form == "mask":
                self.emit(indent, "%s[%s > %s] = %s" % (n, n, self.float_lit(), self.float_lit()))
            elif form == "slice" and shape[0] >= 2:
                self.emit(indent, "%s[1:] = %s" % (n, self.tensor_expr(scope, (shape[0] - 1,) + shape[1:], fn, 2)))
            else:
                i = self.rng.randrange(shape[0])
                self.emit(indent, "%s[%d] %s %s" % (n, i, self.rng.choice(["+=", "-=", "*="]),
                                                   self.tensor_expr(scope, shape[1:], fn, 2)))
        elif k == "breakcont":
            self.emit(indent, "if %s:" % self.bool_expr(scope, fn))
            self.emit(indent + 1, self.rng.choice(["break", "continue"]))
        elif k == "list":
            self.list_stmt(scope, fn, indent)
        elif k == "optional":
            self.optional_stmt(scope, fn, indent, in_loop, loop_depth)
        elif k == "dict":
            self.dict_stmt(scope, fn, indent, in_loop)
        elif k == "return":
            self.emit(indent, "return %s" % self.expr_of(fn.ret, scope, fn))
            return True
        return False

    def expr_of(self, typ, scope, fn):
        if typ == INT:
            return self.int_expr(scope)
        if typ == FLOAT:
            return self.float_expr(scope, fn)
        if typ == BOOL:
            return self.bool_expr(scope, fn)
        if typ[0] == "T":
            return self.tensor_expr(scope, typ[1], fn)
        if typ[0] == "tuple":
            return "(%s, %s)" % (self.tensor_expr(scope, typ[1][1], fn), self.float_expr(scope, fn))
        raise ValueError(typ)

    def if_stmt(self, scope, fn, indent, in_loop, loop_depth):
        self.depth += 1
        n_elif = self.rng.choice([0, 0, 1, 1, 2])
        has_else = self.chance(0.6)
        all_return = True
        self.emit(indent, "if %s:" % self.bool_expr(scope, fn))
        all_return &= self.block(Scope(scope), fn, indent + 1, self.rng.randint(1, 3), in_loop, loop_depth)
        for _ in range(n_elif):
            self.emit(indent, "elif %s:" % self.bool_expr(scope, fn))
            all_return &= self.block(Scope(scope), fn, indent + 1, self.rng.randint(1, 3), in_loop, loop_depth)
        if has_else:
            self.emit(indent, "else:")
            all_return &= self.block(Scope(scope), fn, indent + 1, self.rng.randint(1, 3), in_loop, loop_depth)
        self.depth -= 1
        return has_else and all_return

    def for_stmt(self, scope, fn, indent, loop_depth):
        self.depth += 1
        inner = Scope(scope)
        c = self.rng.choice(["range", "range", "list", "tensor"])
        i = self.name("i")
        if c == "range":
            form = self.rng.choice(["range(%d)" % self.rng.randint(0, 4),
                                    "range(%d, %d)" % (self.rng.randint(-1, 1), self.rng.randint(1, 4)),
                                    "range(%d, 0, -1)" % self.rng.randint(1, 4),
                                    "range(min(%s, 4))" % self.int_expr(scope, 2)])
            self.emit(indent, "for %s in %s:" % (i, form))
            inner.vars[i] = INT
        elif c == "list":
            lists = [(n, t) for n, t in scope.all().items() if t[0] in ("LT", "LF", "LI")]
            if not lists:
                self.emit(indent, "for %s in [%s, %s]:" % (i, self.float_lit(), self.float_lit()))
                inner.vars[i] = FLOAT
            else:
                n, t = self.rng.choice(lists)
                self.emit(indent, "for %s in %s:" % (i, n))
                inner.vars[i] = {"LT": T(t[1]) if t[0] == "LT" else None, "LF": FLOAT, "LI": INT}[t[0]]
        else:
            shape = self.shape()
            if not shape:
                shape = (2,)
            self.emit(indent, "for %s in %s:" % (i, self.tensor_expr(scope, shape, fn, 2)))
            inner.vars[i] = T(shape[1:])
        self.block(inner, fn, indent + 1, self.rng.randint(1, 3), True, loop_depth + 1)
        self.depth -= 1

    def while_stmt(self, scope, fn, indent, loop_depth):
        self.depth += 1
        k = self.name("k")
        self.emit(indent, "%s = 0" % k)
        self.emit(indent, "while %s < %d:" % (k, self.rng.randint(0, 4)))
        self.emit(indent + 1, "%s += 1" % k)
        inner = Scope(scope)
        self.block(inner, fn, indent + 1, self.rng.randint(1, 3), True, loop_depth + 1)
        self.depth -= 1
        scope.vars[k] = INT

    def list_stmt(self, scope, fn, indent):
        c = self.rng.choice(["LT", "LF", "LI"])
        l = self.name("l")
        if c == "LT":
            shape = self.shape(2)
            self.emit(indent, "%s: List[torch.Tensor] = [%s]" % (l, self.tensor_expr(scope, shape, fn, 2)))
            typ = ("LT", shape)
        elif c == "LF":
            self.emit(indent, "%s: List[float] = [%s]" % (l, self.float_expr(scope, fn, 1)))
            typ = ("LF",)
        else:
            self.emit(indent, "%s: List[int] = [%s, %s]" % (l, self.int_expr(scope, 1), self.int_expr(scope, 1)))
            typ = ("LI",)
        j = self.name("j")
        self.emit(indent, "for %s in range(%d):" % (j, self.rng.randint(0, 3)))
        inner = Scope(scope)
        inner.vars[j] = INT
        elem = {"LT": T(typ[1]) if c == "LT" else None, "LF": FLOAT, "LI": INT}[c]
        self.emit(indent + 1, "%s.append(%s)" % (l, self.expr_of(elem, inner, fn)))
        scope.vars[l] = typ
        # Use it: an element, a reduction over it.
        v = self.name("v")
        if c == "LT":
            form = self.rng.choice(["torch.stack(%s, 0).sum(0)" % l, "%s[-1]" % l,
                                    "%s[len(%s) - 1] * 0.5" % (l, l), "torch.cat(%s, 0)[:%d]" % (l, shape[0]) if shape else "%s[0]" % l])
            self.emit(indent, "%s = %s" % (v, form))
            scope.vars[v] = T(shape)
        elif c == "LF":
            self.emit(indent, "%s = %s" % (v, self.rng.choice(["sum(%s)" % l, "%s[0]" % l, "max(%s)" % l])))
            scope.vars[v] = FLOAT
        else:
            self.emit(indent, "%s = %s" % (v, self.rng.choice(["sum(%s)" % l, "%s[-1]" % l, "len(%s)" % l])))
            scope.vars[v] = INT

    # ---- dicts (feature "dict") -------------------------------------------------------
    def dict_stmt(self, scope, fn, indent, in_loop):
        """A dict made, written (new keys only in the block that made it, so its keys
        are known on every path; existing keys also in nested branches outside loops),
        iterated (only when never written) or read."""
        own = [(n, t) for n, t in scope.vars.items()
               if t[0] in ("DT", "DF") and n not in self.dict_readonly]
        visible = [(n, t) for n, t in scope.all().items() if t[0] in ("DT", "DF")]
        nested = [] if in_loop else [
            (n, t) for n, t in visible
            if t[0] == "DT" and t[1] and n not in scope.vars and n not in self.dict_readonly]
        kinds = ["new", "new"]
        if own:
            kinds += ["write", "write", "pop", "update"]
        if nested:
            kinds += ["rewrite"]
        if any(n not in self.dict_written and t[1] for n, t in visible):
            kinds += ["iter", "iter"]
        k = self.rng.choice(kinds)
        if k == "new":
            return self.dict_new(scope, fn, indent)
        if k == "rewrite":
            n, t = self.rng.choice(nested)
            key, shape = self.rng.choice(list(t[1]))
            self.emit(indent, "%s[%r] = %s" % (n, key, self.tensor_expr(scope, shape, fn, 2)))
            self.dict_written.add(n)
            return
        if k == "iter":
            n, t = self.rng.choice([(n, t) for n, t in visible
                                    if n not in self.dict_written and t[1]])
            return self.dict_iter(scope, fn, indent, n, t)
        n, t = self.rng.choice(own)
        if t[0] == "DF":
            key = self.rng.choice(list(t[1]) + [7])
            self.emit(indent, "%s[%d] = %s" % (n, key, self.float_expr(scope, fn, 1)))
            scope.vars[n] = ("DF", tuple(sorted(set(t[1]) | {key})))
            self.dict_written.add(n)
            return
        entries = list(t[1])
        if k == "pop" and len(entries) >= 2:
            i = self.rng.randrange(len(entries))
            key, shape = entries.pop(i)
            v = self.name("v")
            self.emit(indent, "%s = %s.pop(%r)" % (v, n, key))
            scope.vars[v] = T(shape)
        elif k == "update":
            key = self.fresh_key(entries)
            shape = self.some_shape(scope, 2)
            self.emit(indent, "%s.update({%r: %s})" % (n, key, self.tensor_expr(scope, shape, fn, 2)))
            entries.append((key, shape))
        else:
            if entries and self.chance(0.6):
                key, shape = self.rng.choice(entries)
            else:
                key, shape = self.fresh_key(entries), self.some_shape(scope, 2)
                entries.append((key, shape))
            self.emit(indent, "%s[%r] = %s" % (n, key, self.tensor_expr(scope, shape, fn, 2)))
        scope.vars[n] = ("DT", tuple(entries))
        self.dict_written.add(n)

    def fresh_key(self, entries):
        used = {k for k, _ in entries}
        return self.rng.choice([k for k in ["a", "b", "h", "w", "out", "it's"] if k not in used]
                               or ["k%d" % len(used)])

    def dict_new(self, scope, fn, indent):
        d = self.name("d")
        if self.chance(0.2):
            keys = tuple(sorted(self.rng.sample(range(4), self.rng.randint(1, 3))))
            body = ", ".join("%d: %s" % (k, self.float_expr(scope, fn, 1)) for k in keys)
            self.emit(indent, "%s: Dict[int, float] = {%s}" % (d, body))
            scope.vars[d] = ("DF", keys)
            return
        entries = []
        for _ in range(self.rng.randint(1, 3)):
            entries.append((self.fresh_key(entries), self.some_shape(scope, 2)))
        values = ["%r: %s" % (k, self.tensor_expr(scope, s, fn, 2)) for k, s in entries]
        if self.chance(0.2):
            self.emit(indent, "%s: Dict[str, torch.Tensor] = {}" % d)
            for v in values:
                key, expr = v.split(": ", 1)
                self.emit(indent, "%s[%s] = %s" % (d, key, expr))
            self.dict_written.add(d)
        else:
            self.emit(indent, "%s = {%s}" % (d, ", ".join(values)))
        scope.vars[d] = ("DT", tuple(entries))

    def dict_iter(self, scope, fn, indent, n, t):
        acc = self.name("acc")
        if t[0] == "DF":
            self.emit(indent, "%s = 0.0" % acc)
            kv = self.name("k")
            self.emit(indent, "for %s, %s in %s.items():" % (kv + "k", kv + "v", n))
            self.emit(indent + 1, "%s = %s + %sv * float(%sk)" % (acc, acc, kv, kv))
            scope.vars[acc] = FLOAT
            return
        form = self.rng.choice(["items", "keys", "values", "comp"])
        if any(shape == () for _, shape in t[1]):
            fn.sums_0dim = True
        c = self.float_lit()
        kn, vn = self.name("q"), self.name("u")
        if form == "comp":
            self.emit(indent, "%s = sum([%s.sum() * %s for %s in %s.values()])" % (acc, vn, c, vn, n))
        else:
            self.emit(indent, "%s = torch.zeros([], dtype=%s)" % (acc, FLOAT64))
            if form == "items":
                self.emit(indent, "for %s, %s in %s.items():" % (kn, vn, n))
                self.emit(indent + 1, "%s = %s + %s.sum() * %s" % (acc, acc, vn, c))
            elif form == "keys":
                self.emit(indent, "for %s in %s:" % (kn, n))
                self.emit(indent + 1, "%s = %s + %s[%s].mean() * %s" % (acc, acc, n, kn, c))
            else:
                self.emit(indent, "for %s in %s.values():" % (vn, n))
                self.emit(indent + 1, "%s = %s + torch.tanh(%s).sum()" % (acc, acc, vn))
        scope.vars[acc] = T(())

    def optional_stmt(self, scope, fn, indent, in_loop, loop_depth):
        shape = fn.ret_shape
        o = self.name("o")
        self.emit(indent, "%s: Optional[torch.Tensor] = None" % o)
        self.emit(indent, "if %s:" % self.bool_expr(scope, fn))
        self.emit(indent + 1, "%s = %s" % (o, self.tensor_expr(scope, shape, fn, 1)))
        v = self.name("v")
        form = self.rng.choice(["is_not", "ternary", "and"])
        if form == "is_not":
            self.emit(indent, "%s = %s" % (v, self.tensor_expr(scope, shape, fn, 2)))
            self.emit(indent, "if %s is not None:" % o)
            self.emit(indent + 1, "%s = %s + %s" % (v, v, o))
        elif form == "ternary":
            self.emit(indent, "%s = %s if %s is not None else %s" % (
                v, o, o, self.tensor_expr(scope, shape, fn, 2)))
        else:
            self.emit(indent, "%s = %s" % (v, self.tensor_expr(scope, shape, fn, 2)))
            self.emit(indent, "if %s is None or %s:" % (o, self.bool_expr(scope, fn, 1)))
            self.emit(indent + 1, "%s = %s * 2.0" % (v, v))
        scope.vars[v] = T(shape)

    # ---- functions -----------------------------------------------------------------------
    def function(self, differentiable):
        name = self.name("f")
        params = []
        n_t = self.rng.randint(1, 3)
        shapes = []
        for i in range(n_t):
            s = self.shape()
            shapes.append(s)
            params.append(("x%d" % i, T(s)))
        if self.chance(0.6):
            params.append(("n", INT))
        if self.chance(0.6):
            params.append(("s", FLOAT))
        ret_shape = self.rng.choice(shapes + [self.shape()])
        ret = T(ret_shape)
        f = Function(name, params, ret, differentiable)
        f.ret_shape = ret_shape
        f.param_names = {p for p, _ in params}
        f.packed = "dict" in self.features and self.chance(0.3)
        start = len(self.lines)
        anns = ["p: Dict[str, torch.Tensor]"] if f.packed else []
        for p, t in params:
            if t[0] != "T" or not f.packed:
                anns.append(p if t[0] == "T" else "%s: %s" % (p, t[0]))
        rann = " -> torch.Tensor" if self.chance(0.5) else ""
        self.emit(0, "def %s(%s)%s:" % (name, ", ".join(anns), rann))
        scope = Scope()
        for p, t in params:
            scope.vars[p] = t
        if f.packed:
            # The parameter is read, never written (and its entries read by key).
            for p, t in params:
                if t[0] == "T":
                    self.emit(1, "%s = p[%r]" % (p, p))
            scope.vars["p"] = ("DT", tuple((p, t[1]) for p, t in params if t[0] == "T"))
            self.dict_readonly.add("p")
        self.depth = 0
        returned = self.block(scope, f, 1, self.rng.randint(2, 6), False, 0)
        if not returned:
            self.emit(1, "return %s" % self.expr_of(ret, scope, f))
        self.emit(0, "")
        self.emit(0, "")
        self.dict_readonly.discard("p")
        f.src = "\n".join(self.lines[start:])
        self.functions.append(f)
        return f

    # ---- top level -----------------------------------------------------------------------
    def call_args(self, f, tensors):
        args = []
        for (p, t) in f.params:
            if t == INT:
                args.append(str(self.rng.randint(0, 3)))
            elif t == FLOAT:
                args.append(self.float_lit())
            else:
                args.append(tensors[p])
        return args

    def top_level(self, f):
        # Inputs.
        tensors = {}
        for p, t in f.params:
            if t[0] == "T":
                g = self.name("X")
                self.emit(0, "%s = %s" % (g, self.tensor_lit(t[1])))
                tensors[p] = g
        args = self.call_args(f, tensors)
        call = "%s(%s)" % (f.name, ", ".join(self.packed_args(f, args)))
        self.emit(0, "print(%s.tolist())" % call)
        if self.chance(0.3):
            self.emit(0, "print(%s)" % call)
        if "dict" in self.features and self.chance(0.3):
            r = self.name("R")
            self.emit(0, "%s = {'out': %s, 'twice': %s * 2.0}" % (r, call, call))
            self.emit(0, "print(%s, len(%s), list(%s), 'out' in %s)" % (r, r, r, r))
        tparams = [p for p, t in f.params if t[0] == "T"]
        # A wrapper of the tensor parameters only, with the scalars fixed.
        w = self.name("W")
        wparams = ", ".join(tparams)
        wargs = ", ".join(self.packed_args(
            f, [p if t[0] == "T" else a for (p, t), a in zip(f.params, args)]))
        self.emit(0, "def %s(%s):" % (w, wparams))
        self.emit(1, "return %s(%s)" % (f.name, wargs))
        self.emit(0, "")
        self.emit(0, "")
        xs = ", ".join(tensors[p] for p in tparams)
        l = self.name("L")
        self.emit(0, "def %s(%s):" % (l, wparams))
        self.emit(1, "return (%s(%s) * %s).sum()" % (w, wparams, self.float_lit()))
        self.emit(0, "")
        self.emit(0, "")
        if f.differentiable:
            self.transforms(f, tparams, tensors, w, l, xs)
        if "vmap" in self.features and not f.uses_data:
            self.vmap_calls(f, tparams, tensors, w, l)
        self.eager(f, tparams, tensors, args)

    def transforms(self, f, tparams, tensors, w, l, xs):
        k = len(tparams)
        gs = ", ".join("g%d" % i for i in range(k))
        # grad with argnums.
        argnums = "(%s)" % ", ".join(str(i) for i in range(k)) + ("," if k == 1 else "")
        if k == 1:
            argnums = "(0,)"
        self.emit(0, "%s = grad(%s, argnums=%s)(%s)" % (gs + ("," if k == 1 else ""), l, argnums, xs))
        for i in range(k):
            self.emit(0, "print(g%d.tolist())" % i)
        if k >= 1 and self.chance(0.5):
            self.emit(0, "print(grad(%s)(%s).tolist())" % (l, xs))
        # vjp
        if self.chance(0.6):
            self.emit(0, "out, fn = vjp(%s, %s)" % (w, xs))
            self.emit(0, "%s = fn(torch.ones_like(out) * %s)" % (gs + ("," if k == 1 else ""), self.float_lit()))
            self.emit(0, "print(out.tolist(), %s)" % ", ".join("g%d.tolist()" % i for i in range(k)))
        # jvp
        if self.chance(0.6):
            tans = []
            for p in tparams:
                tn = self.name("T")
                self.emit(0, "%s = %s" % (tn, self.tensor_lit(dict(f.params)[p][1])))
                tans.append(tn)
            comma = "," if k == 1 else ""
            self.emit(0, "out, tout = jvp(%s, (%s%s), (%s%s))" % (w, xs, comma, ", ".join(tans), comma))
            self.emit(0, "print(out.tolist(), tout.tolist())")
        # hessian of the first input, the others hidden (top-level) inputs.
        first = tparams[0]
        one_element = math.prod(dict(f.params)[first][1]) == 1
        if (not f.uses_data and not f.no_hessian and not ((f.sums_0dim or f.ret_shape == ()) and one_element) and
                self.chance(0.4)):
            h = self.name("H")
            self.emit(0, "def %s(%s):" % (h, first))
            rest = [p if p == first else tensors[p] for p in tparams]
            self.emit(1, "return %s(%s)" % (l, ", ".join(rest)))
            self.emit(0, "")
            self.emit(0, "")
            self.emit(0, "print(hessian(%s)(%s).tolist())" % (h, tensors[first]))

    def batched_inputs(self, f, tparams, tensors, batch):
        """Inputs for vmap: each tensor parameter mapped at a random dim (a fresh tensor
        with `batch` inserted there) or not (None); at least one is mapped."""
        in_dims, args = [], []
        mapped = [self.chance(0.7) for _ in tparams]
        if not any(mapped):
            mapped[self.rng.randrange(len(tparams))] = True
        for p, m in zip(tparams, mapped):
            shape = dict(f.params)[p][1]
            if not m:
                in_dims.append("None")
                args.append(tensors[p])
                continue
            d = self.rng.randint(-(len(shape) + 1), len(shape))
            pos = d if d >= 0 else d + len(shape) + 1
            v = self.name("V")
            self.emit(0, "%s = %s" % (v, self.tensor_lit(shape[:pos] + (batch,) + shape[pos:])))
            in_dims.append(str(d))
            args.append(v)
        if len(set(in_dims)) == 1 and in_dims[0] != "None" and self.chance(0.5):
            return in_dims[0], args
        return "(%s%s)" % (", ".join(in_dims), "," if len(in_dims) == 1 else ""), args

    def vmap_calls(self, f, tparams, tensors, w, l):
        """vmap of the function (in_dims, out_dims, nested), per-sample gradients with
        vmap(grad(...)), and Jacobians (jacrev, jacfwd)."""
        if not tparams:
            return
        rank = len(f.ret_shape)
        # Batches of 2 or 3: functorch 1.13 fails on sum() of a 0-dim value in a batch of 1
        # ("Could not allocate memory to change Tensor SizesAndStrides!").
        in_dims, args = self.batched_inputs(f, tparams, tensors, self.rng.randint(2, 3))
        self.emit(0, "print(vmap(%s, in_dims=%s)(%s).tolist())" % (w, in_dims, ", ".join(args)))
        # functorch 1.13 mishandles a result that does not depend on the mapped inputs when
        # its out_dim is not 0 (a wrong expand, or memory corruption): the result is made
        # to depend on every input (by + 0.0 * ...) where out_dims is written.
        d = self.name("D")
        wparams = ", ".join(tparams)
        self.emit(0, "def %s(%s):" % (d, wparams))
        self.emit(1, "return %s(%s) + (%s) * 0.0" % (
            w, wparams, " + ".join("%s.sum()" % p for p in tparams)))
        self.emit(0, "")
        self.emit(0, "")
        out_dim = self.rng.randint(-(rank + 1), rank)
        self.emit(0, "print(vmap(%s, in_dims=%s, out_dims=%d)(%s).tolist())" % (
            d, in_dims, out_dim, ", ".join(args)))
        if self.chance(0.3):
            # Nested: the inner vmap maps the given dims, the outer a new dim 0 (of size
            # 2) of the mapped inputs.
            inner, iargs = self.batched_inputs(f, tparams, tensors, 2)
            big, outer = [], []
            for a in iargs:
                if a.startswith("V"):
                    b = self.name("V")
                    self.emit(0, "%s = torch.stack([%s, %s * 0.5 + 0.25], 0)" % (b, a, a))
                    big.append(b)
                    outer.append("0")
                else:
                    big.append(a)
                    outer.append("None")
            odims = "(%s%s)" % (", ".join(outer), "," if len(outer) == 1 else "")
            self.emit(0, "print(vmap(vmap(%s, in_dims=%s), in_dims=%s)(%s).tolist())" % (
                w, inner, odims, ", ".join(big)))
        if not f.differentiable:
            return
        k = len(tparams)
        if self.chance(0.6):
            argnums = "(%s%s)" % (", ".join(str(i) for i in range(k)), "," if k == 1 else "")
            gs = ", ".join("q%d" % i for i in range(k)) + ("," if k == 1 else "")
            self.emit(0, "%s = vmap(grad(%s, argnums=%s), in_dims=%s)(%s)" % (
                gs, l, argnums, in_dims, ", ".join(args)))
            for i in range(k):
                self.emit(0, "print(q%d.tolist())" % i)
        if self.chance(0.5) and numel(f.ret_shape) * sum(
                numel(dict(f.params)[p][1]) for p in tparams) <= 400:
            i = self.rng.randrange(k)
            jac = self.rng.choice(["jacrev", "jacfwd"])
            xs = ", ".join(tensors[p] for p in tparams)
            self.emit(0, "print(%s(%s, argnums=%d)(%s).tolist())" % (jac, w, i, xs))

    def eager(self, f, tparams, tensors, args):
        """The eager tape: leaves that require grad, a call, ops at top level, backward."""
        leaves = {}
        for p in tparams:
            a = self.name("A")
            self.emit(0, "%s = %s.clone().requires_grad_()" % (a, tensors[p]) if self.chance(0.5)
                      else "%s = torch.tensor(%s.tolist(), dtype=%s, requires_grad=True)" %
                      (a, tensors[p], FLOAT64))
            leaves[p] = a
        eargs = self.packed_args(
            f, [leaves[p] if t[0] == "T" else a for (p, t), a in zip(f.params, args)])
        y = self.name("y")
        self.emit(0, "%s = %s(%s)" % (y, f.name, ", ".join(eargs)))
        # Some eager ops of their own on the leaves and the result.
        scope = Scope()
        for p in tparams:
            scope.vars[leaves[p]] = dict(f.params)[p]
        scope.vars[y] = f.ret
        z = self.name("z")
        self.emit(0, "%s = %s" % (z, self.tensor_expr(scope, (), None, 1)))
        self.emit(0, "r = (%s * %s).sum() + %s" % (y, y, z))
        if self.chance(0.3):
            self.emit(0, "print(r)")
        self.emit(0, "if r.requires_grad:")
        self.emit(1, "r.backward()")
        for p in tparams:
            self.emit(0, "print(%s.grad)" % leaves[p])
        if "train" in self.features and self.chance(0.5):
            self.train(f, tparams, leaves, eargs)

    def train(self, f, tparams, leaves, eargs):
        """A tutorial's training loop on the leaves: backward, an SGD step in place under
        no_grad (at top level or through a def), then zeroing or clearing the grads."""
        lr = self.rng.choice(["0.1", "0.05", "0.01"])
        through_def = self.chance(0.4)
        if through_def:
            self.emit(0, "def sgd_step(params: List[torch.Tensor], lr: float):")
            self.emit(1, "with torch.no_grad():")
            self.emit(2, "for p in params:")
            self.emit(3, "if p.grad is not None:")
            self.emit(4, "p -= lr * p.grad")
            self.emit(0, "")
            self.emit(0, "")
        self.emit(0, "for step in range(%d):" % self.rng.randint(1, 3))
        self.emit(1, "out = %s(%s)" % (f.name, ", ".join(eargs)))
        self.emit(1, "loss = (out * out).mean()")
        self.emit(1, "if loss.requires_grad:")
        self.emit(2, "loss.backward()")
        if through_def:
            self.emit(1, "sgd_step([%s], %s)" % (", ".join(leaves[p] for p in tparams), lr))
        else:
            self.emit(1, "with torch.no_grad():")
            for p in tparams:
                self.emit(2, "if %s.grad is not None:" % leaves[p])
                self.emit(3, "%s -= %s * %s.grad" % (leaves[p], lr, leaves[p]))
        for p in tparams:
            if self.chance(0.5):
                self.emit(1, "%s.grad = None" % leaves[p])
            else:
                self.emit(1, "if %s.grad is not None:" % leaves[p])
                self.emit(2, "%s.grad.zero_()" % leaves[p])
        for p in tparams:
            self.emit(0, "print(%s.tolist())" % leaves[p])

    def program(self):
        self.emit(0, "import torch")
        self.emit(0, "import math")
        self.emit(0, "import torch.nn.functional as F")
        self.emit(0, "from typing import Dict, List, Tuple, Optional")
        if "vmap" in self.features:
            self.emit(0, "from functorch import grad, vjp, jvp, hessian, vmap, jacrev, jacfwd")
        else:
            self.emit(0, "from functorch import grad, vjp, jvp, hessian")
        self.emit(0, "")
        self.emit(0, "")
        n = self.rng.randint(1, 3)
        for _ in range(n):
            self.function(differentiable=self.chance(0.75))
        main = self.functions[-1]
        self.top_level(main)
        return "\n".join(self.lines) + "\n"
