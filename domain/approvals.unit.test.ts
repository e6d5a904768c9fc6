import {
  ApprovalFacts,
  chainsToPass,
  confirmationRefusal,
  durationMs,
  fourEyesRefusal,
  itemOfRecordRefusal,
  proposalRefusal,
  releaseOfRecordRefusal,
} from './approvals';

test('ISO 8601 durations in weeks, days, hours, minutes and seconds', () => {
  expect(durationMs('PT3S')).toBe(3000);
  expect(durationMs('PT1.5S')).toBe(1500);
  expect(durationMs('P2D')).toBe(2 * 86400000);
  expect(durationMs('P1DT12H30M')).toBe(86400000 + 12 * 3600000 + 30 * 60000);
  expect(durationMs('P1W')).toBe(7 * 86400000);
});

test('anything else is not a duration', () => {
  for (const text of ['P', 'PT', '3S', 'P1Y', 'P1M', 'PT-1S', 'P1DT', 'pt3s', 'PT3S ', '']) expect(durationMs(text)).toBeNull();
});

describe('fourEyesRefusal', () => {
  const base = { requestedBy: 'eda', revisionAuthors: ['mia', 'eda'], decisions: [{ decidedBy: 'max', stageName: 'Review' }] };
  test.each([
    ['the requester', 'eda', 'SELF_APPROVAL_FORBIDDEN'],
    ['the author of a revision it would publish (#58, finding 2)', 'mia', 'SELF_APPROVAL_FORBIDDEN'],
    ['one who decided an earlier stage', 'max', 'APPROVER_ALREADY_DECIDED'],
  ])('refuses %s', (_who, deciderId, code) => {
    expect(fourEyesRefusal({ ...base, deciderId })?.code).toBe(code);
  });
  test('lets anyone else decide', () => {
    expect(fourEyesRefusal({ ...base, deciderId: 'bea' })).toBeNull();
  });
});

describe('proposalRefusal', () => {
  const approval: ApprovalFacts = {
    siteId: 'north',
    requestedBy: 'eda',
    status: 'PENDING',
    stage: { name: 'Review', role: 'MANAGER' },
    decisions: [],
  };
  const manager = { id: 'bea', roles: ['MANAGER'], sites: ['north'] };
  test.each([
    ['one of another site', approval, { ...manager, sites: ['south'] }, 'FORBIDDEN'],
    ['the requester, before the status is looked at', { ...approval, status: 'APPROVED' }, { ...manager, id: 'eda' }, 'SELF_APPROVAL_FORBIDDEN'],
    ['anyone once it is decided', { ...approval, status: 'APPROVED' }, manager, 'ALREADY_DECIDED'],
    ["one without the stage's role", approval, { ...manager, roles: ['EDITOR'] }, 'FORBIDDEN'],
    ['one not named by a stage that names its users', { ...approval, stage: { ...approval.stage, assignees: ['max'] } }, manager, 'FORBIDDEN'],
  ])('refuses %s', (_who, facts, decider, code) => {
    expect(proposalRefusal(facts, decider)?.code).toBe(code);
  });
  test('lets a manager of the site, and an ADMIN of any site, propose', () => {
    expect(proposalRefusal(approval, manager)).toBeNull();
    expect(proposalRefusal(approval, { id: 'ada', roles: ['ADMIN'], sites: [] })).toBeNull();
  });
  test('confirming checks four eyes and named users again', () => {
    expect(confirmationRefusal(approval, 'mia', ['mia'])?.code).toBe('SELF_APPROVAL_FORBIDDEN');
    expect(confirmationRefusal({ ...approval, decisions: [{ decidedBy: 'bea', stageName: 'First' }] }, 'bea', [])?.code).toBe('APPROVER_ALREADY_DECIDED');
    expect(confirmationRefusal({ ...approval, stage: { ...approval.stage, assignees: ['max'] } }, 'bea', [])?.code).toBe('FORBIDDEN');
    expect(confirmationRefusal(approval, 'bea', ['mia'])).toBeNull();
  });
});

test('a publish run names a release and an item as the database holds them', () => {
  const input = { componentType: 'PAGE', siteId: 'north', resourceId: 'r1', revision: 3 };
  expect(releaseOfRecordRefusal(input, undefined)?.why).toMatch(/not a release of site north/);
  expect(releaseOfRecordRefusal(input, { siteId: 'south', version: 3 })?.why).toMatch(/not a release of site north/);
  expect(releaseOfRecordRefusal(input, { siteId: 'north', version: 4 })?.why).toMatch(/at version 4, not 3/);
  expect(releaseOfRecordRefusal(input, { siteId: 'north', version: 3 })).toBeNull();
  expect(itemOfRecordRefusal(input, { inSite: false, hasRevision: false })?.why).toMatch(/not an item of site north/);
  expect(itemOfRecordRefusal(input, { inSite: true, hasRevision: false })?.why).toMatch(/no revision 3/);
  expect(itemOfRecordRefusal(input, { inSite: true, hasRevision: true })).toBeNull();
});

test('a submission passes each enabled chain once, in type order', () => {
  const policy = (name: string, chain: string | null, enabled = true) => ({ name, chain, enabled });
  const chains = chainsToPass([
    policy('page', 'legal'),
    null,
    policy('asset', null),
    policy('menu', 'legal'),
    policy('form', 'brand', false),
    policy('post', null),
  ]);
  expect(chains.map((kept) => kept.name)).toEqual(['page', 'asset']);
  expect(chainsToPass([null, policy('form', 'brand', false)])).toEqual([]);
});
