import { archiveWriteProblem, isArchiveFolder } from './archival';

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
