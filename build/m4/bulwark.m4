dnl Bulwark's configure helpers: each dependency is found through its own
dnl tool, and a missing one stops configure naming the Debian package.

dnl BW_FIND_APXS: apxs gives httpd's include dir and module dir; apr-1-config
dnl and apu-1-config (named by apxs) give APR and APR-util.
AC_DEFUN([BW_FIND_APXS], [
  AC_ARG_WITH([apxs],
    [AS_HELP_STRING([--with-apxs=PATH], [path to apxs (default: search PATH)])],
    [APXS="$withval"], [])
  AS_IF([test -z "$APXS"], [AC_PATH_PROGS([APXS], [apxs apxs2], [], [$PATH:/usr/bin:/usr/sbin])])
  AS_IF([test -z "$APXS" || ! test -x "$APXS"],
    [AC_MSG_ERROR([apxs not found: install the Debian package apache2-dev (or pass --with-apxs=PATH)])])
  APXS_INCLUDEDIR=`$APXS -q INCLUDEDIR`
  APXS_LIBEXECDIR=`$APXS -q LIBEXECDIR`
  APXS_CPPFLAGS=`$APXS -q EXTRA_CPPFLAGS`
  APR_CONFIG=`$APXS -q APR_CONFIG`
  APU_CONFIG=`$APXS -q APU_CONFIG`
  AS_IF([test -z "$APR_CONFIG" || ! test -x "$APR_CONFIG"],
    [AC_MSG_ERROR([apr-1-config not found via apxs: install the Debian package libapr1-dev])])
  AS_IF([test -z "$APU_CONFIG" || ! test -x "$APU_CONFIG"],
    [AC_MSG_ERROR([apu-1-config not found via apxs: install the Debian package libaprutil1-dev])])
  APR_CFLAGS="`$APR_CONFIG --cppflags` `$APR_CONFIG --includes` `$APU_CONFIG --includes`"
  APR_LIBS="`$APR_CONFIG --link-ld --libs` `$APU_CONFIG --link-ld --libs`"
  HTTPD_CFLAGS="-I$APXS_INCLUDEDIR $APXS_CPPFLAGS"
  AC_SUBST([APXS])
  AC_SUBST([APXS_LIBEXECDIR])
  AC_SUBST([APR_CFLAGS])
  AC_SUBST([APR_LIBS])
  AC_SUBST([HTTPD_CFLAGS])
  AC_MSG_CHECKING([for httpd.h])
  AS_IF([test -f "$APXS_INCLUDEDIR/httpd.h"], [AC_MSG_RESULT([$APXS_INCLUDEDIR])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([httpd.h not found in $APXS_INCLUDEDIR: install the Debian package apache2-dev])])
])

dnl BW_FIND_PCRE2: pcre2-config, 8-bit library, JIT support checked at run time
dnl of configure so a PCRE2 without JIT is refused up front.
AC_DEFUN([BW_FIND_PCRE2], [
  AC_PATH_PROG([PCRE2_CONFIG], [pcre2-config], [])
  AS_IF([test -z "$PCRE2_CONFIG"],
    [AC_MSG_ERROR([pcre2-config not found: install the Debian package libpcre2-dev])])
  PCRE2_CFLAGS=`$PCRE2_CONFIG --cflags`
  PCRE2_LIBS=`$PCRE2_CONFIG --libs8`
  AC_SUBST([PCRE2_CFLAGS])
  AC_SUBST([PCRE2_LIBS])
  bw_save_CFLAGS=$CFLAGS; bw_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $PCRE2_CFLAGS"; LIBS="$LIBS $PCRE2_LIBS"
  AC_MSG_CHECKING([for PCRE2 with JIT])
  AC_RUN_IFELSE([AC_LANG_PROGRAM([[
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>]], [[
uint32_t jit = 0;
pcre2_config(PCRE2_CONFIG_JIT, &jit);
return jit ? 0 : 1;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([PCRE2 without JIT support: Bulwark requires PCRE2 JIT (Debian: libpcre2-dev)])],
    [AC_MSG_RESULT([cross-compiling, assumed])])
  CFLAGS=$bw_save_CFLAGS; LIBS=$bw_save_LIBS
])

dnl BW_PKG(VAR, MODULES, DEBIAN-PACKAGE)
AC_DEFUN([BW_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
    [AC_MSG_ERROR([$2 not found by pkg-config: install the Debian package $3])])
])
