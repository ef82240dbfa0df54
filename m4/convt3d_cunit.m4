# CONVT3D_CHECK_CUNIT
# CUnit for `make check`: pkg-config first (CUNIT_CFLAGS/CUNIT_LIBS from the
# environment are honoured even without pkg-config), then a plain header and
# library check.  Sets AM_CONDITIONAL HAVE_CUNIT; without it `make check`
# explains what is missing instead of building the tests.
AC_DEFUN([CONVT3D_CHECK_CUNIT], [
  have_cunit=no
  PKG_CHECK_MODULES([CUNIT], [cunit], [have_cunit=yes], [
    save_LIBS=$LIBS
    AC_CHECK_HEADER([CUnit/Basic.h],
      [AC_CHECK_LIB([cunit], [CU_initialize_registry],
        [have_cunit=yes; CUNIT_CFLAGS=; CUNIT_LIBS=-lcunit])])
    LIBS=$save_LIBS])
  AS_IF([test "x$have_cunit" != xyes],
    [AC_MSG_WARN([CUnit not found: `make check` will not build the tests (Debian: apt-get install libcunit1-dev)])])
  AC_SUBST([CUNIT_CFLAGS]) AC_SUBST([CUNIT_LIBS])
  AM_CONDITIONAL([HAVE_CUNIT], [test "x$have_cunit" = xyes])
])
