/**
 * Routing by outcomes (docs/stats.md, "Routing"): which of a role's presets builds the next step of a
 * kind. A preset that has built no step of that kind goes first (every preset gets work); from then on
 * each preset's index is an upper quantile of its first-pass acceptance, Beta(accepted + 1, rejected + 1),
 * at the level boundLevel sets for the kind's reviewed steps (Bayes-UCB): the best index wins, or a
 * cheaper preset's within ROUTE_TIE of it (`by: acceptance`), or the best index per dollar (`by: cost`).
 * Pure and deterministic: standings in, a choice with its reason out.
 */
export const ROUTE_TIE = 0.01;
export type RouteBy = 'acceptance' | 'cost';

/** A preset's record on one kind of step, from the outcome ledger (src/core/stats/standings.ts). */
export interface PresetStanding {
  /** Steps of this kind it built (reviewed or not). */
  readonly built: number;
  readonly reviewed: number;
  readonly accepted: number;
  readonly costPerStep: number | null;
}

export interface RouteRequest {
  /** The role's name as a person reads it (Ralph). */
  readonly roleName: string;
  readonly kind: string;
  readonly presets: readonly string[];
  readonly by: RouteBy;
  readonly standings: ReadonlyMap<string, PresetStanding>;
  /** Why a preset cannot take work now (not installed, at its usage limit), or null. */
  readonly unavailable?: (preset: string) => string | null;
}

export interface RouteChoice {
  readonly preset: string;
  readonly explored: boolean;
  /** "Ralph on codex for docs steps: 9/10 first-pass, $0.21 per merged step; claude 7/10, $0.48". */
  readonly reason: string;
  readonly skipped: readonly { readonly preset: string; readonly why: string }[];
}

const NONE: PresetStanding = { built: 0, reviewed: 0, accepted: 0, costPerStep: null };

/** Beta(a, b)'s distribution function at x, for whole a, b ≥ 1: the chance of at least a successes in a + b − 1 trials at x. */
export function betaCdf(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const n = a + b - 1;
  let lnChoose = 0;
  let sum = 0;
  for (let j = 1; j <= n; j++) {
    lnChoose += Math.log((n - j + 1) / j);
    if (j >= a) sum += Math.exp(lnChoose + j * Math.log(x) + (n - j) * Math.log(1 - x));
  }
  return Math.min(1, sum);
}

/** The level-quantile of Beta(a, b) (whole a, b ≥ 1), by bisection to 1e-9. */
export function betaQuantile(a: number, b: number, level: number): number {
  let [lo, hi] = [0, 1];
  while (hi - lo > 1e-9) {
    const mid = (lo + hi) / 2;
    if (betaCdf(a, b, mid) < level) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The quantile read when the kind has `reviewed` reviewed steps: 1 − 1/(n ln n) with n = reviewed + 1, at
 * least the median. It rises with the kind's history, so a preset whose few steps were unlucky has its
 * bound widen until it is tried again, while a preset that is decisively behind stays behind.
 */
export function boundLevel(reviewed: number): number {
  const n = reviewed + 1;
  return Math.max(0.5, 1 - 1 / (n * Math.log(n)));
}

/** The preset for the next step of `kind`, or null when none of them can take work. */
export function chooseRoute(r: RouteRequest): RouteChoice | null {
  const reviewed = r.presets.reduce((t, p) => t + (r.standings.get(p)?.reviewed ?? 0), 0);
  const level = boundLevel(reviewed);
  return pick(r, (s) => betaQuantile(s.accepted + 1, s.reviewed - s.accepted + 1, level));
}

/** Who leads on `kind` now, by each preset's mean first-pass acceptance (what `agents route` shows). */
export function routeLeader(r: RouteRequest): RouteChoice | null {
  return pick(r, (s) => (s.accepted + 1) / (s.reviewed + 2));
}

function pick(r: RouteRequest, thetaOf: (s: PresetStanding) => number): RouteChoice | null {
  const skipped = r.presets.flatMap((preset) => {
    const why = r.unavailable?.(preset) ?? null;
    return why === null ? [] : [{ preset, why }];
  });
  const open = r.presets.filter((p) => !skipped.some((s) => s.preset === p));
  if (open.length === 0) return null;
  const of = (p: string) => r.standings.get(p) ?? NONE;
  const untried = open.filter((p) => of(p).built === 0);
  let preset: string;
  if (untried.length > 0) {
    preset = untried[0]!;
  } else {
    const indexed = open.map((p) => ({ p, theta: thetaOf(of(p)) }));
    const costs = open.map((p) => of(p).costPerStep);
    if (r.by === 'cost' && costs.every((c) => c !== null && c > 0)) {
      const value = (s: { p: string; theta: number }) => s.theta / (of(s.p).costPerStep ?? 1);
      preset = indexed.reduce((best, s) => (value(s) > value(best) ? s : best)).p;
    } else {
      // The best index wins, unless a cheaper preset's is within ROUTE_TIE of it.
      const winner = indexed.reduce((best, s) => (s.theta > best.theta ? s : best));
      const cost = (p: string) => of(p).costPerStep ?? Number.POSITIVE_INFINITY;
      preset = indexed
        .filter((s) => s.theta >= winner.theta - ROUTE_TIE)
        .reduce((best, s) => (cost(s.p) < cost(best.p) ? s : best), winner).p;
    }
  }
  const explored = untried.length > 0;
  return { preset, explored, reason: routeReason(r, preset, explored, skipped), skipped };
}

const money = (n: number | null) => (n === null ? 'no merged step yet' : `$${n.toFixed(2)}`);

function routeReason(
  r: RouteRequest,
  preset: string,
  explored: boolean,
  skipped: readonly { preset: string; why: string }[],
): string {
  const of = (p: string) => r.standings.get(p) ?? NONE;
  const record = (p: string) =>
    `${of(p).accepted}/${of(p).reviewed}${p === preset ? ' first-pass' : ''}, ${money(of(p).costPerStep)}${p === preset && of(p).costPerStep !== null ? ' per merged step' : ''}`;
  const others = r.presets.filter((p) => p !== preset && !skipped.some((s) => s.preset === p));
  return (
    [
      `${r.roleName} on ${preset} for ${r.kind} steps: ${record(preset)}`,
      ...others.map((p) => `${p} ${record(p)}`),
    ].join('; ') +
    (explored ? ` (exploring: every preset builds a ${r.kind} step first)` : '') +
    skipped.map((s) => ` (${s.preset} skipped: ${s.why})`).join('')
  );
}
