// What the rest of Springfield loads of the PostgreSQL backend, on first use only: the store, its
// doctor and migrate's PostgreSQL side. The CommonJS bundles take it from dist/postgres.cjs
// (esbuild.mjs), so node-postgres is neither read nor compiled by a step command on SQLite
// (docs/postgres-design.md, "The driver: pg (node-postgres)").
export { postgresStore } from './postgresStore.ts';
export { diagnosePostgres } from './doctor.ts';
export { copyToPostgres, readPostgresSnapshot } from '../migrate/postgresSide.ts';
