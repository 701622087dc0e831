"""One transaction for every call that changes an estimator.

A call either completes or leaves the estimator exactly as it was: a failed
or interrupted call on a fitted model leaves the same stream to go on, and a
failed first call leaves the estimator unfitted. :class:`Transaction` is the
one mechanism behind it. On entry it records what is needed to put the
estimator back (its ``__dict__``, what is derived from its state, and for a
call that changes the state arrays in place a copy of them); on any exception,
``KeyboardInterrupt`` included, it restores that record and lets the
exception go on.

The state arrays are copied at the cost of the call's own work: those that
the compiled rounds change are copied on entry, those that only Python code
changes after the rounds (the pool of the bounded average, the bins of the
probabilities: ``lazy`` prefixes) only when a call is about to change them
(:func:`before_change`), so that a call that does not touch them never
copies them.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import weakref

from ._random import generator_state, set_generator_state


class WeakCache:
    """Values kept beside objects, each dropped when its object goes.

    What ``weakref.WeakKeyDictionary`` does for objects compared by
    identity (estimators), in a dict keyed by ``id``: an entry holds a weak
    reference whose callback drops it when the object is collected, before
    its id can be another's. The dictionary's methods are Python functions,
    a cost a stream of one-row calls paid several times per call.
    """

    __slots__ = ("_entries",)

    def __init__(self):
        self._entries = {}

    def get(self, obj, default=None):
        entry = self._entries.get(id(obj))
        return default if entry is None else entry[1]

    def pop(self, obj, default=None):
        # The entry's weak reference goes with it, and its callback with it.
        entry = self._entries.pop(id(obj), None)
        return default if entry is None else entry[1]

    def __getitem__(self, obj):
        return self._entries[id(obj)][1]

    def __setitem__(self, obj, value):
        key, entries = id(obj), self._entries
        entry = entries.get(key)
        if entry is None:
            ref = weakref.ref(obj, lambda _, key=key: entries.pop(key, None))
        else:
            ref = entry[0]
        entries[key] = (ref, value)

    @property
    def entries(self):
        """The dict behind the cache: ``id(obj)`` -> ``(weak reference,
        value)``, the same object for the cache's life (read by compiled code)."""
        return self._entries

    def __contains__(self, obj):
        return id(obj) in self._entries

    def __len__(self):
        return len(self._entries)


# Runs of a rollback that an exception interrupts (Transaction._rollback_whole).
_ROLLBACK_TRIES = 3

# What an estimator derives from its state, kept beside it rather than in its
# ``__dict__`` (which then holds the state alone, whatever was read from it):
# the fitted attributes computed on first access after a call that changed
# the state. Every transaction drops it on entry and puts it back on rollback.
_PUBLISHED = WeakCache()

# The undo record of the call in progress on each estimator: ``"_state"``,
# the state arrays as they were (lazy ones still shared with the state until
# copied), ``"_lazy"``, the prefixes already copied, and ``"_rng_state"``,
# the random generator's state once saved.
_UNDO = WeakCache()


def published(estimator):
    """The cache of what ``estimator`` derives from its state (name: value)."""
    cache = _PUBLISHED.get(estimator)
    if cache is None:
        cache = _PUBLISHED[estimator] = {}
    return cache


def _save_generator(rng):
    """The state of ``rng`` for an undo record.

    A copy of the bit generator's state where there is one (a RandomState
    on MT19937: ``get_state`` costs tens of microseconds), else ``get_state``
    as a dict (the legacy tuple exists only for MT19937: asking it of another
    bit generator warns).
    """
    saved = generator_state(rng)
    if saved is not None:
        return ("bytes", saved)
    return ("numpy", rng.get_state(legacy=False))


def _load_generator(rng, saved):
    """Put back a state that :func:`_save_generator` saved."""
    kind, value = saved
    if kind == "bytes":
        set_generator_state(rng, value)
    else:
        rng.set_state(value)


def before_change(estimator, prefix):
    """Copy the state arrays named ``prefix*`` into the undo record of the call.

    ``"_rng"`` saves the state of the random generator instead, which costs
    tens of microseconds to read, so is saved only by calls that draw. Does
    nothing outside a call that records the arrays (a call that replaces the
    state instead of changing it), or once the prefix is copied.
    """
    record = _UNDO.get(estimator)
    if record is None or "_lazy" not in record or prefix in record["_lazy"]:
        return
    if prefix == "_rng":
        record["_rng_state"] = _save_generator(estimator._rng)
    else:
        arrays, state = record["_state"], estimator._state
        for name, a in arrays.items():
            if name.startswith(prefix) and a is state.get(name):
                arrays[name] = a.copy()
    record["_lazy"].add(prefix)


