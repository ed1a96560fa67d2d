import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Readiness, ReadinessReport } from '../gateway/readiness.ts';
import { described } from './openapi/route-documentation.ts';
import type { Holds, SchemaAgrees } from './openapi/schema-agreement.ts';
import { noCredential } from './openapi/security-schemes.ts';

const CheckSchema = Type.Object({
  ok: Type.Boolean(),
  latencyMs: Type.Number({ description: 'How long the check took (or waited before giving up)' }),
  error: Type.Optional(
    Type.String({ description: "Why it failed: the error's code where it has one, else its message" }),
  ),
});

const ReadinessSchema = Type.Object({
  status: Type.Union(
    [Type.Literal('ready'), Type.Literal('starting'), Type.Literal('draining'), Type.Literal('unavailable')],
    {
      description:
        '`ready` (200) only while the process listens, is not stopping, and reaches its database and object store; 503 otherwise',
    },
  ),
  checks: Type.Object({
    database: described(CheckSchema, 'A trivial query, with a short timeout'),
    objectStore: described(
      CheckSchema,
      "The object store's own check (a bucket HEAD for S3; writing, reading and deleting a file for the filesystem store)",
    ),
  }),
  workers: Type.Object({
    jobs: Type.Object({
      state: Type.Union([Type.Literal('running'), Type.Literal('stopped')], {
        description: 'The media job worker of this process (`stopped` with jobs.concurrency 0)',
      }),
      active: Type.Integer({ minimum: 0, description: 'Jobs this process runs now' }),
      concurrency: Type.Integer({ minimum: 0, description: 'Jobs this process runs at most at once' }),
      byState: Type.Optional(
        Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
          description:
            "Media jobs of every process queued and under way (the queue's depth); absent when the database cannot count them",
        }),
      ),
    }),
  }),
});

export type ReadinessSchemaAgrees = Holds<SchemaAgrees<typeof ReadinessSchema, ReadinessReport>>;

/**
 * `GET /livez`: the process is alive (no I/O, so it answers while the database is down: restarting would not
 * help). `GET /readyz`: whether to send it requests (README, Running several processes behind a load balancer).
 * Neither needs a credential.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<{ readiness: Readiness }> = async (app, { readiness }) => {
  app.addHook('onListen', async () => readiness.listening());

  app.get(
    '/livez',
    {
      schema: {
        summary: 'Liveness: the process answers',
        description: 'Answers without touching the database or object store: restart the process only when this fails.',
        documentedExample: { answer: { status: 'alive' } },
        security: noCredential,
        response: { 200: Type.Object({ status: Type.Literal('alive') }, { description: 'Alive' }) },
      },
    },
    async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'alive' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: send this process requests only while it answers 200',
        description:
          'Checks the database and the object store, and reports the media job worker; 503 while starting, draining after SIGTERM, or while a check fails.',
        documentedExample: {
          answer: {
            status: 'ready',
            checks: { database: { ok: true, latencyMs: 2.1 }, objectStore: { ok: true, latencyMs: 4.7 } },
            workers: { jobs: { state: 'running', active: 1, concurrency: 4, byState: { queued: 2, running: 1 } } },
          },
        },
        security: noCredential,
        response: {
          200: described(ReadinessSchema, 'Ready: listening, not stopping, database and object store answering'),
          503: described(ReadinessSchema, 'Starting, draining after SIGTERM, or its database or object store failing'),
        },
      },
    },
    async (_request, reply) => {
      const report = await readiness.report();
      return reply
        .code(report.status === 'ready' ? 200 : 503)
        .header('cache-control', 'no-store')
        .send(report);
    },
  );
};
