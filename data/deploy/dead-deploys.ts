import { Knex } from 'knex';
import { DEPLOYMENT_TABLE, DeploymentRow, openDeployments, recordDeployFailure } from './registry';

/** How a run stands in Temporal: its status name (`RUNNING`, `TERMINATED`, …), or `NOT_FOUND`. */
export type RunStatusOf = (run: { workflowId: string; runId: string | null }) => Promise<string>;

/** A deployment row whose workflow never started (the API died between the two) counts as dead after this. */
const UNSTARTED_GRACE_MS = 60_000;

/**
 * The lock on a service is its `deploy:{name}` run, not the DEPLOYING row that only a finishing run clears.
 * Each DEPLOYING row of the service is held against its run: a run that is no longer running (terminated or
 * cancelled from the Web UI, timed out) never will finish it, so its deployment is recorded FAILED here, as
 * the run would have. Answers the deployments settled. What the dead run left on the engine is removed by
 * whoever may change Docker: the reconcile right away, else the next deploy's first step.
 */
export async function settleDeadDeploys(db: Knex, args: { serviceName: string; runStatusOf: RunStatusOf }): Promise<string[]> {
  const settled: string[] = [];
  for (const row of await openDeployments(db, args.serviceName)) {
    let status: string;
    if (!row.workflow_id) {
      if (Date.now() - new Date(row.started_at).getTime() < UNSTARTED_GRACE_MS) continue;
      status = 'NEVER_STARTED';
    } else {
      status = await args.runStatusOf({ workflowId: row.workflow_id, runId: row.run_id });
    }
    if (status === 'RUNNING') continue;
    await recordDeployFailure(db, {
      deploymentId: row.id,
      at: new Date().toISOString(),
      error: { stage: 'FAILED', reason: `The deploy run ended without finishing it (${status}).`, lastLogLines: [] },
    });
    settled.push(row.id);
  }
  return settled;
}

/** Services with a deployment still marked DEPLOYING. */
export async function servicesWithOpenDeployments(db: Knex): Promise<string[]> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE).where({ status: 'DEPLOYING' }).distinct('service_name').pluck('service_name');
}
