# CONVT3D_CHECK_BASELINES
# The bench's optional baselines: oneDNN (CPU deconvolution) and cuDNN (GPU
# convolution backward-data).  Neither is needed to build the library.
AC_DEFUN([CONVT3D_CHECK_BASELINES], [
  AC_ARG_WITH([onednn],
    [AS_HELP_STRING([--with-onednn@<:@=DIR@:>@],
      [the bench's oneDNN baseline: yes, check (default) or no for the system's
       (libdnnl-dev); DIR for a oneDNN 2.x or 3.x installed under the prefix DIR
       (DIR/include/oneapi/dnnl/dnnl.h, DIR/lib64 or DIR/lib), linked with an
       rpath; e.g. pip install --prefix /opt/onednn3 onednn-devel-cpu-gomp
       (oneDNN 3.x, GNU OpenMP), then --with-onednn=/opt/onednn3])],
    [], [with_onednn=check])
  AC_ARG_WITH([cudnn],
    [AS_HELP_STRING([--without-cudnn], [do not build the bench's cuDNN baseline])],
    [], [with_cudnn=check])

  CONVT3D_CHECK_ONEDNN
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
  AC_SUBST([DNNL_CPPFLAGS]) AC_SUBST([DNNL_LIBS]) AC_SUBST([CUDNN_LIBS])
  AM_CONDITIONAL([HAVE_ONEDNN], [test "x$have_onednn" = xyes])
  AM_CONDITIONAL([HAVE_CUDNN], [test "x$have_cudnn" = xyes])
])

# CONVT3D_CHECK_ONEDNN
# Sets have_onednn, DNNL_CPPFLAGS, DNNL_LIBS and onednn_summary from
# $with_onednn: yes/check/no mean the system's oneDNN (Debian's libdnnl-dev,
# the one CI uses); anything else is a prefix, so that a second oneDNN (a 3.x
# from a pip wheel, say) can be compared without replacing the system's.  A
# prefix outside the loader's path gets an rpath: the bench must find the
# library it was compiled against, not the system's, when run.
AC_DEFUN([CONVT3D_CHECK_ONEDNN], [
  have_onednn=no
  onednn_summary=no
  DNNL_CPPFLAGS= DNNL_LIBS=
  dnnl_ldflags=
  AS_CASE([$with_onednn],
    [yes|check|no], [],
    [dnl a prefix: absolute, because it ends up in the bench's rpath
     AS_IF([test -d "$with_onednn"],
       [dnnl_prefix=`cd "$with_onednn" && pwd`],
       [AC_MSG_ERROR([--with-onednn=$with_onednn: no such directory])])
     dnnl_libdir=
     for dnnl_dir in "$dnnl_prefix/lib64" "$dnnl_prefix/lib"; do
       AS_IF([test -z "$dnnl_libdir" && ls "$dnnl_dir"/libdnnl.so* >/dev/null 2>&1],
         [dnnl_libdir=$dnnl_dir])
     done
     AS_IF([test -z "$dnnl_libdir"],
       [AC_MSG_ERROR([--with-onednn=$with_onednn: no libdnnl.so in $dnnl_prefix/lib64 or $dnnl_prefix/lib])])
     DNNL_CPPFLAGS="-I$dnnl_prefix/include"
     dnnl_ldflags="-L$dnnl_libdir -Wl,-rpath,$dnnl_libdir"])

  AS_IF([test "x$with_onednn" != xno], [
    save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS; save_LIBS=$LIBS
    CPPFLAGS="$DNNL_CPPFLAGS $CPPFLAGS"; LDFLAGS="$dnnl_ldflags $LDFLAGS"
    dnl not cached: the header and library looked for depend on the prefix
    AS_UNSET([ac_cv_header_oneapi_dnnl_dnnl_h])
    AS_UNSET([ac_cv_lib_dnnl_dnnl_engine_create])
    AC_CHECK_HEADER([oneapi/dnnl/dnnl.h],
      [AC_CHECK_LIB([dnnl], [dnnl_engine_create], [have_onednn=yes])])
    AS_IF([test "x$have_onednn" = xyes], [
      DNNL_LIBS="$dnnl_ldflags -ldnnl"
      dnl the version the bench is compiled against, for the summary
      AC_COMPUTE_INT([dnnl_major], [DNNL_VERSION_MAJOR], [#include <oneapi/dnnl/dnnl_version.h>])
      AC_COMPUTE_INT([dnnl_minor], [DNNL_VERSION_MINOR], [#include <oneapi/dnnl/dnnl_version.h>])
      AC_COMPUTE_INT([dnnl_patch], [DNNL_VERSION_PATCH], [#include <oneapi/dnnl/dnnl_version.h>])
      onednn_summary="yes ($dnnl_major.$dnnl_minor.$dnnl_patch${dnnl_libdir:+, $dnnl_libdir})"
      dnl --threads sets OpenMP's thread count for convt3d and oneDNN alike;
      dnl a oneDNN built on TBB or its own threads would not follow it
      AC_COMPUTE_INT([dnnl_omp], [DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP],
        [#include <oneapi/dnnl/dnnl_config.h>], [dnnl_omp=0])
      AS_IF([test "x$dnnl_omp" != x1],
        [AC_MSG_WARN([this oneDNN does not use OpenMP: --threads will not limit its threads])
         onednn_summary="$onednn_summary, not OpenMP"])])
    CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS; LIBS=$save_LIBS
    AS_CASE([$with_onednn:$have_onednn],
      [check:*|*:yes], [],
      [yes:*], [AC_MSG_ERROR([--with-onednn given but oneDNN (libdnnl-dev) was not found])],
      [AC_MSG_ERROR([--with-onednn=$with_onednn: oneDNN's header or library is unusable (see config.log)])])])
  AS_IF([test "x$have_onednn" = xyes],
    [AC_DEFINE([CONVT3D_HAVE_ONEDNN], [1], [Define to 1 when the bench has the oneDNN baseline.])])
])
