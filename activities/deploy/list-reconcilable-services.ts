import { DEPLOYMENT_TABLE, SERVICE_TABLE } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** Dynamic services that are running and not in the middle of a deploy: the reconcile's work list. */
export function listReconcilableServices({ db }: DeployDeps) {
  return async (): Promise<string[]> => {
    const rows = await db(SERVICE_TABLE)
      .where({ dynamic: true })
      .whereIn('status', ['RUNNING', 'DEGRADED'])
      .whereNotExists(db(DEPLOYMENT_TABLE).whereRaw(`${DEPLOYMENT_TABLE}.service_name = ${SERVICE_TABLE}.name`).andWhere('status', 'DEPLOYING').select(db.raw('1')))
      .orderBy('name')
      .select('name');
    return rows.map((row) => row.name as string);
  };
}
