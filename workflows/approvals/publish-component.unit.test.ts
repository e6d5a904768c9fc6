import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ApprovalsActivities } from '../../activities/approvals';
import type { ApprovalStage, ConfirmedDecision, NoticeKind, PublishInput } from '../../domain/approvals';
import { timeSkippingEnvironment, workerWith } from '../../test/support/time-skipping';
import {
  ARCHIVE_COMPONENT_WORKFLOW,
  cancelScheduleUpdate,
  decideUpdate,
  PUBLISH_WORKFLOW,
  PublishProgress,
  publishProgressQuery,
  PublishWorkflow,
  submittedUpdate,
} from './definitions';

/**
 * The publish workflow's logic on the time-skipping test server: reminders, escalation, due times, cancel
 * and the callback's retries, with hours and months skipped instead of slept. The activities are stand-ins
 * that record what the run asked for and when (by the test server's clock). What the real activities do
 * against PostgreSQL is tested in test/approvals/.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

const MINUTE = 60_000;
/** How early a run that publishes by itself wakes (SCHEDULE_LEAD in the workflow). */
const SCHEDULE_LEAD = 2000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Call = { name: string; at: number; args: unknown };

/** Stand-ins for the approvals activities: each records its call; `stages` decides whether approval is required. */
interface StandInOptions {
  stages?: ApprovalStage[];
  decisions?: Record<string, ConfirmedDecision>;
  callbackFailures?: number;
  /** Held by publishNow and archiveNow once called, until it settles: a run caught between its wake and its change. */
  holdChange?: () => Promise<void>;
  /** `stages` are required only from the second submission on: a policy enabled after the publish was scheduled. */
  policyEnabledLater?: boolean;
}

function standIns(options: StandInOptions = {}) {
  const calls: Call[] = [];
  // When, by the test server's clock: the time the workflow sees, with skipped time included.
  const record = async (name: string, args: unknown) => void calls.push({ name, at: await env.currentTimeMs(), args });
  let callbackFailures = options.callbackFailures ?? 0;
  let submissions = 0;
  const activities: Partial<ApprovalsActivities> = {
    submitForApproval: async (input) => {
      await record('submitForApproval', input);
      const stages = options.policyEnabledLater && ++submissions === 1 ? undefined : options.stages;
      return { required: !!stages, correlationId: stages ? input.correlationId : null, stages: stages ?? [] };
    },
    publishNow: async (input) => {
      await record('publishNow', input);
      await options.holdChange?.();
    },
    archiveNow: async (input) => {
      await record('archiveNow', input);
      await options.holdChange?.();
    },
    recordSchedule: (input) => record('recordSchedule', input),
    finishSchedule: (input) => record('finishSchedule', input),
    confirmScheduleCancel: async (input) => {
      await record('confirmScheduleCancel', input);
      return { cancelledBy: 'manager-1' };
    },
    withdrawSubmission: (input) => record('withdrawSubmission', input),
    closeApproval: (input) => record('closeApproval', input),
    confirmDecision: async (request) => {
      await record('confirmDecision', request);
      const confirmed = options.decisions?.[request.proposalId];
      if (!confirmed) throw ApplicationFailure.nonRetryable('no such recorded decision', 'NOT_FOUND');
      return confirmed;
    },
    notifyApproval: async (notice) => {
      await record(`notify:${notice.kind}`, notice);
      // No recipients: the run starts no email batch, so no messaging worker is needed here.
      return 0;
    },
    deliverCallback: async (callback) => {
      await record('deliverCallback', callback);
      if (callbackFailures-- > 0) throw new Error('the component is not answering');
    },
  };
  return { activities, calls };
}

function publishInput(overrides: Partial<PublishInput> = {}): PublishInput {
  return {
    componentType: 'PAGE',
    siteId: 'site-a',
    resourceId: randomUUID(),
    revision: 7,
    callbackPath: '/api/content/pages/callback',
    requestedBy: 'editor-1',
    title: 'Home',
    comment: null,
    correlationId: null,
    ...overrides,
  };
}

async function run<T>(activities: object, work: (taskQueue: string) => Promise<T>): Promise<T> {
  const { worker, taskQueue } = await workerWith(env, activities);
  return worker.runUntil(work(taskQueue));
}

/** The failure an Update was refused with (its cause), or an error when it was accepted. */
const refusal = (update: Promise<unknown>) =>
  update.then(
    () => new Error('the update was accepted'),
    (error: Error) => error.cause,
  );

