/* ls_shash.h -- mgcv's shash() row for ls_math.h (included by it, after
 * its helpers): the log likelihood of one row and its derivatives in the
 * four parameters, compiled for the host and by NVRTC as the other rows. */
#ifndef GAMGPU_LS_SHASH_H
#define GAMGPU_LS_SHASH_H

/* shash(): m = (mu, tau, eps, phi), tau the log scale (its "logeb" link),
 * eps the skewness, phi the log tail weight; phiPen, shash()'s penalty
 * phiPen phi^2 on the log likelihood.  mgcv's ll() statement by statement
 * with its helpers .log1pexp(), .sqrtX2pm(), .ax2m1DivX2m2SQ() (their
 * branches for large |z|); the fourth derivatives are its generated
 * expressions in (y, mu, tau, eps, phi), gg_ls_shash_l4(). */

/* .log1pexp(x): log(1 + exp(x)) by mgcv's bins (-Inf, -37], (-37, 18],
 * (18, 33.3], (33.3, Inf]; -Inf and NaN, outside every bin, as they are */
GG_FM double gg_ls_log1pexp(double x)
{
    if (!(x > -GG_FM_INF)) return x;
    if (x <= -37.0) return exp(x);
    if (x <= 18.0) return log1p(exp(x));
    if (x <= 33.3) return x + exp(-x);
    return x;
}

/* .sqrtX2pm(x, m): sqrt(x^2 + m), |x| itself from 1e8 on */
GG_FM double gg_ls_sqrtx2pm(double x, double m)
{
    x = fabs(x);
    return x < 1e8 ? sqrt(x * x + m) : x;
}

/* .ax2m1DivX2m2SQ(x, m1, m2, a): (a x^2 + m1) / (x^2 + m2)^2, as the
 * square of a ratio of .sqrtX2pm()'s where a x^2 + m1 >= 0 */
GG_FM double gg_ls_ax2m1divx2m2sq(double x, double m1, double m2, double a)
{
    x = fabs(x);
    const double am = a * (x * x) + m1;
    if (am < 0) return am / gg_fm_rpow(x * x + m2, 2.0);
    const double s2 = gg_ls_sqrtx2pm(x, m2);
    return gg_fm_rpow(gg_ls_sqrtx2pm(sqrt(a) * x, m1) / s2 / s2, 2.0);
}

/* the fourth derivatives, mgcv's expressions (their names) in its order
 * l4 = (mmmm, mmmt, mmme, mmmp, mmtt, ..., pppp) */
