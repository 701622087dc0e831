"""Per-sample reference implementations of the budget-removal algorithms,
and the steps of the rules whose support set only grows (Perceptron,
Stoptron, Passive-Aggressive).

Written from the papers and the decisions of ``doc/decisions.rst``, with no
batching and no caching: one row at a time, every kernel value from
``pairwise_kernels``, the members kept in a list in insertion order (so
"oldest" is the first element and "the r-th member" is ``members[r]``). The
tests compare the estimators with them; ``benchmarks/bench_budget.py`` times
them.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from sklearn_budget import (
    BudgetPerceptron,
    Forgetron,
    KernelPassiveAggressive,
    KernelPerceptron,
    RandomizedBudgetPerceptron,
    Stoptron,
    TighterBudgetPerceptron,
)

TIE_RTOL = 1e-9


class Member:
    def __init__(self, index, x, label, coef, kxx):
        self.index = index
        self.x = x
        self.kxx = kxx
        self.label = label
        self.coef = coef
        self.sigma = 1.0  # Forgetron
        self.unit = None  # Forgetron


class ReferenceOnline:
    """The online protocol; subclasses implement ``threshold`` and ``update``."""

    def __init__(self, classes, kernel="rbf", kernel_params=None, random_state=None):
        self.classes = list(classes)
        self.C = 1 if len(self.classes) == 2 else len(self.classes)
        self.kernel = kernel
        self.kernel_params = kernel_params or {}
        self.rng = np.random.RandomState(random_state)
        self.members = []
        self.sums = {}
        self.rounds = 0
        self.mistakes = 0
        self.removed = 0
        # (index, row, running sum) of each member removed, in order: what
        # the bounded average folds into its pool.
        self.retired_log = []

    # helpers ------------------------------------------------------------
    def k(self, A, B):
        return pairwise_kernels(A, B, metric=self.kernel, **self.kernel_params)

    @staticmethod
    def stack(rows):
        return np.vstack(rows)

    def scores(self, rows):
        """f at ``rows`` (list of 1-row matrices): array (C, len(rows))."""
        if not self.members:
            return np.zeros((self.C, len(rows)))
        K = self.k(self.stack([m.x for m in self.members]), self.stack(rows))
        return np.array([m.coef for m in self.members]).T @ K

    def margin(self, g, label):
        """Margin of score vector ``g`` (C,) for ``label``."""
        if self.C == 1:
            return label * g[0]
        others = [g[c] for c in range(self.C) if c != label]
        return g[label] - max(others)

    def margins(self, G, labels):
        """Margins of the columns of ``G`` (C, m) for ``labels`` (m,)."""
        labels = np.asarray(labels)
        if self.C == 1:
            return labels * G[0]
        idx = np.arange(G.shape[1])
        H = G.copy()
        H[labels, idx] = -np.inf
        return G[labels, idx] - H.max(axis=0)

    def direction(self, f, label):
        if self.C == 1:
            return np.array([float(label)])
        others = [c for c in range(self.C) if c != label]
        r = others[int(np.argmax([f[c] for c in others]))]
        d = np.zeros(self.C)
        d[label], d[r] = 1.0, -1.0
        return d

    def tie_tol(self):
        l1 = np.abs(np.array([m.coef for m in self.members])).sum(axis=0).max()
        kmax = max(abs(m.kxx) for m in self.members)
        return TIE_RTOL * (1.0 + l1 * kmax)

    def pop_member(self, i):
        m = self.members.pop(i)
        self.retired_log.append((m.index, m.x, np.atleast_1d(self.sums.get(m.index, 0.0)).copy()))
        self.removed += 1

    # the protocol -------------------------------------------------------
    def partial_fit(self, X, y, weights=None, index=None):
        n = X.shape[0]
        weights = np.ones(n) if weights is None else weights
        index = np.arange(n) if index is None else index
        for t in range(n):
            if weights[t] == 0:
                continue
            # Rows are kept dense: the reference does not need sparse speed.
            x = X[t : t + 1].toarray() if sp.issparse(X) else X[t : t + 1]
            c = self.classes.index(y[t])
            label = (1 if c == 1 else -1) if self.C == 1 else c
            self.rounds += 1
            for m in self.members:
                self.sums[m.index] = self.sums.get(m.index, 0.0) + m.coef
            self.offer(x, label)
            f = self.scores([x])[:, 0]
            margin = self.margin(f, label)
            if margin <= 0:
                self.mistakes += 1
            thr = self.threshold()
            if margin <= thr:
                kxx = self.k(x, x)[0, 0]
                self.update(index[t], x, label, f, margin, kxx, weights[t])
        return self

    def offer(self, x, label):
        """Every round, before its update (evaluation sets)."""

    def result(self, average=False):
        total = {}
        if average:
            for key, val in self.sums.items():
                total[key] = val / self.rounds
        else:
            for m in self.members:
                total[m.index] = total.get(m.index, 0.0) + m.coef
        support = np.array(sorted(total), dtype=int)
        coef = np.array([total[i] for i in support]).T.reshape(self.C, -1)
        return self.mistakes, support, coef


class RefForgetron(ReferenceOnline):
    def __init__(self, classes, budget, shrink="self-tuned", **kw):
        super().__init__(classes, **kw)
        self.budget = budget
        self.shrink = shrink
        self.Q = 0.0
        self.M = 0

    def threshold(self):
        return 0.0

    def update(self, index, x, label, f, margin, kxx, w):
        self.M += 1
        d = self.direction(f, label)
        new = Member(index, x, label, w * d, kxx)
        new.unit = d
        self.members.append(new)
        if self.shrink != "self-tuned" and self.shrink < 1:
            self.scale(self.shrink)
        while len(self.members) > self.budget:
            r = self.members[0]
            if self.shrink == "self-tuned":
                mu = r.unit @ self.scores([r.x])[:, 0]
                s = r.sigma
                vv = r.unit @ r.unit

                def excess(phi):  # Psi(phi) + Q - 15/32 M
                    return (
                        vv * (s * phi) ** 2
                        + 2 * s * phi * (1 - phi * mu)
                        + self.Q
                        - 15 / 32 * self.M
                    )

                if excess(1.0) <= 0:
                    phi = 1.0
                else:
                    # excess(0) < 0 < excess(1): bisection to the crossing.
                    lo, hi = 0.0, 1.0
                    for _ in range(200):
                        mid = 0.5 * (lo + hi)
                        lo, hi = (mid, hi) if excess(mid) <= 0 else (lo, mid)
                    phi = lo
                self.Q += vv * (s * phi) ** 2 + 2 * s * phi * (1 - phi * mu)
                if phi < 1:
                    self.scale(phi)
            self.pop_member(0)

    def scale(self, phi):
        for m in self.members:
            m.coef = m.coef * phi
            m.sigma *= phi


class RefRBP(ReferenceOnline):
    def __init__(self, classes, budget, **kw):
        super().__init__(classes, **kw)
        self.budget = budget

    def threshold(self):
        return 0.0

    def update(self, index, x, label, f, margin, kxx, w):
        while len(self.members) >= self.budget:
            self.pop_member(self.rng.randint(len(self.members)))
        self.members.append(Member(index, x, label, w * self.direction(f, label), kxx))


class RefBudget(ReferenceOnline):
    """Budget Perceptron (removal='margin') or Tighter Budget Perceptron."""

    def __init__(
        self, classes, budget, beta=0.0, update="perceptron", C=1.0, removal="margin", q=None, **kw
    ):
        super().__init__(classes, **kw)
        self.budget = budget
        self.beta = beta
        self.rule = update
        self.Cstep = C
        self.removal = removal
        self.q = budget if q is None else q
        self.E = []  # [x, label, born, flips, pred]
        self.seen = 0

    def threshold(self):
        return 1.0 if self.rule == "nobias_svm" else self.beta

    def step(self, margin, kxx):
        if self.rule == "perceptron" or (self.rule == "mira" and not self.members):
            return 1.0
        sq = (1.0 if self.C == 1 else 2.0) * kxx
        if sq <= 0:
            return 0.0
        if self.rule == "mira":
            return min(1.0, max(0.0, -margin / sq))
        return min(self.Cstep, max(0.0, (1.0 - margin) / sq))

    def offer(self, x, label):
        if self.removal == "all":
            self.E.append([x, label])
        elif self.removal == "random":  # Algorithm R
            self.seen += 1
            if self.seen <= self.q:
                self.E.append([x, label])
            else:
                r = self.rng.randint(self.seen)
                if r < self.q:
                    self.E[r] = [x, label]

    def update(self, index, x, label, f, margin, kxx, w):
        tau = self.step(margin, kxx)
        if tau <= 0:
            return
        d = self.direction(f, label)
        if self.removal == "flip":
            t = self.rounds
            if len(self.E) >= self.q:
                rates = [e[3] / (t - e[2]) for e in self.E]
                self.E.pop(int(np.argmin(rates)))  # first minimum = oldest
            self.E.append([x, label, t, 0, None])
        while len(self.members) >= self.budget:
            self.pop_member(self.choose())
        self.members.append(Member(index, x, label, w * tau * d, kxx))
        if self.removal == "flip":
            F = self.scores([e[0] for e in self.E])
            for e, g in zip(self.E, F.T):
                pred = int(g[0] > 0) if self.C == 1 else int(np.argmax(g))
                if e[4] is not None and pred != e[4]:
                    e[3] += 1
                e[4] = pred

    def choose(self):
        tol = self.tie_tol()
        S = self.stack([m.x for m in self.members])
        A = np.array([m.coef for m in self.members])  # (n, C)
        if self.removal == "margin":
            K = self.k(S, S)
            score = []
            for j, m in enumerate(self.members):
                g = A.T @ K[:, j] - m.coef * K[j, j]
                score.append(self.margin(g, m.label))
            score = np.array(score)
            return int(np.flatnonzero(score >= score.max() - tol)[0])
        if self.removal == "support":
            E = [[m.x, m.label] for m in self.members]
        else:
            E = self.E
        KE = self.k(S, self.stack([e[0] for e in E]))
        F = A.T @ KE
        errors = []
        labels = [e[1] for e in E]
        for j in range(len(self.members)):
            G = F - np.outer(A[j], KE[j])
            errors.append(int((self.margins(G, labels) <= tol).sum()))
        return int(np.argmin(errors))  # first minimum = oldest


# Steps of the rules whose support set only grows: the coefficient of the
# round's example, from its margin, k(x, x) and the number of members.
def perceptron_rule(margin, kxx, n_members):
    return 1.0 if margin <= 0 else 0.0


def stoptron_rule(budget):
    return lambda margin, kxx, n: 1.0 if margin <= 0 and n < budget else 0.0


def pa_rule(C, loss):
    def rule(margin, kxx, n):
        hinge = max(0.0, 1.0 - margin)
        if hinge == 0 or kxx <= 0:
            return 0.0
        return min(C, hinge / kxx) if loss == "hinge" else hinge / (kxx + 0.5 / C)

    return rule


# The estimators whose support set only grows, with the step of their rule.
GROWING_CASES = {
    # The references play the last hypothesis (the defaults average).
    "perceptron": (
        lambda **kw: KernelPerceptron(**{"average": False, **kw}),
        perceptron_rule,
    ),
    "stoptron": (
        lambda **kw: Stoptron(budget=25, **{"average": False, **kw}),
        stoptron_rule(25),
    ),
    "pa1": (
        lambda **kw: KernelPassiveAggressive(C=0.3, **{"average": False, **kw}),
        pa_rule(0.3, "hinge"),
    ),
    "pa2": (
        lambda **kw: KernelPassiveAggressive(
            C=0.7, loss="squared_hinge", **{"average": False, **kw}
        ),
        pa_rule(0.7, "squared_hinge"),
    ),
    "pa": (
        lambda **kw: KernelPassiveAggressive(C=np.inf, **{"average": False, **kw}),
        pa_rule(np.inf, "hinge"),
    ),
}


def _last(kw):
    """The Budget Perceptrons as the references play them: the last
    hypothesis, and the epochs of ``max_iter=5`` (the defaults are one
    averaged epoch)."""
    return {"max_iter": 5, "average": False, **kw}


def _online(kw):
    """The last hypothesis, as the references play it (the defaults average)."""
    return {"average": False, **kw}


# The estimators that remove members, each with its reference: name ->
# (estimator factory, reference factory); both take the budget.
CASES = {
    "forgetron": (
        lambda B, **kw: Forgetron(budget=B, **_online(kw)),
        lambda cl, B, **kw: RefForgetron(cl, B, **kw),
    ),
    "forgetron-0.8": (
        lambda B, **kw: Forgetron(budget=B, shrink=0.8, **_online(kw)),
        lambda cl, B, **kw: RefForgetron(cl, B, shrink=0.8, **kw),
    ),
    "remove-oldest": (
        lambda B, **kw: Forgetron(budget=B, shrink=1.0, **_online(kw)),
        lambda cl, B, **kw: RefForgetron(cl, B, shrink=1.0, **kw),
    ),
    "rbp": (
        lambda B, **kw: RandomizedBudgetPerceptron(budget=B, **_online(kw)),
        lambda cl, B, **kw: RefRBP(cl, B, **kw),
    ),
    "budget": (
        lambda B, **kw: BudgetPerceptron(budget=B, **_last(kw)),
        lambda cl, B, **kw: RefBudget(cl, B, **kw),
    ),
    "budget-mira": (
        lambda B, **kw: BudgetPerceptron(budget=B, beta=0.5, update="mira", **_last(kw)),
        lambda cl, B, **kw: RefBudget(cl, B, beta=0.5, update="mira", **kw),
    ),
    "budget-nobias": (
        lambda B, **kw: BudgetPerceptron(budget=B, update="nobias_svm", C=0.7, **_last(kw)),
        lambda cl, B, **kw: RefBudget(cl, B, update="nobias_svm", C=0.7, **kw),
    ),
    "tighter-support": (
        lambda B, **kw: TighterBudgetPerceptron(budget=B, beta=0.3, **_last(kw)),
        lambda cl, B, **kw: RefBudget(cl, B, beta=0.3, removal="support", **kw),
    ),
    "tighter-all": (
        lambda B, **kw: TighterBudgetPerceptron(budget=B, error_set="all", **_last(kw)),
        lambda cl, B, **kw: RefBudget(cl, B, removal="all", **kw),
    ),
    "tighter-random": (
        lambda B, **kw: TighterBudgetPerceptron(
            budget=B, error_set="random", error_set_size=30, **_last(kw)
        ),
        lambda cl, B, **kw: RefBudget(cl, B, removal="random", q=30, **kw),
    ),
    "tighter-flip": (
        lambda B, **kw: TighterBudgetPerceptron(
            budget=B, update="nobias_svm", error_set="flip", error_set_size=25, **_last(kw)
        ),
        lambda cl, B, **kw: RefBudget(cl, B, update="nobias_svm", removal="flip", q=25, **kw),
    ),
}
