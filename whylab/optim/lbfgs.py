"""L-BFGS (torch.optim.LBFGS): a quasi-Newton method that keeps the last few steps.

Each ``step(closure)`` runs up to ``max_iter`` iterations. An iteration builds
the search direction by the two-loop recursion over the stored pairs
(s = step taken, y = change of gradient), moves the parameters by ``t`` along it
(``lr``, and on the very first iteration ``min(1, 1/|g|_1) lr``), and re-evaluates
the closure. It stops early on torch's tests: gradient below ``tolerance_grad``,
step or loss change below ``tolerance_change``, or ``max_eval`` evaluations.
Deviation: ``line_search_fn="strong_wolfe"`` is not implemented (it raises).
"""

from __future__ import annotations

import whylab

from .optimizer import Optimizer


class LBFGS(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn is not None:
            raise NotImplementedError("LBFGS: line_search_fn='strong_wolfe' is not implemented")
        max_eval = max_iter * 5 // 4 if max_eval is None else max_eval
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        parts = [
            whylab.zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
            for p in self._params
        ]
        return whylab.cat(parts, 0)

    def _add_to_params(self, step_size: float, direction) -> None:
        offset = 0
        for p in self._params:
            count = p.numel()
            p.add_(direction[offset : offset + count].view_as(p), alpha=step_size)
            offset += count

    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS needs a closure that recomputes the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        original_loss = self._run_closure(closure)
        loss = float(original_loss)
        evaluations = 1
        state["func_evals"] += 1
        with whylab.no_grad():
            flat_grad = self._flat_grad()
            if float(flat_grad.abs().max()) <= tolerance_grad:
                return original_loss
            direction, t = state.get("d"), state.get("t")
            old_dirs, old_steps = state.get("old_dirs"), state.get("old_stps")
            ro, h_diag = state.get("ro"), state.get("H_diag")
            previous_grad, previous_loss = state.get("prev_flat_grad"), state.get("prev_loss")
            iteration = 0
            while iteration < max_iter:
                iteration += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    direction = -flat_grad
                    old_dirs, old_steps, ro, h_diag = [], [], [], 1.0
                else:
                    y = flat_grad - previous_grad
                    s = direction * t
                    ys = float(y.dot(s))
                    if ys > 1e-10:
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0)
                            old_steps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_steps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / float(y.dot(y))
                    alphas = [0.0] * len(old_dirs)
                    q = -flat_grad
                    for i in range(len(old_dirs) - 1, -1, -1):
                        alphas[i] = float(old_steps[i].dot(q)) * ro[i]
                        q = q - old_dirs[i] * alphas[i]
                    r = q * h_diag
                    for i in range(len(old_dirs)):
                        beta = float(old_dirs[i].dot(r)) * ro[i]
                        r = r + old_steps[i] * (alphas[i] - beta)
                    direction = r
                previous_grad = flat_grad.clone()
                previous_loss = loss
                if state["n_iter"] == 1:
                    t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr
                else:
                    t = lr
                if float(flat_grad.dot(direction)) > -tolerance_change:
                    break
                spent = 0
                self._add_to_params(t, direction)
                if iteration != max_iter:
                    loss = float(self._run_closure(closure))
                    flat_grad = self._flat_grad()
                    spent = 1
                evaluations += spent
                state["func_evals"] += spent
                if iteration == max_iter or evaluations >= max_eval:
                    break
                if float(flat_grad.abs().max()) <= tolerance_grad:
                    break
                if float((direction * t).abs().max()) <= tolerance_change:
                    break
                if abs(loss - previous_loss) < tolerance_change:
                    break
            state.update(
                d=direction,
                t=t,
                old_dirs=old_dirs,
                old_stps=old_steps,
                ro=ro,
                H_diag=h_diag,
                prev_flat_grad=previous_grad,
                prev_loss=previous_loss,
            )
        return original_loss
