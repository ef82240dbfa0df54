/* The oracle of --all-kernels (oracle.h): per problem, the automatic choice
 * against the fastest implementation that applies; over a run, how often
 * the walk is right and what its misses cost. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/* report.c's rule, restated so that the tests need not link the table */
int oracle_usable(const impl_result *r)
{
    return r->state == IMPL_OK && !(r->verify.checked && !r->verify.ok) &&
           r->time.median_ms > 0;
}

static double fastest_baseline_ms(const impl_result *im, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        if (im[i].baseline && oracle_usable(&im[i]) && (best == 0 || im[i].time.median_ms < best))
            best = im[i].time.median_ms;
    return best;
}

void oracle_of(const case_result *cr, int d, oracle_case *out)
{
    memset(out, 0, sizeof *out);
    out->auto_forced = out->winner = -1;
    if (!cr->ran || cr->n_impl[d] < 1 || cr->impl[d][0].baseline || !cr->forced[d])
        return;
    const impl_result *a = &cr->impl[d][0];
    const impl_result *fr = cr->forced[d];
    /* The automatic kernel's own forced run is the same code timed again: it
     * shows the noise, it is no competitor. */
    for (int i = 0; i < cr->n_forced[d]; i++) {
        if (strcmp(fr[i].detail, a->detail) == 0) {
            out->auto_forced = i;
            continue;
        }
        if (oracle_usable(&fr[i]) &&
            (out->winner < 0 || fr[i].time.median_ms < fr[out->winner].time.median_ms))
            out->winner = i;
    }
    if (!oracle_usable(a) || (out->winner < 0 && out->auto_forced < 0))
        return;
    out->valid = 1;
    out->auto_ms = a->time.median_ms;
    out->best_ms = out->auto_ms;
    if (out->winner >= 0 && fr[out->winner].time.median_ms < out->best_ms)
        out->best_ms = fr[out->winner].time.median_ms;
    out->loss = out->auto_ms / out->best_ms;
    out->base_ms = fastest_baseline_ms(cr->impl[d], cr->n_impl[d]);
}

int oracle_wanted(const case_result *res, size_t n, int d)
{
    for (size_t c = 0; c < n; c++)
        if (res[c].forced[d])
            return 1;
    return 0;
}

void oracle_compute(const case_result *res, size_t n, int d, oracle_stats *out)
{
    memset(out, 0, sizeof *out);
    double log_loss = 0, log_actual = 0, log_oracle = 0;
    for (size_t c = 0; c < n; c++) {
        for (int i = 0; i < res[c].n_forced[d]; i++) {
            const impl_result *r = &res[c].forced[d][i];
            out->forced_bad += r->state == IMPL_FAILED || (r->state == IMPL_OK && !oracle_usable(r));
        }
        oracle_case oc;
        oracle_of(&res[c], d, &oc);
        if (!oc.valid)
            continue;
        out->problems++;
        out->auto_fastest += oc.loss <= ORACLE_SAME;
        log_loss += log(oc.loss);
        if (oc.base_ms > 0) {
            out->compared++;
            log_actual += log(oc.base_ms / oc.auto_ms);
            log_oracle += log(oc.base_ms / oc.best_ms);
        }
    }
    if (out->problems)
        out->geo_loss = exp(log_loss / out->problems);
    if (out->compared) {
        out->geo_actual = exp(log_actual / out->compared);
        out->geo_oracle = exp(log_oracle / out->compared);
    }
}

/* ---- printing ------------------------------------------------------------- */

/* (automatic kernel, kernel that beat it): how often, geomean of the loss */
typedef struct beaten {
    const char *auto_k, *winner_k;
    int count;
    double log_sum;
} beaten;

static const char *winner_name(const case_result *cr, int d, const oracle_case *oc)
{
    return oc->winner >= 0 ? cr->forced[d][oc->winner].detail : "";
}

static int beaten_index(beaten *v, int *m, int max, const char *a, const char *w)
{
    for (int j = 0; j < *m; j++)
        if (strcmp(v[j].auto_k, a) == 0 && strcmp(v[j].winner_k, w) == 0)
            return j;
    if (*m == max)
        return -1;
    v[*m] = (beaten){a, w, 0, 0};
    return (*m)++;
}

static int cmp_beaten(const void *x, const void *y)
{
    const beaten *a = x, *b = y;
    const int k = strcmp(a->auto_k, b->auto_k);
    if (k)
        return k;
    /* the kernel's own totals (winner "") head its lines */
    const int own = (a->winner_k[0] != 0) - (b->winner_k[0] != 0);
    return own ? own : b->count - a->count;
}