/** Polls a condition of the stand-ins' records in real time (the run moves on its own). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 300) throw new Error('the run never got there');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts a run and waits until it has been submitted, as the API's Update-with-Start does. */
async function startPublish(taskQueue: string, input: PublishInput) {
  const handle = await env.client.workflow.start<PublishWorkflow>(PUBLISH_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [input] });
  await handle.executeUpdate(submittedUpdate);
  return handle;
}

const named = (calls: Call[], name: string) => calls.filter((call) => call.name === name);

test('without a required approval, the revision is published at once and nobody is told', async () => {
  const { activities, calls } = standIns();
  const result = await run(activities, (taskQueue) =>
    env.client.workflow.execute(PUBLISH_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [publishInput()] }),
  );
  expect((result as PublishProgress).stage).toBe('PUBLISHED');
  expect(calls.map((call) => call.name)).toEqual(['submitForApproval', 'publishNow']);
});

test('a stage without a decision reminds its role after remindAfter and escalates after escalateAfter, then the decision ends it', async () => {
  const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER', remindAfter: 'PT2H', escalateAfter: 'P1D' }];
  const decisions = { 'proposal-1': { stage: 0, decision: 'APPROVED' as const, decidedBy: 'manager-1' } };
  const { activities, calls } = standIns({ stages, decisions });
  const result = await run(activities, async (taskQueue) => {
    const started = await env.currentTimeMs();
    const handle = await startPublish(taskQueue, publishInput());
    await env.sleep(2 * DAY);
    const [reminder, ...moreReminders] = named(calls, 'notify:REMINDER');
    const [escalated, ...moreEscalations] = named(calls, 'notify:ESCALATED');
    expect([moreReminders, moreEscalations]).toEqual([[], []]);
    // Each on its timer, counted from the stage's start (after the run started), never before; the test
    // server fires a timer at its time (a minute allows for the run's own steps).
    expect(reminder.at - started).toBeGreaterThanOrEqual(2 * HOUR);
    expect(reminder.at - started).toBeLessThan(2 * HOUR + MINUTE);
    expect(escalated.at - started).toBeGreaterThanOrEqual(DAY);
    expect(escalated.at - started).toBeLessThan(DAY + MINUTE);
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'proposal-1' }] });
    return handle.result();
  });
  expect((result as PublishProgress).stage).toBe('PUBLISHED');
  const kinds = calls.filter((call) => call.name.startsWith('notify:')).map((call) => call.name.slice('notify:'.length) as NoticeKind);
  expect(kinds).toEqual(['REQUESTED', 'REMINDER', 'ESCALATED', 'OUTCOME']);
});

test('a publish due in 30 days waits on its timer, wakes two seconds early, and hands its activity the due time to wait for', async () => {
  const { activities, calls } = standIns();
  const result = await run(activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + 30 * DAY).toISOString();
    const handle = await startPublish(taskQueue, publishInput({ dueAt }));
    await env.sleep(29 * DAY);
    expect((await handle.query(publishProgressQuery)).stage).toBe('SCHEDULED');
    expect(named(calls, 'publishNow')).toEqual([]);
    const published = await handle.result();
    // The activity waits out the rest by the database's clock (tested against PostgreSQL in test/approvals/).
    const [publish] = named(calls, 'publishNow');
    expect(publish.args).toMatchObject({ notBefore: dueAt });
    expect(publish.at).toBeGreaterThanOrEqual(Date.parse(dueAt) - SCHEDULE_LEAD);
    expect(publish.at).toBeLessThan(Date.parse(dueAt));
    return published;
  });
  expect(result.stage).toBe('PUBLISHED');
  // Asked again at its time whether approval is needed (#58, finding 1): still none, so it publishes.
  expect(calls.map((call) => call.name)).toEqual(['submitForApproval', 'recordSchedule', 'submitForApproval', 'publishNow', 'finishSchedule']);
  expect(named(calls, 'finishSchedule')[0].args).toMatchObject({ status: 'DONE' });
});

