"""Compile the toy rule with Cython and setuptools, and import it."""

import importlib.util
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The module name of the compiled rule, inside this package.
MODULE = f"{__package__}._toy_rule"


def build(folder):
    """Compile ``_toy_rule.pyx`` in ``folder`` and import it as :data:`MODULE`.

    Cython finds ``sklearn_budget/_engine.pxd`` (and the declarations it
    cimports) beside the installed package, whose compiled engine the rule
    then subclasses at import. Every product of the build stays in
    ``folder``. A Cython or C compiler error raises.

    Parameters
    ----------
    folder : pathlib.Path
        An empty folder for the build.

    Returns
    -------
    module : module
        The compiled rule's module.
    """
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    import sklearn_budget

    folder = Path(folder)
    source = folder / "_toy_rule.pyx"
    shutil.copyfile(HERE / "_toy_rule.pyx", source)
    include = str(Path(sklearn_budget.__file__).resolve().parents[1])
    (extension,) = cythonize(
        [Extension(MODULE, [str(source)])], include_path=[include], quiet=True, force=True
    )
    dist = Distribution({"name": "toy-rule", "ext_modules": [extension]})
    command = dist.get_command_obj("build_ext")
    command.build_lib = str(folder / "lib")
    command.build_temp = str(folder / "temp")
    dist.run_command("build_ext")
    spec = importlib.util.spec_from_file_location(MODULE, command.get_ext_fullpath(MODULE))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[MODULE] = module
    setattr(sys.modules[__package__], "_toy_rule", module)
    return module
