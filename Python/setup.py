# cffi's build hook (``cffi_modules``) is a setup() keyword: the rest of the
# metadata is in pyproject.toml. restoration_build.py says where the C
# library is found.
from setuptools import setup

setup(cffi_modules=["restoration_build.py:ffibuilder"])