test.each(['PAGE', 'RELEASE'])(
  '#58, finding 1: a %s scheduled with no policy, and a policy enabled before its time: held for approval at its time, its requester told, published at the approval',
  async (componentType) => {
    const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER' }];
    const decisions = { later: { stage: 0, decision: 'APPROVED' as const, decidedBy: 'manager-1' } };
    const { activities, calls } = standIns({ stages, decisions, policyEnabledLater: true });
    const result = await run(activities, async (taskQueue) => {
      const dueAt = new Date((await env.currentTimeMs()) + 180 * DAY).toISOString();
      const handle = await startPublish(taskQueue, publishInput({ componentType, dueAt }));
      await env.sleep(181 * DAY);
      const held = await handle.query(publishProgressQuery);
      expect(held.stage).toBe('PENDING_APPROVAL');
      expect(named(calls, 'publishNow')).toEqual([]);
      expect(named(calls, 'deliverCallback')).toEqual([]);
      const [first, again] = named(calls, 'submitForApproval');
      expect(again.at).toBeGreaterThanOrEqual(Date.parse(dueAt) - SCHEDULE_LEAD);
      // The same request, asked again: the approval it opens is keyed by the run's one correlation id.
      expect((again.args as { correlationId: string }).correlationId).toBe((first.args as { correlationId: string }).correlationId);
      await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'later' }] });
      return handle.result();
    });
    expect(result.stage).toBe('PUBLISHED');
    const kinds = calls.filter((call) => call.name.startsWith('notify:')).map((call) => call.name.slice('notify:'.length) as NoticeKind);
    expect(kinds).toEqual(['HELD', 'REQUESTED', 'OUTCOME']);
    // Held, the schedule is over: from then on an approval request, which no longer blocks a new schedule.
    expect(named(calls, 'finishSchedule').map((call) => call.args)).toEqual([expect.objectContaining({ status: 'HELD' })]);
  },
);

test('#58, finding 1: a publish that needs approval at its time but cannot be submitted ends its schedule failed, saying why, and the run fails', async () => {
  const { activities, calls } = standIns({ stages: [{ name: 'Review', role: 'MANAGER' }], policyEnabledLater: true });
  const submitOnce = activities.submitForApproval!;
  let submissions = 0;
  activities.submitForApproval = async (input) => {
    if (++submissions === 2) throw ApplicationFailure.nonRetryable('An approval of PAGE p is already open.', 'APPROVAL_PENDING');
    return submitOnce(input);
  };
  const failure = await run(activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + DAY).toISOString();
    const handle = await startPublish(taskQueue, publishInput({ dueAt }));
    return handle.result().then(
      () => null,
      (error: unknown) => error,
    );
  });
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect(named(calls, 'publishNow')).toEqual([]);
  expect(named(calls, 'finishSchedule').map((call) => call.args)).toEqual([
    expect.objectContaining({ status: 'CANCELLED', failed: true, message: expect.stringContaining('An approval of PAGE p is already open.') }),
  ]);
});

test('approved early, a scheduled publish still waits for its time; approved after it, it publishes at the approval', async () => {
  const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER' }];
  const decisions = { early: { stage: 0, decision: 'APPROVED' as const, decidedBy: 'manager-1' } };
  const early = standIns({ stages, decisions });
  await run(early.activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + 7 * DAY).toISOString();
    const handle = await startPublish(taskQueue, publishInput({ dueAt }));
    await env.sleep(DAY);
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'early' }] });
    expect((await handle.query(publishProgressQuery)).stage).toBe('SCHEDULED');
    expect((await handle.result()).stage).toBe('PUBLISHED');
    expect(named(early.calls, 'deliverCallback')[0].at).toBeGreaterThanOrEqual(Date.parse(dueAt));
  });

  const late = standIns({ stages, decisions: { late: { stage: 0, decision: 'APPROVED' as const, decidedBy: 'manager-1' } } });
  await run(late.activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + DAY).toISOString();
    const handle = await startPublish(taskQueue, publishInput({ dueAt }));
    await env.sleep(3 * DAY);
    expect((await handle.query(publishProgressQuery)).stage).toBe('PENDING_APPROVAL');
    const approvedAt = await env.currentTimeMs();
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'late' }] });
    expect((await handle.result()).stage).toBe('PUBLISHED');
    expect(named(late.calls, 'deliverCallback')[0].at - approvedAt).toBeLessThan(MINUTE);
  });
});

test('a confirmed cancel before the time ends the run CANCELLED: nothing published, the schedule closed', async () => {
  const { activities, calls } = standIns();
  const result = await run(activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + 90 * DAY).toISOString();
    const handle = await startPublish(taskQueue, publishInput({ dueAt }));
    await env.sleep(10 * DAY);
    await handle.executeUpdate(cancelScheduleUpdate);
    return handle.result();
  });
  expect(result.stage).toBe('CANCELLED');
  expect(named(calls, 'publishNow')).toEqual([]);
  expect(named(calls, 'finishSchedule').map((call) => call.args)).toEqual([expect.objectContaining({ status: 'CANCELLED' })]);
  expect(String((named(calls, 'finishSchedule')[0].args as { message: string }).message)).toContain('cancelled by manager-1');
});

