# The package's version: always the C library's (configure.ac's AC_INIT).
# tests/test_version.py checks it against convt3d_version() and configure.ac.
__version__ = "0.2.0"
