import { archiveWriteProblem, isArchiveFolder, storeEndpointRefusal, StoreWrite, storeWriteRefusal } from './archival';

test('/archive and the folders under it are the archive sink; a name that only starts alike is not', () => {
  expect(['/archive', '/archive/EMAIL_LOG', '/archive/a/b'].map(isArchiveFolder)).toEqual([true, true, true]);
  expect(['/archived', '/', '/reports/archive', null, 7].map(isArchiveFolder)).toEqual([false, false, false, false, false]);
});

test('a write to an archive file, or into /archive, is refused with a reason; other writes are not', () => {
  expect(archiveWriteProblem({ folder: '/archive/EMAIL_LOG' })).toMatch(/records of archive runs/);
  expect(archiveWriteProblem({ folder: '/reports' }, { folder: '/archive' })).toMatch(/belongs to the archive runs/);
  expect(archiveWriteProblem(null, { folder: '/archive/x' })).toMatch(/belongs to the archive runs/);
  expect(archiveWriteProblem({ folder: '/reports' }, { folder: '/reports/2026' })).toBeNull();
  expect(archiveWriteProblem(null, { folder: '/' })).toBeNull();
});

test('a store endpoint is an http(s) URL without user info, query or fragment', () => {
  expect(storeEndpointRefusal('http://seaweedfs:8333/base')).toBeNull();
  for (const endpoint of ['not a url', 'ftp://host/', 'https://key:secret@host/', 'https://host/?x=1', 'https://host/#f'])
    expect(storeEndpointRefusal(endpoint)?.code).toBe('VALIDATION_FAILED');
});

describe('storeWriteRefusal', () => {
  const write: StoreWrite = {
    store: { endpoint: 'https://s3.example', bucket: 'logs', region: 'eu-west-1', pathStyle: true, accessKeyId: 'AK1' },
    asked: {},
    keysRequired: false,
    fromConfig: false,
  };
  test("a known store keeps its region and path style, unless the platform's configuration moves them", () => {
    expect(storeWriteRefusal({ ...write, asked: { region: 'us-east-1' } })?.why).toMatch(/exists with region eu-west-1/);
    expect(storeWriteRefusal({ ...write, asked: { pathStyle: false } })?.why).toMatch(/path style true/);
    expect(storeWriteRefusal({ ...write, asked: { region: 'us-east-1' }, fromConfig: true })).toBeNull();
    expect(storeWriteRefusal({ ...write, asked: { region: 'eu-west-1', pathStyle: true } })).toBeNull();
  });
  test('a new key id needs its secret; a store that must have keys needs them', () => {
    expect(storeWriteRefusal({ ...write, keys: { accessKeyId: 'AK2' } })?.why).toMatch(/secretAccessKey is required/);
    expect(storeWriteRefusal({ ...write, keys: { accessKeyId: 'AK1' } })).toBeNull();
    expect(storeWriteRefusal({ ...write, store: { ...write.store, accessKeyId: null }, keysRequired: true })?.why).toMatch(/has no keys yet/);
    expect(storeWriteRefusal({ ...write, keysRequired: true })).toBeNull();
  });
});