test('a cancel of a run not waiting for its time is refused SCHEDULE_PASSED, and a decision for a stage not waited for ALREADY_DECIDED', async () => {
  const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER' }];
  const { activities, calls } = standIns({ stages, decisions: { p: { stage: 0, decision: 'APPROVED', decidedBy: 'manager-1' } } });
  await run(activities, async (taskQueue) => {
    const handle = await startPublish(taskQueue, publishInput());
    await expect(refusal(handle.executeUpdate(cancelScheduleUpdate))).resolves.toMatchObject({ type: 'SCHEDULE_PASSED' });
    await expect(refusal(handle.executeUpdate(decideUpdate, { args: [{ stage: 1, proposalId: 'p' }] }))).resolves.toMatchObject({ type: 'ALREADY_DECIDED' });
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'p' }] });
    await handle.result();
  });
  // Refused in the validator: neither reached an activity.
  expect(named(calls, 'confirmScheduleCancel')).toEqual([]);
  expect(named(calls, 'confirmDecision').map((call) => call.args)).toEqual([{ correlationId: expect.any(String), stage: 0, proposalId: 'p' }]);
});

test('a rejection at the first of two stages ends the request REJECTED: the second stage is never asked', async () => {
  const stages: ApprovalStage[] = [
    { name: 'Review', role: 'MANAGER' },
    { name: 'Legal', role: 'ADMIN' },
  ];
  const { activities, calls } = standIns({ stages, decisions: { no: { stage: 0, decision: 'REJECTED', decidedBy: 'manager-1' } } });
  const result = await run(activities, async (taskQueue) => {
    const handle = await startPublish(taskQueue, publishInput());
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'no' }] });
    return handle.result();
  });
  expect(result.stage).toBe('REJECTED');
  expect(named(calls, 'notify:REQUESTED').map((call) => (call.args as { stage: number }).stage)).toEqual([0]);
  expect(named(calls, 'deliverCallback').map((call) => call.args)).toEqual([expect.objectContaining({ decision: 'REJECTED' })]);
  expect(named(calls, 'publishNow')).toEqual([]);
});

test('a decide request naming no recorded decision fails in the run and changes nothing; the run still waits', async () => {
  const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER' }];
  const { activities, calls } = standIns({ stages, decisions: { real: { stage: 0, decision: 'APPROVED', decidedBy: 'manager-1' } } });
  const result = await run(activities, async (taskQueue) => {
    const handle = await startPublish(taskQueue, publishInput());
    await expect(handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'forged' }] })).rejects.toThrow();
    expect((await handle.query(publishProgressQuery)).stage).toBe('PENDING_APPROVAL');
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'real' }] });
    return handle.result();
  });
  expect(result.stage).toBe('PUBLISHED');
  expect(named(calls, 'closeApproval').map((call) => call.args)).toEqual([expect.objectContaining({ outcome: 'APPROVED' })]);
});

test('the callback is retried until the component takes it, with backoff, then the approval closes', async () => {
  const stages: ApprovalStage[] = [{ name: 'Review', role: 'MANAGER' }];
  const { activities, calls } = standIns({ stages, decisions: { ok: { stage: 0, decision: 'APPROVED', decidedBy: 'manager-1' } }, callbackFailures: 6 });
  const result = await run(activities, async (taskQueue) => {
    const handle = await startPublish(taskQueue, publishInput());
    await handle.executeUpdate(decideUpdate, { args: [{ stage: 0, proposalId: 'ok' }] });
    return handle.result();
  });
  expect(result.stage).toBe('PUBLISHED');
  const attempts = named(calls, 'deliverCallback').map((call) => call.at);
  expect(attempts).toHaveLength(7);
  // 1, 2, 4, 8, 16, 32 seconds apart: the backoff doubles from one second.
  const gaps = attempts.slice(1).map((at, index) => at - attempts[index]);
  gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(1000 * 2 ** index));
  expect(named(calls, 'closeApproval')[0].at).toBeGreaterThanOrEqual(attempts[6]);
});

