/* Action lookup across the action tables (start-up only). */
#include <string.h>
#include "actions/bw_action.h"

extern const bw_action_def_t bw_actions_meta[];
extern const bw_action_def_t bw_actions_data[];
extern const bw_action_def_t bw_actions_ctl[];
extern const bw_action_def_t bw_actions_exec[];

const bw_action_def_t *bw_action_lookup(const char *name, size_t len)
{
    const bw_action_def_t *tables[4];
    int t;
    tables[0] = bw_actions_meta;
    tables[1] = bw_actions_data;
    tables[2] = bw_actions_ctl;
    tables[3] = bw_actions_exec;
    for (t = 0; t < 4; t++) {
        const bw_action_def_t *d;
        for (d = tables[t]; d->name; d++)
            if (strlen(d->name) == len && !strncasecmp(d->name, name, len))
                return d;
    }
    return NULL;
}
