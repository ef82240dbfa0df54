# CONVT3D_CHECK_BASELINES
# The bench's optional baselines: oneDNN (CPU deconvolution) and cuDNN (GPU
# convolution backward-data).  Neither is needed to build the library.
AC_DEFUN([CONVT3D_CHECK_BASELINES], [
  AC_ARG_WITH([onednn],
    [AS_HELP_STRING([--without-onednn], [do not build the bench's oneDNN baseline])],
    [], [with_onednn=check])
  AC_ARG_WITH([cudnn],
    [AS_HELP_STRING([--without-cudnn], [do not build the bench's cuDNN baseline])],
    [], [with_cudnn=check])

  have_onednn=no
  AS_IF([test "x$with_onednn" != xno], [
    save_LIBS=$LIBS
    AC_CHECK_HEADER([oneapi/dnnl/dnnl.h],
      [AC_CHECK_LIB([dnnl], [dnnl_engine_create], [have_onednn=yes; DNNL_LIBS=-ldnnl])])
    LIBS=$save_LIBS
    AS_IF([test "x$with_onednn" = xyes && test "x$have_onednn" != xyes],
      [AC_MSG_ERROR([--with-onednn given but oneDNN (libdnnl-dev) was not found])])])
  AS_IF([test "x$have_onednn" = xyes],
    [AC_DEFINE([CONVT3D_HAVE_ONEDNN], [1], [Define to 1 when the bench has the oneDNN baseline.])])

  have_cudnn=no
  AS_IF([test "x$with_cudnn" != xno && test "x$have_cuda" = xyes], [
    save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS; save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
    AC_CHECK_HEADER([cudnn.h],
      [AC_CHECK_LIB([cudnn], [cudnnCreate], [have_cudnn=yes; CUDNN_LIBS=-lcudnn], [], [-lcudart])])
    CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS; LIBS=$save_LIBS
    AS_IF([test "x$with_cudnn" = xyes && test "x$have_cudnn" != xyes],
      [AC_MSG_ERROR([--with-cudnn given but cuDNN was not found next to CUDA])])])
  AS_IF([test "x$have_cudnn" = xyes],
    [AC_DEFINE([CONVT3D_HAVE_CUDNN], [1], [Define to 1 when the bench has the cuDNN baseline.])])
  AC_SUBST([DNNL_LIBS]) AC_SUBST([CUDNN_LIBS])
  AM_CONDITIONAL([HAVE_ONEDNN], [test "x$have_onednn" = xyes])
  AM_CONDITIONAL([HAVE_CUDNN], [test "x$have_cudnn" = xyes])
])
