"""Composite aten ops rewritten into the seed graph's reductions and element-wise nodes:
softmax, sums and means, min/max and arg-min/max, variance, vector norms, layer, batch and
group norms, pooling, cumulative scans, flips, matrix products. Part of the translator (trace)."""

from __future__ import annotations

import math
from typing import Any

from evotui.seed.graph import Node, NotDerivable
from evotui.seed.graph_builder import GraphBuilder


class CompositeRewrites(GraphBuilder):
    def op__softmax(self, a: list, kw: dict, val: Any) -> Node:
        x, dim = a[0], a[1]
        m = self.reduce("max", x, [dim], True)
        e = self.ew("exp", self.ew("sub", x, m))
        return self.ew("div", e, self.reduce("sum", e, [dim], True), like=val)

    def op__log_softmax(self, a: list, kw: dict, val: Any) -> Node:
        x, dim = a[0], a[1]
        shifted = self.ew("sub", x, self.reduce("max", x, [dim], True))
        lse = self.ew("log", self.reduce("sum", self.ew("exp", shifted), [dim], True))
        return self.ew("sub", shifted, lse, like=val)

    def op_sum(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.reduce("sum", a[0], dims, keep)

    def op_mean(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.mean(a[0], dims, keep)

    def _minmax(self, op: str, a: list, kw: dict) -> Any:
        if len(a) == 1:
            return self.reduce(op, a[0], [], False)
        dims = list(a[1]) if isinstance(a[1], list | tuple) else [a[1]]
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.reduce(op, a[0], dims, keep)

    def op_amax(self, a: list, kw: dict, val: Any) -> Node:
        return self._minmax("max", a, kw)

    def op_amin(self, a: list, kw: dict, val: Any) -> Node:
        return self._minmax("min", a, kw)

    def op_max(self, a: list, kw: dict, val: Any) -> Any:
        if len(a) > 1 and not isinstance(val, tuple | list):  # aten::max.other
            return self.ew("maximum", a[0], a[1], like=val)
        if len(a) == 1:
            return self._minmax("max", a, kw)
        return (self._minmax("max", a, kw), self._minmax("argmax", a, kw))

    def op_min(self, a: list, kw: dict, val: Any) -> Any:
        if len(a) > 1 and not isinstance(val, tuple | list):  # aten::min.other
            return self.ew("minimum", a[0], a[1], like=val)
        if len(a) == 1:
            return self._minmax("min", a, kw)
        return (self._minmax("min", a, kw), self._minmax("argmin", a, kw))

    def op_argmax(self, a: list, kw: dict, val: Any) -> Node:
        if len(a) < 2 or a[1] is None:
            raise NotDerivable("aten::argmax over all dimensions: no template; pass --seed FILE")
        return self._minmax("argmax", a, kw)

    def op_argmin(self, a: list, kw: dict, val: Any) -> Node:
        if len(a) < 2 or a[1] is None:
            raise NotDerivable("aten::argmin over all dimensions: no template; pass --seed FILE")
        return self._minmax("argmin", a, kw)

    def op_any(self, a: list, kw: dict, val: Any) -> Node:
        import torch

        dims = a[1] if len(a) > 1 else []
        dims = list(dims) if isinstance(dims, list | tuple) else [dims]
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        node = self.reduce("max", self.ew("ne", a[0], 0.0), dims, keep)
        node.dtype = torch.bool
        return node

    def op_var(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        correction = kw.get("correction", 1)
        return self.var(a[0], dims, bool(kw.get("keepdim", False)),
                        1.0 if correction is None else float(correction))

    def op_linalg_vector_norm(self, a: list, kw: dict, val: Any) -> Node:
        x = a[0]
        order = float(a[1]) if len(a) > 1 else float(kw.get("ord", 2))
        dims = list(a[2]) if len(a) > 2 and a[2] is not None else list(kw.get("dim") or [])
        keep = bool(a[3]) if len(a) > 3 else bool(kw.get("keepdim", False))
        ax = self.ew("abs", x)
        if math.isinf(order):
            return self.reduce("max" if order > 0 else "min", ax, dims, keep)
        if order == 1:
            return self.reduce("sum", ax, dims, keep)
        if order == 2:
            return self.ew("sqrt", self.reduce("sum", self.ew("mul", x, x), dims, keep))
        powered = self.ew("pow_scalar", ax, order)
        return self.ew("pow_scalar", self.reduce("sum", powered, dims, keep), 1.0 / order)

    def op_native_layer_norm(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        x, normalized, w, b, eps = a[:5]
        dims = list(range(len(x.shape) - len(normalized), len(x.shape)))
        m = self.mean(x, dims, True)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), dims, True), eps))
        y = self.ew("mul", d, rstd)
        if w is not None:
            y = self.ew("mul", y, w)
        if b is not None:
            y = self.ew("add", y, b)
        return (y, None, None)

    def _pool(self, op: str, x: Node, val: Any, d: int, kernel: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, **extra: Any) -> Node:
        def dims(v: Any, default: list[int]) -> list[int]:
            if v is None or (isinstance(v, list | tuple) and not v):
                return list(default)
            values = list(v) if isinstance(v, list | tuple) else [v]
            return values * d if len(values) == 1 else values

        k = dims(kernel, [1] * d)
        return self.add("pool", op, (x,), like=val, kernel=k, stride=dims(stride, k),
                        padding=dims(padding, [0] * d), dilation=dims(dilation, [1] * d),
                        ceil_mode=bool(ceil_mode), **extra)

    def op_max_pool2d_with_indices(self, a: list, kw: dict, val: Any) -> tuple[Node, None]:
        a = a + [None] * (6 - len(a))
        return (self._pool("max", a[0], val[0], 2, a[1], a[2], a[3], a[4], a[5] or False), None)

    def op_max_pool3d_with_indices(self, a: list, kw: dict, val: Any) -> tuple[Node, None]:
        a = a + [None] * (6 - len(a))
        return (self._pool("max", a[0], val[0], 3, a[1], a[2], a[3], a[4], a[5] or False), None)

    def _avg(self, a: list, kw: dict, val: Any, d: int) -> Node:
        a = a + [None] * (7 - len(a))
        include = True if a[5] is None else bool(a[5])
        return self._pool("avg", a[0], val, d, a[1], a[2], a[3], None, a[4] or False,
                          count_include_pad=include, divisor=a[6])

    def op_avg_pool2d(self, a: list, kw: dict, val: Any) -> Node:
        return self._avg(a, kw, val, 2)

    def op_avg_pool3d(self, a: list, kw: dict, val: Any) -> Node:
        return self._avg(a, kw, val, 3)

    def op_cumsum(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("scan", "sum", (a[0],), like=val, dim=a[1] % max(1, len(a[0].shape)))

    def op_flip(self, a: list, kw: dict, val: Any) -> Node:
        rank = max(1, len(a[0].shape))
        dims = sorted({d % rank for d in a[1] if a[0].shape[d % rank] != 1})
        if not dims:
            return a[0]
        return self.add("view", "flip", (a[0],), like=val, view_args=[dims])

    def op_cumprod(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("scan", "prod", (a[0],), like=val, dim=a[1] % max(1, len(a[0].shape)))

    def op__native_batch_norm_legit(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        if len(a) > 6:
            raise NotDerivable("aten::_native_batch_norm_legit with running statistics: no "
                               "template; pass --seed FILE")
        x, w, b, _training, _momentum, eps = a[:6]
        dims = [0] + list(range(2, len(x.shape)))
        m = self.mean(x, dims, True)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), dims, True), eps))
        y = self.ew("mul", d, rstd)
        per_channel = [x.shape[1]] + [1] * (len(x.shape) - 2)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                view = self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                                view_args=[per_channel])
                y = self.ew(op, y, view)
        return (y, None, None)

    def op__native_batch_norm_legit_functional(self, a: list, kw: dict, val: Any) -> tuple:
        x, w, b, _mean, _var, training = a[:6]
        eps = a[7]
        if not training:
            raise NotDerivable("batch norm with running statistics: no template")
        spatial = list(range(2, len(x.shape)))

        def mean(v: Node) -> Node:  # over batch and space, as a mean of per-sample means
            inner = self.mean(v, spatial, True) if spatial else v
            return self.mean(inner, [0], True)

        m = mean(x)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", mean(self.ew("mul", d, d)), eps))
        y = self.ew("mul", d, rstd)
        per_channel = [x.shape[1]] + [1] * len(spatial)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                view = self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                                view_args=[per_channel])
                y = self.ew(op, y, view)
        return (y, None, None, None, None)

    def op__native_batch_norm_legit_no_training(self, a: list, kw: dict, val: Any) -> tuple:
        x, w, b, mean, var, _momentum, eps = a[:7]
        per_channel = [x.shape[1]] + [1] * (len(x.shape) - 2)

        def channel(p: Node) -> Node:
            return self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                            view_args=[per_channel])

        y = self.ew("mul", self.ew("sub", x, channel(mean)),
                    self.ew("rsqrt", self.ew("add", channel(var), eps)))
        if w is not None:
            y = self.ew("mul", y, channel(w))
        if b is not None:
            y = self.ew("add", y, channel(b))
        return (y, None, None)

    def op_native_group_norm(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        x, w, b, n, c, hw, groups, eps = a[:8]
        shape4 = (n, groups, c // groups, hw)
        x4 = self.raw_view(x, f"{{x}}.reshape({{x}}.shape[0], {groups}, -1, "
                              "math.prod({x}.shape[2:]))", shape4)
        m = self.mean(x4, [2, 3], True)
        d = self.ew("sub", x4, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), [2, 3], True), eps))
        y = self.ew("mul", d, rstd)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                y = self.ew(op, y, self.raw_view(p, f"{{x}}.reshape({groups}, -1, 1)",
                                                 (groups, c // groups, 1)))
        return (self.raw_view(y, "{x}.reshape({ref}.shape)", tuple(x.shape), ref=x), None, None)

    def op_convolution(self, a: list, kw: dict, val: Any) -> Node:
        x, w, bias, stride, padding, dilation, transposed, output_padding, groups = a[:9]
        conv = self.add("conv", "conv", (x, w), like=val, stride=list(stride),
                        padding=list(padding), dilation=list(dilation),
                        transposed=bool(transposed), output_padding=list(output_padding),
                        groups=int(groups))
        if bias is None:
            return conv
        d = len(val.shape) - 2
        per_channel = self.raw_view(bias, "{x}.view(-1" + ", 1" * d + ")",
                                    (val.shape[1],) + (1,) * d)
        return self.ew("add", conv, per_channel, like=val)

    def op_mm(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("mm", "mm", (a[0], a[1]), like=val)

    def op_bmm(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("mm", "bmm", (a[0], a[1]), like=val)

    def op_addmm(self, a: list, kw: dict, val: Any) -> Node:
        beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
        prod = self.add("mm", "mm", (a[1], a[2]), like=val)
        if alpha != 1:
            prod = self.ew("mul", prod, alpha)
        bias = a[0] if beta == 1 else self.ew("mul", a[0], beta)
        return self.ew("add", prod, bias, like=val)
