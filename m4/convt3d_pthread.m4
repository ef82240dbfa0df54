# AX_PTHREAD_SIMPLE: -pthread for the concurrency tests and the bench (glibc
# and musl both accept it); sets PTHREAD_CFLAGS / PTHREAD_LIBS.
AC_DEFUN([AX_PTHREAD_SIMPLE], [
  AC_MSG_CHECKING([whether $CC accepts -pthread])
  save_CFLAGS=$CFLAGS; CFLAGS="$CFLAGS -pthread"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]], [[pthread_self();]])],
    [PTHREAD_CFLAGS=-pthread; PTHREAD_LIBS=-pthread; AC_MSG_RESULT([yes])],
    [PTHREAD_CFLAGS=; PTHREAD_LIBS=-lpthread; AC_MSG_RESULT([no])])
  CFLAGS=$save_CFLAGS
  AC_SUBST([PTHREAD_CFLAGS]) AC_SUBST([PTHREAD_LIBS])
])
