/* gguf_names.c — llama.cpp's file-type names, and a GGUF file's type mix from them or its tensors. */
#include "engine/gguf_names.h"

#include <stdio.h>
#include <string.h>

/* Numbered as llama.h's enum llama_ftype; the gaps (5, 6) were retired
 * before GGUF; 4 and 33-35 were retired since but may be met in old files. */
static const char *const FTYPES[] = {
    [0] = "ALL_F32", [1] = "MOSTLY_F16", [2] = "MOSTLY_Q4_0", [3] = "MOSTLY_Q4_1", [4] = "MOSTLY_Q4_1_SOME_F16",
    [7] = "MOSTLY_Q8_0", [8] = "MOSTLY_Q5_0", [9] = "MOSTLY_Q5_1", [10] = "MOSTLY_Q2_K", [11] = "MOSTLY_Q3_K_S",
    [12] = "MOSTLY_Q3_K_M", [13] = "MOSTLY_Q3_K_L", [14] = "MOSTLY_Q4_K_S", [15] = "MOSTLY_Q4_K_M",
    [16] = "MOSTLY_Q5_K_S", [17] = "MOSTLY_Q5_K_M", [18] = "MOSTLY_Q6_K", [19] = "MOSTLY_IQ2_XXS",
    [20] = "MOSTLY_IQ2_XS", [21] = "MOSTLY_Q2_K_S", [22] = "MOSTLY_IQ3_XS", [23] = "MOSTLY_IQ3_XXS",
    [24] = "MOSTLY_IQ1_S", [25] = "MOSTLY_IQ4_NL", [26] = "MOSTLY_IQ3_S", [27] = "MOSTLY_IQ3_M",
    [28] = "MOSTLY_IQ2_S", [29] = "MOSTLY_IQ2_M", [30] = "MOSTLY_IQ4_XS", [31] = "MOSTLY_IQ1_M",
    [32] = "MOSTLY_BF16", [33] = "MOSTLY_Q4_0_4_4", [34] = "MOSTLY_Q4_0_4_8", [35] = "MOSTLY_Q4_0_8_8",
    [36] = "MOSTLY_TQ1_0", [37] = "MOSTLY_TQ2_0", [38] = "MOSTLY_MXFP4_MOE",
};
#define N_FTYPES (int64_t)(sizeof FTYPES / sizeof FTYPES[0])

const char *gguf_file_type_name(int64_t ft) {
    if (ft >= GGUF_FTYPE_GUESSED && ft < 2 * GGUF_FTYPE_GUESSED) ft -= GGUF_FTYPE_GUESSED;
    return ft >= 0 && ft < N_FTYPES ? FTYPES[ft] : NULL;
}

/* The type holding most bytes among 2-D tensors (the matrices), -1 if none. */
static int dominant_type(const GgufFile *f) {
    size_t bytes[GGML_NTYPES] = {0};
    int best = -1;
    for (int i = 0; i < f->n_tensors; i++)
        if (f->tensors[i].n_dims >= 2 && (unsigned)f->tensors[i].type < GGML_NTYPES) bytes[f->tensors[i].type] += f->tensors[i].nbytes;
    for (int t = 0; t < GGML_NTYPES; t++)
        if (bytes[t] && (best < 0 || bytes[t] > bytes[best])) best = t;
    return best;
}

char *gguf_mix_name(const GgufFile *f, char *out, size_t cap) {
    int64_t ft;
    const char *name = gguf_get_int(f, "general.file_type", &ft) == 0 ? gguf_file_type_name(ft) : NULL;
    if (name) {
        const char *u = strchr(name, '_'); /* past ALL_ or MOSTLY_ */
        snprintf(out, cap, "%s", u ? u + 1 : name);
        return out;
    }
    int t = dominant_type(f);
    snprintf(out, cap, "%s", t >= 0 ? gguf_type_name((GgmlType)t) : "?");
    return out;
}
