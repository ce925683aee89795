// Finds import cycles between the folders of src/core (docs/architecture.md: the layers). Every
// relative import of a .ts file counts, `import type` included: a layer that needs another's types
// depends on it. Each top-level folder is one node (a file directly in src/core is its own node).
// Exits 1 naming each cycle with one import per edge, 0 when there is none, 2 on bad usage.
//
// Usage: node scripts/checkCycles.ts [ROOT]   (ROOT defaults to src/core)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const IMPORT =
  /\b(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

interface Edge {
  readonly from: string;
  readonly to: string;
  /** One file and the import that makes the edge, for the message. */
  readonly example: string;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The node a file belongs to: its top-level folder under `root`, or the file itself. */
function nodeOf(root: string, file: string): string | null {
  const rel = relative(root, file);
  if (rel.startsWith('..')) return null;
  const [first, ...rest] = rel.split(sep);
  return rest.length > 0 ? `${first}/` : (first ?? null);
}

export function folderEdges(root: string): Edge[] {
  const edges = new Map<string, Edge>();
  for (const file of files(root)) {
    const from = nodeOf(root, file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? '';
      const to = nodeOf(root, resolve(dirname(file), spec));
      if (from === null || to === null || to === from) continue;
      const key = `${from}\0${to}`;
      if (!edges.has(key)) edges.set(key, { from, to, example: `${relative(process.cwd(), file)} imports '${spec}'` });
    }
  }
  return [...edges.values()];
}

/** Strongly connected components with more than one node (Tarjan): each one holds a cycle. */
export function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const nodes = [...new Set(edges.flatMap((e) => [e.from, e.to]))].sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      scc.push(w);
      if (w === v) break;
    }
    if (scc.length > 1) found.push(scc.sort());
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

function main(): number {
  const args = process.argv.slice(2);
  if (args.length > 1) {
    console.error('usage: node scripts/checkCycles.ts [ROOT]');
    return 2;
  }
  const root = resolve(args[0] ?? join(import.meta.dirname, '..', 'src', 'core'));
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    console.error(`checkCycles: ${root} is not a folder`);
    return 2;
  }
  const edges = folderEdges(root);
  const found = cycles(edges);
  const where = relative(process.cwd(), root) || '.';
  if (found.length === 0) {
    console.log(`checkCycles: no import cycle between the folders of ${where} (${edges.length} folder dependencies)`);
    return 0;
  }
  for (const scc of found) {
    const inside = new Set(scc);
    console.error(`checkCycles: the folders ${scc.join(', ')} of ${where} import each other:`);
    for (const e of edges)
      if (inside.has(e.from) && inside.has(e.to)) console.error(`  ${e.from} → ${e.to}: ${e.example}`);
  }
  return 1;
}

if (import.meta.main) process.exitCode = main();
