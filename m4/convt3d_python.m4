# CONVT3D_CHECK_PYTHON
# The Python package python/convt3d (ctypes, pure Python): --with-python
# (yes, no, auto = the default, or the interpreter to use, e.g.
# --with-python=/usr/bin/python3).  With a python3 >= 3.7 found (automake's
# AM_PATH_PYTHON), `make install` copies the package into $(pythondir) and
# byte-compiles it.  Substitutes CONVT3D_PY_LIBDIR (the expanded $libdir,
# where the package looks for libconvt3d after $CONVT3D_LIBRARY) into
# python/convt3d/_config.py and makes python/check-python, the `make check`
# test that runs the pytest suite (SKIP without python3, numpy or pytest).
# Sets AM_CONDITIONAL HAVE_PYTHON.
AC_DEFUN([CONVT3D_CHECK_PYTHON], [
  AC_ARG_WITH([python],
    [AS_HELP_STRING([--with-python@<:@=PYTHON@:>@],
      [install the Python package convt3d and test it in make check (default: auto, when python3 is found)])],
    [], [with_python=auto])
  have_python=no
  AS_CASE([$with_python],
    [no], [PYTHON=:],
    [yes|auto], [],
    [AS_IF([test -x "$with_python" || command -v "$with_python" >/dev/null 2>&1],
       [PYTHON=$with_python],
       [AC_MSG_ERROR([--with-python=$with_python: no such program])])])
  AS_IF([test "x$with_python" != xno], [
    AM_PATH_PYTHON([3.7], [have_python=yes], [:])
    AS_IF([test "x$have_python" != xyes && test "x$with_python" != xauto],
      [AC_MSG_ERROR([--with-python=$with_python: no Python >= 3.7 found])])
  ])
  AS_IF([test "x$have_python" != xyes], [PYTHON=:])
  CONVT3D_WITH_PYTHON=$with_python
  AC_SUBST([CONVT3D_WITH_PYTHON])
  dnl the package's static version must be the library's
  convt3d_py_version=`sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$srcdir/python/convt3d/_version.py" 2>/dev/null`
  AS_IF([test "x$convt3d_py_version" != "x$PACKAGE_VERSION"],
    [AC_MSG_ERROR([python/convt3d/_version.py says "$convt3d_py_version", configure.ac says $PACKAGE_VERSION: update the former])])
  dnl $libdir expanded (it is "${exec_prefix}/lib" until make time)
  convt3d_save_prefix=$prefix convt3d_save_exec_prefix=$exec_prefix
  test "x$prefix" = xNONE && prefix=$ac_default_prefix
  test "x$exec_prefix" = xNONE && exec_prefix=$prefix
  eval CONVT3D_PY_LIBDIR=\"$libdir\"
  eval CONVT3D_PY_LIBDIR=\"$CONVT3D_PY_LIBDIR\"
  prefix=$convt3d_save_prefix exec_prefix=$convt3d_save_exec_prefix
  AC_SUBST([CONVT3D_PY_LIBDIR])
  AM_CONDITIONAL([HAVE_PYTHON], [test "x$have_python" = xyes])
  AC_CONFIG_FILES([python/convt3d/_config.py])
  AC_CONFIG_FILES([python/check-python], [chmod +x python/check-python])
])
