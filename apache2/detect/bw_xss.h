/*
 * Bulwark's cross-site-scripting detector (the engine behind @detectXSS).
 *
 * The value is read with an HTML5-style tokenizer (bw_xss.c: data, tag open,
 * tag name, attribute name / value states, comments) from each place a web
 * page may echo it:
 *   data        between tags:                      <p>VALUE</p>
 *   unquoted    inside an unquoted attribute:      <input value=VALUE>
 *   attributes  where attributes are expected:     <div VALUE>
 *   "  '        inside a quoted attribute value:   <input value="VALUE">
 *   url         as a whole URL attribute:          <a href="VALUE">
 *   css         inside a style attribute:          <p style="VALUE">
 * and reports script-capable constructs (bw_xss_check.c): <script> and the
 * tags that load or define active content, event-handler attributes,
 * javascript:/vbscript: URLs and active data: URLs, CSS that runs script,
 * and a few attributes that redirect forms or documents.
 *
 * Before all of that, a fast path (bw_xss_fast_clean()) settles a value
 * that holds none of the bytes any context needs, without changing any
 * answer.
 *
 * No allocation, no global state, linear time, never reads past value.len.
 */
#ifndef BW_XSS_H
#define BW_XSS_H

#include "base/bw_types.h"

enum {
    BW_XSS_CTX_NONE = 0,
    BW_XSS_CTX_DATA,
    BW_XSS_CTX_UNQUOTED,
    BW_XSS_CTX_ATTRS,
    BW_XSS_CTX_DQUOTE,
    BW_XSS_CTX_SQUOTE,
    BW_XSS_CTX_URL,
    BW_XSS_CTX_CSS
};

enum {
    BW_XSS_NONE = 0,
    BW_XSS_TAG,        /* <script>, <iframe>, <object>, <embed>, <base> ... */
    BW_XSS_EVENT,      /* onerror=..., onload=... */
    BW_XSS_URL,        /* javascript: / vbscript: / active data: URL */
    BW_XSS_STYLE,      /* expression(), behavior, -moz-binding, @import, javascript: in CSS */
    BW_XSS_ATTR        /* srcdoc, formaction, <form action>, <meta http-equiv>, <link href> */
};

typedef struct {
    size_t off, len;   /* the construct inside the value (for TX:0 and logs) */
    int context;       /* BW_XSS_CTX_* */
    int reason;        /* BW_XSS_* */
} bw_xss_result_t;

/* 1 when value carries XSS (res filled if not NULL), 0 otherwise. */
int bw_xss_detect(bw_str_t value, bw_xss_result_t *res);

/* For the differential tests and benchmarks only: bw_xss_detect() is
 * bw_xss_fast_clean() (one pass that proves a value clean or says "maybe")
 * and, on "maybe", bw_xss_detect_full(). The two answer alike for every
 * value, the construct reported included. */
int bw_xss_detect_full(bw_str_t value, bw_xss_result_t *res);
int bw_xss_fast_clean(bw_str_t value);
/* The bytes the fast path looks for (256 bits): a value with none of them
 * is clean. */
void bw_xss_fast_gate(uint64_t gate[4]);

const char *bw_xss_context_name(int context);
const char *bw_xss_reason_name(int reason);

/* 1 when the name tables are sorted (binary searches); for the unit tests. */
int bw_xss_tables_sorted(void);

#endif /* BW_XSS_H */
