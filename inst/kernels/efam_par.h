/* efam_par.h -- the codes and parameters of mgcv's extended families as
 * efam_math.h's row functions take them; included by src/family.h too, so
 * the engine carries the same struct the kernels receive by value. */
#ifndef GAMGPU_EFAM_PAR_H
#define GAMGPU_EFAM_PAR_H

#define GG_FM_TW     10   /* mgcv's tw(): Tweedie, p and scale estimated */
#define GG_FM_BETAR  11   /* betar(): beta regression */
#define GG_FM_SCAT   12   /* scat(): scaled t */
#define GG_FM_ZIP    13   /* ziP(): zero-inflated Poisson */
#define GG_FM_OCAT   14   /* ocat(R): ordered categorical */

#define GG_FM_EF_MAXTH 10  /* theta values of one family (ocat: R <= 12) */

typedef struct gg_fm_efpar {
    double th[GG_FM_EF_MAXTH]; /* the family's theta, as its getTheta() */
    double aux[4];             /* fixed settings (tw: a, b; betar: eps; ...) */
    double log_scale;          /* log scale (tw's ls); 0 for the others */
    int    nth;                /* theta values */
    int    scale_est;          /* 1: log scale is parameter nth (tw) */
} gg_fm_efpar;

/* mgcv's family$Dd(y, mu, theta, wt, level) of a family with one theta,
 * one row (efam_nb.h's and efam_tw.h's gg_fm_*_dd, for efam_outer.h):
 * the deviance's derivatives in mu and theta to the levels dDeta() takes */
typedef struct gg_fm_efdd {
    double Dmu, Dmu2, EDmu2;                        /* level 0 */
    double Dth, Dmuth, Dmu3, Dmu2th;                /* level 1 */
    double Dmu4, Dth2, Dmuth2, Dmu2th2, Dmu3th;     /* level 2 */
} gg_fm_efdd;

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