GG_FM void gg_ls_shash_l4(double y, double mu, double tau, double eps, double phi, double *l4)
{
    const double exp1 = exp(1.0);
    const double aaa1 = -tau;
    const double aaa2 = y - mu;
    const double aaa3 = gg_fm_rpow(exp1, phi) * asinh(gg_fm_rpow(exp1, (aaa1 - phi)) *
        aaa2) - eps;
    const double abb8 = cosh(aaa3);
    const double abb9 = sinh(aaa3);
    const double abb1 = gg_fm_rpow(exp1, ((-2.0 * tau) - 2.0 * phi));
    const double abb3 = gg_fm_rpow(aaa2, 2.0);
    const double abb4 = 1.0 / gg_fm_rpow(exp1, tau);
    const double abb5 = -tau - phi;
    const double abb7 = gg_fm_rpow(exp1, (2.0 * abb5)) * abb3 + 1.0;
    const double abb6 = 1.0 / sqrt(abb7);
    const double aee5 = aaa3 + eps;
    const double aff04 = abb1 * abb3 + 1.0;
    const double aff05 = gg_fm_rpow(abb4, 2.0);
    const double aff08 = 2.0 * abb5;
    const double aff10 = 1.0 / abb7;
    const double aff13 = gg_fm_rpow(abb8, 2.0);
    const double aff14 = gg_fm_rpow(exp1, (aaa1 + aff08));
    const double aff15 = gg_fm_rpow(abb6, 3.0);
    const double aff17 = gg_fm_rpow(abb9, 2.0);
    const double agg15 = 1.0 / abb6;
    const double agg17 = 1.0 / abb8;
    const double aii11 = aaa3 + eps;
    const double aii12 = aii11 - abb4 * aaa2 * abb6;
    const double aii17 = gg_fm_rpow(abb6, 3.0);
    const double ajj15 = gg_fm_rpow(aaa2, 3.0);
    const double ann05 = gg_fm_rpow(exp1, phi);
    const double ann06 = asinh(gg_fm_rpow(exp1, abb5) * aaa2);
    const double aoo09 = -aaa2 / (gg_fm_rpow(exp1, tau) * agg15);
    const double app02 = -2.0 * tau;
    const double app04 = gg_fm_rpow(exp1, (app02 - 2.0 * phi)) * abb3 + 1.0;
    const double app08 = gg_fm_rpow(exp1, (app02 + aff08));
    const double app10 = 1.0 / gg_fm_rpow(abb7, 2.0);
    const double app14 = gg_fm_rpow(exp1, (aaa1 + 4.0 * abb5));
    const double app16 = 1.0 / gg_fm_rpow(agg15, 5.0);
    const double app21 = 1.0 / gg_fm_rpow(exp1, (3.0 * tau));
    const double aqq03 = gg_fm_rpow(exp1, (app02 - 2.0 * phi));
    const double aqq05 = aqq03 * abb3 + 1.0;
    const double aqq27 = 1.0 / aff13;
    const double arr06 = gg_fm_rpow(exp1, aff08) * gg_fm_rpow(aaa2, 2.0) + 1.0;
    const double arr07 = 1.0 / gg_fm_rpow(sqrt(arr06), 3.0);
    const double arr12 = 1.0 / arr06;
    const double ass16 = aii11 - aaa2 / (gg_fm_rpow(exp1, tau) * agg15);
    const double ass23 = 1.0 / abb8;
    const double ass28 = 1.0 / aff13;
    const double att19 = gg_fm_rpow(aaa2, 4.0);
    const double avv19 = aii11 - abb4 * aaa2 * abb6;
    const double ayy14 = -abb4 * aaa2 * abb6;
    const double ayy16 = aii11 + ayy14;
    const double ayy17 = aii11 + ayy14 - aff14 * ajj15 * aii17;
    const double ayy24 = gg_fm_rpow(ayy16, 2.0);
    const double azz19 = gg_fm_rpow(aaa2, 5.0);
    const double bdd07 = sqrt(gg_fm_rpow(exp1, aff08) * gg_fm_rpow(aaa2, 2.0) + 1.0);
    const double bdd08 = 1.0 / gg_fm_rpow(bdd07, 3.0);
    const double bdd14 = 1.0 / bdd07;
    const double bdd15 = aii11 - abb4 * aaa2 * bdd14;
    const double bgg4 = aee5 - aaa2 / (gg_fm_rpow(exp1, tau) * sqrt(gg_fm_rpow(exp1, (2.0 *
        abb5)) * gg_fm_rpow(aaa2, 2.0) + 1.0));
    const double bhh13 = -abb4 * aaa2 * bdd14;
    const double bhh14 = ann05 * ann06;
    const double bii11 = aii11 + aoo09;
    const double bii15 = aii11 + aoo09 - aff14 * ajj15 * aii17;
    const double bjj07 = 4.0 * abb5;
    const double bjj08 = gg_fm_rpow(exp1, (app02 + bjj07));
    const double bjj11 = 1.0 / gg_fm_rpow(abb7, 3.0);
    const double bjj14 = 1.0 / gg_fm_rpow(exp1, (4.0 * tau));
    const double bjj18 = gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5));
    const double bjj21 = 1.0 / gg_fm_rpow(agg15, 7.0);
    const double bjj24 = gg_fm_rpow(exp1, (aff08 - 3.0 * tau));
    const double bjj26 = gg_fm_rpow(exp1, (aaa1 + bjj07));
    const double bkk33 = 1.0 / gg_fm_rpow(abb8, 3.0);
    const double bkk34 = gg_fm_rpow(abb9, 3.0);
    const double bll16 = gg_fm_rpow(exp1, (aff08 - 2.0 * tau));
    const double bmm34 = 1.0 / gg_fm_rpow(abb8, 3.0);
    const double bmm35 = gg_fm_rpow(abb9, 3.0);
    const double bss21 = 2.0 * aff14 * abb3 * aff15 - 3.0 * bjj26 * att19 * app16;
    const double bss23 = -abb4 * aaa2 * abb6;
    const double bss25 = aii11 + bss23;
    const double bss26 = aii11 + bss23 - aff14 * ajj15 * aff15;
    const double bss29 = gg_fm_rpow(bss25, 2.0);
    const double bss33 = (-4.0 * aff14 * aaa2 * aff15) + 18.0 * bjj26 * ajj15 * app16 -
        (15.0 * gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5)) * gg_fm_rpow(aaa2, 5.0)) /
        gg_fm_rpow(agg15, 7.0);
    const double btt24 = gg_fm_rpow(aaa2, 6.0);
    const double byy24 = 2.0 * aff14 * ajj15 * aff15 - 3.0 * bjj26 * azz19 * app16;
    const double byy35 = (-6.0 * aff14 * abb3 * aff15) + 21.0 * bjj26 * att19 * app16 -
        (15.0 * gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5)) * gg_fm_rpow(aaa2, 6.0)) /
        gg_fm_rpow(agg15, 7.0);
    const double bzz7 = gg_fm_rpow(abb8, 2.0);
    const double bzz9 = gg_fm_rpow(abb9, 2.0);
    const double cbb09 = 1.0 / gg_fm_rpow(agg15, 5.0);
    const double cbb18 = 2.0 * aff14 * abb3 * aii17 - 3.0 * app14 * att19 * cbb09;
    const double cbb24 = aii11 + ayy14 - aff14 * gg_fm_rpow(aaa2, 3.0) * aii17;
    const double ccc23 = aii11 + ayy14 + aff14 * ajj15 * aii17 - 3.0 * app14 * azz19 *
        cbb09;
    const double ccc24 = gg_fm_rpow(ayy16, 3.0);
    const double ccc28 = (-4.0 * aff14 * abb3 * aii17) + 18.0 * app14 * att19 * cbb09 -
        (15.0 * gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5)) * gg_fm_rpow(aaa2, 6.0)) /
        gg_fm_rpow(agg15, 7.0);
    const double cdd24 = gg_fm_rpow(aaa2, 7.0);
    const double cll08 = 1.0 / gg_fm_rpow(bdd07, 5.0);
    const double cll16 = aii11 + bhh13;
    const double cll17 = gg_fm_rpow(cll16, 2.0);
    const double cll18 = 2.0 * aff14 * ajj15 * bdd08 - 3.0 * app14 * azz19 * cll08;
    const double cll24 = aii11 + bhh13 - aff14 * ajj15 * bdd08;
    const double cmm12 = -3.0 * app14 * azz19 * cbb09;
    const double cmm16 = 2.0 * aff14 * ajj15 * aii17 + cmm12;
    const double cmm23 = aii11 + ayy14 + aff14 * ajj15 * aii17 + cmm12;
    const double cmm28 = (-4.0 * aff14 * ajj15 * aii17) + 18.0 * app14 * azz19 * cbb09 -
        (15.0 * gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5)) * gg_fm_rpow(aaa2, 7.0)) /
        gg_fm_rpow(agg15, 7.0);
    const double cnn3 = gg_fm_rpow(abb8, 2.0);
    const double cnn5 = gg_fm_rpow(abb9, 2.0);
    const double coo7 = gg_fm_rpow(abb8, 2.0);
    const double coo9 = gg_fm_rpow(abb9, 2.0);
    const double cpp06 = -aaa2 / (gg_fm_rpow(exp1, tau) * bdd07);
    const double cpp08 = gg_fm_rpow((cpp06 + aii11), 2.0);
    const double cpp12 = aii11 + cpp06 - (gg_fm_rpow(exp1, (aaa1 + aff08)) *
        gg_fm_rpow(aaa2, 3.0)) / gg_fm_rpow(bdd07, 3.0);
    const double cqq12 = -aff14 * ajj15 * bdd08;
    const double cqq19 = bhh14 + bhh13;
    const double cqq20 = gg_fm_rpow(cqq19, 3.0);
    const double cqq21 = bhh14 + bhh13 + aff14 * ajj15 * bdd08 - 3.0 * app14 * azz19 *
        cll08;
    const double cqq25 = bhh14 + bhh13 + cqq12;
    const double cqq28 = 1.0 / aff13;
    const double crr18 = aii11 + aoo09 + aff14 * ajj15 * aii17 - 3.0 * app14 * azz19 *
        cbb09;
    const double crr19 = gg_fm_rpow(bii11, 4.0);
    const double crr21 = gg_fm_rpow(bii15, 2.0);
    const double crr25 = aii11 + aoo09 - 3.0 * aff14 * ajj15 * aii17 + 15.0 * app14 * azz19
        * cbb09 - (15.0 * gg_fm_rpow(exp1, (aaa1 + 6.0 * abb5)) * gg_fm_rpow(aaa2, 7.0)) /
        gg_fm_rpow(agg15, 7.0);
    const double crr28 = gg_fm_rpow(bii11, 2.0);
    l4[0] = (-(6.0 * bjj14 * app10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) -
        (12.0 * bjj24 * aaa2 * app16 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) + 8.0
        * bjj14 * app10 * aqq27 * aff17 + 4.0 * app08 * app10 * aqq27 * aff17 - 15.0 *
        bjj08 * abb3 * bjj11 * aqq27 * aff17 - 4.0 * bjj14 * app10 * aff17 + 4.0 * app08 *
        app10 * aff17 - 15.0 * bjj08 * abb3 * bjj11 * aff17 - 9.0 * bjj26 * aaa2 * app16 *
        abb8 * abb9 + 24.0 * bjj24 * aaa2 * app16 * abb8 * abb9 + 15.0 * bjj18 * ajj15 *
        bjj21 * abb8 * abb9 + 9.0 * bjj26 * aaa2 * app16 * agg17 * abb9 + 12.0 * bjj24 *
        aaa2 * app16 * agg17 * abb9 - 15.0 * bjj18 * ajj15 * bjj21 * agg17 * abb9 - 4.0 *
        bjj14 * app10 * aff13 + 4.0 * app08 * app10 * aff13 - 15.0 * bjj08 * abb3 * bjj11 *
        aff13 - 2.0 * bjj14 * app10 - 4.0 * app08 * app10 + 15.0 * bjj08 * abb3 * bjj11 +
        (6.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi))) / gg_fm_rpow(app04, 2.0) -
        (48.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) * abb3) / gg_fm_rpow(app04,
        3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2,
        4.0)) / gg_fm_rpow(app04, 4.0);
    l4[1] = (-(6.0 * bjj14 * aaa2 * app10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0))
        + 6.0 * app21 * aff15 * bkk33 * bkk34 - 12.0 * bjj24 * abb3 * app16 * bkk33 * bkk34
        + 8.0 * bjj14 * aaa2 * app10 * aqq27 * aff17 + 13.0 * app08 * aaa2 * app10 * aqq27
        * aff17 - 15.0 * bjj08 * ajj15 * bjj11 * aqq27 * aff17 - 4.0 * bjj14 * aaa2 * app10
        * aff17 + 13.0 * app08 * aaa2 * app10 * aff17 - 15.0 * bjj08 * ajj15 * bjj11 *
        aff17 - 12.0 * app21 * aff15 * abb8 * abb9 + 3.0 * aff14 * aff15 * abb8 * abb9 -
        18.0 * bjj26 * abb3 * app16 * abb8 * abb9 + 24.0 * bjj24 * abb3 * app16 * abb8 *
        abb9 + 15.0 * bjj18 * att19 * bjj21 * abb8 * abb9 - 6.0 * app21 * aff15 * agg17 *
        abb9 - 3.0 * aff14 * aff15 * agg17 * abb9 + 18.0 * bjj26 * abb3 * app16 * agg17 *
        abb9 + 12.0 * bjj24 * abb3 * app16 * agg17 * abb9 - 15.0 * bjj18 * att19 * bjj21 *
        agg17 * abb9 - 4.0 * bjj14 * aaa2 * app10 * aff13 + 13.0 * app08 * aaa2 * app10 *
        aff13 - 15.0 * bjj08 * ajj15 * bjj11 * aff13 - 2.0 * bjj14 * aaa2 * app10 - 13.0 *
        app08 * aaa2 * app10 + 15.0 * bjj08 * ajj15 * bjj11 + (24.0 * gg_fm_rpow(exp1,
        ((-4.0 * tau) - 4.0 * phi)) * aaa2) / gg_fm_rpow(app04, 2.0) - (72.0 *
        gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) * ajj15) / gg_fm_rpow(app04, 3.0) +
        (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 5.0)) /
        gg_fm_rpow(app04, 4.0);
    l4[2] = (-(6.0 * app21 * aff15 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) - (6.0
        * bll16 * aaa2 * app10 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) + 8.0 *
        app21 * aff15 * aqq27 * aff17 + aff14 * aff15 * aqq27 * aff17 - 3.0 * app14 * abb3
        * app16 * aqq27 * aff17 - 4.0 * app21 * aff15 * aff17 + aff14 * aff15 * aff17 - 3.0
        * app14 * abb3 * app16 * aff17 + 12.0 * bll16 * aaa2 * app10 * abb8 * abb9 + (6.0 *
        bll16 * aaa2 * app10 * abb9) / abb8 - 4.0 * app21 * aff15 * aff13 + aff14 * aff15 *
        aff13 - 3.0 * app14 * abb3 * app16 * aff13 - 2.0 * app21 * aff15 - aff14 * aff15 +
        3.0 * app14 * abb3 * app16;
    l4[3] = (6.0 * app21 * aff15 * ass16 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) +
        6.0 * app08 * aaa2 * app10 * ass16 * bmm34 * bmm35 - 6.0 * bjj24 * abb3 * app16 *
        bmm34 * bmm35 - 8.0 * app21 * aff15 * ass16 * ass28 * aff17 - aff14 * aff15 * ass16
        * ass28 * aff17 + 3.0 * bjj26 * abb3 * app16 * ass16 * ass28 * aff17 + 6.0 * app08
        * aaa2 * app10 * ass28 * aff17 - 12.0 * bjj08 * ajj15 * bjj11 * ass28 * aff17 + 4.0
        * app21 * aff15 * ass16 * aff17 - aff14 * aff15 * ass16 * aff17 + 3.0 * bjj26 *
        abb3 * app16 * ass16 * aff17 + 6.0 * app08 * aaa2 * app10 * aff17 - 12.0 * bjj08 *
        ajj15 * bjj11 * aff17 - 12.0 * app08 * aaa2 * app10 * ass16 * abb8 * abb9 + 2.0 *
        aff14 * aff15 * abb8 * abb9 - 15.0 * bjj26 * abb3 * app16 * abb8 * abb9 + 12.0 *
        bjj24 * abb3 * app16 * abb8 * abb9 + 15.0 * bjj18 * att19 * bjj21 * abb8 * abb9 -
        6.0 * app08 * aaa2 * app10 * ass16 * ass23 * abb9 - 2.0 * aff14 * aff15 * ass23 *
        abb9 + 15.0 * bjj26 * abb3 * app16 * ass23 * abb9 + 6.0 * bjj24 * abb3 * app16 *
        ass23 * abb9 - 15.0 * bjj18 * att19 * bjj21 * ass23 * abb9 + 4.0 * app21 * aff15 *
        ass16 * aff13 - aff14 * aff15 * ass16 * aff13 + 3.0 * bjj26 * abb3 * app16 * ass16
        * aff13 + 6.0 * app08 * aaa2 * app10 * aff13 - 12.0 * bjj08 * ajj15 * bjj11 * aff13
        + 2.0 * app21 * aff15 * ass16 + aff14 * aff15 * ass16 - 3.0 * bjj26 * abb3 * app16
        * ass16 - 6.0 * app08 * aaa2 * app10 + 12.0 * bjj08 * ajj15 * bjj11 + (24.0 *
        gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * aaa2) / gg_fm_rpow(app04, 2.0) -
        (72.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) * ajj15) / gg_fm_rpow(app04,
        3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2,
        5.0)) / gg_fm_rpow(app04, 4.0);
    l4[4] = (-(6.0 * bjj14 * abb3 * app10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0))
        + 10.0 * app21 * aaa2 * aff15 * bkk33 * bkk34 - 12.0 * bjj24 * ajj15 * app16 *
        bkk33 * bkk34 - 4.0 * aff05 * aff10 * aqq27 * aff17 + 8.0 * bjj14 * abb3 * app10 *
        aqq27 * aff17 + 19.0 * app08 * abb3 * app10 * aqq27 * aff17 - 15.0 * bjj08 * att19
        * bjj11 * aqq27 * aff17 - 4.0 * aff05 * aff10 * aff17 - 4.0 * bjj14 * abb3 * app10
        * aff17 + 19.0 * app08 * abb3 * app10 * aff17 - 15.0 * bjj08 * att19 * bjj11 *
        aff17 - 20.0 * app21 * aaa2 * aff15 * abb8 * abb9 + 9.0 * aff14 * aaa2 * aff15 *
        abb8 * abb9 - 24.0 * bjj26 * ajj15 * app16 * abb8 * abb9 + 24.0 * bjj24 * ajj15 *
        app16 * abb8 * abb9 + 15.0 * bjj18 * azz19 * bjj21 * abb8 * abb9 - 10.0 * app21 *
        aaa2 * aff15 * agg17 * abb9 - 9.0 * aff14 * aaa2 * aff15 * agg17 * abb9 + 24.0 *
        bjj26 * ajj15 * app16 * agg17 * abb9 + 12.0 * bjj24 * ajj15 * app16 * agg17 * abb9
        - 15.0 * bjj18 * azz19 * bjj21 * agg17 * abb9 - 4.0 * aff05 * aff10 * aff13 - 4.0 *
        bjj14 * abb3 * app10 * aff13 + 19.0 * app08 * abb3 * app10 * aff13 - 15.0 * bjj08 *
        att19 * bjj11 * aff13 + 4.0 * aff05 * aff10 - 2.0 * bjj14 * abb3 * app10 - 19.0 *
        app08 * abb3 * app10 + 15.0 * bjj08 * att19 * bjj11 - (4.0 * aqq03) / aqq05 + (44.0
        * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * abb3) / gg_fm_rpow(aqq05, 2.0) -
        (88.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) * att19) / gg_fm_rpow(aqq05,
        3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2,
        6.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[5] = (-(6.0 * app21 * aaa2 * aff15 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0))
        + 4.0 * aff05 * aff10 * bkk33 * bkk34 - 6.0 * bll16 * abb3 * app10 * bkk33 * bkk34
        + 8.0 * app21 * aaa2 * aff15 * aqq27 * aff17 + 3.0 * aff14 * aaa2 * aff15 * aqq27 *
        aff17 - 3.0 * app14 * ajj15 * app16 * aqq27 * aff17 - 4.0 * app21 * aaa2 * aff15 *
        aff17 + 3.0 * aff14 * aaa2 * aff15 * aff17 - 3.0 * app14 * ajj15 * app16 * aff17 -
        8.0 * aff05 * aff10 * abb8 * abb9 + 12.0 * bll16 * abb3 * app10 * abb8 * abb9 - 4.0
        * aff05 * aff10 * agg17 * abb9 + 6.0 * bll16 * abb3 * app10 * agg17 * abb9 - 4.0 *
        app21 * aaa2 * aff15 * aff13 + 3.0 * aff14 * aaa2 * aff15 * aff13 - 3.0 * app14 *
        ajj15 * app16 * aff13 - 2.0 * app21 * aaa2 * aff15 - 3.0 * aff14 * aaa2 * aff15 +
        3.0 * app14 * ajj15 * app16;
    l4[6] = (6.0 * app21 * aaa2 * aff15 * ass16 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0) - 4.0 * aff05 * aff10 * ass16 * bmm34 * bmm35 + 6.0 * app08 * abb3 * app10 *
        ass16 * bmm34 * bmm35 - 6.0 * bjj24 * ajj15 * app16 * bmm34 * bmm35 - 8.0 * app21 *
        aaa2 * aff15 * ass16 * ass28 * aff17 - 3.0 * aff14 * aaa2 * aff15 * ass16 * ass28 *
        aff17 + 3.0 * bjj26 * ajj15 * app16 * ass16 * ass28 * aff17 + 10.0 * app08 * abb3 *
        app10 * ass28 * aff17 - 12.0 * bjj08 * att19 * bjj11 * ass28 * aff17 + 4.0 * app21
        * aaa2 * aff15 * ass16 * aff17 - 3.0 * aff14 * aaa2 * aff15 * ass16 * aff17 + 3.0 *
        bjj26 * ajj15 * app16 * ass16 * aff17 + 10.0 * app08 * abb3 * app10 * aff17 - 12.0
        * bjj08 * att19 * bjj11 * aff17 + 8.0 * aff05 * aff10 * ass16 * abb8 * abb9 - 12.0
        * app08 * abb3 * app10 * ass16 * abb8 * abb9 + 6.0 * aff14 * aaa2 * aff15 * abb8 *
        abb9 - 21.0 * bjj26 * ajj15 * app16 * abb8 * abb9 + 12.0 * bjj24 * ajj15 * app16 *
        abb8 * abb9 + 15.0 * bjj18 * azz19 * bjj21 * abb8 * abb9 + 4.0 * aff05 * aff10 *
        ass16 * ass23 * abb9 - 6.0 * app08 * abb3 * app10 * ass16 * ass23 * abb9 - 6.0 *
        aff14 * aaa2 * aff15 * ass23 * abb9 + 21.0 * bjj26 * ajj15 * app16 * ass23 * abb9 +
        6.0 * bjj24 * ajj15 * app16 * ass23 * abb9 - 15.0 * bjj18 * azz19 * bjj21 * ass23 *
        abb9 + 4.0 * app21 * aaa2 * aff15 * ass16 * aff13 - 3.0 * aff14 * aaa2 * aff15 *
        ass16 * aff13 + 3.0 * bjj26 * ajj15 * app16 * ass16 * aff13 + 10.0 * app08 * abb3 *
        app10 * aff13 - 12.0 * bjj08 * att19 * bjj11 * aff13 + 2.0 * app21 * aaa2 * aff15 *
        ass16 + 3.0 * aff14 * aaa2 * aff15 * ass16 - 3.0 * bjj26 * ajj15 * app16 * ass16 -
        10.0 * app08 * abb3 * app10 + 12.0 * bjj08 * att19 * bjj11 - (4.0 * aqq03) / aqq05
        + (44.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * abb3) / gg_fm_rpow(aqq05,
        2.0) - (88.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) * att19) /
        gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) *
        gg_fm_rpow(aaa2, 6.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[7] = (-(6.0 * aff05 * arr12 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) - (2.0
        * aff14 * aaa2 * arr07 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) + (8.0 *
        aff05 * arr12 * aff17) / aff13 - 4.0 * aff05 * arr12 * aff17 + 4.0 * aff14 * aaa2 *
        arr07 * abb8 * abb9 + (2.0 * aff14 * aaa2 * arr07 * abb9) / abb8 - 4.0 * aff05 *
        arr12 * aff13 - 2.0 * aff05 * arr12;
    l4[8] = (6.0 * aff05 * aff10 * ass16 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) +
        2.0 * aff14 * aaa2 * aff15 * ass16 * bmm34 * bmm35 - 4.0 * bll16 * abb3 * app10 *
        bmm34 * bmm35 - 8.0 * aff05 * aff10 * ass16 * ass28 * aff17 + 2.0 * aff14 * aaa2 *
        aff15 * ass28 * aff17 - 3.0 * app14 * ajj15 * app16 * ass28 * aff17 + 4.0 * aff05 *
        aff10 * ass16 * aff17 + 2.0 * aff14 * aaa2 * aff15 * aff17 - 3.0 * app14 * ajj15 *
        app16 * aff17 - 4.0 * aff14 * aaa2 * aff15 * ass16 * abb8 * abb9 + 8.0 * bll16 *
        abb3 * app10 * abb8 * abb9 - 2.0 * aff14 * aaa2 * aff15 * ass16 * ass23 * abb9 +
        4.0 * bll16 * abb3 * app10 * ass23 * abb9 + 4.0 * aff05 * aff10 * ass16 * aff13 +
        2.0 * aff14 * aaa2 * aff15 * aff13 - 3.0 * app14 * ajj15 * app16 * aff13 + 2.0 *
        aff05 * aff10 * ass16 - 2.0 * aff14 * aaa2 * aff15 + 3.0 * app14 * ajj15 * app16;
    l4[9] = (-(6.0 * aff05 * aff10 * bss29 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) - 2.0 * aff14 * aaa2 * aff15 * bss29 * bmm34 * bmm35 + 2.0 * aff05 * aff10 *
        bss26 * bmm34 * bmm35 + 8.0 * app08 * abb3 * app10 * bss25 * bmm34 * bmm35 + 8.0 *
        aff05 * aff10 * bss29 * ass28 * aff17 + aff14 * aaa2 * aff15 * bss26 * ass28 *
        aff17 - 4.0 * aff14 * aaa2 * aff15 * bss25 * ass28 * aff17 + 6.0 * bjj26 * ajj15 *
        app16 * bss25 * ass28 * aff17 + 2.0 * abb4 * abb6 * bss21 * ass28 * aff17 - 2.0 *
        bjj08 * att19 * bjj11 * ass28 * aff17 - 4.0 * aff05 * aff10 * bss29 * aff17 + aff14
        * aaa2 * aff15 * bss26 * aff17 - 4.0 * aff14 * aaa2 * aff15 * bss25 * aff17 + 6.0 *
        bjj26 * ajj15 * app16 * bss25 * aff17 + 2.0 * abb4 * abb6 * bss21 * aff17 - 2.0 *
        bjj08 * att19 * bjj11 * aff17 + 4.0 * aff14 * aaa2 * aff15 * bss29 * abb8 * abb9 -
        4.0 * aff05 * aff10 * bss26 * abb8 * abb9 - 16.0 * app08 * abb3 * app10 * bss25 *
        abb8 * abb9 - bss33 * abb8 * abb9 + 2.0 * aff14 * aaa2 * aff15 * bss29 * ass23 *
        abb9 - 2.0 * aff05 * aff10 * bss26 * ass23 * abb9 - 8.0 * app08 * abb3 * app10 *
        bss25 * ass23 * abb9 + bss33 * ass23 * abb9 - 4.0 * aff05 * aff10 * bss29 * aff13 +
        aff14 * aaa2 * aff15 * bss26 * aff13 - 4.0 * aff14 * aaa2 * aff15 * bss25 * aff13 +
        6.0 * bjj26 * ajj15 * app16 * bss25 * aff13 + 2.0 * abb4 * abb6 * bss21 * aff13 -
        2.0 * bjj08 * att19 * bjj11 * aff13 - 2.0 * aff05 * aff10 * bss29 - aff14 * aaa2 *
        aff15 * bss26 + 4.0 * aff14 * aaa2 * aff15 * bss25 - 6.0 * bjj26 * ajj15 * app16 *
        bss25 - 2.0 * abb4 * abb6 * bss21 + 2.0 * bjj08 * att19 * bjj11 - (4.0 * aqq03) /
        aqq05 + (44.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * abb3) /
        gg_fm_rpow(aqq05, 2.0) - (88.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) *
        att19) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 *
        phi)) * gg_fm_rpow(aaa2, 6.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[10] = (-(6.0 * bjj14 * ajj15 * app10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 12.0 * app21 * abb3 * aff15 * bkk33 * bkk34 - 12.0 * bjj24 * att19 * app16
        * bkk33 * bkk34 - 7.0 * aff05 * aaa2 * aff10 * aqq27 * aff17 + 8.0 * bjj14 * ajj15
        * app10 * aqq27 * aff17 + 22.0 * app08 * ajj15 * app10 * aqq27 * aff17 - 15.0 *
        bjj08 * azz19 * bjj11 * aqq27 * aff17 - 7.0 * aff05 * aaa2 * aff10 * aff17 - 4.0 *
        bjj14 * ajj15 * app10 * aff17 + 22.0 * app08 * ajj15 * app10 * aff17 - 15.0 * bjj08
        * azz19 * bjj11 * aff17 - abb4 * abb6 * abb8 * abb9 - 24.0 * app21 * abb3 * aff15 *
        abb8 * abb9 + 13.0 * aff14 * abb3 * aff15 * abb8 * abb9 - 27.0 * bjj26 * att19 *
        app16 * abb8 * abb9 + 24.0 * bjj24 * att19 * app16 * abb8 * abb9 + 15.0 * bjj18 *
        btt24 * bjj21 * abb8 * abb9 + abb4 * abb6 * agg17 * abb9 - 12.0 * app21 * abb3 *
        aff15 * agg17 * abb9 - 13.0 * aff14 * abb3 * aff15 * agg17 * abb9 + 27.0 * bjj26 *
        att19 * app16 * agg17 * abb9 + 12.0 * bjj24 * att19 * app16 * agg17 * abb9 - 15.0 *
        bjj18 * btt24 * bjj21 * agg17 * abb9 - 7.0 * aff05 * aaa2 * aff10 * aff13 - 4.0 *
        bjj14 * ajj15 * app10 * aff13 + 22.0 * app08 * ajj15 * app10 * aff13 - 15.0 * bjj08
        * azz19 * bjj11 * aff13 + 7.0 * aff05 * aaa2 * aff10 - 2.0 * bjj14 * ajj15 * app10
        - 22.0 * app08 * ajj15 * app10 + 15.0 * bjj08 * azz19 * bjj11 - (8.0 * aqq03 *
        aaa2) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * ajj15) /
        gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) *
        azz19) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 *
        phi)) * gg_fm_rpow(aaa2, 7.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[11] = (-(6.0 * app21 * abb3 * aff15 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 6.0 * aff05 * aaa2 * aff10 * bkk33 * bkk34 - 6.0 * bll16 * ajj15 * app10 *
        bkk33 * bkk34 - abb4 * abb6 * aqq27 * aff17 + 8.0 * app21 * abb3 * aff15 * aqq27 *
        aff17 + 4.0 * aff14 * abb3 * aff15 * aqq27 * aff17 - 3.0 * app14 * att19 * app16 *
        aqq27 * aff17 - abb4 * abb6 * aff17 - 4.0 * app21 * abb3 * aff15 * aff17 + 4.0 *
        aff14 * abb3 * aff15 * aff17 - 3.0 * app14 * att19 * app16 * aff17 - 12.0 * aff05 *
        aaa2 * aff10 * abb8 * abb9 + 12.0 * bll16 * ajj15 * app10 * abb8 * abb9 - 6.0 *
        aff05 * aaa2 * aff10 * agg17 * abb9 + 6.0 * bll16 * ajj15 * app10 * agg17 * abb9 -
        abb4 * abb6 * aff13 - 4.0 * app21 * abb3 * aff15 * aff13 + 4.0 * aff14 * abb3 *
        aff15 * aff13 - 3.0 * app14 * att19 * app16 * aff13 + abb4 * abb6 - 2.0 * app21 *
        abb3 * aff15 - 4.0 * aff14 * abb3 * aff15 + 3.0 * app14 * att19 * app16;
    l4[12] = (6.0 * app21 * abb3 * aff15 * avv19 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0) - 6.0 * aff05 * aaa2 * aff10 * avv19 * bmm34 * bmm35 + 6.0 *
        app08 * ajj15 * app10 * avv19 * bmm34 * bmm35 - 6.0 * bjj24 * att19 * app16 * bmm34
        * bmm35 + abb4 * abb6 * avv19 * ass28 * aff17 - 8.0 * app21 * abb3 * aff15 * avv19
        * ass28 * aff17 - 4.0 * aff14 * abb3 * aff15 * avv19 * ass28 * aff17 + 3.0 * bjj26
        * att19 * app16 * avv19 * ass28 * aff17 + 12.0 * app08 * ajj15 * app10 * ass28 *
        aff17 - 12.0 * bjj08 * azz19 * bjj11 * ass28 * aff17 + abb4 * abb6 * avv19 * aff17
        + 4.0 * app21 * abb3 * aff15 * avv19 * aff17 - 4.0 * aff14 * abb3 * aff15 * avv19 *
        aff17 + 3.0 * bjj26 * att19 * app16 * avv19 * aff17 + 12.0 * app08 * ajj15 * app10
        * aff17 - 12.0 * bjj08 * azz19 * bjj11 * aff17 + 12.0 * aff05 * aaa2 * aff10 *
        avv19 * abb8 * abb9 - 12.0 * app08 * ajj15 * app10 * avv19 * abb8 * abb9 + 9.0 *
        aff14 * abb3 * aff15 * abb8 * abb9 - 24.0 * bjj26 * att19 * app16 * abb8 * abb9 +
        12.0 * bjj24 * att19 * app16 * abb8 * abb9 + 15.0 * bjj18 * btt24 * bjj21 * abb8 *
        abb9 + 6.0 * aff05 * aaa2 * aff10 * avv19 * ass23 * abb9 - 6.0 * app08 * ajj15 *
        app10 * avv19 * ass23 * abb9 - 9.0 * aff14 * abb3 * aff15 * ass23 * abb9 + 24.0 *
        bjj26 * att19 * app16 * ass23 * abb9 + 6.0 * bjj24 * att19 * app16 * ass23 * abb9 -
        15.0 * bjj18 * btt24 * bjj21 * ass23 * abb9 + abb4 * abb6 * avv19 * aff13 + 4.0 *
        app21 * abb3 * aff15 * avv19 * aff13 - 4.0 * aff14 * abb3 * aff15 * avv19 * aff13 +
        3.0 * bjj26 * att19 * app16 * avv19 * aff13 + 12.0 * app08 * ajj15 * app10 * aff13
        - 12.0 * bjj08 * azz19 * bjj11 * aff13 - abb4 * abb6 * avv19 + 2.0 * app21 * abb3 *
        aff15 * avv19 + 4.0 * aff14 * abb3 * aff15 * avv19 - 3.0 * bjj26 * att19 * app16 *
        avv19 - 12.0 * app08 * ajj15 * app10 + 12.0 * bjj08 * azz19 * bjj11 - (8.0 * aqq03
        * aaa2) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * ajj15) /
        gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) *
        azz19) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 *
        phi)) * gg_fm_rpow(aaa2, 7.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[13] = (-(6.0 * aff05 * aaa2 * aff10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 2.0 * abb4 * abb6 * bkk33 * bkk34 - 2.0 * aff14 * abb3 * aff15 * bkk33 *
        bkk34 + (8.0 * aff05 * aaa2 * aff10 * aff17) / aff13 - 4.0 * aff05 * aaa2 * aff10 *
        aff17 - 4.0 * abb4 * abb6 * abb8 * abb9 + 4.0 * aff14 * abb3 * aff15 * abb8 * abb9
        - 2.0 * abb4 * abb6 * agg17 * abb9 + 2.0 * aff14 * abb3 * aff15 * agg17 * abb9 -
        4.0 * aff05 * aaa2 * aff10 * aff13 - 2.0 * aff05 * aaa2 * aff10;
    l4[14] = (6.0 * aff05 * aaa2 * aff10 * avv19 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0) - 2.0 * abb4 * abb6 * avv19 * bmm34 * bmm35 + 2.0 * aff14 *
        abb3 * aff15 * avv19 * bmm34 * bmm35 - 4.0 * bll16 * ajj15 * app10 * bmm34 * bmm35
        - 8.0 * aff05 * aaa2 * aff10 * avv19 * ass28 * aff17 + 3.0 * aff14 * abb3 * aff15 *
        ass28 * aff17 - 3.0 * app14 * att19 * app16 * ass28 * aff17 + 4.0 * aff05 * aaa2 *
        aff10 * avv19 * aff17 + 3.0 * aff14 * abb3 * aff15 * aff17 - 3.0 * app14 * att19 *
        app16 * aff17 + 4.0 * abb4 * abb6 * avv19 * abb8 * abb9 - 4.0 * aff14 * abb3 *
        aff15 * avv19 * abb8 * abb9 + 8.0 * bll16 * ajj15 * app10 * abb8 * abb9 + 2.0 *
        abb4 * abb6 * avv19 * ass23 * abb9 - 2.0 * aff14 * abb3 * aff15 * avv19 * ass23 *
        abb9 + 4.0 * bll16 * ajj15 * app10 * ass23 * abb9 + 4.0 * aff05 * aaa2 * aff10 *
        avv19 * aff13 + 3.0 * aff14 * abb3 * aff15 * aff13 - 3.0 * app14 * att19 * app16 *
        aff13 + 2.0 * aff05 * aaa2 * aff10 * avv19 - 3.0 * aff14 * abb3 * aff15 + 3.0 *
        app14 * att19 * app16;
    l4[15] = (-(6.0 * aff05 * aaa2 * aff10 * bss29 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0)) + 2.0 * abb4 * abb6 * bss29 * bmm34 * bmm35 - 2.0 * aff14 *
        abb3 * aff15 * bss29 * bmm34 * bmm35 + 2.0 * aff05 * aaa2 * aff10 * bss26 * bmm34 *
        bmm35 + 8.0 * app08 * ajj15 * app10 * bss25 * bmm34 * bmm35 + 8.0 * aff05 * aaa2 *
        aff10 * bss29 * ass28 * aff17 - abb4 * abb6 * bss26 * ass28 * aff17 + aff14 * abb3
        * aff15 * bss26 * ass28 * aff17 - 6.0 * aff14 * abb3 * aff15 * bss25 * ass28 *
        aff17 + 6.0 * bjj26 * att19 * app16 * bss25 * ass28 * aff17 + abb4 * abb6 * byy24 *
        ass28 * aff17 + abb4 * aaa2 * abb6 * bss21 * ass28 * aff17 - 2.0 * bjj08 * azz19 *
        bjj11 * ass28 * aff17 - 4.0 * aff05 * aaa2 * aff10 * bss29 * aff17 - abb4 * abb6 *
        bss26 * aff17 + aff14 * abb3 * aff15 * bss26 * aff17 - 6.0 * aff14 * abb3 * aff15 *
        bss25 * aff17 + 6.0 * bjj26 * att19 * app16 * bss25 * aff17 + abb4 * abb6 * byy24 *
        aff17 + abb4 * aaa2 * abb6 * bss21 * aff17 - 2.0 * bjj08 * azz19 * bjj11 * aff17 -
        4.0 * abb4 * abb6 * bss29 * abb8 * abb9 + 4.0 * aff14 * abb3 * aff15 * bss29 * abb8
        * abb9 - 4.0 * aff05 * aaa2 * aff10 * bss26 * abb8 * abb9 - 16.0 * app08 * ajj15 *
        app10 * bss25 * abb8 * abb9 - byy35 * abb8 * abb9 - 2.0 * abb4 * abb6 * bss29 *
        ass23 * abb9 + 2.0 * aff14 * abb3 * aff15 * bss29 * ass23 * abb9 - 2.0 * aff05 *
        aaa2 * aff10 * bss26 * ass23 * abb9 - 8.0 * app08 * ajj15 * app10 * bss25 * ass23 *
        abb9 + byy35 * ass23 * abb9 - 4.0 * aff05 * aaa2 * aff10 * bss29 * aff13 - abb4 *
        abb6 * bss26 * aff13 + aff14 * abb3 * aff15 * bss26 * aff13 - 6.0 * aff14 * abb3 *
        aff15 * bss25 * aff13 + 6.0 * bjj26 * att19 * app16 * bss25 * aff13 + abb4 * abb6 *
        byy24 * aff13 + abb4 * aaa2 * abb6 * bss21 * aff13 - 2.0 * bjj08 * azz19 * bjj11 *
        aff13 - 2.0 * aff05 * aaa2 * aff10 * bss29 + abb4 * abb6 * bss26 - aff14 * abb3 *
        aff15 * bss26 + 6.0 * aff14 * abb3 * aff15 * bss25 - 6.0 * bjj26 * att19 * app16 *
        bss25 - abb4 * abb6 * byy24 - abb4 * aaa2 * abb6 * bss21 + 2.0 * bjj08 * azz19 *
        bjj11 - (8.0 * aqq03 * aaa2) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0
        * phi)) * ajj15) / gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau)
        - 6.0 * phi)) * azz19) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 *
        tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 7.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[16] = (-(6.0 * abb4 * abb6 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) + (8.0
        * abb4 * abb6 * bzz9) / bzz7 - 4.0 * abb4 * abb6 * bzz9 - 4.0 * abb4 * abb6 * bzz7
        - 2.0 * abb4 * abb6;
    l4[17] = (6.0 * abb4 * abb6 * aii12 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) -
        (2.0 * aff14 * abb3 * aii17 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) - (8.0
        * abb4 * abb6 * aii12 * aff17) / aff13 + 4.0 * abb4 * abb6 * aii12 * aff17 + 4.0 *
        aff14 * abb3 * aii17 * abb8 * abb9 + (2.0 * aff14 * abb3 * aii17 * abb9) / abb8 +
        4.0 * abb4 * abb6 * aii12 * aff13 + 2.0 * abb4 * abb6 * aii12;
    l4[18] = (-(6.0 * abb4 * abb6 * ayy24 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0))
        + 2.0 * abb4 * abb6 * cbb24 * bmm34 * bmm35 + 4.0 * aff14 * abb3 * aii17 * ayy16 *
        bmm34 * bmm35 + 8.0 * abb4 * abb6 * ayy24 * ass28 * aff17 + cbb18 * ass28 * aff17 -
        4.0 * abb4 * abb6 * ayy24 * aff17 + cbb18 * aff17 - 4.0 * abb4 * abb6 * cbb24 *
        abb8 * abb9 - 8.0 * aff14 * abb3 * aii17 * ayy16 * abb8 * abb9 - 2.0 * abb4 * abb6
        * cbb24 * ass23 * abb9 - 4.0 * aff14 * abb3 * aii17 * ayy16 * ass23 * abb9 - 4.0 *
        abb4 * abb6 * ayy24 * aff13 + cbb18 * aff13 - 2.0 * abb4 * abb6 * ayy24 - 2.0 *
        aff14 * abb3 * aii17 + 3.0 * app14 * att19 * cbb09;
    l4[19] = (6.0 * abb4 * abb6 * ccc24 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) -
        6.0 * aff14 * abb3 * aii17 * ayy24 * bmm34 * bmm35 - 6.0 * abb4 * abb6 * ayy16 *
        ayy17 * bmm34 * bmm35 - 8.0 * abb4 * abb6 * ccc24 * ass28 * aff17 + abb4 * abb6 *
        ccc23 * ass28 * aff17 + 3.0 * aff14 * abb3 * aii17 * ayy17 * ass28 * aff17 - 3.0 *
        cbb18 * ayy16 * ass28 * aff17 + 4.0 * abb4 * abb6 * ccc24 * aff17 + abb4 * abb6 *
        ccc23 * aff17 + 3.0 * aff14 * abb3 * aii17 * ayy17 * aff17 - 3.0 * cbb18 * ayy16 *
        aff17 + 12.0 * aff14 * abb3 * aii17 * ayy24 * abb8 * abb9 + 12.0 * abb4 * abb6 *
        ayy16 * ayy17 * abb8 * abb9 - ccc28 * abb8 * abb9 + 6.0 * aff14 * abb3 * aii17 *
        ayy24 * ass23 * abb9 + 6.0 * abb4 * abb6 * ayy16 * ayy17 * ass23 * abb9 + ccc28 *
        ass23 * abb9 + 4.0 * abb4 * abb6 * ccc24 * aff13 + abb4 * abb6 * ccc23 * aff13 +
        3.0 * aff14 * abb3 * aii17 * ayy17 * aff13 - 3.0 * cbb18 * ayy16 * aff13 + 2.0 *
        abb4 * abb6 * ccc24 - abb4 * abb6 * ccc23 - 3.0 * aff14 * abb3 * aii17 * ayy17 +
        3.0 * cbb18 * ayy16 - (8.0 * abb1 * aaa2) / aff04 + (56.0 * gg_fm_rpow(exp1, ((-4.0
        * tau) - 4.0 * phi)) * ajj15) / gg_fm_rpow(aff04, 2.0) - (96.0 * gg_fm_rpow(exp1,
        ((-6.0 * tau) - 6.0 * phi)) * azz19) / gg_fm_rpow(aff04, 3.0) + (48.0 *
        gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 7.0)) /
        gg_fm_rpow(aff04, 4.0);
    l4[20] = (-(6.0 * bjj14 * att19 * app10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 12.0 * app21 * ajj15 * aff15 * bkk33 * bkk34 - 12.0 * bjj24 * azz19 * app16
        * bkk33 * bkk34 - 7.0 * aff05 * abb3 * aff10 * aqq27 * aff17 + 8.0 * bjj14 * att19
        * app10 * aqq27 * aff17 + 22.0 * app08 * att19 * app10 * aqq27 * aff17 - 15.0 *
        bjj08 * btt24 * bjj11 * aqq27 * aff17 - 7.0 * aff05 * abb3 * aff10 * aff17 - 4.0 *
        bjj14 * att19 * app10 * aff17 + 22.0 * app08 * att19 * app10 * aff17 - 15.0 * bjj08
        * btt24 * bjj11 * aff17 - abb4 * aaa2 * abb6 * abb8 * abb9 - 24.0 * app21 * ajj15 *
        aff15 * abb8 * abb9 + 13.0 * aff14 * ajj15 * aff15 * abb8 * abb9 - 27.0 * bjj26 *
        azz19 * app16 * abb8 * abb9 + 24.0 * bjj24 * azz19 * app16 * abb8 * abb9 + 15.0 *
        bjj18 * cdd24 * bjj21 * abb8 * abb9 + abb4 * aaa2 * abb6 * agg17 * abb9 - 12.0 *
        app21 * ajj15 * aff15 * agg17 * abb9 - 13.0 * aff14 * ajj15 * aff15 * agg17 * abb9
        + 27.0 * bjj26 * azz19 * app16 * agg17 * abb9 + 12.0 * bjj24 * azz19 * app16 *
        agg17 * abb9 - 15.0 * bjj18 * cdd24 * bjj21 * agg17 * abb9 - 7.0 * aff05 * abb3 *
        aff10 * aff13 - 4.0 * bjj14 * att19 * app10 * aff13 + 22.0 * app08 * att19 * app10
        * aff13 - 15.0 * bjj08 * btt24 * bjj11 * aff13 + 7.0 * aff05 * abb3 * aff10 - 2.0 *
        bjj14 * att19 * app10 - 22.0 * app08 * att19 * app10 + 15.0 * bjj08 * btt24 * bjj11
        - (8.0 * aqq03 * abb3) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 *
        phi)) * att19) / gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau) -
        6.0 * phi)) * btt24) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 *
        tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 8.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[21] = (-(6.0 * app21 * ajj15 * aff15 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 6.0 * aff05 * abb3 * aff10 * bkk33 * bkk34 - 6.0 * bll16 * att19 * app10 *
        bkk33 * bkk34 - abb4 * aaa2 * abb6 * aqq27 * aff17 + 8.0 * app21 * ajj15 * aff15 *
        aqq27 * aff17 + 4.0 * aff14 * ajj15 * aff15 * aqq27 * aff17 - 3.0 * app14 * azz19 *
        app16 * aqq27 * aff17 - abb4 * aaa2 * abb6 * aff17 - 4.0 * app21 * ajj15 * aff15 *
        aff17 + 4.0 * aff14 * ajj15 * aff15 * aff17 - 3.0 * app14 * azz19 * app16 * aff17 -
        12.0 * aff05 * abb3 * aff10 * abb8 * abb9 + 12.0 * bll16 * att19 * app10 * abb8 *
        abb9 - 6.0 * aff05 * abb3 * aff10 * agg17 * abb9 + 6.0 * bll16 * att19 * app10 *
        agg17 * abb9 - abb4 * aaa2 * abb6 * aff13 - 4.0 * app21 * ajj15 * aff15 * aff13 +
        4.0 * aff14 * ajj15 * aff15 * aff13 - 3.0 * app14 * azz19 * app16 * aff13 + abb4 *
        aaa2 * abb6 - 2.0 * app21 * ajj15 * aff15 - 4.0 * aff14 * ajj15 * aff15 + 3.0 *
        app14 * azz19 * app16;
    l4[22] = (6.0 * app21 * ajj15 * aff15 * avv19 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0) - 6.0 * aff05 * abb3 * aff10 * avv19 * bmm34 * bmm35 + 6.0 *
        app08 * att19 * app10 * avv19 * bmm34 * bmm35 - 6.0 * bjj24 * azz19 * app16 * bmm34
        * bmm35 + abb4 * aaa2 * abb6 * avv19 * ass28 * aff17 - 8.0 * app21 * ajj15 * aff15
        * avv19 * ass28 * aff17 - 4.0 * aff14 * ajj15 * aff15 * avv19 * ass28 * aff17 + 3.0
        * bjj26 * azz19 * app16 * avv19 * ass28 * aff17 + 12.0 * app08 * att19 * app10 *
        ass28 * aff17 - 12.0 * bjj08 * btt24 * bjj11 * ass28 * aff17 + abb4 * aaa2 * abb6 *
        avv19 * aff17 + 4.0 * app21 * ajj15 * aff15 * avv19 * aff17 - 4.0 * aff14 * ajj15 *
        aff15 * avv19 * aff17 + 3.0 * bjj26 * azz19 * app16 * avv19 * aff17 + 12.0 * app08
        * att19 * app10 * aff17 - 12.0 * bjj08 * btt24 * bjj11 * aff17 + 12.0 * aff05 *
        abb3 * aff10 * avv19 * abb8 * abb9 - 12.0 * app08 * att19 * app10 * avv19 * abb8 *
        abb9 + 9.0 * aff14 * ajj15 * aff15 * abb8 * abb9 - 24.0 * bjj26 * azz19 * app16 *
        abb8 * abb9 + 12.0 * bjj24 * azz19 * app16 * abb8 * abb9 + 15.0 * bjj18 * cdd24 *
        bjj21 * abb8 * abb9 + 6.0 * aff05 * abb3 * aff10 * avv19 * ass23 * abb9 - 6.0 *
        app08 * att19 * app10 * avv19 * ass23 * abb9 - 9.0 * aff14 * ajj15 * aff15 * ass23
        * abb9 + 24.0 * bjj26 * azz19 * app16 * ass23 * abb9 + 6.0 * bjj24 * azz19 * app16
        * ass23 * abb9 - 15.0 * bjj18 * cdd24 * bjj21 * ass23 * abb9 + abb4 * aaa2 * abb6 *
        avv19 * aff13 + 4.0 * app21 * ajj15 * aff15 * avv19 * aff13 - 4.0 * aff14 * ajj15 *
        aff15 * avv19 * aff13 + 3.0 * bjj26 * azz19 * app16 * avv19 * aff13 + 12.0 * app08
        * att19 * app10 * aff13 - 12.0 * bjj08 * btt24 * bjj11 * aff13 - abb4 * aaa2 * abb6
        * avv19 + 2.0 * app21 * ajj15 * aff15 * avv19 + 4.0 * aff14 * ajj15 * aff15 * avv19
        - 3.0 * bjj26 * azz19 * app16 * avv19 - 12.0 * app08 * att19 * app10 + 12.0 * bjj08
        * btt24 * bjj11 - (8.0 * aqq03 * abb3) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 *
        tau) - 4.0 * phi)) * att19) / gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1,
        ((-6.0 * tau) - 6.0 * phi)) * btt24) / gg_fm_rpow(aqq05, 3.0) + (48.0 *
        gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 8.0)) /
        gg_fm_rpow(aqq05, 4.0);
    l4[23] = (-(6.0 * aff05 * abb3 * aff10 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0)) + 2.0 * abb4 * aaa2 * abb6 * bkk33 * bkk34 - 2.0 * aff14 * ajj15 * aff15 *
        bkk33 * bkk34 + (8.0 * aff05 * abb3 * aff10 * aff17) / aff13 - 4.0 * aff05 * abb3 *
        aff10 * aff17 - 4.0 * abb4 * aaa2 * abb6 * abb8 * abb9 + 4.0 * aff14 * ajj15 *
        aff15 * abb8 * abb9 - 2.0 * abb4 * aaa2 * abb6 * agg17 * abb9 + 2.0 * aff14 * ajj15
        * aff15 * agg17 * abb9 - 4.0 * aff05 * abb3 * aff10 * aff13 - 2.0 * aff05 * abb3 *
        aff10;
    l4[24] = (6.0 * aff05 * abb3 * aff10 * avv19 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0) - 2.0 * abb4 * aaa2 * abb6 * avv19 * bmm34 * bmm35 + 2.0 *
        aff14 * ajj15 * aff15 * avv19 * bmm34 * bmm35 - 4.0 * bll16 * att19 * app10 * bmm34
        * bmm35 - 8.0 * aff05 * abb3 * aff10 * avv19 * ass28 * aff17 + 3.0 * aff14 * ajj15
        * aff15 * ass28 * aff17 - 3.0 * app14 * azz19 * app16 * ass28 * aff17 + 4.0 * aff05
        * abb3 * aff10 * avv19 * aff17 + 3.0 * aff14 * ajj15 * aff15 * aff17 - 3.0 * app14
        * azz19 * app16 * aff17 + 4.0 * abb4 * aaa2 * abb6 * avv19 * abb8 * abb9 - 4.0 *
        aff14 * ajj15 * aff15 * avv19 * abb8 * abb9 + 8.0 * bll16 * att19 * app10 * abb8 *
        abb9 + 2.0 * abb4 * aaa2 * abb6 * avv19 * ass23 * abb9 - 2.0 * aff14 * ajj15 *
        aff15 * avv19 * ass23 * abb9 + 4.0 * bll16 * att19 * app10 * ass23 * abb9 + 4.0 *
        aff05 * abb3 * aff10 * avv19 * aff13 + 3.0 * aff14 * ajj15 * aff15 * aff13 - 3.0 *
        app14 * azz19 * app16 * aff13 + 2.0 * aff05 * abb3 * aff10 * avv19 - 3.0 * aff14 *
        ajj15 * aff15 + 3.0 * app14 * azz19 * app16;
    l4[25] = (-(6.0 * aff05 * abb3 * aff10 * bss29 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0)) + 2.0 * abb4 * aaa2 * abb6 * bss29 * bmm34 * bmm35 - 2.0 *
        aff14 * ajj15 * aff15 * bss29 * bmm34 * bmm35 + 2.0 * aff05 * abb3 * aff10 * bss26
        * bmm34 * bmm35 + 8.0 * app08 * att19 * app10 * bss25 * bmm34 * bmm35 + 8.0 * aff05
        * abb3 * aff10 * bss29 * ass28 * aff17 - abb4 * aaa2 * abb6 * bss26 * ass28 * aff17
        + aff14 * ajj15 * aff15 * bss26 * ass28 * aff17 - 6.0 * aff14 * ajj15 * aff15 *
        bss25 * ass28 * aff17 + 6.0 * bjj26 * azz19 * app16 * bss25 * ass28 * aff17 + 4.0 *
        app08 * att19 * app10 * ass28 * aff17 - 8.0 * bjj08 * btt24 * bjj11 * ass28 * aff17
        - 4.0 * aff05 * abb3 * aff10 * bss29 * aff17 - abb4 * aaa2 * abb6 * bss26 * aff17 +
        aff14 * ajj15 * aff15 * bss26 * aff17 - 6.0 * aff14 * ajj15 * aff15 * bss25 * aff17
        + 6.0 * bjj26 * azz19 * app16 * bss25 * aff17 + 4.0 * app08 * att19 * app10 * aff17
        - 8.0 * bjj08 * btt24 * bjj11 * aff17 - 4.0 * abb4 * aaa2 * abb6 * bss29 * abb8 *
        abb9 + 4.0 * aff14 * ajj15 * aff15 * bss29 * abb8 * abb9 - 4.0 * aff05 * abb3 *
        aff10 * bss26 * abb8 * abb9 - 16.0 * app08 * att19 * app10 * bss25 * abb8 * abb9 +
        6.0 * aff14 * ajj15 * aff15 * abb8 * abb9 - 21.0 * bjj26 * azz19 * app16 * abb8 *
        abb9 + 15.0 * bjj18 * cdd24 * bjj21 * abb8 * abb9 - 2.0 * abb4 * aaa2 * abb6 *
        bss29 * ass23 * abb9 + 2.0 * aff14 * ajj15 * aff15 * bss29 * ass23 * abb9 - 2.0 *
        aff05 * abb3 * aff10 * bss26 * ass23 * abb9 - 8.0 * app08 * att19 * app10 * bss25 *
        ass23 * abb9 - 6.0 * aff14 * ajj15 * aff15 * ass23 * abb9 + 21.0 * bjj26 * azz19 *
        app16 * ass23 * abb9 - 15.0 * bjj18 * cdd24 * bjj21 * ass23 * abb9 - 4.0 * aff05 *
        abb3 * aff10 * bss29 * aff13 - abb4 * aaa2 * abb6 * bss26 * aff13 + aff14 * ajj15 *
        aff15 * bss26 * aff13 - 6.0 * aff14 * ajj15 * aff15 * bss25 * aff13 + 6.0 * bjj26 *
        azz19 * app16 * bss25 * aff13 + 4.0 * app08 * att19 * app10 * aff13 - 8.0 * bjj08 *
        btt24 * bjj11 * aff13 - 2.0 * aff05 * abb3 * aff10 * bss29 + abb4 * aaa2 * abb6 *
        bss26 - aff14 * ajj15 * aff15 * bss26 + 6.0 * aff14 * ajj15 * aff15 * bss25 - 6.0 *
        bjj26 * azz19 * app16 * bss25 - 4.0 * app08 * att19 * app10 + 8.0 * bjj08 * btt24 *
        bjj11 - (8.0 * aqq03 * abb3) / aqq05 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0
        * phi)) * att19) / gg_fm_rpow(aqq05, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau)
        - 6.0 * phi)) * btt24) / gg_fm_rpow(aqq05, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 *
        tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 8.0)) / gg_fm_rpow(aqq05, 4.0);
    l4[26] = (-(6.0 * abb4 * aaa2 * abb6 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0))
        + (8.0 * abb4 * aaa2 * abb6 * bzz9) / bzz7 - 4.0 * abb4 * aaa2 * abb6 * bzz9 - 4.0
        * abb4 * aaa2 * abb6 * bzz7 - 2.0 * abb4 * aaa2 * abb6;
    l4[27] = (6.0 * abb4 * aaa2 * bdd14 * bdd15 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0) - (2.0 * aff14 * ajj15 * bdd08 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8,
        3.0) - (8.0 * abb4 * aaa2 * bdd14 * bdd15 * aff17) / aff13 + 4.0 * abb4 * aaa2 *
        bdd14 * bdd15 * aff17 + 4.0 * aff14 * ajj15 * bdd08 * abb8 * abb9 + (2.0 * aff14 *
        ajj15 * bdd08 * abb9) / abb8 + 4.0 * abb4 * aaa2 * bdd14 * bdd15 * aff13 + 2.0 *
        abb4 * aaa2 * bdd14 * bdd15;
    l4[28] = (-(6.0 * abb4 * aaa2 * bdd14 * cll17 * gg_fm_rpow(abb9, 4.0)) /
        gg_fm_rpow(abb8, 4.0)) + 2.0 * abb4 * aaa2 * bdd14 * cll24 * bmm34 * bmm35 + 4.0 *
        aff14 * ajj15 * bdd08 * cll16 * bmm34 * bmm35 + 8.0 * abb4 * aaa2 * bdd14 * cll17 *
        ass28 * aff17 + cll18 * ass28 * aff17 - 4.0 * abb4 * aaa2 * bdd14 * cll17 * aff17 +
        cll18 * aff17 - 4.0 * abb4 * aaa2 * bdd14 * cll24 * abb8 * abb9 - 8.0 * aff14 *
        ajj15 * bdd08 * cll16 * abb8 * abb9 - 2.0 * abb4 * aaa2 * bdd14 * cll24 * ass23 *
        abb9 - 4.0 * aff14 * ajj15 * bdd08 * cll16 * ass23 * abb9 - 4.0 * abb4 * aaa2 *
        bdd14 * cll17 * aff13 + cll18 * aff13 - 2.0 * abb4 * aaa2 * bdd14 * cll17 - 2.0 *
        aff14 * ajj15 * bdd08 + 3.0 * app14 * azz19 * cll08;
    l4[29] = (6.0 * abb4 * aaa2 * abb6 * ccc24 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8,
        4.0) - 6.0 * aff14 * ajj15 * aii17 * ayy24 * bmm34 * bmm35 - 6.0 * abb4 * aaa2 *
        abb6 * ayy16 * ayy17 * bmm34 * bmm35 - 8.0 * abb4 * aaa2 * abb6 * ccc24 * ass28 *
        aff17 + abb4 * aaa2 * abb6 * cmm23 * ass28 * aff17 + 3.0 * aff14 * ajj15 * aii17 *
        ayy17 * ass28 * aff17 - 3.0 * cmm16 * ayy16 * ass28 * aff17 + 4.0 * abb4 * aaa2 *
        abb6 * ccc24 * aff17 + abb4 * aaa2 * abb6 * cmm23 * aff17 + 3.0 * aff14 * ajj15 *
        aii17 * ayy17 * aff17 - 3.0 * cmm16 * ayy16 * aff17 + 12.0 * aff14 * ajj15 * aii17
        * ayy24 * abb8 * abb9 + 12.0 * abb4 * aaa2 * abb6 * ayy16 * ayy17 * abb8 * abb9 -
        cmm28 * abb8 * abb9 + 6.0 * aff14 * ajj15 * aii17 * ayy24 * ass23 * abb9 + 6.0 *
        abb4 * aaa2 * abb6 * ayy16 * ayy17 * ass23 * abb9 + cmm28 * ass23 * abb9 + 4.0 *
        abb4 * aaa2 * abb6 * ccc24 * aff13 + abb4 * aaa2 * abb6 * cmm23 * aff13 + 3.0 *
        aff14 * ajj15 * aii17 * ayy17 * aff13 - 3.0 * cmm16 * ayy16 * aff13 + 2.0 * abb4 *
        aaa2 * abb6 * ccc24 - abb4 * aaa2 * abb6 * cmm23 - 3.0 * aff14 * ajj15 * aii17 *
        ayy17 + 3.0 * cmm16 * ayy16 - (8.0 * abb1 * abb3) / aff04 + (56.0 *
        gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) * gg_fm_rpow(aaa2, 4.0)) /
        gg_fm_rpow(aff04, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 * tau) - 6.0 * phi)) *
        gg_fm_rpow(aaa2, 6.0)) / gg_fm_rpow(aff04, 3.0) + (48.0 * gg_fm_rpow(exp1, ((-8.0 *
        tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 8.0)) / gg_fm_rpow(aff04, 4.0);
    l4[30] = (-(6.0 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) + (8.0 * cnn5) / cnn3
        - 4.0 * cnn5 - 4.0 * cnn3 - 2.0;
    l4[31] = (6.0 * bgg4 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) - (8.0 * bgg4 *
        coo9) / coo7 + 4.0 * bgg4 * coo9 + 4.0 * bgg4 * coo7 + 2.0 * bgg4;
    l4[32] = (-(6.0 * cpp08 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) + (2.0 *
        cpp12 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) + (8.0 * cpp08 * aff17) /
        aff13 - 4.0 * cpp08 * aff17 - 4.0 * cpp12 * abb8 * abb9 - (2.0 * cpp12 * abb9) /
        abb8 - 4.0 * cpp08 * aff13 - 2.0 * cpp08;
    l4[33] = (6.0 * cqq20 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0) - (6.0 * cqq19 *
        cqq25 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) - 8.0 * cqq20 * cqq28 *
        aff17 + cqq21 * cqq28 * aff17 + 4.0 * cqq20 * aff17 + cqq21 * aff17 + 12.0 * cqq19
        * cqq25 * abb8 * abb9 + (6.0 * cqq19 * cqq25 * abb9) / abb8 + 4.0 * cqq20 * aff13 +
        cqq21 * aff13 + 2.0 * cqq20 - ann05 * ann06 + abb4 * aaa2 * bdd14 + cqq12 + 3.0 *
        app14 * azz19 * cll08;
    l4[34] = (-(6.0 * crr19 * gg_fm_rpow(abb9, 4.0)) / gg_fm_rpow(abb8, 4.0)) + (12.0 *
        crr28 * bii15 * gg_fm_rpow(abb9, 3.0)) / gg_fm_rpow(abb8, 3.0) - 3.0 * crr21 *
        ass28 * aff17 + 8.0 * crr19 * ass28 * aff17 - 4.0 * bii11 * crr18 * ass28 * aff17 -
        3.0 * crr21 * aff17 - 4.0 * crr19 * aff17 - 4.0 * bii11 * crr18 * aff17 - 24.0 *
        crr28 * bii15 * abb8 * abb9 - crr25 * abb8 * abb9 - 12.0 * crr28 * bii15 * ass23 *
        abb9 + crr25 * ass23 * abb9 - 3.0 * crr21 * aff13 - 4.0 * crr19 * aff13 - 4.0 *
        bii11 * crr18 * aff13 + 3.0 * crr21 - 2.0 * crr19 + 4.0 * bii11 * crr18 - (8.0 *
        abb1 * abb3) / aff04 + (56.0 * gg_fm_rpow(exp1, ((-4.0 * tau) - 4.0 * phi)) *
        gg_fm_rpow(aaa2, 4.0)) / gg_fm_rpow(aff04, 2.0) - (96.0 * gg_fm_rpow(exp1, ((-6.0 *
        tau) - 6.0 * phi)) * gg_fm_rpow(aaa2, 6.0)) / gg_fm_rpow(aff04, 3.0) + (48.0 *
        gg_fm_rpow(exp1, ((-8.0 * tau) - 8.0 * phi)) * gg_fm_rpow(aaa2, 8.0)) /
        gg_fm_rpow(aff04, 4.0);
}

GG_FM double gg_ls_shash_row(double y, const double *m, double phiPen, int order, double *l1,
                             double *l2, double *l3, double *l4)
{
    const double mu = m[0], tau = m[1], eps = m[2], phi = m[3];
    const double sig = exp(tau), del = exp(phi);
    const double z = (y - mu) / (sig * del);
    const double dTasMe = del * asinh(z) - eps, g = -dTasMe;
    const double CC = cosh(dTasMe), SS = sinh(dTasMe);
    const double l0 = -tau - 0.5 * log(2.0 * GG_FM_PI) + log(CC) -
                      0.5 * gg_ls_log1pexp(2.0 * log(fabs(z))) - 0.5 * (SS * SS) -
                      phiPen * (phi * phi);
    if (order < 1) return l0;
    const double zsd = z * sig * del, sSp1 = gg_ls_sqrtx2pm(z, 1.0), asinhZ = asinh(z);
    const double sech_g = 1.0 / cosh(g), sech2 = sech_g * sech_g;
    const double sigS = sig * sSp1, sSp13 = gg_fm_rpow(sSp1, 3.0), zS = z / sSp1;
    const double De = tanh(g) - 0.5 * sinh(2.0 * g);
    const double Dm = 1.0 / (del * sig * sSp1) * (del * De + zS);
    const double Dt = zsd * Dm - 1.0;
    const double Dp = Dt + 1.0 - del * asinhZ * De - 2.0 * phiPen * phi;
    const double Dme = (sech2 - cosh(2.0 * g)) / sigS;
    const double Dte = zsd * Dme;
    const double Dmm = Dme / sigS + z * De / (sig * sig * del * sSp13) +
                       gg_ls_ax2m1divx2m2sq(z, -1.0, 1.0, 1.0) / (del * sig * del * sig);
    const double Dmt = zsd * Dmm - Dm;
    const double coshg = cosh(g);
    const double Dee = -2.0 * (coshg * coshg) + sech2 + 1.0;
    const double Dtt = zsd * Dmt;
    const double Dep = Dte - del * asinhZ * Dee;
    const double Dmp = Dmt + De / sigS - del * asinhZ * Dme;
    const double Dtp = zsd * Dmp;
    const double Dpp = Dtp - del * asinhZ * Dep + del * (zS - asinhZ) * De - 2.0 * phiPen;
    l1[0] = Dm;
    l1[1] = Dt;
    l1[2] = De;
    l1[3] = Dp;
    l2[0] = Dmm;
    l2[1] = Dmt;
    l2[2] = Dme;
    l2[3] = Dmp;
    l2[4] = Dtt;
    l2[5] = Dte;
    l2[6] = Dtp;
    l2[7] = Dee;
    l2[8] = Dep;
    l2[9] = Dpp;
    if (order < 2) return l0;
    const double Deee = -2.0 * (sinh(2.0 * g) + sech2 * tanh(g));
    const double Dmee = Deee / sigS;
    const double Dmme = Dmee / sigS + z * Dee / (sig * sig * del * sSp13);
    const double Dmmm = 2.0 * z * Dme / (sig * sig * del * sSp13) + Dmme / sigS +
                        gg_ls_ax2m1divx2m2sq(z, -1.0, 1.0, 2.0) * De /
                            (gg_fm_rpow(sig, 3.0) * (del * del) * sSp1) +
                        2.0 * zS * gg_ls_ax2m1divx2m2sq(z, -3.0, 1.0, 1.0) /
                            (gg_fm_rpow(sig * del, 3.0) * sSp1);
    const double Dmmt = zsd * Dmmm - 2.0 * Dmm;
    const double Dtee = zsd * Dmee;
    const double Dmte = zsd * Dmme - Dme;
    const double Dtte = zsd * Dmte;
    const double Dmtt = zsd * Dmmt - Dmt;
    const double Dttt = zsd * Dmtt;
    const double Dmep = Dmte + Dee / sigS - del * asinhZ * Dmee;
    const double Dtep = zsd * Dmep;
    const double Deep = Dtee - del * asinhZ * Deee;
    const double Depp = Dtep - del * asinhZ * Deep + del * (zS - asinhZ) * Dee;
    const double Dmmp = Dmmt + 2.0 * Dme / sigS + z * De / (del * sig * sig * sSp13) -
                        del * asinhZ * Dmme;
    const double Dmtp = zsd * Dmmp - Dmp;
    const double Dttp = zsd * Dmtp;
    const double Dmpp = Dmtp + Dep / sigS + z * z * De / (sig * sSp13) - del * asinhZ * Dmep +
                        del * Dme * (zS - asinhZ);
    const double Dtpp = zsd * Dmpp;
    const double Dppp = Dtpp - del * asinhZ * Depp + del * (zS - asinhZ) * (2.0 * Dep + De) +
                        del * gg_fm_rpow(zS, 3.0) * De;
    l3[0] = Dmmm;
    l3[1] = Dmmt;
    l3[2] = Dmme;
    l3[3] = Dmmp;
    l3[4] = Dmtt;
    l3[5] = Dmte;
    l3[6] = Dmtp;
    l3[7] = Dmee;
    l3[8] = Dmep;
    l3[9] = Dmpp;
    l3[10] = Dttt;
    l3[11] = Dtte;
    l3[12] = Dttp;
    l3[13] = Dtee;
    l3[14] = Dtep;
    l3[15] = Dtpp;
    l3[16] = Deee;
    l3[17] = Deep;
    l3[18] = Depp;
    l3[19] = Dppp;
    if (order >= 4) gg_ls_shash_l4(y, mu, tau, eps, phi, l4);
    return l0;
}

#endif
