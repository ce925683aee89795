// The role registry (src/shared/roles.ts) and what derives from it: the lists every layer uses, the
// prompts shipped, the run configuration's role keys, the presets' kickoff, the scheduler's staffing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promptNameFor } from '../../src/core/agents/rolePrompt.ts';
import { kickoff, PRESET_ROLES } from '../../src/core/runs/presets.ts';
import { DEFAULT_RUN_CONFIG, parseRunConfig, timeoutFor } from '../../src/core/runs/runConfig.ts';
import {
  AGENT_ROLES,
  BUILD_ITERATION_ROLES,
  BUILDING_ROLE,
  FAULT_ROLES,
  PLANNING_ROLE,
  PROMPT_NAMES,
  REVIEWING_ROLE,
  ROLE_NAMES,
  ROLE_REGISTRY,
  ROLES,
  roleSpec,
  RUN_ROLES,
  SESSION_ROLES,
  SETUP_ROLE,
  STARTED_ROLES,
} from '../../src/shared/roles.ts';

test('the lists derived from the registry, in its order', () => {
  assert.deepEqual(ROLES, ['marge', 'lisa', 'ralph', 'bart', 'lovejoy']);
  assert.deepEqual(AGENT_ROLES, ['lisa', 'ralph', 'bart', 'lovejoy']);
  assert.deepEqual(STARTED_ROLES, ['lisa', 'ralph', 'bart']);
  assert.deepEqual(PRESET_ROLES, STARTED_ROLES);
  assert.deepEqual(RUN_ROLES, ['lisa', 'ralph', 'bart', 'lovejoy', 'setup']);
  assert.deepEqual(SESSION_ROLES, ['lisa', 'ralph', 'bart', 'lovejoy']);
  assert.deepEqual(FAULT_ROLES, ['lisa', 'ralph', 'bart', 'setup']);
  assert.deepEqual([PLANNING_ROLE, BUILDING_ROLE, REVIEWING_ROLE, SETUP_ROLE], ['lisa', 'ralph', 'bart', 'setup']);
  assert.deepEqual(BUILD_ITERATION_ROLES, ['ralph', 'bart']);
  assert.deepEqual(ROLE_NAMES, { marge: 'Marge', lisa: 'Lisa', ralph: 'Ralph', bart: 'Bart', lovejoy: 'Lovejoy' });
  assert.equal(roleSpec('setup')?.name, 'Setup');
  assert.equal(roleSpec('toString'), undefined);
  assert.equal(roleSpec('person'), undefined);
});

test('every role the scheduler starts has a prompt, a title, a place to work and a rule; every prompt shipped is named', () => {
  for (const role of STARTED_ROLES) {
    const spec = ROLE_REGISTRY[role];
    assert.equal(spec.kind, 'agent', role);
    assert.ok(spec.prompt && spec.title && spec.does && spec.worktree && spec.rule, role);
    assert.ok(spec.faults && spec.runs && spec.sessions, role);
  }
  const shipped = readdirSync(join(import.meta.dirname, '..', '..', 'src', 'core', 'agents', 'prompts'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3));
  assert.deepEqual([...PROMPT_NAMES].sort(), shipped.sort());
  assert.deepEqual(
    [true, false].map((step) => ROLES.map((r) => promptNameFor(r, step))),
    [
      [null, 'lisa', 'ralph', 'bart', null],
      [null, 'lisa', 'ralph-fix', 'bart', null],
    ],
  );
  assert.equal(promptNameFor('setup', true), null);
  assert.match(kickoff('lisa'), /^You are Lisa, the planner, started by Springfield\./);
  assert.match(kickoff('bart'), /^You are Bart, the reviewer, started by Springfield\./);
});

test('the run configuration takes a command per agent role and a timeout per run role, nothing else', () => {
  const c = parseRunConfig(
    { roles: { lovejoy: ['merge'] }, timeouts: { setup: 60, ralph: 99 }, usage: { bart: 'claude' } },
    'config.json',
  );
  assert.deepEqual(c.roles, { lovejoy: ['merge'] });
  assert.equal(timeoutFor(c, 'setup'), 60);
  assert.equal(timeoutFor(DEFAULT_RUN_CONFIG, 'setup'), 1800);
  assert.equal(timeoutFor(DEFAULT_RUN_CONFIG, 'lisa'), DEFAULT_RUN_CONFIG.runTimeoutSeconds);
  assert.throws(
    () => parseRunConfig({ roles: { setup: ['x'] } }, 'config.json'),
    /config\.json: roles: Unrecognized key: "setup"/,
  );
  assert.throws(() => parseRunConfig({ roles: { marge: ['x'] } }, 'config.json'), /Unrecognized key: "marge"/);
  assert.throws(() => parseRunConfig({ timeouts: { marge: 5 } }, 'config.json'), /Unrecognized key: "marge"/);
});

test("the store's SQL names roles from the registry: sessions, the builder, the reviewer and setup", async () => {
  const sql = await import('../../src/core/store/shared/roleSql.ts');
  assert.equal(sql.SESSION_ROLES_SQL, SESSION_ROLES.map((r) => `'${r}'`).join(', '));
  assert.deepEqual(
    [sql.BUILDING_ROLE_SQL, sql.REVIEWING_ROLE_SQL, sql.SETUP_ROLE_SQL],
    ["'ralph'", "'bart'", "'setup'"],
  );
});

test('rules name roles through the registry: no role id is spelled as a literal outside it', () => {
  const root = join(import.meta.dirname, '..', '..', 'src');
  // Released migrations keep theirs.
  const exempt = (file: string): boolean => file === join('shared', 'roles.ts') || file.endsWith('migrations.ts');
  const literal = /'(marge|lisa|ralph|bart|lovejoy)'/;
  const found = (readdirSync(root, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts') && !exempt(file))
    .flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .filter((line) => literal.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
  assert.deepEqual(found, []);
});
