"""Only the sandbox's C extension; everything else is in pyproject.toml.

`_confine` gives the sandbox child the system calls it confines itself with
(docs/sandbox.md, "The layers"), so the child never loads ctypes. An editable
install (`pip install -e .`) builds it in place, beside child.py, where the
child loads it by path. Not optional: an install that cannot compile it fails
loudly rather than leave ctypes reachable from generated code.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("backchannel.sandbox._confine", ["backchannel/sandbox/_confine.c"],
                             extra_compile_args=["-O2", "-Wall"])])