/* Per automatic kernel: its problems, how often it was the fastest, then
 * each kernel that beat it (by more than ORACLE_SAME), most often first.
 * winner_k "" holds the kernel's own totals. */
static void per_kernel(FILE *f, const case_result *res, size_t n, int d)
{
    enum { MAX_PAIRS = 512 };
    beaten *v = calloc(MAX_PAIRS, sizeof *v);
    if (!v)
        return;
    int m = 0;
    for (size_t c = 0; c < n; c++) {
        oracle_case oc;
        oracle_of(&res[c], d, &oc);
        if (!oc.valid)
            continue;
        const char *a = res[c].impl[d][0].detail;
        const int own = beaten_index(v, &m, MAX_PAIRS, a, "");
        if (own >= 0)
            v[own].count++;
        if (oc.loss <= ORACLE_SAME)
            continue;
        const int j = beaten_index(v, &m, MAX_PAIRS, a, winner_name(&res[c], d, &oc));
        if (j >= 0) {
            v[j].count++;
            v[j].log_sum += log(oc.loss);
        }
    }
    qsort(v, (size_t)m, sizeof *v, cmp_beaten);
    fprintf(f, "  per automatic kernel: problems, then each kernel that was more than %.0f%% "
               "faster (times, geomean automatic/it):\n",
            (ORACLE_SAME - 1) * 100);
    for (int j = 0; j < m; j++) {
        if (!v[j].winner_k[0]) {
            int lost = 0;
            for (int k = 0; k < m; k++)
                if (k != j && strcmp(v[k].auto_k, v[j].auto_k) == 0)
                    lost += v[k].count;
            fprintf(f, "    %-40s %4d problems, fastest in %d\n", v[j].auto_k, v[j].count,
                    v[j].count - lost);
        } else {
            fprintf(f, "      beaten by %-40s %4d x, geomean %.2fx\n", v[j].winner_k,
                    v[j].count, exp(v[j].log_sum / v[j].count));
        }
    }
    free(v);
}

typedef struct loss_rank {
    size_t c;
    double loss;
} loss_rank;

static int cmp_loss(const void *x, const void *y)
{
    const loss_rank *a = x, *b = y;
    return (a->loss < b->loss) - (a->loss > b->loss);
}

static void largest_losses(FILE *f, const case_result *res, size_t n, int d, int count)
{
    loss_rank *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return;
    size_t m = 0;
    for (size_t c = 0; c < n; c++) {
        oracle_case oc;
        oracle_of(&res[c], d, &oc);
        if (oc.valid && oc.loss > ORACLE_SAME)
            v[m++] = (loss_rank){c, oc.loss};
    }
    qsort(v, m, sizeof *v, cmp_loss);
    if (m)
        fprintf(f, "  largest losses (automatic/fastest; automatic -> fastest; paste the "
                   "descriptor into convt3d-bench):\n");
    for (size_t j = 0; j < m && j < (size_t)count; j++) {
        const case_result *cr = &res[v[j].c];
        oracle_case oc;
        oracle_of(cr, d, &oc);
        char desc[512];
        convt3d_problem_to_string(&cr->bc->problem, desc, sizeof desc);
        fprintf(f, "    %6.2fx  %-24s %s -> %s  %s\n", v[j].loss, cr->bc->label,
                cr->impl[d][0].detail, winner_name(cr, d, &oc), desc);
    }
    free(v);
}

void oracle_print(FILE *f, const case_result *res, size_t n, int d, int count)
{
    oracle_stats st;
    oracle_compute(res, n, d, &st);
    fprintf(f, "  oracle (--all-kernels): %d problems with the automatic choice and a forced "
               "kernel usable",
            st.problems);
    if (st.forced_bad)
        fprintf(f, "; FORCED KERNELS: %d failed or mismatched", st.forced_bad);
    fprintf(f, "\n");
    if (!st.problems)
        return;
    fprintf(f, "    automatic choice the fastest (within %.0f%%): %d (%.1f%%); geometric mean "
               "automatic/fastest %.3fx\n",
            (ORACLE_SAME - 1) * 100, st.auto_fastest, 100.0 * st.auto_fastest / st.problems,
            st.geo_loss);
    if (st.compared)
        fprintf(f, "    geometric-mean speed-up vs the baseline over %d problems: %.2fx as "
                   "chosen, %.2fx if the fastest were chosen\n",
                st.compared, st.geo_actual, st.geo_oracle);
    per_kernel(f, res, n, d);
    largest_losses(f, res, n, d, count);
}
