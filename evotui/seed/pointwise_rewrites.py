"""Element-wise aten ops whose arguments the templates need in another form (``add`` with
``alpha``, ``div`` with a rounding mode, ``clamp``, ``gelu``'s approximation, a cast...),
rewritten into seed graph nodes. Part of the translator (trace)."""

from __future__ import annotations

from typing import Any

from evotui.seed.graph import Node, NotDerivable
from evotui.seed.graph_builder import GraphBuilder


class PointwiseRewrites(GraphBuilder):
    def op_add(self, a: list, kw: dict, val: Any) -> Node:
        alpha = kw.get("alpha", 1)
        b = a[1] if alpha == 1 else self.ew("mul", a[1], alpha)
        return self.ew("add", a[0], b, like=val)

    def op_sub(self, a: list, kw: dict, val: Any) -> Node:
        alpha = kw.get("alpha", 1)
        b = a[1] if alpha == 1 else self.ew("mul", a[1], alpha)
        return self.ew("sub", a[0], b, like=val)

    def op_rsub(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("sub", a[1], a[0], like=val)

    def op_div(self, a: list, kw: dict, val: Any) -> Node:
        mode = kw.get("rounding_mode")
        q = self.ew("div", a[0], a[1], like=val)
        if mode is None:
            return q
        return self.ew("floor" if mode == "floor" else "trunc", q, like=val)

    def op_clamp(self, a: list, kw: dict, val: Any) -> Node:
        lo = a[1] if len(a) > 1 else kw.get("min")
        hi = a[2] if len(a) > 2 else kw.get("max")
        return self.ew("clamp", a[0], lo, hi, like=val)

    def op_hardtanh(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("clamp", a[0], a[1] if len(a) > 1 else -1.0, a[2] if len(a) > 2 else 1.0,
                       like=val)

    def op_leaky_relu(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("leaky_relu", a[0], a[1] if len(a) > 1 else 0.01, like=val)

    def op_elu(self, a: list, kw: dict, val: Any) -> Node:
        alpha, scale, in_scale = (list(a[1:]) + [1.0, 1.0, 1.0])[:3]
        return self.ew("elu", a[0], alpha, scale, in_scale, like=val)

    def op_gelu(self, a: list, kw: dict, val: Any) -> Node:
        approx = kw.get("approximate", a[1] if len(a) > 1 else "none")
        return self.ew("gelu_tanh" if approx == "tanh" else "gelu", a[0], like=val)

    def op_softplus(self, a: list, kw: dict, val: Any) -> Node:
        beta, threshold = (list(a[1:]) + [1.0, 20.0])[:2] if len(a) > 1 else (1.0, 20.0)
        return self.ew("softplus", a[0], beta, threshold, like=val)

    def op_pow(self, a: list, kw: dict, val: Any) -> Node:
        if isinstance(a[0], Node) and not isinstance(a[1], Node):
            return self.ew("pow_scalar", a[0], float(a[1]), like=val)
        return self.ew("pow", a[0], a[1], like=val)

    def op__to_copy(self, a: list, kw: dict, val: Any) -> Node:
        if val is not None and str(val.device) != "cpu" and str(val.device) != "meta":
            raise NotDerivable("the model moves a tensor to another device")
        return self.ew("cast", a[0], like=val)

    def op_scalar_tensor(self, a: list, kw: dict, val: Any) -> Any:
        return float(a[0])

    def op_full_like(self, a: list, kw: dict, val: Any) -> Any:
        return self.ew("fill", a[0], float(a[1]), like=val)