// publishComponent archived until archiveComponent took that over. Its runs from before go on archiving: the
// saved history publish-scheduled-archived-before-archive-component.json replays that path.
test.each([ARCHIVE_COMPONENT_WORKFLOW])(
  'an archive due later, run by %s, wakes two seconds early, hands its activity the due time, and never publishes',
  async (workflowType) => {
    const { activities, calls } = standIns();
    const result = await run(activities, async (taskQueue) => {
      const dueAt = new Date((await env.currentTimeMs()) + 14 * DAY).toISOString();
      const published = await env.client.workflow.execute<PublishWorkflow>(workflowType, {
        taskQueue,
        workflowId: randomUUID(),
        args: [publishInput({ action: 'ARCHIVE', dueAt })],
      });
      const [archive] = named(calls, 'archiveNow');
      expect(archive.args).toMatchObject({ notBefore: dueAt });
      expect(archive.at).toBeGreaterThanOrEqual(Date.parse(dueAt) - SCHEDULE_LEAD);
      return published;
    });
    expect(result.stage).toBe('ARCHIVED');
    expect(calls.map((call) => call.name)).toEqual(['recordSchedule', 'archiveNow', 'finishSchedule']);
  },
);

test.each([
  ['a publish', {}],
  ['an archive with no due time', { action: 'ARCHIVE' as const }],
])('archiveComponent refuses %s VALIDATION_FAILED, before any activity', async (_what, overrides) => {
  const { activities, calls } = standIns();
  const failure = await run(activities, (taskQueue) =>
    env.client.workflow
      .execute(ARCHIVE_COMPONENT_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [publishInput(overrides)] })
      .catch((error: unknown) => error),
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause).toMatchObject({ type: 'VALIDATION_FAILED' });
  expect(calls).toEqual([]);
});

test('publishComponent refuses a new archive VALIDATION_FAILED, before any activity: archives run as archiveComponent', async () => {
  const { activities, calls } = standIns();
  const failure = await run(activities, async (taskQueue) => {
    const dueAt = new Date((await env.currentTimeMs()) + 14 * DAY).toISOString();
    return env.client.workflow
      .execute(PUBLISH_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [publishInput({ action: 'ARCHIVE', dueAt })] })
      .catch((error: unknown) => error);
  });
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause).toMatchObject({ type: 'VALIDATION_FAILED' });
  expect(calls).toEqual([]);
});

test('input off its contract fails the run at once, before any activity', async () => {
  const { activities, calls } = standIns();
  const failure = await run(activities, (taskQueue) =>
    env.client.workflow
      .execute(PUBLISH_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [publishInput({ callbackPath: 'https://elsewhere.example/steal' })] })
      .catch((error: unknown) => error),
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect(calls).toEqual([]);
});

test.each(['PUBLISH', 'ARCHIVE'] as const)(
  'a run scheduled to %s that has woken for its change refuses a cancel SCHEDULE_PASSED: no cancel is confirmed, and the change is made',
  async (action) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The change is held until the cancel has had its answer. The run handles the cancel in the workflow
    // task the SDK starts while a local activity runs past most of the task's timeout (2 s here).
    const { activities, calls } = standIns({ holdChange: () => gate });
    const result = await run(activities, async (taskQueue) => {
      const dueAt = new Date((await env.currentTimeMs()) + HOUR).toISOString();
      const handle = await env.client.workflow.start<PublishWorkflow>(action === 'PUBLISH' ? PUBLISH_WORKFLOW : ARCHIVE_COMPONENT_WORKFLOW, {
        taskQueue,
        workflowId: randomUUID(),
        args: [publishInput({ action, dueAt })],
        workflowTaskTimeout: '2 seconds',
      });
      const changeName = action === 'PUBLISH' ? 'publishNow' : 'archiveNow';
      await env.sleep(HOUR - SCHEDULE_LEAD);
      await waitFor(() => named(calls, changeName).length === 1);
      const refused = await refusal(handle.executeUpdate(cancelScheduleUpdate));
      release();
      expect(refused).toMatchObject({ type: 'SCHEDULE_PASSED' });
      return handle.result();
    });
    expect(result.stage).toBe(action === 'PUBLISH' ? 'PUBLISHED' : 'ARCHIVED');
    expect(named(calls, 'confirmScheduleCancel')).toEqual([]);
    expect(named(calls, 'finishSchedule').map((call) => call.args)).toEqual([expect.objectContaining({ status: 'DONE' })]);
  },
);
