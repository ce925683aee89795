// Discard and request-changes with a planner that follows only its prompt (the stand-in agent): a
// discarded plan sets the epic aside in the debt register until a person resumes it, and a plan sent
// back reaches the planner's next session with the feedback, her previous proposal and her notes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PROJECT_ROOT } from '../helpers/gitRepo.ts';
import { faultRepo, sessionsOf, violations } from './harness.ts';

const STAND_IN = [process.execPath, join(PROJECT_ROOT, 'scripts', 'standInAgent.ts'), '$SPRINGFIELD_CONTEXT_FILE'];

interface Debt {
  epic_id: string;
  reason: string;
  event: string;
  from_status: string;
  resolved_at: string | null;
  resolution: string | null;
}

test(
  'request changes → Lisa answers with her earlier plan and notes in context; discard → deferred, no planner until resume; the debt register follows',
  { timeout: 240_000 },
  (t) => {
    const f = faultRepo(t);
    f.config({ roles: { lisa: STAND_IN } });
    const epic = f.epic('Discard me', { complexity: 'standard' });

    const first = f.orchestrate();
    assert.deepEqual(violations(f, first, { epic, maxSessions: { lisa: 1 }, status: 'planned' }), [], first.stderr);
    const v1 = f.sf('plan', 'show', epic).json.version as { version: number; status: string; body: string };
    assert.deepEqual([v1.version, v1.status], [1, 'proposed']);

    assert.equal(f.sf('plan', 'request-changes', epic, '--feedback', 'Split the first step in two').code, 0);
    const second = f.orchestrate();
    assert.deepEqual(violations(f, second, { epic, maxSessions: { lisa: 2 }, status: 'planned' }), [], second.stderr);
    const runs = (f.sf('runs', '--epic', epic).json.runs as { id: number; role: string }[])
      .filter((r) => r.role === 'lisa')
      .map((r) => r.id)
      .sort((a, b) => a - b);
    const dir = join(f.repo, '.springfield', 'context');
    const file = readdirSync(dir).find((n) => n.startsWith(`${runs[1]}-`));
    assert.ok(file, `the second run's context file is kept: ${readdirSync(dir).join(', ')}`);
    const context = readFileSync(join(dir, file), 'utf8');
    assert.match(context, /^## Your previous proposal \(v1, plans\/sf-[0-9a-f]+\.md\): a person asked for changes$/m);
    assert.match(context, /^Feedback: Split the first step in two$/m);
    assert.ok(context.includes(v1.body.trimEnd()), 'her previous plan text is in the context');
    assert.match(context, /^## What you researched before\n- research: Stand-in research for Discard me$/m);
    const firstContext = readFileSync(
      join(dir, readdirSync(dir).find((n) => n.startsWith(`${runs[0]}-`)) ?? ''),
      'utf8',
    );
    assert.doesNotMatch(
      firstContext.slice(firstContext.indexOf('\n---\n')),
      /^## (Your previous proposal|What you researched before)/m,
      'the first session had none of it',
    );

    const discarded = f.sf('plan', 'discard', epic, '--reason', 'Not this quarter');
    assert.equal(discarded.code, 0, discarded.stderr);
    const transition = discarded.json.transition as { from: string; to: string; reason: string };
    assert.deepEqual(
      [transition.from, transition.to, transition.reason],
      ['planned', 'deferred', 'plan v2 discarded: Not this quarter'],
    );

    // The scheduler starts no planner for it, in a pass or a dry run.
    const idle = f.orchestrate();
    assert.deepEqual(
      violations(f, idle, {
        epic,
        maxSessions: { lisa: 2 },
        status: 'deferred',
        reason: /^plan v2 discarded: Not this quarter$/,
      }),
      [],
      idle.stderr,
    );
    assert.equal(sessionsOf(f, epic).lisa, 2);
    assert.deepEqual(f.sf('orchestrate', '--dry-run').json.actions, []);

    const debt = f.sf('debt').json.debt as Debt[];
    assert.deepEqual(
      debt.map((d) => [d.epic_id, d.reason, d.event, d.from_status, d.resolved_at]),
      [[epic, 'plan v2 discarded: Not this quarter', 'plan_discarded', 'planned', null]],
    );

    // A person resumes it: the entry closes, and Lisa plans again.
    const resumed = f.sf('epic', 'resume', epic, '--reason', 'Back on the roadmap');
    assert.deepEqual([resumed.code, resumed.json.to], [0, 'planned'], resumed.stderr);
    assert.deepEqual(f.sf('debt').json.debt, []);
    const all = f.sf('debt', '--all').json.debt as Debt[];
    assert.deepEqual(
      all.map((d) => [d.epic_id, d.resolution, d.resolved_at !== null]),
      [[epic, 'Back on the roadmap', true]],
    );
    const third = f.orchestrate();
    assert.deepEqual(violations(f, third, { epic, maxSessions: { lisa: 3 }, status: 'planned' }), [], third.stderr);
    assert.equal(sessionsOf(f, epic).lisa, 3, 'planning starts again only after the resume');
    assert.equal((f.sf('plan', 'show', epic).json.version as { version: number; status: string }).status, 'proposed');
  },
);

test(
  'epic defer records its reason in the debt register; discarding a plan nobody proposed is refused and changes nothing',
  { timeout: 60_000 },
  (t) => {
    const f = faultRepo(t);
    const epic = f.epic('Later');
    assert.equal(f.sf('plan', 'discard', epic).code, 1);
    assert.equal(f.sf('epic', 'show', epic).json.status, 'planned');
    assert.deepEqual(f.sf('debt').json.debt, []);
    assert.equal(f.sf('epic', 'defer', epic, '--reason', 'Waiting for the API').code, 0);
    const debt = f.sf('debt').json.debt as Debt[];
    assert.deepEqual(
      debt.map((d) => [d.epic_id, d.reason, d.event]),
      [[epic, 'Waiting for the API', 'defer']],
    );
  },
);
