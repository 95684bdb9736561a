#' gamgpu: generalized additive models on NVIDIA GPUs
#'
#' gamgpu fits models written with 'mgcv' formulas and families, running the
#' row-wise work of the fit on an NVIDIA GPU through the CUDA driver API and
#' run-time compilation (NVRTC), and on the CPU with the same C engine where
#' no GPU is usable.
#'
#' The fit: [gam_gpu()] -- penalized IRLS whose smoothing parameters are
#' chosen by fast REML at every iteration, as `mgcv::bam(method = "fREML")`.
#' Model setup (bases, constraints, penalties) is mgcv's own and the result
#' is an mgcv `gam` object, so `predict`, `summary`, `plot`, `anova` and
#' `gam.check` work on it.
#'
#' The device runtime: [gpu_info()] says whether a device is usable and why
#' not; [gpu_policy()] chooses between `"auto"`, `"off"` and `"required"`;
#' [gpu_arena()], [gpu_modules()] and [gpu_telemetry()] show device memory,
#' compiled kernels and what ran where; [gpu_compile_check()] compiles every
#' kernel without a GPU; [gpu_gram()] is the weighted Gram product, the first
#' kernel through the whole path.
#'
#' Options: `gamgpu.device` (the policy; environment variable
#' `GAMGPU_DEVICE` when the option is unset); `gamgpu.device_memory` (a cap
#' on the device memory the arena may hold, bytes or a size such as
#' `"2GB"`: a model matrix larger than what fits is streamed from the host,
#' or built on the device, in row chunks; a cap below what the arena holds
#' frees its cached buffers at the next device call); `gamgpu.auto_min_rows` (under `"auto"`, models with fewer
#' rows fit on the CPU, a counted fallback; default 2000, the crossover
#' measured on an H200); `gamgpu.progress` (`TRUE`: a message per phase of
#' every fit -- mgcv's setup, the model matrix, the smoothing parameters,
#' the fit, the post-processing -- each closed with its time, through
#' 'cli'; `FALSE`: never; unset: in interactive sessions for fits of
#' `gamgpu.progress_rows` rows or more, default 1e6); `gamgpu.cpu_x` (how
#' the CPU engine holds a model matrix built from its recipe: `"auto"`, the
#' default, as sparse rows times a fixed map -- X = S M, a few entries per
#' row for the local bases (cr, cc, ps, bs, cp, factors, linear terms, their
#' tensor products and by-variables), one-variable thin plate bases made
#' per row from their piecewise polynomials, other columns stored -- where
#' the fit has at least 50000 rows and the rows' products cost about as
#' much as dense rows' or less; `"sparse"` wherever a basis is local or a
#' one-variable thin plate; `"dense"`: X built n x p);
#' `gamgpu.cpu_gram` (the CPU's dense weighted Gram product: `"auto"`, the
#' default, the faster of R's BLAS and gamgpu's kernel here; `"blas"`;
#' `"gamgpu"`; see [gpu_info()]).
#'
#' @keywords internal
#' @useDynLib gamgpu, .registration = TRUE
#' @importFrom stats gaussian binomial poisson Gamma inverse.gaussian
#'   quasibinomial quasipoisson na.omit var weighted.mean
"_PACKAGE"
