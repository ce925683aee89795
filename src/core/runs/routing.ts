/**
 * Routing by outcomes (docs/agents.md, "Routing"): which of a role's presets builds the next step of a
 * kind. A preset that has built no step of that kind goes first (every preset gets work); from then on
 * Thompson sampling on first-pass acceptance, from a uniform prior, picks one — the best draw, or a
 * cheaper preset whose draw is within ROUTE_TIE of it (`by: acceptance`), or the best draw per dollar
 * (`by: cost`). Pure: standings and a random source in, a choice with its reason out.
 */
export const ROUTE_TIE = 0.02;
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
  /** Uniform in [0, 1). */
  readonly random: () => number;
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

/** A draw from Beta(a, b) for whole a, b ≥ 1: the a-th smallest of a + b − 1 uniforms. */
export function betaSample(a: number, b: number, random: () => number): number {
  const draws = Array.from({ length: a + b - 1 }, random).sort((x, y) => x - y);
  return draws[a - 1] ?? 0;
}

/** The preset for the next step of `kind` (sampled), or null when none of them can take work. */
export function chooseRoute(r: RouteRequest): RouteChoice | null {
  return pick(r, (s) => betaSample(s.accepted + 1, s.reviewed - s.accepted + 1, r.random));
}

/** Who leads on `kind` now, by each preset's mean first-pass acceptance (what `agents route` shows; no draw). */
export function routeLeader(r: Omit<RouteRequest, 'random'>): RouteChoice | null {
  return pick(r, (s) => (s.accepted + 1) / (s.reviewed + 2));
}

function pick(r: Omit<RouteRequest, 'random'>, thetaOf: (s: PresetStanding) => number): RouteChoice | null {
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
    const sampled = open.map((p) => ({ p, theta: thetaOf(of(p)) }));
    const costs = open.map((p) => of(p).costPerStep);
    if (r.by === 'cost' && costs.every((c) => c !== null && c > 0)) {
      const value = (s: { p: string; theta: number }) => s.theta / (of(s.p).costPerStep ?? 1);
      preset = sampled.reduce((best, s) => (value(s) > value(best) ? s : best)).p;
    } else {
      // The best draw wins, unless a cheaper preset's draw is within ROUTE_TIE of it.
      const winner = sampled.reduce((best, s) => (s.theta > best.theta ? s : best));
      const cost = (p: string) => of(p).costPerStep ?? Number.POSITIVE_INFINITY;
      preset = sampled
        .filter((s) => s.theta >= winner.theta - ROUTE_TIE)
        .reduce((best, s) => (cost(s.p) < cost(best.p) ? s : best), winner).p;
    }
  }
  const explored = untried.length > 0;
  return { preset, explored, reason: routeReason(r, preset, explored, skipped), skipped };
}

const money = (n: number | null) => (n === null ? 'no merged step yet' : `$${n.toFixed(2)}`);

function routeReason(
  r: Omit<RouteRequest, 'random'>,
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
