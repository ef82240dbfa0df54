# CONVT3D_CHECK_VISIBILITY
# Whether $CC takes -fvisibility=hidden together with
# __attribute__((visibility(...))) without a warning (gnulib's
# gl_VISIBILITY does the same with -Werror).  Sets VISIBILITY_CFLAGS
# (-fvisibility=hidden or empty, for AM_CFLAGS) and defines
# CONVT3D_HAVE_VISIBILITY to 1 or 0 for src/internal.h's CONVT3D_INTERNAL.
# The public header's CONVT3D_API needs no check: it marks exported
# symbols visibility("default") on any GNU C compiler, flag or not.
AC_DEFUN([CONVT3D_CHECK_VISIBILITY], [
  AC_REQUIRE([AC_PROG_CC])
  AC_CACHE_CHECK([whether $CC accepts -fvisibility=hidden], [convt3d_cv_cc_visibility], [
    save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -fvisibility=hidden -Werror"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM(
        [[extern __attribute__((visibility("hidden"))) int hidden_var;
          extern __attribute__((visibility("default"))) int exported_var;
          __attribute__((visibility("hidden"))) int hidden_fn(void) { return 0; }
          __attribute__((visibility("default"))) int exported_fn(void) { return 1; }]],
        [[return hidden_fn() + exported_fn();]])],
      [convt3d_cv_cc_visibility=yes], [convt3d_cv_cc_visibility=no])
    CFLAGS=$save_CFLAGS])
  AS_IF([test "x$convt3d_cv_cc_visibility" = xyes],
    [VISIBILITY_CFLAGS=-fvisibility=hidden
     AC_DEFINE([CONVT3D_HAVE_VISIBILITY], [1],
       [Define to 1 when the compiler takes -fvisibility=hidden and visibility attributes.])],
    [VISIBILITY_CFLAGS=
     AC_DEFINE([CONVT3D_HAVE_VISIBILITY], [0],
       [Define to 1 when the compiler takes -fvisibility=hidden and visibility attributes.])])
  AC_SUBST([VISIBILITY_CFLAGS])
])
