/*
 * Internal interface between the HTML tokenizer (bw_xss.c) and the checks
 * it calls on each tag and attribute (bw_xss_check.c).
 */
#ifndef BW_XSS_INT_H
#define BW_XSS_INT_H

#include <stddef.h>

/* Tag kinds the checks care about. */
enum {
    XT_OTHER = 0,
    XT_ACTIVE,      /* runs or loads active content by itself: script, iframe ... */
    XT_STYLE,       /* <style>: its text is CSS */
    XT_FORM,        /* <form action=...> sends the page's data elsewhere */
    XT_META,        /* <meta http-equiv=refresh|set-cookie ...> */
    XT_LINK         /* <link href=...> pulls style sheets and imports */
};

/* One tokenizer run over one value in one context. */
typedef struct {
    const unsigned char *s;
    size_t len, pos;
    int ctx;              /* BW_XSS_CTX_* */
    int tag;              /* XT_* of the start tag being read */
    int real;             /* 1: a tag seen in the value; 0: the page's own tag */
    int nested;           /* reading markup found inside an attribute value */
    int reason;           /* BW_XSS_* once found */
    size_t off, n;        /* the construct found */
} xs_t;

/* Record a finding (length capped for the log); returns 1. */
int xs_hit(xs_t *x, int reason, size_t off, size_t n);

/* Kind of a tag name as written after "<" (namespace prefixes and stray
 * "<" inside the name are looked through: x:script, scr<script). */
int xs_tag_kind(const unsigned char *name, size_t n);

/* One attribute of the current start tag; 1 and x->reason set on a find. */
int xs_check_attr(xs_t *x, size_t name_off, size_t name_len,
                  size_t val_off, size_t val_len, int has_val);

/* 1 when CSS text can run script (expression(), javascript:, behavior,
 * -moz-binding, @import). entities: decode HTML character references first
 * (a style attribute; the text of a <style> element is raw). */
int xs_css_danger(const unsigned char *p, size_t n, int entities);

/* The css context: a value echoed inside style="..." that adds a
 * script-running declaration (the narrower patterns listed in
 * bw_xss_check.c). */
int xs_css_value_danger(const unsigned char *p, size_t n);

/* 1 when a whole value, used as a URL, runs script: javascript:, vbscript:
 * or a data: URL with an active type (text/html, image/svg+xml, ...). */
int xs_url_danger(const unsigned char *p, size_t n);

#endif /* BW_XSS_INT_H */