class Transaction:
    """Context manager that undoes everything a call did if the call fails.

    Parameters
    ----------
    estimator : object
        The estimator the call changes.
    deep : bool, default=False
        Whether the call changes the state arrays (``estimator._state``, a
        dict of arrays) in place: they are then recorded on entry, and put
        back with the rest. A call that replaces the state (a new stream, a
        loaded model) needs only its ``__dict__`` recorded.
    lazy : tuple of str, default=()
        The prefixes of the state arrays copied only when a call is about to
        change them (:func:`before_change`), not on entry.
    copied : tuple of str, default=()
        With ``deep``, the attributes (lists, dicts) that the call grows in
        place: recorded as copies.
    attributes : tuple of str, default=None
        Without ``deep``, the only attributes the call may set or delete:
        only they are recorded and put back (a call of one row, which sets
        a few, records them at a fraction of the cost of its
        ``__dict__``). None: the whole ``__dict__``.

    Examples
    --------
    >>> from sklearn_budget._transaction import Transaction
    >>> class Model:
    ...     pass
    >>> model = Model()
    >>> model.n_rounds = 1
    >>> try:
    ...     with Transaction(model):
    ...         model.n_rounds = 2
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> model.n_rounds
    1
    """

    # Slots: a one-row call enters one transaction per row.
    __slots__ = (
        "estimator",
        "deep",
        "lazy",
        "copied",
        "attributes",
        "_undo",
        "_published",
        "_saved",
        "_record",
    )

    def __init__(self, estimator, deep=False, lazy=(), copied=(), attributes=None):
        if deep and attributes is not None:
            raise ValueError("A deep transaction records every attribute.")
        self.estimator = estimator
        self.deep = deep
        self.lazy = lazy if type(lazy) is tuple else tuple(lazy)
        self.copied = copied if type(copied) is tuple else tuple(copied)
        self.attributes = attributes

    def __enter__(self):
        est = self.estimator
        self._undo = []
        self._published = _PUBLISHED.pop(est, None)
        attrs = vars(est)
        if self.attributes is None:
            self._saved = saved = dict(attrs)
        else:
            self._saved = saved = {}
            for name in self.attributes:
                if name in attrs:
                    saved[name] = attrs[name]
        self._record = None
        if self.deep and "_state" in saved:
            self._record = {
                "_state": {
                    name: a if name.startswith(self.lazy) else a.copy()
                    for name, a in est._state.items()
                },
                "_lazy": set(),
            }
            for name in self.copied:
                saved[name] = copy.copy(saved[name])
            _UNDO[est] = self._record
        return self

    def on_undo(self, fn):
        """Call ``fn()`` on rollback, before the record of the entry is put back.

        The callables run in the reverse order of their registration: each
        undoes a change made after the ones registered before it.
        """
        self._undo.append(fn)

    def track_lazy_arrays(self):
        """Record the lazy arrays of the state from now on (:func:`before_change`).

        For a call that changes the state arrays in place by other means (an
        undo of its own, registered with :meth:`on_undo`) and, after that,
        lets Python code change the lazy ones: on rollback, those are put
        back into the state. A deep transaction records them from its entry.
        """
        if self._record is not None:
            return
        est = self.estimator
        self._record = {"_state": dict(est._state), "_lazy": set()}
        _UNDO[est] = self._record

    def __exit__(self, exc_type, exc, tb):
        est = self.estimator
        try:
            if exc_type is not None:
                self._rollback_whole()
        finally:
            if self._record is not None:
                _UNDO.pop(est, None)
        return False

    def _rollback_whole(self):
        """:meth:`_rollback`, from its start again if an exception (a second
        Ctrl-C) interrupts it, then that exception raised.

        Each of its steps puts saved values back (the undo callables too), so
        a second run completes what the first left half done; the tries are
        bounded, so that a rollback that fails by itself is not retried for
        ever.
        """
        interrupted = None
        for _ in range(_ROLLBACK_TRIES):
            try:
                self._rollback()
            except BaseException as e:
                interrupted = e if interrupted is None else interrupted
                continue
            break
        if interrupted is not None:
            raise interrupted

    def _rollback(self):
        est, saved, record = self.estimator, self._saved, self._record
        for fn in reversed(self._undo):
            fn()
        live_state = vars(est).get("_state")
        if self.attributes is None:
            vars(est).clear()
        else:
            for name in self.attributes:
                vars(est).pop(name, None)
        vars(est).update(saved)
        if record is not None:
            if self.deep and "_state" in saved:
                # The copies made for the call replace the changed arrays.
                vars(est)["_state"] = record["_state"]
            elif live_state is saved.get("_state"):
                for name, a in record["_state"].items():
                    if name.startswith(self.lazy):
                        live_state[name] = a
            if "_rng_state" in record:
                _load_generator(est._rng, record["_rng_state"])
        if self._published is not None:
            _PUBLISHED[est] = self._published
