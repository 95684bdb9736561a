/* efam_par.h -- the codes and parameters of mgcv's extended families as
 * efam_math.h's row functions take them; included by src/family/family.h
 * too, so the engine carries the same struct the kernels receive by value. */
#ifndef GAMGPU_EFAM_PAR_H
#define GAMGPU_EFAM_PAR_H

#define GG_FM_TW     10   /* mgcv's tw(): Tweedie, p and scale estimated */
#define GG_FM_BETAR  11   /* betar(): beta regression */
#define GG_FM_SCAT   12   /* scat(): scaled t */
#define GG_FM_ZIP    13   /* ziP(): zero-inflated Poisson */
#define GG_FM_OCAT   14   /* ocat(R): ordered categorical */
#define GG_FM_CNORM  15   /* cnorm(): censored normal */
#define GG_FM_CLOG   16   /* clog(): censored logistic */
#define GG_FM_CPOIS  17   /* cpois(): censored Poisson */
#define GG_FM_GFAM   18   /* gfam(fl) (mgcv >= 1.9): a member family per row */

/* The censored families take a second response column, yat
 * (attr(y, "censor"): efam_cens.h), gfam() its rows' member index there
 * (1-based, as a double: efam_gfam.h); the others ignore it. */
#define GG_FM_EF_CENSORED(f) ((f) == GG_FM_CNORM || (f) == GG_FM_CLOG || (f) == GG_FM_CPOIS)

#define GG_FM_EF_MAXTH 10  /* theta values of one family (ocat: R <= 12) */

/* gfam()'s members (efam_gfam.h): each one's family code (family_math.h's
 * exponential ones, or GG_FM_NEGBIN with efam 1 for nb()), its link, its
 * own theta values th[th0 .. th0 + nth - 1] of the gfam's theta, and the
 * index there of its log scale (isc; -1: scale 1).  At most GG_FM_GF_MAXM
 * members (R/families.R refuses more). */
#define GG_FM_GF_MAXM 8
typedef struct gg_fm_gfmem {
    int    fam, efam, link;
    double lpow;               /* the link's power (GG_FM_POWER) */
    int    th0, nth, isc;
} gg_fm_gfmem;

typedef struct gg_fm_efpar {
    double th[GG_FM_EF_MAXTH]; /* the family's theta, as its getTheta() */
    double aux[4];             /* fixed settings (tw: a, b; betar: eps; ...) */
    double log_scale;          /* log scale (tw's ls); 0 for the others */
    int    nth;                /* theta values */
    int    scale_est;          /* 1: log scale is parameter nth (tw) */
    int    ngm;                /* gfam(): members (0 for the other families) */
    gg_fm_gfmem gm[GG_FM_GF_MAXM];
} gg_fm_efpar;

/* The outer rows in C (efam_outer.h) take families of at most
 * GG_FM_EFO_MAXTH theta values: nb(), tw(), betar(), cnorm(), clog()
 * (one), scat(), ziP() (two), ocat(R) (R - 2), cpois() (none). */
#define GG_FM_EFO_MAXTH 4
#define GG_FM_EFO_NPK(nth) ((nth) * ((nth) + 1) / 2)  /* theta's pairs */
#define GG_FM_EFO_MAXPK GG_FM_EFO_NPK(GG_FM_EFO_MAXTH)

/* mgcv's family$Dd(y, mu, theta, wt, level), one row (efam_nb.h's,
 * efam_tw.h's, ... gg_fm_*_dd, for efam_outer.h): the deviance's
 * derivatives in mu and theta to the levels dDeta() takes, theta's second
 * derivatives packed as mgcv packs them, row by row of the upper triangle
 * ((1,1), (1,2), ..., (1,nth), (2,2), ...) */
typedef struct gg_fm_efdd {
    double Dmu, Dmu2, EDmu2;                                /* level 0 */
    double Dmu3, Dth[GG_FM_EFO_MAXTH], Dmuth[GG_FM_EFO_MAXTH],
           Dmu2th[GG_FM_EFO_MAXTH];                         /* level 1 */
    double Dmu4, Dmu3th[GG_FM_EFO_MAXTH], Dth2[GG_FM_EFO_MAXPK],
           Dmuth2[GG_FM_EFO_MAXPK], Dmu2th2[GG_FM_EFO_MAXPK]; /* level 2 */
} gg_fm_efdd;

/* The theta columns of a row (src/engine/outer_rows.h's block eth, n x
 * GG_FM_EFO_NCOL(nth)): g_j = Detath_j, a_j = Deta2th_j / 2, c_j =
 * Deta3th_j / 2 (nth each), b_jk = Detath2_jk / 2, d_jk = Deta2th2_jk / 2
 * (the pairs each, packed as mgcv's) */
#define GG_FM_EFO_NCOL(nth) (3 * (nth) + 2 * GG_FM_EFO_NPK(nth))
#define GG_FM_EFO_G(nth) 0
#define GG_FM_EFO_A(nth) (nth)
#define GG_FM_EFO_C(nth) (2 * (nth))
#define GG_FM_EFO_B(nth) (3 * (nth))
#define GG_FM_EFO_D(nth) (3 * (nth) + GG_FM_EFO_NPK(nth))
/* the rows' sums: rows not finite, then sum Dth (nth), sum Dth2 (pairs) */
#define GG_FM_EFO_NSUM(nth) (1 + (nth) + GG_FM_EFO_NPK(nth))

/* the sums' layout (efam_math.h) */
#define GG_FM_EF_DEV 0
#define GG_FM_EF_LS  1
#define GG_FM_EF_DTH 2
#define GG_FM_EF_DTH2(nth) (2 + (nth))
#define GG_FM_EF_LSTH1(nth) (2 + (nth) + (nth) * ((nth) + 1) / 2)
#define GG_FM_EF_LSTH2(nth, ns) (GG_FM_EF_LSTH1(nth) + (ns))
#define GG_FM_EF_NSUM(nth, ns) (GG_FM_EF_LSTH2(nth, ns) + (ns) * ((ns) + 1) / 2)
#define GG_FM_EF_MAXSUM GG_FM_EF_NSUM(GG_FM_EF_MAXTH, GG_FM_EF_MAXTH + 1)

#endif
