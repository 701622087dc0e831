"""The deprecation cycle of the parameters: positional use and renamed parameters.

Both follow scikit-learn's conventions: a deprecated spelling keeps working
for two releases (deprecated in 0.1, an error in 0.3) and warns with a
``FutureWarning`` that names the spelling to use.
"""

# Authors: The sklearn-budget developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import inspect
import warnings

from sklearn.utils._param_validation import Hidden, StrOptions

#: The release that removes a deprecated spelling.
_REMOVED_IN = "0.3"

#: The default of a renamed parameter's old name, admitted by its constraints
#: (hidden from the error messages, as scikit-learn does).
DEPRECATED = "deprecated"
DEPRECATED_CONSTRAINT = Hidden(StrOptions({DEPRECATED}))


def positional_until_0_3(*names):
    """Let ``__init__`` take ``names`` positionally, with a ``FutureWarning``.

    The decorated ``__init__`` declares every parameter keyword-only (its
    signature, which ``inspect.signature`` and ``get_params`` read, is
    unchanged); ``names`` are the parameters that callers could pass by
    position before, in that order. A positional call is turned into the
    keyword call and warns.

    Parameters
    ----------
    *names : str
        The formerly positional parameters, in their former order.

    Returns
    -------
    decorator : callable
        The decorator of ``__init__``.
    """

    def decorator(init):
        keyword_only = {
            p.name
            for p in inspect.signature(init).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        missing = set(names) - keyword_only
        if missing:  # pragma: no cover - a mistake in the package itself
            raise TypeError(f"{init.__qualname__} has no keyword-only {sorted(missing)}.")

        @functools.wraps(init)
        def wrapper(self, *args, **kwargs):
            if not args:
                return init(self, **kwargs)
            cls = type(self).__name__
            if len(args) > len(names):
                raise TypeError(
                    f"{cls}() takes at most {len(names)} positional argument"
                    f"{'' if len(names) == 1 else 's'} ({', '.join(names)}, deprecated) "
                    f"but {len(args)} were given."
                )
            given = dict(zip(names, args))
            twice = sorted(set(given) & set(kwargs))
            if twice:
                raise TypeError(f"{cls}() got multiple values for argument {twice[0]!r}.")
            spelled = ", ".join(f"{name}={value!r}" for name, value in given.items())
            warnings.warn(
                f"Pass {spelled} as keyword argument{'s' if len(given) > 1 else ''} of "
                f"{cls}: positional arguments are deprecated in 0.1 and will be an error "
                f"in {_REMOVED_IN}.",
                FutureWarning,
                stacklevel=2,
            )
            return init(self, **given, **kwargs)

        return wrapper

    return decorator


def renamed_value(estimator, new, old, warn=True):
    """The value of parameter ``new``, taken from its deprecated name ``old`` if given.

    ``old`` holds :data:`DEPRECATED` unless the caller set it: then its
    value is used, with a ``FutureWarning`` (``warn=True``). Setting both
    (``new`` to another value than its default) is an error.

    Parameters
    ----------
    estimator : estimator instance
        The estimator, with both parameters.
    new, old : str
        The documented name and the deprecated one.
    warn : bool, default=True
        Whether to warn when the old name is used (False: only read it).

    Returns
    -------
    value : object
        The value of the parameter.
    """
    old_value, new_value = getattr(estimator, old), getattr(estimator, new)
    if isinstance(old_value, str) and old_value == DEPRECATED:
        return new_value
    default = inspect.signature(type(estimator)).parameters[new].default
    if new_value is not default and new_value != default:
        raise ValueError(
            f"Both {new}={new_value!r} and {old}={old_value!r} were set: {old} is the "
            f"deprecated name of {new}, set only {new}."
        )
    if warn:
        warnings.warn(
            f"{old} was renamed to {new} in 0.1 and will be removed in {_REMOVED_IN}: "
            f"pass {new}={old_value!r} instead.",
            FutureWarning,
            stacklevel=user_stacklevel(),
        )
    return old_value


def user_stacklevel():
    """``stacklevel`` of a warning given by the caller, at the user's line.

    The function that warns is nested in the API's wrappers; the warning
    belongs to the first line outside the package and scikit-learn.

    Returns
    -------
    stacklevel : int
        The ``stacklevel`` argument of the caller's ``warnings.warn``.
    """
    # Imported here: _base imports the modules that use this one.
    from ._base import _caller_stacklevel

    # Counted from this frame, whose caller is the one that warns.
    return _caller_stacklevel() - 1
