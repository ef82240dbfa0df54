# CONVT3D_CHECK_CUDA
# --with-cuda[=DIR] / --without-cuda (default: auto-detect nvcc on PATH or in
# /usr/local/cuda) and --with-cuda-arch=GENCODE.  Sets NVCC, NVCCFLAGS,
# CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, AM_CONDITIONAL HAVE_CUDA and
# CONVT3D_HAVE_CUDA (0/1) in config.h.
AC_DEFUN([CONVT3D_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [build the CUDA backend (default: auto-detect nvcc on PATH or in /usr/local/cuda)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=FLAGS],
      [nvcc -gencode flags (default: sm_90 machine code plus compute_90 PTX)])],
    [], [with_cuda_arch="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"])

  have_cuda=no
  CUDA_HOME=
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [
      AC_PATH_PROG([NVCC], [nvcc], [], [$PATH$PATH_SEPARATOR/usr/local/cuda/bin])
      AS_IF([test -n "$NVCC"], [CUDA_HOME=`dirname "$NVCC"`; CUDA_HOME=`dirname "$CUDA_HOME"`])],
    [
      CUDA_HOME=$with_cuda
      AC_PATH_PROG([NVCC], [nvcc], [], [$with_cuda/bin])])

  AS_IF([test -n "$NVCC" && test -n "$CUDA_HOME"], [
    CUDA_CPPFLAGS="-I$CUDA_HOME/include"
    cuda_libdir=$CUDA_HOME/lib64
    AS_IF([test -d "$cuda_libdir"], [], [cuda_libdir=$CUDA_HOME/lib])
    CUDA_LDFLAGS="-L$cuda_libdir -Wl,-rpath,$cuda_libdir"
    save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS; save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"; LDFLAGS="$LDFLAGS $CUDA_LDFLAGS"
    AC_CHECK_HEADER([cuda_runtime_api.h],
      [AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [have_cuda=yes])])
    CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS; LIBS=$save_LIBS
  ])

  AS_IF([test "x$with_cuda" != xno && test "x$with_cuda" != xcheck && test "x$have_cuda" != xyes],
    [AC_MSG_ERROR([--with-cuda was given but nvcc or the CUDA runtime was not found])])

  AS_IF([test "x$have_cuda" = xyes], [
    CUDA_LIBS="-lcudart"
    NVCCFLAGS="-O3 -std=c++17 $with_cuda_arch ${NVCCFLAGS:-}"
    AC_DEFINE([CONVT3D_HAVE_CUDA], [1], [Define to 1 when the CUDA backend is built.])
    CUDA_ARCH_SUMMARY=$with_cuda_arch
  ], [
    AC_DEFINE([CONVT3D_HAVE_CUDA], [0], [Define to 1 when the CUDA backend is built.])
    CUDA_ARCH_SUMMARY=
  ])
  AC_SUBST([NVCC]) AC_SUBST([NVCCFLAGS]) AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_CPPFLAGS]) AC_SUBST([CUDA_LDFLAGS]) AC_SUBST([CUDA_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
