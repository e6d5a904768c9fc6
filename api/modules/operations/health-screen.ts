import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { Nullable } from '../../http/common-schemas';
import { ALL_TASK_QUEUES } from '../../../domain/task-queues';
import { PlatformReading } from './platform-metrics';

const Count = Type.Integer({ minimum: 0 });

const HealthSchema = Type.Object({
  databaseUp: Type.Boolean(),
  // Each task queue's pollers and backlog, as Temporal counts them; null when Temporal did not answer in time.
  queues: Nullable(
    Type.Array(
      Type.Object({
        taskQueue: Type.Union(ALL_TASK_QUEUES.map((queue) => Type.Literal(queue))),
        kind: Type.Union([Type.Literal('workflow'), Type.Literal('activity')]),
        pollers: Count,
        backlog: Count,
      }),
    ),
  ),
  // The last hour's emails, by the channel configuration that took them and status; null when the database did not answer in time.
  emailsLastHour: Nullable(Type.Array(Type.Object({ channel: Type.String(), status: Type.String(), count: Count }))),
});

const LinksSchema = Type.Object({
  temporalUi: Type.String({ description: "the Temporal Web UI's address" }),
  // Null when no link is configured.
  traces: Nullable(Type.String({ description: "where a run's trace is found: `{workflowId}` stands for the run's workflow id (TRACES_LINK)" })),
});

/** The console's health screen, and the links it puts beside every run it lists (decision 045). */
export function healthScreenRoutes(args: { deps: AppDeps; reading: PlatformReading }): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/health',
      tag: 'operations',
      summary: "The platform's health as the console shows it: each task queue's pollers and backlog, and the last hour's emails by status",
      access: access.roles('ADMIN'),
      responses: { 200: { description: 'the figures, read at most every 10 s (the same as /metrics)', schema: HealthSchema } },
      errors: [],
      handler: async (ctx) => {
        const now = await args.reading();
        ctx.body = {
          databaseUp: now.databaseUp,
          queues: now.queues,
          emailsLastHour: now.emails?.map(({ labels, count }) => ({ channel: labels.channel, status: labels.status, count })) ?? null,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings/links',
      tag: 'operations',
      summary: 'Where the console links a run: the Temporal Web UI, and its trace',
      access: access.user,
      responses: { 200: { description: 'the links', schema: LinksSchema } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = { temporalUi: args.deps.config.temporal.uiUrl, traces: args.deps.config.observability.tracesLink };
      },
    }),
  ];
}
