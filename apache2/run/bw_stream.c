/*
 * The stream variables, STREAM_INPUT_BODY and STREAM_OUTPUT_BODY: the
 * request and response bodies as rules may edit them (@rsub). Each holds
 * the body as the last rewrite left it; the glue asks whether one was
 * rewritten and then forwards that instead of the original bytes.
 *
 * Only a whole body becomes a stream: a response cut at
 * SecResponseBodyLimit (ProcessPartial) is not one, because forwarding the
 * edited part would drop the rest.
 */
#include "run/bw_run.h"

int bw_tx_stream_inspection(const bw_tx_t *tx, int which)
{
    if (which == BW_STREAM_IN)
        return tx->cfg->stream_inbody_inspection == 1;
    return tx->cfg->stream_outbody_inspection == 1;
}

void bw_tx_set_stream(bw_tx_t *tx, int which, bw_str_t body)
{
    if (which != BW_STREAM_IN && which != BW_STREAM_OUT)
        return;
    tx->stream[which] = body.data ? body : bw_str_n("", 0);
    tx->stream_set[which] = 1;
    tx->stream_changed[which] = 0;
    tx->data_gen++;    /* values built before are stale */
    bw_src_stale(tx);
}

/* mod_security2 2.9.7 forwards an edited response only with
 * SecContentInjection On (the manual asks for it; without it the client
 * gets the original), so that is the rule here too. */
int bw_tx_stream_changed(const bw_tx_t *tx, int which, bw_str_t *body)
{
    if ((which != BW_STREAM_IN && which != BW_STREAM_OUT) || !tx->stream_changed[which])
        return 0;
    if (which == BW_STREAM_OUT && tx->cfg->content_injection != 1)
        return 0;
    *body = tx->stream[which];
    return 1;
}

int bw_tx_stream_of(const bw_varval_t *v)
{
    if (!v || !v->var || v->is_count)
        return -1;
    if (v->var->id == BW_V_STREAM_INPUT_BODY)
        return BW_STREAM_IN;
    if (v->var->id == BW_V_STREAM_OUTPUT_BODY)
        return BW_STREAM_OUT;
    return -1;
}

/* The next rule reading the stream must see the rewrite, so the values
 * built for this phase are dropped (data generation) rather than patched. */
void bw_tx_stream_rewrite(bw_tx_t *tx, const bw_varval_t *v, bw_str_t body)
{
    int which = bw_tx_stream_of(v);
    if (which < 0 || !tx->stream_set[which])
        return;
    tx->stream[which] = body;
    tx->stream_changed[which] = 1;
    tx->data_gen++;
    bw_src_stale(tx);
}

void bw_tx_stream_response(bw_tx_t *tx)
{
    if (!bw_tx_stream_inspection(tx, BW_STREAM_OUT) || !tx->resbody || tx->resbody_truncated
        || tx->stream_set[BW_STREAM_OUT])
        return;
    bw_tx_set_stream(tx, BW_STREAM_OUT, bw_str_n(tx->resbody, tx->resbody_len));
}
