import { temporal as proto } from '@temporalio/proto';
import { ALL_TASK_QUEUES, TaskQueue } from '../domain/task-queues';

/** Workflow tasks and activity tasks of a task queue wait in queues of their own, which Temporal names by type. */
export type QueueKind = 'workflow' | 'activity';

const TYPES: Array<[QueueKind, proto.api.enums.v1.TaskQueueType]> = [
  ['workflow', proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
  ['activity', proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
];

/** Both kinds of each of the platform's task queues: the eight that Temporal describes and configures apart. */
export const EVERY_TASK_QUEUE_KIND: Array<{ taskQueue: TaskQueue; kind: QueueKind; taskQueueType: proto.api.enums.v1.TaskQueueType }> = ALL_TASK_QUEUES.flatMap(
  (taskQueue) => TYPES.map(([kind, taskQueueType]) => ({ taskQueue, kind, taskQueueType })),
);
