import { Knex } from 'knex';
import { uniqueOr409 } from '../db-errors';
import { Page, PageRequest, paginate } from '../paging';
import { notFound } from '../../lib/errors';
import { componentType } from '../content/component-types';

/** The approval policies: which workflow definition a component type's publish runs through, per site. */
export const POLICY_TABLE = 'workflow.approval_policy';

export interface PolicyRow {
  id: string;
  component_type: string;
  site_id: string | null;
  workflow_definition_id: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The site's policy when it has one, else the global one, else none. */
export async function resolvePolicy(db: Knex, componentTypeName: string, siteId: string): Promise<PolicyRow | null> {
  const rows = (await db(POLICY_TABLE)
    .where({ component_type: componentTypeName })
    .andWhere((where) => where.where({ site_id: siteId }).orWhereNull('site_id'))) as PolicyRow[];
  return rows.find((row) => row.site_id === siteId) ?? rows.find((row) => row.site_id === null) ?? null;
}

export interface PolicyValues {
  componentType: string;
  siteId: string | null;
  workflowDefinitionId?: string | null;
  enabled: boolean;
}

const policyColumns = (values: PolicyValues) => ({
  component_type: values.componentType,
  site_id: values.siteId,
  workflow_definition_id: values.workflowDefinitionId ?? null,
  enabled: values.enabled,
});

const policyExists = 'A policy for this component type and site exists already.';

export async function findPolicy(db: Knex, id: string): Promise<PolicyRow> {
  const row = (await db(POLICY_TABLE).where({ id }).first()) as PolicyRow | undefined;
  if (!row) throw notFound(`No approval policy ${id}.`);
  return row;
}

/** 404 unless the workflow definition a policy would bind exists. */
async function definitionExists(db: Knex, id: string | null | undefined): Promise<void> {
  if (!id) return;
  const definitions = componentType('WORKFLOW_DEFINITION')!;
  if (!(await db(definitions.table).where({ id }).first('id'))) throw notFound(`No workflow definition ${id}.`);
}

export async function listPolicies(db: Knex, page: PageRequest): Promise<Page<PolicyRow>> {
  return paginate<PolicyRow>({ query: db(POLICY_TABLE).select('*'), ...page, timeColumn: 'created_at', idColumn: 'id' });
}

/** 409 APPROVAL_POLICY_EXISTS for a second policy of a type and site. */
export async function createPolicy(db: Knex, values: PolicyValues): Promise<PolicyRow> {
  await definitionExists(db, values.workflowDefinitionId);
  const [row] = await uniqueOr409(() => db<PolicyRow>(POLICY_TABLE).insert(policyColumns(values)).returning('*'), 'APPROVAL_POLICY_EXISTS', policyExists);
  return row;
}

export async function replacePolicy(db: Knex, id: string, values: PolicyValues): Promise<PolicyRow> {
  await findPolicy(db, id);
  await definitionExists(db, values.workflowDefinitionId);
  const [row] = await uniqueOr409(
    () =>
      db<PolicyRow>(POLICY_TABLE)
        .where({ id })
        .update({ ...policyColumns(values), updated_at: db.fn.now() })
        .returning('*'),
    'APPROVAL_POLICY_EXISTS',
    policyExists,
  );
  return row;
}

export async function deletePolicy(db: Knex, id: string): Promise<void> {
  await findPolicy(db, id);
  await db(POLICY_TABLE).where({ id }).delete();
}
