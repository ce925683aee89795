// A URL's own `options=` (a Neon endpoint, `-c application_name=…`, a timeout) are merged with the
// store's session options, not put in their place: commands find the store's tables, and the server
// sees both the user's setting and the store's search_path. Doctor and the commands agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClaimed, assertOk, ensureCli, makeRepo, runCli, runJson } from '../helpers/gitRepo.ts';
import { postgresForFile } from '../helpers/postgres.ts';
import { connectionConfig } from '../../src/core/store/postgres/connection.ts';
import { takeUrlOptions } from '../../src/core/store/databaseUrl.ts';

const PLAN = '# Plan: Options\n## Step 1: One\n- [ ] a\n## Step 2: Two\n- [ ] b\n## Step 3: Three\n- [ ] c\n';
const pgServer = postgresForFile({ durability: 'fast' });

/** Every statement that writes events records the session's settings as the server sees them. */
const SPY = `CREATE TABLE public.seen (app text, path text, timeout text);
GRANT INSERT, SELECT ON public.seen TO springfield;
CREATE FUNCTION public.spy() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO public.seen VALUES (current_setting('application_name'), current_setting('search_path'), current_setting('statement_timeout'));
  RETURN NULL; END $$;
CREATE TRIGGER spy AFTER INSERT ON springfield.events FOR EACH STATEMENT EXECUTE FUNCTION public.spy();`;

test("the URL's options are split out and merged between the store's defaults and the settings it depends on", () => {
  assert.deepEqual(takeUrlOptions('postgres://u@/db?host=/s&options=-c%20application_name%3Dx&port=5'), {
    url: 'postgres://u@/db?host=/s&port=5',
    options: '-c application_name=x',
  });
  assert.deepEqual(takeUrlOptions('postgres://u@h/db?options=endpoint%3Dep-1'), {
    url: 'postgres://u@h/db',
    options: 'endpoint=ep-1',
  });
  assert.deepEqual(takeUrlOptions('postgres://u@h/db?options=-c+a%3D1&options=-c b=2'), {
    url: 'postgres://u@h/db',
    options: '-c a=1 -c b=2',
  });
  assert.deepEqual(takeUrlOptions('postgres://u@h/db?sslmode=require'), {
    url: 'postgres://u@h/db?sslmode=require',
    options: null,
  });
  const merged = connectionConfig(
    'postgres://u@h/db?options=-c%20search_path%3Dpublic%20-c%20statement_timeout%3D5000',
  ).options;
  assert.ok(
    merged.indexOf('statement_timeout=60s') < merged.indexOf('statement_timeout=5000'),
    "the user's timeout comes after the default, so it wins",
  );
  assert.ok(
    merged.lastIndexOf('search_path=springfield') > merged.indexOf('search_path=public'),
    "the store's schema comes last, so it wins",
  );
});

test("a URL with options= works for claim and show; the server sees the user's setting and the store's search_path; doctor agrees", (t) => {
  ensureCli();
  const url = pgServer.server.createDatabase('url_options');
  const repo = makeRepo({ files: { 'plans/p.md': PLAN } });
  t.after(() => repo.cleanup());
  const env = (u: string) => ({ SPRINGFIELD_DATABASE_URL: u, SPRINGFIELD_HOST: 'host-a' });
  assertOk(runJson(repo.root, ['init', 'plans/p.md'], env(url)));
  pgServer.server.psql(SPY, 'url_options');
  // The throwaway server's role is named springfield, so the default search_path ("$user", public)
  // would find the store's schema by luck; a real server's role is named otherwise.
  pgServer.server.psql('ALTER ROLE springfield IN DATABASE url_options SET search_path = public', 'url_options');
  const seen = (): string =>
    pgServer.server
      .psql(
        "WITH d AS (DELETE FROM public.seen RETURNING *) SELECT DISTINCT app || ' ' || path || ' ' || timeout FROM d",
        'url_options',
      )
      .trim();
  assert.equal(seen(), '');

  const cases = [
    { options: 'options=-c application_name=springfield-test', seen: 'springfield-test springfield 1min' },
    { options: 'options=-c%20statement_timeout%3D5000', seen: 'springfield springfield 5s' },
  ];
  for (const c of cases) {
    const u = `${url}&${c.options}`;
    const doctor = runCli(repo.root, ['doctor'], env(u));
    assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
    assert.match(doctor.stdout, /^ok +schema +version \d+$/m);
    const claim = runJson(repo.root, ['claim', 'plans/p.md'], env(u));
    assert.equal(claim.code, 0, `claim with ${c.options}: ${claim.stdout}${claim.stderr}`);
    assertClaimed(claim);
    const show = runCli(repo.root, ['show', 'plans/p.md'], env(u));
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /\[claimed\]/);
    assert.equal(seen(), c.seen, `the server's settings with ${c.options}`);
  }
});
