/* picker.c — `P`'s policy picker (see picker.h). */
#include "app/tui/picker.h"

#include <stdio.h>

#include "views/keymap.h"

/* The policies that can run, in the engine's order; returns how many. */
static int runnable(const Tui *t, Policy *out) {
    int n = 0;
    for (int p = 0; p < POLICY_COUNT && n < VIEW_PICK_MAX; p++)
        if (tui_policy_runs(t, (Policy)p)) out[n++] = (Policy)p;
    return n;
}

void tui_picker_open(Tui *t) {
    Policy pol[VIEW_PICK_MAX];
    const char *names[VIEW_PICK_MAX];
    int n = runnable(t, pol), sel = 0;
    for (int i = 0; i < n; i++) {
        names[i] = aha_policy_name(pol[i]);
        if (pol[i] == t->cfg.policy) sel = i;
    }
    view_pick_open(&t->m, "policy", names, n, sel);
    view_set_status(&t->m, "policy: \xe2\x86\x91\xe2\x86\x93 or P move, Enter runs it, Esc cancels");
}

int tui_picker_key(Tui *t, int ch) {
    if (!t->m.pick.open) return 0;
    Policy pol[VIEW_PICK_MAX];
    int n = runnable(t, pol);
    ViewPick r = view_pick_key(&t->m, ch, view_command_key(VIEW_ACT_CHANGE_POLICY));
    t->dirty = 1;
    if (r == VIEW_PICK_CANCELLED) view_set_status(&t->m, "policy unchanged: %s", aha_policy_name(t->cfg.policy));
    if (r != VIEW_PICK_CHOSEN || t->m.pick.sel >= n) return 1;
    AttnConfig c = t->cfg;
    c.policy = pol[t->m.pick.sel];
    tui_apply_setting(t, &c);
    return 1;
}
