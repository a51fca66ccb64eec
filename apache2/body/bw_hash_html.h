/*
 * Signing the links of a response (SecHashEngine On): the href of <a>, the
 * action of <form>, the src of <iframe> and <frame>, and a Location
 * header, each when a SecHashMethodRx/Pm of its kind selects it, get the
 * SecHashParam parameter with their signature (base/bw_hmac.h), which
 * @validateHash checks when the client follows them.
 *
 * Unlike mod_security2, which parses the page with libxml2 and writes the
 * tree back (adding a DOCTYPE, re-quoting, making relative links
 * absolute), the page is kept byte for byte: only the parameter is
 * inserted into each selected attribute, before its fragment.
 */
#ifndef BW_HASH_HTML_H
#define BW_HASH_HTML_H

#include "base/bw_hmac.h"

/* The absolute path and query a link leads to from the page at page_path
 * (the request's path), without fragment, scheme and host, dot segments
 * removed: what is signed once its leading '/' is dropped. 0 when the
 * link leads nowhere to sign (empty, "#x", mailto:, javascript:...). */
int bw_hash_link_target(apr_pool_t *p, bw_str_t page_path, bw_str_t link, bw_str_t *target);

/* The signed form of link (a header value, not HTML): NULL when it is not
 * signed (no method selects it, nothing to sign). */
const char *bw_hash_sign_location(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t key,
                                  bw_str_t page_path, bw_str_t link, pcre2_match_data *md);

/* Sign the links of an HTML page. Returns how many were signed; *out is
 * the new page (from p) when that is more than 0, else html itself. */
int bw_hash_sign_html(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t key, bw_str_t page_path,
                      bw_str_t html, pcre2_match_data *md, bw_str_t *out);

#endif /* BW_HASH_HTML_H */
