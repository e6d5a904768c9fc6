import { Knex } from 'knex';

/**
 * The ten versioned component types, their `_aud` tables, `public.revinfo`, and the
 * approvals tables. Every `_aud` table is `like` its table plus `rev` and `revtype`, so it mirrors the
 * audited columns exactly; the API and the workers refuse to start when one drifts.
 */

const LIFECYCLE = `
  status text not null default 'DRAFT' check (status in ('DRAFT', 'PENDING_APPROVAL', 'PUBLISHED', 'REJECTED', 'ARCHIVED')),
  published_rev integer,
  published_at timestamptz,
  created_by text,
  updated_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()`;

const CONTENT_TABLES = ['content.page', 'content.page_layout', 'content.portlet', 'content.web_content', 'content.navigation', 'forms.dynamic_form'];

export const AUDITED_TABLES = [...CONTENT_TABLES, 'assets.asset', 'email.email_template', 'integration.soap_component', 'workflow.workflow_definition'];

function auditTable(table: string): string {
  const name = table.split('.')[1];
  return `
    create table ${table}_aud (like ${table});
    alter table ${table}_aud
      add column rev integer not null references public.revinfo (rev),
      add column revtype smallint not null check (revtype in (0, 1, 2)),
      add primary key (id, rev);
    create index ${name}_aud_rev_idx on ${table}_aud (rev);`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table public.revinfo (
      rev serial primary key,
      revtstmp timestamptz not null default now(),
      user_id text,
      user_name text,
      site_id text
    );
  `);
  for (const table of CONTENT_TABLES) {
    const name = table.split('.')[1];
    await knex.raw(`
      create table ${table} (
        id uuid primary key default gen_random_uuid(),
        site_id text not null,
        name text not null,
        slug text not null,
        title text not null,
        data jsonb not null default '{}',
        ${LIFECYCLE},
        published_snapshot jsonb
      );
      create unique index ${name}_site_slug_key on ${table} (site_id, slug);
      create index ${name}_site_idx on ${table} (site_id, created_at desc, id desc);
    `);
  }
  await knex.raw(`
    alter table assets.asset add column updated_by text;
    create table email.email_template (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      name text not null,
      role_key text,
      subject_en text not null,
      body_en text not null,
      subject_ar text not null,
      body_ar text not null,
      ${LIFECYCLE}
    );
    create index email_template_site_idx on email.email_template (site_id, created_at desc, id desc);
    create table integration.soap_component (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      name text not null,
      service_url text not null,
      soap_method_name text not null,
      sample_request text not null,
      ${LIFECYCLE}
    );
    create index soap_component_site_idx on integration.soap_component (site_id, created_at desc, id desc);
    create table workflow.workflow_definition (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      name text not null,
      stages jsonb not null,
      ${LIFECYCLE}
    );
    create index workflow_definition_site_idx on workflow.workflow_definition (site_id, created_at desc, id desc);
  `);
  for (const table of AUDITED_TABLES) await knex.raw(auditTable(table));

  await knex.raw(`
    create table workflow.approval_policy (
      id uuid primary key default gen_random_uuid(),
      component_type text not null,
      site_id text,
      workflow_definition_id uuid references workflow.workflow_definition (id),
      enabled boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index approval_policy_type_site_key on workflow.approval_policy (component_type, site_id) nulls not distinct;

    create table workflow.approval (
      correlation_id uuid primary key,
      component_type text not null,
      site_id text not null,
      resource_id text not null,
      revision integer not null,
      callback_path text not null,
      requested_by text not null,
      title text,
      comment text,
      status text not null check (status in ('PENDING', 'APPROVED', 'REJECTED')),
      stages jsonb not null,
      current_stage integer not null default 0,
      decisions jsonb not null default '[]',
      workflow_id text not null,
      created_at timestamptz not null default now(),
      decided_at timestamptz
    );
    create unique index approval_open_key on workflow.approval (component_type, resource_id) where status = 'PENDING';
    create index approval_site_status_idx on workflow.approval (site_id, status, created_at desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists workflow.approval, workflow.approval_policy');
  for (const table of [...AUDITED_TABLES].reverse()) await knex.raw(`drop table if exists ${table}_aud`);
  await knex.raw('drop table if exists workflow.workflow_definition, integration.soap_component, email.email_template');
  await knex.raw('alter table assets.asset drop column if exists updated_by');
  for (const table of CONTENT_TABLES) await knex.raw(`drop table if exists ${table}`);
  await knex.raw('drop table if exists public.revinfo');
}
