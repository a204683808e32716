/* fuzz_sim_scenario -- the whole simulator on arbitrary bytes: load (YAML, decode, validation,
 * cross-checks, timing annotations), and when the scenario is valid, run it for at most one
 * virtual day and write every output. Invariants: no crash, no leak, errors only when the load
 * says ERR_INVALID, and a run's record is consistent (every workload in exactly one state,
 * no negative wait). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_scenario_t sc;
    sim_rec_t rec;
    sim_options_t opts = {.has_until = true, .until = 86400000};
    err_msg_t msg;
    FILE *null;
    err_t rc;

    sim_scenario_init(&sc);
    rc = sim_scenario_load_string((const char *)data, size, &sc, &msg);
    if ((rc == ERR_INVALID) != (sc.nerrors > 0))
        abort();
    if (rc != ERR_OK || sc.ndocs > 200) {
        sim_scenario_fini(&sc);
        return 0;
    }
    null = fopen("/dev/null", "w");
    if (null == NULL)
        abort();
    opts.events = null;
    sim_rec_init(&rec);
    rc = sim_run(&sc, &opts, &rec, &msg);
    if (rc == ERR_OK) {
        for (size_t i = 0; i < rec.nwls; i++) {
            if (rec.wls[i].wait < 0 || rec.wls[i].state > SIM_WL_DELETED)
                abort();
        }
        if (sim_summary_write(&rec, null, &msg) != ERR_OK ||
            sim_human_write(&rec, null, &msg) != ERR_OK ||
            sim_report_write(&rec, "fuzz", null, &msg) != ERR_OK)
            abort();
    }
    sim_rec_fini(&rec);
    sim_scenario_fini(&sc);
    fclose(null);
    return 0;
}
