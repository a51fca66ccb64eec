/*
 * The hash engine's signatures (SecHashEngine, @validateHash): HMAC-SHA1
 * of a link's path and query, under the key SecHashKey names, written as
 * 40 lower-case hex digits in the SecHashParam parameter. The operator
 * that checks a request and the response rewriter that signs links share
 * these, so what one signs the other accepts; both read the settings of
 * one context (bw_hash_conf_t) and nothing else.
 *
 * What is signed, as mod_security2 2.9.7 signs it (measured, see
 * tests/regression/operators/validate-hash.yaml): the link made absolute,
 * without scheme and host, without its leading '/' and without the
 * signature parameter: "/a/b.php?x=1&hmac=H" is signed as "a/b.php?x=1".
 * The key is SecHashKey, followed by the client's address (RemoteIP) or
 * by the session id when the transaction has one, else the client's
 * address (SessionID).
 */
#ifndef BW_HMAC_H
#define BW_HMAC_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include "base/bw_types.h"

#define BW_HMAC_HEX_LEN 40

/* HMAC-SHA1 (RFC 2104) of msg under key: 40 lower-case hex digits and a NUL. */
void bw_hmac_sha1_hex(bw_str_t key, bw_str_t msg, char out[BW_HMAC_HEX_LEN + 1]);

/* How SecHashKey's second word extends the key. */
enum { BW_HASH_KEY_ONLY = 0, BW_HASH_SESSION_ID = 1, BW_HASH_REMOTE_IP = 2 };

/* Where a signed link stands (SecHashMethodRx/Pm's first word). */
enum { BW_HASH_HREF = 0, BW_HASH_FORM_ACTION, BW_HASH_IFRAME_SRC, BW_HASH_FRAME_SRC,
       BW_HASH_LOCATION, BW_HASH_NKINDS };

/* One SecHashMethodRx / SecHashMethodPm: links of a kind to sign when the
 * regex matches them or they contain one of the phrases (any case). */
typedef struct bw_hash_method_s {
    int kind;                       /* BW_HASH_HREF... */
    const pcre2_code *re;           /* SecHashMethodRx, or NULL */
    const bw_str_t *phrases;        /* SecHashMethodPm: lower case */
    int nphrases;
} bw_hash_method_t;

/* The hash engine's settings of one context; unset: key.data NULL, mode
 * -1, param.data NULL, methods NULL (bw_settings_merge takes the parent's). */
typedef struct bw_hash_conf_s {
    bw_str_t key;                   /* SecHashKey, or its random bytes (Rand) */
    int mode;                       /* BW_HASH_KEY_ONLY... */
    bw_str_t param;                 /* SecHashParam */
    const apr_array_header_t *methods;   /* of bw_hash_method_t */
} bw_hash_conf_t;

/* The key of one transaction: the configured key alone or followed by the
 * client's address / the session id, in pool p (no copy for KeyOnly). */
bw_str_t bw_hash_tx_key(apr_pool_t *p, const bw_hash_conf_t *hc, bw_str_t client,
                        bw_str_t session);

/* Index of SecHashMethod's kind name (case-insensitive), or -1. */
int bw_hash_kind(const char *name);

/* Does a method of this kind select link? (SecHashMethodRx/Pm, in order) */
int bw_hash_selects(const bw_hash_conf_t *hc, int kind, bw_str_t link, pcre2_match_data *md);

/* Outcome of checking a request target against its signature. */
enum { BW_HASH_VALID = 0, BW_HASH_MISSING = 1, BW_HASH_WRONG = 2 };

/* Check uri ("/path?query", the request target) for its parameter: the
 * parameter's value runs to the end of the target, as mod_security2 reads
 * it, so it must be the last one. *given is what the request carries and
 * want[] what it should carry (when not missing). */
int bw_hash_check_uri(const bw_hash_conf_t *hc, bw_str_t key, bw_str_t uri, bw_str_t *given,
                      char want[BW_HMAC_HEX_LEN + 1]);

/* Equality of two strings in time that depends on their lengths only. */
int bw_hash_equal(bw_str_t a, bw_str_t b);

#endif /* BW_HMAC_H */
