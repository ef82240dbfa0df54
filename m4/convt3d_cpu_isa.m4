# CONVT3D_CHECK_CPU_ISA
# The CPU backend's x86-64 kernel variants.  Each is compiled with its own -m
# flags into its own convenience library and picked at run time with
# __builtin_cpu_supports, so the library still runs on any x86-64.  Other
# hosts, or compilers that reject the flags, build only the portable kernel.
# Sets CPU_AVX2_CFLAGS, CPU_AVX512_CFLAGS, AM_CONDITIONALs HAVE_CPU_AVX2 and
# HAVE_CPU_AVX512, and defines CONVT3D_HAVE_CPU_AVX2 / _AVX512 to 0 or 1.
AC_DEFUN([_CONVT3D_TRY_ISA], [
  AC_MSG_CHECKING([whether $CC builds $1 kernels with $2])
  save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS $2"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <immintrin.h>]],
      [[$3
        return __builtin_cpu_supports("$1") ? 0 : 1;]])],
    [$4=yes], [$4=no])
  CFLAGS=$save_CFLAGS
  AC_MSG_RESULT([$$4])
])

AC_DEFUN([CONVT3D_CHECK_CPU_ISA], [
  AC_REQUIRE([AC_CANONICAL_HOST])
  AC_ARG_ENABLE([cpu-isa],
    [AS_HELP_STRING([--disable-cpu-isa],
      [build only the portable CPU kernel (no AVX2/AVX-512 variants)])],
    [], [enable_cpu_isa=yes])
  CPU_AVX2_CFLAGS="-mavx2 -mfma"
  CPU_AVX512_CFLAGS="-mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx2 -mfma"
  have_cpu_avx2=no
  have_cpu_avx512=no
  AS_IF([test "x$enable_cpu_isa" != xno], [
    AS_CASE([$host_cpu], [x86_64|amd64], [
      _CONVT3D_TRY_ISA([avx2], [$CPU_AVX2_CFLAGS],
        [__m256 a = _mm256_set1_ps(1.0f); a = _mm256_fmadd_ps(a, a, a);
         volatile float f = _mm256_cvtss_f32(a); (void)f;], [have_cpu_avx2])
      _CONVT3D_TRY_ISA([avx512f], [$CPU_AVX512_CFLAGS],
        [__m512 a = _mm512_set1_ps(1.0f);
         a = _mm512_maskz_loadu_ps((__mmask16)3, &a); a = _mm512_fmadd_ps(a, a, a);
         volatile float f = _mm512_reduce_add_ps(a); (void)f;], [have_cpu_avx512])])])
  AS_IF([test "x$have_cpu_avx2" = xyes],
    [AC_DEFINE([CONVT3D_HAVE_CPU_AVX2], [1], [Define to 1 when the AVX2 CPU kernel is built.])],
    [AC_DEFINE([CONVT3D_HAVE_CPU_AVX2], [0], [Define to 1 when the AVX2 CPU kernel is built.])])
  AS_IF([test "x$have_cpu_avx512" = xyes],
    [AC_DEFINE([CONVT3D_HAVE_CPU_AVX512], [1], [Define to 1 when the AVX-512 CPU kernel is built.])],
    [AC_DEFINE([CONVT3D_HAVE_CPU_AVX512], [0], [Define to 1 when the AVX-512 CPU kernel is built.])])
  AC_SUBST([CPU_AVX2_CFLAGS])
  AC_SUBST([CPU_AVX512_CFLAGS])
  AM_CONDITIONAL([HAVE_CPU_AVX2], [test "x$have_cpu_avx2" = xyes])
  AM_CONDITIONAL([HAVE_CPU_AVX512], [test "x$have_cpu_avx512" = xyes])
])
